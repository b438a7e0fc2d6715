package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

// examples/warehouse builds; its plan is a golden file, and two builds are
// byte-identical.
func TestBuildWarehousePlan(t *testing.T) { testBuildPlan(t, "warehouse") }

// The returns example's plan: a connection received by the cloudflare_queues
// driver, with the two operations it calls.
func TestBuildReturnsPlan(t *testing.T) { testBuildPlan(t, "returns") }

// testBuildPlan builds examples/<example> twice: the plans are byte-identical
// and match testdata/golden/build_<example>_plan.json.
func testBuildPlan(t *testing.T, example string) {
	root := repoRoot(t)
	var plans [][]byte
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		if err := copyProject(filepath.Join(root, "examples", example), dir); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCLI("build", dir)
		if code != 0 {
			t.Fatalf("build exit %d: %s", code, errOut)
		}
		plan, err := os.ReadFile(filepath.Join(dir, "build", "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, sql := range []string{"postgres.sql", "sqlite.sql"} {
			b, err := os.ReadFile(filepath.Join(dir, "build", "sql", sql))
			if err != nil || !bytes.Contains(b, []byte("jadpo_received_events")) {
				t.Fatalf("build/sql/%s: %v", sql, err)
			}
		}
		plans = append(plans, plan)
	}
	if !bytes.Equal(plans[0], plans[1]) {
		t.Fatal("two builds of the same sources differ")
	}
	g := goldie.New(t, goldie.WithFixtureDir(filepath.Join(root, "testdata", "golden")), goldie.WithNameSuffix(""))
	g.Assert(t, "build_"+example+"_plan.json", plans[0])
}

// A project whose secrets have canary values in .env.local: no diagnostic,
// plan or SQL holds them, nor does any failing check's output.
func TestNoSecretInCheckOrBuild(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(root, "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	canaries := []string{"CANARY-aws-secret-91f2", "CANARY-packing-token-77a0"}
	env := "AWS_SECRET_ACCESS_KEY=" + canaries[0] + "\nPACKING_TOKEN=" + canaries[1] + "\nAWS_ACCESS_KEY_ID=AKIDEXAMPLE\n"
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for _, args := range [][]string{{"check", dir}, {"check", dir, "--format", "json"}, {"build", dir}, {"build", dir, "--format", "json"}} {
		out, errOut, _ := runCLI(args...)
		seen.WriteString(out + errOut)
	}
	// A failing check, with the secret flowing where it must not.
	app := filepath.Join(dir, "app.jadpo")
	b, _ := os.ReadFile(app)
	os.WriteFile(app, []byte(strings.Replace(string(b), "account: config.packing_account", "account: config.packing_token", 1)), 0o644)
	for _, args := range [][]string{{"check", dir}, {"check", dir, "--format", "json"}} {
		out, errOut, code := runCLI(args...)
		if code != 1 {
			t.Fatalf("the secret flow was not reported: %s", errOut)
		}
		seen.WriteString(out + errOut)
	}
	filepath.WalkDir(filepath.Join(dir, "build"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			seen.Write(b)
		}
		return nil
	})
	if !strings.Contains(seen.String(), "config.secret_flow") || !strings.Contains(seen.String(), `"version": 1`) {
		t.Fatal("the test did not see the outputs it greps")
	}
	for _, c := range canaries {
		if strings.Contains(seen.String(), c) {
			t.Errorf("canary %s appears in an output", c)
		}
	}
}

