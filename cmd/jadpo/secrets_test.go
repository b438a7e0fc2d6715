package main

// Acceptance 6: a secret set in .env.local (not the environment) appears in
// no log line, CLI output, metric, error or file written, across runs of the
// command line in process and of the built binary: run (SIGINT, metrics
// scraped), tick, deliveries list/show --body, check --format json, build
// and its files, with JSON and text logs, and the failure paths (a wrong
// database URL holding a password, a missing config value).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/jadpoproc"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// Canaries: the fake SQS's secret key (AWS_SECRET_ACCESS_KEY) and the
// packing token, runtimetest.Canary and runtimetest.Canary+"-token", both
// hold runtimetest.Canary; and a database password.
const dbCanary = "CANARY-dbpw-5e7a31"

// seen collects every byte the test captured, by where it came from.
type seen struct {
	mu  sync.Mutex
	all map[string]*bytes.Buffer
}

func (s *seen) add(where string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		s.all = map[string]*bytes.Buffer{}
	}
	if s.all[where] == nil {
		s.all[where] = &bytes.Buffer{}
	}
	s.all[where].Write(b)
}

func (s *seen) addFiles(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s.add("file "+path, b)
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("no files under %s (%v)", dir, err)
	}
}

// check fails for each canary found, naming where, and checks that the test
// saw what it means to grep.
func (s *seen) check(t *testing.T, canaries []string, mustSee map[string]string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var forms []string
	for _, c := range canaries {
		forms = append(forms, c, url.QueryEscape(c), url.PathEscape(c))
	}
	total := 0
	for where, b := range s.all {
		total += b.Len()
		for _, f := range forms {
			if i := bytes.Index(b.Bytes(), []byte(f)); i >= 0 {
				lo, hi := max(0, i-120), min(b.Len(), i+len(f)+40)
				t.Errorf("a secret appears in %s: ...%s...", where, b.Bytes()[lo:hi])
			}
		}
	}
	for what, text := range mustSee {
		found := false
		for _, b := range s.all {
			if bytes.Contains(b.Bytes(), []byte(text)) {
				found = true
			}
		}
		if !found {
			t.Errorf("the test did not see %s (%q) in what it greps", what, text)
		}
	}
	t.Logf("grepped %d bytes from %d sources", total, len(s.all))
}

// secretsWorld is the example copied to a folder whose .env.local holds the
// config (the secrets among them), pointing at the test's SQS fake, target
// and store; the target echoes the Authorization header in its refusals.
type secretsWorld struct {
	env *runtimetest.Env
	dir string
	s   *seen
}

func newSecretsWorld(t *testing.T, kind string) *secretsWorld {
	t.Helper()
	for _, kv := range os.Environ() {
		for _, b := range []string{"AWS_SECRET_ACCESS_KEY=", "PACKING_TOKEN=", "AWS_ACCESS_KEY_ID=", "DATABASE_URL="} {
			if strings.HasPrefix(kv, b) {
				t.Fatalf("the test's environment sets %s; the secrets must come from .env.local only", strings.TrimSuffix(b, "="))
			}
		}
	}
	env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
	dir := checktest.CopyExample(t, "warehouse", t.TempDir())
	// Quoted, as .env.local may be.
	dotenv := strings.Replace(env.DotEnv(), "PACKING_TOKEN="+runtimetest.Canary+"-token", `PACKING_TOKEN="`+runtimetest.Canary+`-token"`, 1)
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	// A refusal whose message repeats the credential it was sent, as a
	// careless service might: the runtime must not pass it on.
	env.Target.Answer(func(r *http.Request) (int, string) {
		return http.StatusUnauthorized, fmt.Sprintf(`{"error":{"code":"unauthorized","message":"token %s refused"}}`, r.Header.Get("Authorization"))
	})
	return &secretsWorld{env: env, dir: dir, s: &seen{}}
}

// sendSome puts a kept, a repeated and a parked message on the queues.
func (w *secretsWorld) sendSome(prefix string) {
	w.env.Send("warehouse_queue", runtimetest.OrderShipped(prefix+"-1"))
	w.env.Send("warehouse_queue", runtimetest.OrderShipped(prefix+"-1"))
	w.env.Send("warehouse_queue", `{"id":"`+prefix+`-2","type":"order_delayed"}`)
	w.env.Send("warehouse_queue", `not json `+prefix)
}

