package brokertest

import (
	"os"
	"testing"
)

func TestURLFollowsItsVariable(t *testing.T) {
	t.Setenv(Redis.Env, "redis://127.0.0.1:1/0")
	if got := Redis.URL(); got != "redis://127.0.0.1:1/0" {
		t.Fatalf("URL = %q", got)
	}
	if got := Redis.Addr(); got != "127.0.0.1:1" {
		t.Fatalf("Addr = %q", got)
	}
	os.Unsetenv(Redis.Env)
	if got := Redis.URL(); got != Redis.Default {
		t.Fatalf("URL without the variable = %q", got)
	}
}

// A broker that is down skips the test unless JADPO_REQUIRE_BROKERS=1,
// when it fails: checked on a port nothing listens on.
func TestRequireSkipsOrFails(t *testing.T) {
	down := Broker{Name: "nothing", Env: "JADPO_TEST_NOTHING_URL", Default: "redis://127.0.0.1:1/0", Start: "nothing"}
	for _, require := range []string{"", "1"} {
		t.Setenv("JADPO_REQUIRE_BROKERS", require)
		r := &recorder{TB: t}
		func() {
			defer func() { recover() }() // Skip and Fatal end the goroutine in a real test.
			down.Require(r)
		}()
		if require == "1" && !r.failed {
			t.Errorf("with JADPO_REQUIRE_BROKERS=1 a broker that is down must fail the test")
		}
		if require == "" && !r.skipped {
			t.Errorf("without JADPO_REQUIRE_BROKERS a broker that is down must skip the test")
		}
	}
}

type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()      {}
func (r *recorder) Fatal(...any) { r.failed = true; panic("fatal") }
func (r *recorder) Skip(...any)  { r.skipped = true; panic("skip") }
