package redisstreams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/redisstreams"
)

func TestSettingsDefaults(t *testing.T) {
	s, err := redisstreams.SettingsOf(map[string]any{"stream": "orders", "group": "jadpo"})
	if err != nil {
		t.Fatal(err)
	}
	want := redisstreams.Settings{Stream: "orders", Group: "jadpo", Field: "body", ClaimIdle: 30 * time.Second, MaxDeliveries: 10}
	if s != want {
		t.Fatalf("%+v, want %+v", s, want)
	}
	// As the plan gives them: a bool, an int, a duration's text; or as
	// text from config.
	s, err = redisstreams.SettingsOf(map[string]any{"stream": "o", "group": "g", "create_group": "true", "field": "payload",
		"claim_idle": "2m", "max_deliveries": "3", "block": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	want = redisstreams.Settings{Stream: "o", Group: "g", CreateGroup: true, Field: "payload", ClaimIdle: 2 * time.Minute, MaxDeliveries: 3, Block: time.Second}
	if s != want {
		t.Fatalf("%+v, want %+v", s, want)
	}
}

// Each bad setting is refused saying what to write.
func TestSettingsRefused(t *testing.T) {
	for _, c := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"group": "g"}, `setting stream is empty: give the stream's key`},
		{map[string]any{"stream": "s"}, `setting group is empty: give the consumer group's name`},
		{map[string]any{"stream": "s", "group": "g", "field": ""}, `setting field is empty`},
		{map[string]any{"stream": "s", "group": "g", "create_group": "yes"}, `setting create_group: "yes" is not true or false`},
		{map[string]any{"stream": "s", "group": "g", "claim_idle": "10ms"}, `setting claim_idle: 10ms is shorter than 1s`},
		{map[string]any{"stream": "s", "group": "g", "claim_idle": "soon"}, `setting claim_idle: "soon" is not a duration`},
		{map[string]any{"stream": "s", "group": "g", "block": "1m"}, `setting block: 1m0s is not between 0s and 20s`},
		{map[string]any{"stream": "s", "group": "g", "max_deliveries": int64(-1)}, `setting max_deliveries: "-1" is not a whole number of at least 0`},
	} {
		_, err := redisstreams.SettingsOf(c.settings)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.settings, err, c.want)
		}
	}
}

// The URL's forms: redis://, rediss:// (TLS), unix://; the password is the
// URL's, and never in an error.
func TestCredentialURL(t *testing.T) {
	o, err := redisstreams.ClientOptions("rediss://ada:s3cr3t-pw@cache.example.com:6380/2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "cache.example.com:6380" || o.Username != "ada" || o.Password != "s3cr3t-pw" || o.DB != 2 || o.TLSConfig == nil {
		t.Fatalf("%+v", o)
	}
	if o, err := redisstreams.ClientOptions("unix:///run/redis.sock?db=1"); err != nil || o.Network != "unix" || o.DB != 1 {
		t.Fatalf("%+v %v", o, err)
	}
	for _, raw := range []string{
		"", "http://ada:s3cr3t-pw@host/0", "redis://ada:s3cr3t-pw@host:6379/zero", "redis://ada:s3cr3t-pw@host:6379/0/1",
		"redis://ada:s3cr3t-pw@host:6379/0?bogus=1", "redis://ada:s3cr3t-pw@[::1/0", "redis://ada:s3cr3t-pw@host:port/0", "redis://ada:s3cr3t-pw\x7f@host/0",
	} {
		_, err := redisstreams.ClientOptions(raw)
		if err == nil {
			t.Errorf("%q was accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("an error quotes the password: %v", err)
		}
		if !strings.Contains(err.Error(), "redis://[user:password@]host:port/db") {
			t.Errorf("an error does not say what to write: %v", err)
		}
	}
}

// Open's errors (a refused connection, a refused password) never show the
// password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	srv := realRedis(t)
	opts, lb := options(t)
	for _, raw := range []string{
		"redis://ada:s3cr3t-pw@127.0.0.1:1/0",                             // nothing listens
		strings.Replace(srv.url, "redis://", "redis://ada:s3cr3t-pw@", 1), // no such user
	} {
		conn := &queue.Conn{Name: "orders", Settings: map[string]any{"stream": "s", "group": "g"}, Credentials: map[string]string{ir.MemberURL: raw}}
		_, err := redisstreams.Open(conn, opts)
		if err == nil {
			t.Fatalf("opened with a bad credential")
		}
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(lb.String(), "s3cr3t") {
			t.Fatalf("the password is shown: %v\n%s", err, lb)
		}
		if !strings.HasPrefix(err.Error(), "connection orders: ") {
			t.Fatalf("the error does not name the connection: %v", err)
		}
	}
}

// FuzzCredentialURL: whatever the rest of a redis:// URL holds, reading it
// never fails with an error that shows its password, and an error always
// says what to write.
func FuzzCredentialURL(f *testing.F) {
	for _, s := range [][4]string{
		{"ada", "s3cr3t-pw", "127.0.0.1:6379", "/0"},
		{"", "s3cr3t-pw", "host:port", "/zero?dial_timeout=x"},
		{"a%zz", "s3cr3t-pw", "[::1", "/0/1"},
		{"ada", "s3cr3t pw\x7f", "h", "?bogus=1&db=x"},
		{"ada", "p@ss:w/rd", "h:1", "/"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, user, password, host, rest string) {
		if len(password) < 6 || strings.Contains(user+host+rest, password) {
			return // too short to tell from the URL's other parts
		}
		for _, scheme := range []string{"redis://", "rediss://"} {
			raw := scheme + user + ":" + password + "@" + host + rest
			o, err := redisstreams.ClientOptions(raw)
			if err != nil {
				if strings.Contains(err.Error(), password) {
					t.Fatalf("the error shows the password: %v", err)
				}
				if !strings.Contains(err.Error(), "redis://[user:password@]host:port/db") {
					t.Fatalf("the error does not say what to write: %v", err)
				}
				continue
			}
			if o == nil {
				t.Fatal("no options and no error")
			}
		}
	})
}