// `jadpo tick --plan build/plan.json` runs the built plan without reading
// the sources (here broken after the build); a plan that cannot be read or
// decoded stops the start with one line naming it.
func TestTickRunsABuiltPlanWithoutTheSources(t *testing.T) {
	cf := cfqueuesfake.New(cfqueuesfake.Options{})
	srv := httptest.NewServer(cf)
	defer srv.Close()
	if err := cf.CreateQueue("acc", "returns", cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.Send("acc", "returns", `{"return_id":"r-1","type":"return_requested","order_id":"o-1","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "returns"), dir); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("build", dir); code != 0 {
		t.Fatalf("build exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.jadpo"), []byte("this is not jadpo {"), 0o644); err != nil {
		t.Fatal(err)
	}
	dotenv := "CF_HOST=" + srv.URL + "\nCF_API_TOKEN=" + cfqueuesfake.DefaultToken + "\nCF_ACCOUNT_ID=acc\nCF_RETURNS_QUEUE_ID=returns\nREFUNDS_TOKEN=refunds-token\n"
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	plan := filepath.Join(dir, "build", "plan.json")
	out, errOut, code := runCLI("tick", dir, "--plan", plan, "--database", db)
	if code != 0 || !strings.Contains(out+errOut, "received 1, kept 1") {
		t.Fatalf("tick --plan: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runCLI("tick", dir, "--database", db); code == 0 || !strings.Contains(errOut, "app.jadpo") {
		t.Fatalf("without --plan the broken source should stop the tick: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLI("tick", dir, "--plan", filepath.Join(dir, "nope.json"), "--database", db); code != 1 || !strings.Contains(errOut, "cannot read the plan") {
		t.Fatalf("a missing plan: exit %d\n%s", code, errOut)
	}
	if err := os.WriteFile(plan, []byte(`{"version": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("tick", dir, "--plan", plan, "--database", db); code != 1 || !strings.Contains(errOut, plan) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("a plan of another version: exit %d\n%s", code, errOut)
	}
}

// `jadpo build --target workers examples/returns` writes the Worker, its
// wrangler configuration and its D1 migration; two builds are
// byte-identical; the configuration is a golden file; the migration is the
// native SQLite schema; no secret's value is written.
func TestBuildWorkersReturns(t *testing.T) {
	root := repoRoot(t)
	names := []string{"worker.mjs", "wrangler.toml", "migrations/0001_jadpo.sql"}
	var builds []map[string][]byte
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		if err := copyProject(filepath.Join(root, "examples", "returns"), dir); err != nil {
			t.Fatal(err)
		}
		canary := "CANARY-refunds-token-5e1d"
		if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("REFUNDS_TOKEN="+canary+"\nCF_API_TOKEN="+canary+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI("build", "--target", "workers", dir)
		if code != 0 {
			t.Fatalf("build --target workers: exit %d: %s", code, errOut)
		}
		if strings.Contains(out+errOut, canary) {
			t.Fatal("the build's output holds a secret's value")
		}
		files := map[string][]byte{}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, "build", "workers", filepath.FromSlash(n)))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(canary)) {
				t.Fatalf("build/workers/%s holds a secret's value", n)
			}
			files[n] = b
		}
		builds = append(builds, files)
	}
	for _, n := range names {
		if !bytes.Equal(builds[0][n], builds[1][n]) {
			t.Fatalf("two builds of the same sources differ in build/workers/%s", n)
		}
	}
	if string(builds[0]["migrations/0001_jadpo.sql"]) != sqlite.SchemaSQL() {
		t.Fatal("the D1 migration is not the native SQLite schema")
	}
	w := string(builds[0]["worker.mjs"])
	if !strings.Contains(w, "function jadpoWorker(plan") || !strings.Contains(w, "\nexport default jadpoWorker(PLAN);\n") ||
		strings.Count(w, "\nexport ") != 1 || !strings.Contains(w, "\nconst PLAN = \"{") || !strings.Contains(w, `\"open_refund\"`) {
		// The plan is held as its JSON text, which readPlan reads exactly.
		t.Fatal("worker.mjs is not the runtime library, the plan (as its JSON text) and one default export")
	}
	g := goldie.New(t, goldie.WithFixtureDir(filepath.Join(root, "testdata", "golden")), goldie.WithNameSuffix(""))
	g.Assert(t, "build_returns_wrangler.toml", builds[0]["wrangler.toml"])
}

// --target takes native or workers; anything else is a usage error.
func TestBuildUnknownTarget(t *testing.T) {
	_, errOut, code := runCLI("build", "--target", "lambda", filepath.Join(repoRoot(t), "examples", "returns"))
	if code != 2 || !strings.Contains(errOut, "native or workers") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
