package main

// The command line's conventions (issue 12): one rule for where the store is, commands
// that only read never make a store, --dir and the folder argument everywhere, --format
// json with one versioned envelope on every path, and text a user can paste. These tests
// use only the command line, so that they run against any build of it.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// tickWorld is the warehouse example copied to <tmp>/w1, with a symlink <tmp>/link to it,
// its config in .env.local pointing at the test's SQS fake and target, and no store named:
// every command finds the store by the default rule.
type tickWorld struct {
	env      *runtimetest.Env
	tmp, dir string
}

func newTickWorld(t *testing.T) *tickWorld {
	t.Helper()
	if os.Getenv("DATABASE_URL") != "" {
		t.Setenv("DATABASE_URL", "") // the default rule is under test
	}
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := checktest.CopyExample(t, "warehouse", filepath.Join(tmp, "w1"))
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(env.DotEnv()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	return &tickWorld{env: env, tmp: tmp, dir: dir}
}

// The same project folder, however it is spelled, is one store: a message sent once per
// spelling is kept once and its subscriber called once (it was kept and delivered twice
// when `tick w1` and `(cd w1 && tick .)` opened two stores).
func TestOneStoreForEverySpellingOfTheFolder(t *testing.T) {
	w := newTickWorld(t)
	spellings := []struct{ cwd, dir string }{
		{w.tmp, "w1"},
		{w.dir, "."},
		{w.tmp, "./w1/"},
		{w.tmp, w.dir},
		{w.tmp, "link"},
		{filepath.Join(w.dir, "stock"), ".."},
	}
	for i, s := range spellings {
		w.env.Send("warehouse_queue", runtimetest.OrderShipped("dup-1"))
		t.Chdir(s.cwd)
		code, out, errs := cli(t, "tick", s.dir, "--log-format", "json")
		if code != 0 {
			t.Fatalf("tick %s (in %s): exit %d\n%s%s", s.dir, s.cwd, code, out, errs)
		}
		want := "received 1, kept 0, repeats 1"
		if i == 0 {
			want = "received 1, kept 1, repeats 0"
			// tick says which store it opened, as it can be pasted where it ran.
			if !strings.Contains(errs, `"msg":"store","store":"sqlite:w1/build/local.sqlite"`) {
				t.Errorf("tick w1 does not log its store:\n%s", errs)
			}
		}
		if !strings.Contains(out, want) {
			t.Errorf("tick %s (in %s): %q, want %q: another store", s.dir, s.cwd, out, want)
		}
	}
	if calls := w.env.Target.Calls(); len(calls) != 1 {
		t.Errorf("the subscriber's service was called %d times for one message", len(calls))
	}
	if _, err := os.Stat(filepath.Join(w.dir, "build", "local.sqlite")); err != nil {
		t.Errorf("the store is not build/local.sqlite in the project: %v", err)
	}
	var extra []string
	_ = filepath.WalkDir(w.tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".sqlite") && path != filepath.Join(w.dir, "build", "local.sqlite") {
			extra = append(extra, path)
		}
		return nil
	})
	if len(extra) > 0 {
		t.Errorf("other stores were made: %v", extra)
	}
	// deliveries, from anywhere, reads that store and says which it is.
	t.Chdir(w.tmp)
	for _, args := range [][]string{{"deliveries", "w1"}, {"deliveries", "--dir", "w1"}, {"deliveries", "link", "--state", "all"}} {
		code, _, errs := cli(t, args...)
		if code != 0 || !strings.Contains(errs, "store: sqlite:w1/build/local.sqlite") {
			t.Errorf("%v: exit %d, stderr %q: want the store named as it can be pasted here", args, code, errs)
		}
	}
}

