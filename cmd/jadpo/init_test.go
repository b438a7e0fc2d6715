package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/runtime/store"
)

// jadpo init writes a starter app that checks clean, and jadpo dev keeps a
// typed message of it (dev ends at the end of input once it delivered).
func TestInitStarterAppChecksAndRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "signups")
	out, errOut, code := runCLI("init", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"app.jadpo", "events/signups.jadpo", ".env.example", ".gitignore", "jadpo.lock", "packages/AmazonSqs.v2012_11_05/package.jadpo"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("init wrote no %s: %v", f, err)
		}
	}
	gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if !strings.Contains(string(gi), "build/\n") || !strings.Contains(string(gi), ".env.local\n") {
		t.Errorf(".gitignore keeps out neither build/ nor .env.local:\n%s", gi)
	}
	envEx, _ := os.ReadFile(filepath.Join(dir, ".env.example"))
	res := check.Check(project.Load(dir))
	if res.Program == nil || len(res.Program.Config) == 0 {
		t.Fatalf("the starter app does not check: %v", res.Diags)
	}
	for _, cf := range res.Program.Config {
		if !strings.Contains(string(envEx), cf.Binding+"=") {
			t.Errorf(".env.example lacks the binding %s", cf.Binding)
		}
	}
	if out, errOut, code := runCLI("check", dir); code != 0 {
		t.Fatalf("check after init: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runCLI("package", "list", dir); code != 0 || !strings.Contains(out, "AmazonSqs.v2012_11_05") || !strings.Contains(out, "ok") {
		t.Fatalf("the package is not installed and locked: exit %d\n%s%s", code, out, errOut)
	}
	var devOut, devErr syncBuffer
	in := strings.NewReader(`signups {"id":"s-1","user_id":"u-1","email":"ada@example.com"}` + "\n")
	if code := runContext(context.Background(), []string{"dev", dir, "--log-format", "json"}, in, &devOut, &devErr); code != 0 {
		t.Fatalf("dev: exit %d\n%s", code, devErr.String())
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.ReceivedIDs != 1 || s.Outbox != 1 || s.Deliveries[store.DeliverySucceeded] != 1 {
		t.Fatalf("the typed message was not kept and delivered: %+v\n%s", s, devErr.String())
	}
}

// jadpo init refuses a folder with anything in it, says so, and changes nothing.
func TestInitRefusesNonEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "events"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	out, errOut, code := runCLI("init", dir)
	if code != exitFound {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFound, out, errOut)
	}
	if !strings.Contains(errOut, "is not empty (it has events, notes.txt)") || !strings.Contains(errOut, "changed nothing") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("the refusal is not one clear line:\n%s", errOut)
	}
	if after := tree(t, dir); after != before {
		t.Fatalf("the folder changed:\nbefore %s\nafter  %s", before, after)
	}
	// A file given as the folder is refused too.
	if _, errOut, code := runCLI("init", filepath.Join(dir, "notes.txt")); code != exitFound || !strings.Contains(errOut, "is a file, not a folder") {
		t.Fatalf("init on a file: exit %d\n%s", code, errOut)
	}
}

// tree lists a folder's paths, sizes and contents, to compare.
func tree(t *testing.T, dir string) string {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if !d.IsDir() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString("=" + string(c))
		}
		b.WriteString(";")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Issue 30, item 9: `jadpo init payments` writes the payments app (it wrote the sign-ups
// app whatever the name): its queue, connection, config field, events module, event and
// subscriber are named after the folder; it checks, and dev keeps the sample init prints.
func TestInitNamesTheAppAfterItsFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "payments")
	out, errOut, code := runCLI("init", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	app, _ := os.ReadFile(filepath.Join(dir, "app.jadpo"))
	for _, want := range []string{"use events/payments { PaymentsReceived }", "config PaymentsConfig {", `payments_queue_url: Url { binding: "PAYMENTS_QUEUE_URL" }`,
		"connection payments {", "queue payments {", "events: { PaymentsReceived }", "subscriber handle_payments {"} {
		if !strings.Contains(string(app), want) {
			t.Errorf("app.jadpo lacks %q:\n%s", want, app)
		}
	}
	for _, gone := range []string{"signup", "SignedUp", "welcome", "SIGNUPS"} {
		if strings.Contains(string(app), gone) {
			t.Errorf("app.jadpo still names %q:\n%s", gone, app)
		}
	}
	if env, _ := os.ReadFile(filepath.Join(dir, ".env.example")); !strings.Contains(string(env), "PAYMENTS_QUEUE_URL=") {
		t.Errorf(".env.example:\n%s", env)
	}
	if _, err := os.Stat(filepath.Join(dir, "events", "payments.jadpo")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("check", dir); code != 0 {
		t.Fatalf("check: exit %d\n%s", code, errOut)
	}
	sample := out[strings.LastIndex(out, "type: ")+len("type: "):]
	if !strings.HasPrefix(sample, `payments {`) {
		t.Fatalf("init's sample: %q", sample)
	}
	errOut, code = runDevToEnd(t, dir, sample, "--log-format", "json")
	if code != 0 || !strings.Contains(errOut, `"msg":"kept"`) || !strings.Contains(errOut, `"event":"PaymentsReceived"`) {
		t.Fatalf("dev with init's sample: exit %d\n%s", code, errOut)
	}
}