// inProcess runs the command line in this process and keeps what it printed.
func (w *secretsWorld) inProcess(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	code, out, errs := cli(t, args...)
	w.s.add(fmt.Sprintf("in process %v stdout", args), []byte(out))
	w.s.add(fmt.Sprintf("in process %v stderr", args), []byte(errs))
	if wantCode >= 0 && code != wantCode {
		t.Fatalf("%v: exit %d, want %d\nstdout %s\nstderr %s", args, code, wantCode, out, errs)
	}
	return out + errs
}

// binary runs the built jadpo and keeps what it printed.
func (w *secretsWorld) binary(t *testing.T, bin string, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = childEnv()
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	w.s.add(fmt.Sprintf("binary %v stdout", args), out.Bytes())
	w.s.add(fmt.Sprintf("binary %v stderr", args), errs.Bytes())
	if wantCode >= 0 && code != wantCode {
		t.Fatalf("%v: exit %d, want %d\nstdout %s\nstderr %s", args, code, wantCode, out.String(), errs.String())
	}
	return out.String() + errs.String()
}

// childEnv is this process's environment without the database variable.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") {
			out = append(out, kv)
		}
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func get(u string) (int, []byte, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// wantCredentialsUsed checks that the secrets were read from .env.local and
// sent where they belong: the target saw the bearer token.
func (w *secretsWorld) wantCredentialsUsed(t *testing.T) {
	t.Helper()
	calls := w.env.Target.Calls()
	if len(calls) == 0 || calls[0].Auth != "Bearer "+runtimetest.Canary+"-token" {
		t.Fatalf("the packing token from .env.local was not sent: %+v", calls)
	}
}

func TestNoSecretInAnyOutputInProcess(t *testing.T) {
	w := newSecretsWorld(t, "sqlite")
	db := w.env.StoreURL
	w.sendSome("a")
	for _, format := range []string{"json", "text"} {
		out := w.inProcess(t, 0, "tick", w.dir, "--database", db, "--log-format", format)
		if format == "json" && !strings.Contains(out, `"msg":"kept"`) || format == "text" && !strings.Contains(out, "received") {
			t.Fatalf("tick --log-format %s printed:\n%s", format, out)
		}
		w.sendSome("b-" + format)
	}
	w.wantCredentialsUsed(t)
	w.inProcess(t, 0, "deliveries", "--database", db)
	w.inProcess(t, 0, "deliveries", "list", "--state", "all", "--json", "--database", db)
	st := w.env.Store()
	entries, err := st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil || len(entries) < 3 {
		t.Fatalf("entries %d (%v)", len(entries), err)
	}
	for _, en := range entries {
		w.inProcess(t, 0, "deliveries", "show", en.ID.String(), "--body", "--database", db)
		w.inProcess(t, 0, "deliveries", "show", en.ID.String(), "--body", "--json", "--database", db)
	}
	w.inProcess(t, 0, "check", w.dir, "--format", "json")
	w.inProcess(t, 0, "check", w.dir)
	w.inProcess(t, 0, "build", w.dir)
	w.s.addFiles(t, filepath.Join(w.dir, "build"))
	failurePaths(t, w, func(wantCode int, args ...string) string { return w.inProcess(t, wantCode, args...) })
	w.s.check(t, []string{runtimetest.Canary, dbCanary}, map[string]string{
		"a kept message's log line":   `"msg":"kept"`,
		"a parked message's log line": "parked",
		"a failed delivery":           "unauthorized",
		"a parked body":               "not json b-json",
		"the plan":                    `"packing_token"`,
	})
}

// failurePaths runs the start-up failures: a database URL with a password
// that cannot be reached (given with --database, and as the store's
// database: from a secret in .env.local), a DSN that is no URL, and a
// missing config value.
func failurePaths(t *testing.T, w *secretsWorld, run func(wantCode int, args ...string) string) {
	t.Helper()
	for _, u := range []string{
		"postgres://jadpo:" + dbCanary + "@127.0.0.1:1/events?sslmode=disable",
		"postgres://jadpo@127.0.0.1:1/events?sslmode=disable&password=" + dbCanary,
		"host=127.0.0.1 port=1 user=jadpo password=" + dbCanary,
		"postgres:jadpo:" + dbCanary + "@127.0.0.1:1/events",
		"postgres://jadpo:" + dbCanary + " x@127.0.0.1:1/events",
	} {
		for _, args := range [][]string{
			{"tick", w.dir, "--database", u, "--log-format", "json"},
			{"deliveries", "--database", u},
			{"deliveries", "retry", "p1", "--database", u},
		} {
			out := run(1, args...)
			if !strings.Contains(out, "cannot open the events' store") && !strings.Contains(out, "not a database URL") {
				t.Errorf("%v printed:\n%s", args, out)
			}
		}
	}
	// The store's database: from a secret config value in .env.local.
	withDB := checktest.CopyExample(t, "warehouse", t.TempDir(),
		checktest.Edit{File: "app.jadpo", Old: `    packing_host: Url {`, New: `    database_url: Url { binding: "SHOP_DATABASE_URL" secret: true }
    packing_host: Url {`},
		checktest.Edit{File: "app.jadpo", Old: "store primary {\n", New: "store primary {\n    database: config.database_url\n"})
	dotenv := w.env.DotEnv() + "SHOP_DATABASE_URL=postgres://jadpo:" + dbCanary + "@127.0.0.1:1/events?sslmode=disable\n"
	if err := os.WriteFile(filepath.Join(withDB, ".env.local"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tick", withDB, "--log-format", "text"}, {"deliveries", "--dir", withDB}} {
		if out := run(1, args...); !strings.Contains(out, "cannot open the events' store postgres://jadpo:xxxxx@127.0.0.1:1/events") {
			t.Errorf("%v printed:\n%s", args, out)
		}
	}
	// A missing value: the error names the field and binding only.
	missing := checktest.CopyExample(t, "warehouse", t.TempDir())
	var kept []string
	for _, l := range strings.Split(w.env.DotEnv(), "\n") {
		if !strings.HasPrefix(l, "WAREHOUSE_QUEUE_URL=") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(filepath.Join(missing, ".env.local"), []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(1, "tick", missing, "--database", w.env.StoreURL)
	want := "jadpo: cannot start: config field warehouse_queue_url (environment variable WAREHOUSE_QUEUE_URL) is not set (in the environment or .env.local)\n" +
		"jadpo run and jadpo tick reach the app's real queues and services: set each in the environment or in " + filepath.Join(shownPath(missing), ".env.local") +
		".\nTo try the app on this machine first, jadpo dev " + shownPath(missing) + " runs it against local stand-ins.\n"
	if out != want {
		t.Errorf("missing config printed %q\nwant %q", out, want)
	}
	// An invalid one: named, its value not repeated.
	invalid := checktest.CopyExample(t, "warehouse", t.TempDir())
	bad := strings.Replace(w.env.DotEnv(), "SQS_HOST=", "SQS_HOST=not-a-url-"+dbCanary+"#", 1)
	if err := os.WriteFile(filepath.Join(invalid, ".env.local"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	out = run(1, "tick", invalid, "--database", w.env.StoreURL)
	if !regexp.MustCompile(`^jadpo: cannot start: config field sqs_host \(environment variable SQS_HOST\) is not an absolute URL \(scheme and host, such as https://example\.com\)\n$`).MatchString(out) {
		t.Errorf("invalid config printed %q", out)
	}
	// A value that breaks a rule of its type (not only its kind) stops the
	// start too, before anything reaches a provider; a secret's value is not
	// shown.
	ruled := checktest.CopyExample(t, "warehouse", t.TempDir(), checktest.Edit{File: "app.jadpo", Old: `    packing_host: Url {`,
		New: `    batch_limit: Int { binding: "BATCH_LIMIT" min: 1 default: 10 }
    region: Text { binding: "REGION" pattern: "[a-z]{2}-[a-z]+-[0-9]" default: "eu-west-1" }
    api_key: Text? { binding: "API_KEY" secret: true min_length: 40 }
    packing_host: Url {`})
	bad = w.env.DotEnv() + "BATCH_LIMIT=-5\nREGION=XX\nAPI_KEY=" + dbCanary + "\n"
	if err := os.WriteFile(filepath.Join(ruled, ".env.local"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	out = run(1, "tick", ruled, "--database", w.env.StoreURL)
	for _, want := range []string{"cannot start: 3 config problems:",
		"config field batch_limit (environment variable BATCH_LIMIT) is below the minimum 1",
		"config field region (environment variable REGION) does not match the pattern `[a-z]{2}-[a-z]+-[0-9]`",
		"config field api_key (environment variable API_KEY) is shorter than the minimum length 40"} {
		if !strings.Contains(out, want) || strings.Contains(out, dbCanary) {
			t.Errorf("a value against its rules printed %q\nwant %q in it", out, want)
		}
	}
}

func TestNoSecretInAnyOutputOfTheBinary(t *testing.T) {
	bin := jadpoproc.Binary(t)
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newSecretsWorld(t, kind)
			db := w.env.StoreURL
			w.sendSome("a")
			w.binary(t, bin, 0, "tick", w.dir, "--database", db, "--log-format", "text")
			w.sendSome("b")

			// jadpo run: JSON logs, metrics scraped once, stopped by SIGINT.
			addr := freeAddr(t)
			cmd := exec.Command(bin, "run", w.dir, "--database", db, "--log-format", "json", "--metrics-addr", addr, "--interval", "200ms")
			cmd.Dir = t.TempDir()
			cmd.Env = childEnv()
			var out, errs bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
				}
			})
			// Wait until the run kept b-1 (a guard, not a timing assertion).
			var metrics []byte
			deadline := time.Now().Add(60 * time.Second)
			for {
				if _, b, err := get("http://" + addr + "/metrics"); err == nil && bytes.Contains(b, []byte(`jadpo_messages_kept_total{queue="warehouse_queue"} 1`)) &&
					bytes.Contains(b, []byte(`jadpo_deliveries_total{outcome="failed",subscriber="pack_order"} 1`)) {
					metrics = b
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("jadpo run kept nothing:\n%s\n%s", out.String(), errs.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			w.s.add("metrics", metrics)
			code, health, err := get("http://" + addr + "/healthz")
			if err != nil || code != 200 {
				t.Fatalf("healthz %d %s %v", code, health, err)
			}
			w.s.add("healthz", health)
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("jadpo run after SIGINT: %v\n%s", err, errs.String())
			}
			w.s.add("binary run stdout", out.Bytes())
			w.s.add("binary run stderr", errs.Bytes())
			if !strings.Contains(errs.String(), `"msg":"stopped"`) {
				t.Fatalf("jadpo run did not stop cleanly:\n%s", errs.String())
			}
			w.wantCredentialsUsed(t)

			w.binary(t, bin, 0, "deliveries", "list", "--state", "all", "--database", db)
			w.binary(t, bin, 0, "deliveries", "--json", "--database", db)
			st := w.env.Store()
			entries, err := st.List(context.Background(), store.Filter{State: store.ListAll})
			if err != nil || len(entries) < 3 {
				t.Fatalf("entries %d (%v)", len(entries), err)
			}
			for _, en := range entries {
				w.binary(t, bin, 0, "deliveries", "show", en.ID.String(), "--body", "--database", db)
			}
			w.binary(t, bin, 0, "check", w.dir, "--format", "json")
			w.binary(t, bin, 0, "build", w.dir)
			w.s.addFiles(t, filepath.Join(w.dir, "build"))
			if kind == "sqlite" {
				failurePaths(t, w, func(wantCode int, args ...string) string { return w.binary(t, bin, wantCode, args...) })
			}
			w.s.check(t, []string{runtimetest.Canary, dbCanary}, map[string]string{
				"a kept message's log line": `"msg":"kept"`,
				"a text log line":           "level=INFO",
				"the metrics":               "jadpo_deliveries_total",
				"a failed delivery":         "unauthorized",
				"the SQL schema":            "CREATE TABLE",
			})
		})
	}
}

// store.RedactURL, which every start-up error naming the database goes
// through, hides the password of each form a database may be given in.
func TestRedactURLHidesEveryPassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://jadpo:" + dbCanary + "@db:5432/app":     "postgres://jadpo:xxxxx@db:5432/app",
		"postgres://db/app?password=" + dbCanary:            "postgres://db/app?password=xxxxx",
		"host=db port=5432 user=jadpo password=" + dbCanary: "(unparsable database URL)",
		"postgres:jadpo:" + dbCanary + "@db/app":            "(unparsable database URL)",
		"postgres://jadpo:" + dbCanary + " x@db/app":        "(unparsable database URL)",
		"sqlite:/var/lib/jadpo/events.sqlite":               "sqlite:/var/lib/jadpo/events.sqlite",
		"postgres://jadpo@db/app?sslmode=disable":           "postgres://jadpo@db/app?sslmode=disable",
	} {
		if got := store.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// The Cloudflare Queues API token of examples/returns, set in .env.local:
// used (the fake accepts only it), and printed nowhere, also when the fake
// refuses the pull with a message that repeats the Authorization header.
func TestNoCloudflareTokenInAnyOutput(t *testing.T) {
	token := runtimetest.Canary + "-cf"
	cf := cfqueuesfake.New(cfqueuesfake.Options{Tokens: []string{token}})
	srv := httptest.NewServer(cf)
	defer srv.Close()
	if err := cf.CreateQueue("acc", "returns", cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyProject(filepath.Join(reporoot.Dir(t), "examples", "returns"), dir); err != nil {
		t.Fatal(err)
	}
	dotenv := "CF_HOST=" + srv.URL + "\nCF_API_TOKEN=\"" + token + "\"\nCF_ACCOUNT_ID=acc\nCF_RETURNS_QUEUE_ID=returns\nREFUNDS_TOKEN=\"" + token + "-refunds\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	for _, body := range []string{
		`{"return_id":"r-1","type":"return_requested","order_id":"o-1","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`,
		`not json`,
	} {
		if _, err := cf.Send("acc", "returns", body); err != nil {
			t.Fatal(err)
		}
	}
	w := &secretsWorld{dir: dir, s: &seen{}}
	w.inProcess(t, 0, "tick", dir, "--database", db, "--log-format", "json")
	w.inProcess(t, 0, "deliveries", "--database", db)
	w.inProcess(t, 0, "deliveries", "show", "p1", "--body", "--json", "--database", db)
	w.inProcess(t, 0, "check", dir, "--format", "json")
	w.inProcess(t, 0, "build", dir)
	w.s.addFiles(t, filepath.Join(dir, "build"))
	// A service that echoes the credential in its refusal.
	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := copyProject(dir, wrong); err != nil {
		t.Fatal(err)
	}
	echo := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(rw, `{"success":false,"errors":[{"code":10000,"message":"Authentication error: %s"}],"messages":[],"result":null}`, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	if err := os.WriteFile(filepath.Join(wrong, ".env.local"), []byte(strings.Replace(dotenv, srv.URL, echo.URL, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	w.inProcess(t, 1, "tick", wrong, "--database", db, "--log-format", "text")
	w.s.check(t, []string{token}, map[string]string{
		"a kept message's log line":      `"msg":"kept"`,
		"a parked message's body":        "not json",
		"the refusal's code":             "code_10000",
		"the token's config in the plan": `"cf_api_token"`,
	})
}

// The SQL inbox's database URL (a secret config value in .env.local, with a
// password) is used and printed nowhere: a tick that keeps and parks rows,
// deliveries show, check, build, and a start against a database that does
// not answer.
func TestNoInboxDatabasePasswordInAnyOutput(t *testing.T) {
	const password = runtimetest.Canary + "-pg"
	inbox := pgtest.FreshURL(t)
	u, err := url.Parse(inbox)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE TABLE order_jobs (job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT NOT NULL DEFAULT 0, tenant TEXT, trace TEXT, order_id BIGINT, note TEXT);
INSERT INTO order_jobs (name, tenant, order_id) VALUES ('packing', 'acme', 7), ('packing', 'acme', 0)`); err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password) // trust auth: the password is sent and ignored
	dir := t.TempDir()
	if err := copyProject(filepath.Join(reporoot.Dir(t), "examples", "jobs"), dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("JOBS_DATABASE_URL="+u.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	w := &secretsWorld{dir: dir, s: &seen{}}
	w.inProcess(t, 0, "tick", dir, "--database", db, "--log-format", "json")
	w.inProcess(t, 0, "deliveries", "--database", db)
	w.inProcess(t, 0, "deliveries", "show", "p1", "--body", "--json", "--database", db)
	w.inProcess(t, 0, "check", dir, "--format", "json")
	w.inProcess(t, 0, "build", dir)
	w.s.addFiles(t, filepath.Join(dir, "build"))
	down := filepath.Join(t.TempDir(), "down")
	if err := copyProject(dir, down); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(down, ".env.local"), []byte("JOBS_DATABASE_URL=postgres://jadpo:"+password+"@127.0.0.1:1/jobs?sslmode=disable\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := w.inProcess(t, 1, "tick", down, "--database", db, "--log-format", "text")
	w.s.check(t, []string{password}, map[string]string{
		"a kept row's log line":          `"msg":"kept"`,
		"a parked row's problem":         "order_id: min",
		"the URL's config in the plan":   `"jobs_database_url"`,
		"the start-up failure's message": "cannot start",
	})
	if !strings.Contains(out, "order_jobs") {
		t.Errorf("the start-up failure does not name the inbox:\n%s", out)
	}
}