// The README's steps in order: the demo, then jadpo deliveries on the same folder, show
// the demo's parked messages; the demo prints that command as it can be pasted.
func TestDemoThenDeliveriesShowTheParkedMessages(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Setenv("DATABASE_URL", "")
	}
	tmp := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "warehouse"), filepath.Join(tmp, "examples", "warehouse")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp)
	code, out, errs := cli(t, "dev", "examples/warehouse", "--demo")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "$ jadpo deliveries examples/warehouse\n") {
		t.Errorf("the demo does not print `jadpo deliveries examples/warehouse`:\n%s", out)
	}
	code, out, errs = cli(t, "deliveries", "examples/warehouse")
	if code != 0 {
		t.Fatalf("deliveries after the demo: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"unreadable", "too_large"} {
		if !strings.Contains(out, want) {
			t.Errorf("deliveries after the demo does not list a %s message:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no failed deliveries") {
		t.Errorf("deliveries after the demo found nothing:\n%s", out)
	}
}

// Commands that only read, and retry/dismiss, never make a store: a missing or empty
// store is one clear line and exit 1, and nothing is created.
func TestDeliveriesNeverMakeAStore(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Setenv("DATABASE_URL", "")
	}
	tmp := t.TempDir()
	dir := checktest.CopyExample(t, "warehouse", filepath.Join(tmp, "w"))
	t.Chdir(tmp)
	for _, args := range [][]string{
		{"deliveries", "--database", "sqlite:nonexist.sqlite"},
		{"deliveries", "list", "--state", "all", "--database", "sqlite:nonexist.sqlite"},
		{"deliveries", "show", "p1", "--database", "sqlite:nonexist.sqlite"},
		{"deliveries", "retry", "p1", "--database", "sqlite:nonexist.sqlite"},
		{"deliveries", "dismiss", "p1", "--database", "sqlite:nonexist.sqlite"},
	} {
		code, out, errs := cli(t, args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 1 || out != "" || len(lines) != 1 || !strings.Contains(errs, "no events' store") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want one line saying there is no store, exit 1", args, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(tmp, "nonexist.sqlite")); err == nil {
			t.Fatalf("%v created the store", args)
		}
	}
	// The project's default store, not made yet.
	if code, _, errs := cli(t, "deliveries", "--dir", "w"); code != 1 || !strings.Contains(errs, "no events' store at sqlite:w/build/local.sqlite") {
		t.Errorf("deliveries of a project without a store: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "local.sqlite")); err == nil {
		t.Fatal("deliveries created the project's store")
	}
	// An empty file is not a store either, and stays empty.
	if err := os.WriteFile("empty.sqlite", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, "deliveries", "--database", "sqlite:empty.sqlite"); code != 1 || !strings.Contains(errs, "never migrated") {
		t.Errorf("deliveries of an empty file: exit %d %q", code, errs)
	}
	if fi, _ := os.Stat("empty.sqlite"); fi.Size() != 0 {
		t.Error("deliveries wrote into an empty file")
	}
}

func TestDeliveriesNeverMigrateAPostgresDatabase(t *testing.T) {
	url := pgtest.FreshURL(t)
	for _, args := range [][]string{{"deliveries"}, {"deliveries", "retry", "p1"}} {
		code, _, errs := cli(t, append(args, "--database", url)...)
		if code != 1 || !strings.Contains(errs, "no events' store") || !strings.Contains(errs, "never migrated") {
			t.Errorf("%v on an empty database: exit %d %q", args, code, errs)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'jadpo%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("deliveries created %d jadpo tables", n)
	}
}

// migratedStore is an empty, migrated SQLite store.
func migratedStore(t *testing.T) string {
	t.Helper()
	url := "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return url
}

// envelopeOf reads a JSON output's envelope; it fails the test unless it is one.
func envelopeOf(t *testing.T, args []string, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v printed no JSON object: %v\n%s", args, err, out)
	}
	if m["schemaVersion"] != 1.0 || m["kind"] == nil || m["command"] == nil || (m["status"] != "ok" && m["status"] != "failed") {
		t.Fatalf("%v: not the envelope (schemaVersion, kind, command, status):\n%s", args, out)
	}
	return m
}

// JSON on every path of a command given --format json (or --json), errors included, in
// one versioned envelope.
func TestJSONOnEveryPath(t *testing.T) {
	db := migratedStore(t)
	root := repoRoot(t)
	warehouse := filepath.Join(root, "examples", "warehouse")
	for _, c := range []struct {
		args       []string
		code       int
		kind, want string
	}{
		{[]string{"deliveries", "--format", "json"}, 0, "delivery_list", `"entries": []`},
		{[]string{"deliveries", "--json"}, 0, "delivery_list", `"entries": []`},
		{[]string{"deliveries", "list", "--state", "all", "--format", "json"}, 0, "delivery_list", `"state": "all"`},
		{[]string{"deliveries", "show", "p99", "--json"}, 1, "error", `"code": "unknown_id"`},
		{[]string{"deliveries", "retry", "p2", "--json"}, 1, "error", `"code": "wrong_state"`},
		{[]string{"deliveries", "dismiss", "x7", "--format", "json"}, 2, "error", `"code": "usage"`},
		{[]string{"deliveries", "retry", "--json"}, 2, "error", `"code": "usage"`},
		{[]string{"deliveries", "--state", "lost", "--json"}, 2, "error", `"code": "usage"`},
		{[]string{"check", warehouse, "--format", "json"}, 0, "diagnostic_report", `"diagnostics": []`},
		{[]string{"package", "list", warehouse, "--format", "json"}, 0, "package_list", `"name": "AmazonSqs.v2012_11_05"`},
		{[]string{"package", "list", "--catalogue", "--format", "json"}, 0, "package_catalogue", `"CloudflareQueues.v4"`},
		{[]string{"check", "--bogus", "--format", "json"}, 2, "diagnostic_report", `toolchain.usage_invalid`},
		{[]string{"build", "--bogus", "--format", "json"}, 2, "diagnostic_report", `toolchain.usage_invalid`},
	} {
		args := c.args
		if args[0] == "deliveries" {
			args = append(append([]string(nil), args...), "--database", db)
		}
		code, out, errs := cli(t, args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", c.args, code, c.code, out, errs)
		}
		m := envelopeOf(t, c.args, out)
		if m["kind"] != c.kind || !strings.Contains(out, c.want) {
			t.Errorf("%v: kind %v, want %s holding %s:\n%s", c.args, m["kind"], c.kind, c.want, out)
		}
		if c.code != 0 && m["status"] != "failed" {
			t.Errorf("%v: status %v on a failure", c.args, m["status"])
		}
		// One spelling in every kind: check's report says ok as the deliveries' do.
		if c.code == 0 && m["status"] != "ok" {
			t.Errorf("%v: status %v on a success; every kind says \"ok\"", c.args, m["status"])
		}
	}
	// A project with errors: its report on stderr, the JSON error on stdout.
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "app.jadpo"), []byte("store primary {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli(t, "deliveries", broken, "--format", "json")
	if m := envelopeOf(t, []string{"deliveries", "(broken)"}, out); code != 1 || m["kind"] != "error" || !strings.Contains(out, `"check_failed"`) {
		t.Errorf("deliveries of a project with errors, --format json: exit %d\n%s", code, out)
	}
	// check's report keeps its fields.
	_, out, _ = cli(t, "check", warehouse, "--format", "json")
	m := envelopeOf(t, nil, out)
	for _, k := range []string{"project", "summary", "diagnostics"} {
		if _, ok := m[k]; !ok {
			t.Errorf("check's report lost %q", k)
		}
	}
}

// One key style: the deliveries' fields are camelCase, as the envelope's schemaVersion.
func TestJSONKeysAreCamelCase(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	_, out, _ := w.cli(t, "deliveries", "--format", "json")
	if regexp.MustCompile(`"[a-z]+_[a-z_]+":`).MatchString(out) {
		t.Errorf("snake_case keys in the JSON:\n%s", out)
	}
	for _, k := range []string{`"messageId"`, `"wireType"`, `"bodySha256"`, `"createdAt"`, `"maxAttempts"`} {
		if !strings.Contains(out, k) {
			t.Errorf("no %s key:\n%s", k, out)
		}
	}
}

// The project folder is the argument of every command without another positional
// argument, and --dir works everywhere.
func TestFolderArgumentAndDirEverywhere(t *testing.T) {
	if os.Getenv("DATABASE_URL") != "" {
		t.Setenv("DATABASE_URL", "")
	}
	tmp := t.TempDir()
	dir := checktest.CopyExample(t, "warehouse", filepath.Join(tmp, "w"))
	t.Chdir(tmp)
	for _, args := range [][]string{
		{"check", "w"}, {"check", "--dir", "w"},
		{"build", "--dir", "w"},
		{"package", "list", "w"}, {"package", "list", "--dir", "w"},
	} {
		if code, out, errs := cli(t, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	// deliveries takes the folder too (its store is made first, by a tick's migration).
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{{"deliveries", "w"}, {"deliveries", "list", "w"}, {"deliveries", "--dir", "w"}} {
		if code, out, errs := cli(t, args...); code != 0 || !strings.Contains(out, "no failed deliveries or parked messages") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if code, _, errs := cli(t, "check", "w", "--dir", "other"); code != 2 || !strings.Contains(errs, "given twice") {
		t.Errorf("check w --dir other: exit %d %q", code, errs)
	}
}

// run's --interval over 10 s is refused, naming the rule.
func TestRunIntervalOverTenSecondsRefused(t *testing.T) {
	code, out, errs := cli(t, "run", filepath.Join(repoRoot(t), "examples", "warehouse"), "--interval", "30s")
	if code != 2 || out != "" || !strings.Contains(errs, "ticks at least every 10s") {
		t.Errorf("run --interval 30s: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// package add outside a project refuses and installs nothing.
func TestPackageAddOutsideAProjectRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	code, _, errs := cli(t, "package", "add", "AmazonSqs.v2012_11_05")
	if code != 1 || !strings.Contains(errs, "no app.jadpo") {
		t.Errorf("package add outside a project: exit %d %q", code, errs)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("package add outside a project made %v", entries)
	}
}

// Text: no missing word, plain usage errors with the subcommand's usage, missing config as
// a list, paths from where the command ran, examples in every help.
func TestTextAUserCanRead(t *testing.T) {
	db := migratedStore(t)
	if _, out, _ := cli(t, "deliveries", "--state", "all", "--database", db); out != "no deliveries or parked messages\n" {
		t.Errorf("an empty store, --state all: %q", out)
	}
	code, _, errs := cli(t, "deliveries", "retry", "--database", db)
	if code != 2 || strings.Contains(errs, "arg(s)") || strings.Contains(errs, "jadpo --help") ||
		!strings.Contains(errs, "Usage: jadpo deliveries retry ID...") {
		t.Errorf("retry without an id: exit %d %q", code, errs)
	}

	// run with no environment: each missing field on its own line.
	tmp := t.TempDir()
	dir := checktest.CopyExample(t, "warehouse", filepath.Join(tmp, "w"))
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "WAREHOUSE_") || strings.HasPrefix(k, "PACKING_") || strings.HasPrefix(k, "SQS_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	code, _, errs = cli(t, "tick", dir, "--database", "sqlite:"+filepath.Join(tmp, "s.sqlite"))
	missing := strings.Count(errs, "is not set")
	if code != 1 || missing < 2 || strings.Count(errs, "\n  - ") != missing {
		t.Errorf("missing config not listed one a line (exit %d):\n%s", code, errs)
	}
	for _, l := range strings.Split(errs, "\n") {
		if len(l) > 200 {
			t.Errorf("a line of %d characters:\n%s", len(l), l)
		}
	}

	// A path in a diagnostic can be pasted where the command ran.
	t.Chdir(tmp)
	app := filepath.Join(dir, "app.jadpo")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, []byte(strings.Replace(string(b), "OrderShipped {", "OrderShiped {", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errs = cli(t, "check", "w")
	if !regexp.MustCompile(`--> w/app\.jadpo:\d+:\d+`).MatchString(errs) {
		t.Errorf("check w: the path is not from the working directory:\n%s", errs)
	}
	if _, out, _ := cli(t, "check", "w", "--format", "json"); !strings.Contains(out, `"source": "app.jadpo"`) {
		t.Errorf("check w --format json: source is not project-relative:\n%s", out)
	}
	if err := os.WriteFile(app, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, "build", "w"); code != 0 || !strings.Contains(errs, "wrote w/build/plan.json\n") {
		t.Errorf("build w: exit %d, the written files not from the working directory:\n%s", code, errs)
	}
	// A mistyped subcommand of deliveries is not taken for a folder.
	if code, _, errs := cli(t, "deliveries", "lst"); code != 2 || !strings.Contains(errs, "nor a command of jadpo deliveries") {
		t.Errorf("deliveries lst: exit %d %q", code, errs)
	}
}

func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(path []string)
	walk = func(path []string) {
		_, out, _ := cli(t, append(append([]string(nil), path...), "--help")...)
		if !strings.Contains(out, "Examples:") {
			t.Errorf("jadpo %s --help has no Examples:\n%s", strings.Join(path, " "), out)
		}
		// The subcommands are listed under "Available Commands:".
		_, list, ok := strings.Cut(out, "Available Commands:\n")
		if !ok {
			return
		}
		list, _, _ = strings.Cut(list, "\n\n")
		for _, l := range strings.Split(list, "\n") {
			name := strings.Fields(l)
			if len(name) == 0 || name[0] == "help" {
				continue
			}
			walk(append(append([]string(nil), path...), name[0]))
		}
	}
	walk(nil)
}

// Completion offers the values of --state, --format and --log-format, and delivery ids.
func TestCompletionOfFlagValuesAndIDs(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"deliveries", "--state", ""}, []string{"failed", "pending", "dismissed", "all"}},
		{[]string{"deliveries", "--format", ""}, []string{"text", "json"}},
		{[]string{"check", "--format", ""}, []string{"text", "json"}},
		{[]string{"run", "--log-format", ""}, []string{"text", "json"}},
		{[]string{"tick", "--log-format", ""}, []string{"text", "json"}},
		{[]string{"deliveries", "show", "--database", w.env.StoreURL, ""}, []string{w.failed.String(), w.unlisted.String(), w.unreadble.String()}},
		{[]string{"deliveries", "retry", "--database", w.env.StoreURL, w.failed.String(), ""}, []string{w.unlisted.String()}},
	} {
		_, out, _ := cli(t, append([]string{"__complete"}, c.args...)...)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
				v, _, _ := strings.Cut(l, "\t")
				got = append(got, v)
			}
		}
		for _, want := range c.want {
			found := false
			for _, g := range got {
				found = found || g == want
			}
			if !found {
				t.Errorf("completing %v: %v lacks %q", c.args, got, want)
			}
		}
	}
}

// Issue 24: a parked message an operator retried that is still unreadable is
// one message, counted once ("parked again 1", not also "parked 1"); it came
// from the store, so there is nothing to acknowledge, no "acknowledging
// failed" warning, and the tick exits 0.
func TestTickCountsARetriedParkedMessageOnce(t *testing.T) {
	w := newTickWorld(t)
	w.env.Send("warehouse_queue", "not json")
	code, out, errs := cli(t, "tick", w.dir, "--log-format", "json")
	if code != 0 || !strings.Contains(out, "received 1, kept 0, repeats 0, parked 1") {
		t.Fatalf("first tick: exit %d\n%s%s", code, out, errs)
	}
	db := "sqlite:" + filepath.Join(w.dir, "build", "local.sqlite")
	code, out, errs = cli(t, "deliveries", "--database", db, "--state", "failed", "--format", "json")
	var list struct {
		Entries []struct{ ID string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Entries) != 1 {
		t.Fatalf("deliveries: exit %d %v\n%s%s", code, err, out, errs)
	}
	if code, out, errs = cli(t, "deliveries", "retry", list.Entries[0].ID, "--database", db); code != 0 {
		t.Fatalf("retry: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = cli(t, "tick", w.dir, "--log-format", "json")
	if code != 0 {
		t.Errorf("the tick after the retry exits %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "received 0, kept 0, repeats 0, parked 0") || !strings.Contains(out, "retried parked: kept 0, parked again 1") {
		t.Errorf("the tick after the retry says %q", out)
	}
	if strings.Contains(errs, "acknowledging failed") {
		t.Errorf("a failed acknowledgement for nothing to acknowledge:\n%s", errs)
	}
}
