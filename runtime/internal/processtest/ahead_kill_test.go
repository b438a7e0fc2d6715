package processtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// warehouseWith copies examples/warehouse to a temporary directory with
// pack_order's retry clause replaced by retry, and returns the copy.
func warehouseWith(t *testing.T, retry string) string {
	t.Helper()
	src := filepath.Join(reporoot.Dir(t), "examples", "warehouse")
	dir := filepath.Join(t.TempDir(), "warehouse")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.jadpo")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	const was = "retry: { max_attempts: 8 first_delay: 10s max_delay: 1h }"
	if !strings.Contains(string(b), was) {
		t.Fatalf("examples/warehouse/app.jadpo no longer holds %q", was)
	}
	if err := os.WriteFile(app, []byte(strings.Replace(string(b), was, retry, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Issue 24: `jadpo run` is killed (SIGKILL) while it holds deliveries
// claimed ahead of its workers, with max_attempts: 1. A delivery whose
// handler never started is not an attempt: it is pending again, and the
// next process delivers it. So only the deliveries whose handlers had
// started, at most one a worker, can end failed (lease_expired), and no
// order is sent twice: with max_attempts 1 the engine writes a handler's
// start before the handler calls anything. (Before, every delivery claimed
// at the kill ended failed lease_expired, most of them never having reached
// the target: 71 claimed, 39 never sent, in the run.) A handler
// whose start was written may still have been killed before its call went
// out: that attempt counts, as one that reached the target would.
func TestKilledWithDeliveriesClaimedAheadFailsOnlyWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a jadpo run process; not with -short")
	}
	const n = 400
	env := runtimetest.New(t, "postgres", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	keepOrders(t, st, n)
	bin := jadpoBin(t)
	project := warehouseWith(t, "retry: { max_attempts: 1 first_delay: 10s max_delay: 1h }")
	var calls atomic.Int64
	env.Target.Answer(func(r *http.Request) (int, string) {
		calls.Add(1)
		time.Sleep(5 * time.Millisecond) // quick: the engine claims ahead
		return 200, `{"job_id":"j","state":"queued"}`
	})
	logDir := t.TempDir()
	run := func(name string) *Proc {
		args := []string{"run", project, "--database", env.StoreURL, "--log-format", "json",
			"--delivery-lease", "1500ms", "--interval", "100ms"}
		return startProc(t, bin, args, runtimetest.ChildEnviron(env.Environ), filepath.Join(logDir, name))
	}
	p := run("killed.log")
	waitFor(t, 30*time.Second, func() bool { return calls.Load() >= 60 || p.Exited() },
		func() string { return "the handlers did not get going; log: " + tail(p.Log) })
	if p.Exited() {
		t.Fatalf("jadpo run ended by itself: %v; log: %s", p.Err(), tail(p.Log))
	}
	p.Kill()
	atKill := stats(t, st).Deliveries
	if atKill[store.DeliveryRunning] == 0 {
		t.Fatalf("nothing was claimed at the kill (%v): the test kills too late", atKill)
	}
	settledAll := func() bool {
		d := stats(t, st).Deliveries
		return d[store.DeliverySucceeded]+d[store.DeliveryFailed] == n
	}
	final := run("final.log")
	waitFor(t, 90*time.Second, settledAll, func() string { return fmt.Sprint(stats(t, st).Deliveries) })
	stop(t, final)

	failed, err := st.List(context.Background(), store.Filter{State: store.ListFailed})
	if err != nil {
		t.Fatal(err)
	}
	perOrder := callsPerOrder(env.Target)
	unsent := 0
	for _, e := range failed {
		if perOrder["o-"+strings.TrimPrefix(e.ReceivedID, "m-")] == 0 {
			unsent++
		}
		if e.Code != runtime.CodeLeaseExpired {
			t.Errorf("%s failed %q", e.ID, e.Code)
		}
	}
	if len(failed) > runtime.Workers {
		t.Errorf("%d deliveries failed of the %d claimed at the kill (%d never reached the target); want at most the %d whose handlers had started",
			len(failed), atKill[store.DeliveryRunning], unsent, runtime.Workers)
	}
	for i := range n {
		if c := perOrder[fmt.Sprint("o-", i)]; c > 1 {
			t.Errorf("order o-%d sent %d times with max_attempts 1", i, c)
		}
	}
	t.Logf("at the kill: %v; finally %d failed (%d of them killed before their call reached the target), the rest succeeded", atKill, len(failed), unsent)
}
