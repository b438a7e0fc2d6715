package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// Off loopback, the console makes up no token to print where others may read it.
func TestConsoleOffLoopbackNeedsATokenFile(t *testing.T) {
	t.Setenv(consoleTokenEnv, "")
	dir := t.TempDir()
	_, errOut, code := runCLI("console", dir, "--addr", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(errOut, "--token-file") || !strings.Contains(errOut, "reachable from other machines") {
		t.Errorf("exit %d, want %d saying why:\n%s", code, exitUsage, errOut)
	}
	short := filepath.Join(dir, "token")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI("console", dir, "--addr", "127.0.0.1:0", "--token-file", short)
	if code != exitUsage || !strings.Contains(errOut, "at least 16") {
		t.Errorf("a short token file: exit %d\n%s", code, errOut)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte(strings.Repeat("x", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every interface, a token file, and no --host: no Host name it could check.
	_, errOut, code = runCLI("console", dir, "--addr", "0.0.0.0:0", "--token-file", long)
	if code != exitUsage || !strings.Contains(errOut, "--host") || !strings.Contains(errOut, "DNS rebinding") {
		t.Errorf("every interface without --host: exit %d\n%s", code, errOut)
	}
}

func TestConsoleHosts(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		extra []string
		want  string
	}{
		{"127.0.0.1:8484", nil, "127.0.0.1:8484 localhost:8484 127.0.0.1:8484 [::1]:8484"},
		{"localhost:9000", []string{"ops.local"}, "localhost:9000 localhost:9000 127.0.0.1:9000 [::1]:9000 ops.local:9000"},
		{"10.0.0.5:8484", nil, "10.0.0.5:8484"},
		{"0.0.0.0:8484", []string{"ops.example.com:443"}, "ops.example.com:443"},
	} {
		got, err := consoleHosts(tc.addr, tc.extra)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("consoleHosts(%s, %v) = %v, %v; want %s", tc.addr, tc.extra, got, err, tc.want)
		}
	}
}

// With --token-file the token is never printed: only where to log in.
func TestConsoleGivenTokenIsNotPrinted(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(root, "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("dev", dir, "--demo"); code != 0 {
		t.Fatal(errOut)
	}
	token := "a-token-the-operators-share-0123456789"
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, []string{"console", dir, "--addr", "127.0.0.1:0", "--token-file", file}, strings.NewReader(""), out, errOut)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "log in at") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out.String(), "/login with the access token given") || strings.Contains(out.String()+errOut.String(), token) {
		t.Errorf("the output:\n%s\n%s", out, errOut)
	}
}

// consoleScreenshots are the pages the browser tests photograph for the guide.
var consoleScreenshots = []string{"overview", "parked", "message", "confirm", "deliveries", "delivery", "phone", "login"}

// The console's guide shows every screenshot the browser tests write, and each is there.
func TestConsoleGuideShowsEveryScreenshot(t *testing.T) {
	root := repoRoot(t)
	guide, err := os.ReadFile(filepath.Join(root, "docs", "guide", "console.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "guide", "console-*.png"))
	if len(files) != len(consoleScreenshots) {
		t.Errorf("docs/guide holds %d console screenshots, the browser tests take %d: %v", len(files), len(consoleScreenshots), files)
	}
	for _, name := range consoleScreenshots {
		file := "console-" + name + ".png"
		if _, err := os.Stat(filepath.Join(root, "docs", "guide", file)); err != nil {
			t.Errorf("%s is missing: go test ./cmd/jadpo -run TestConsole -update writes it", file)
		}
		if !strings.Contains(string(guide), "]("+file+")") {
			t.Errorf("docs/guide/console.md does not show %s", file)
		}
	}
}

// The database URL's password appears nowhere: not in the output, not in a page.
func TestConsoleShowsNoSecret(t *testing.T) {
	pgtest.Require(t)
	u, err := url.Parse(pgtest.FreshURL(t))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sekrit-pa55word"
	u.User = url.UserPassword(u.User.Username(), secret) // the test server trusts, and ignores it
	ctx := context.Background()
	st, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Park(ctx, store.Parked{Source: "queue q", Reason: store.ReasonUnlistedType, Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Setenv(consoleTokenEnv, "")
	out, errOut := &syncBuffer{}, &syncBuffer{}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- runContext(cctx, []string{"console", t.TempDir(), "--database", u.String(), "--addr", "127.0.0.1:0"}, strings.NewReader(""), out, errOut)
	}()
	defer func() { cancel(); <-done }()
	re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/login\?token=[0-9a-f]+`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = re.FindStringSubmatch(out.String())
	}
	if m == nil {
		t.Fatalf("no login link:\n%s\n%s", out, errOut)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	var pages strings.Builder
	for _, path := range []string{m[0], m[1] + "/", m[1] + "/parked", m[1] + "/parked/p1", m[1] + "/deliveries"} {
		r, err := c.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("%s: %d", path, r.StatusCode)
		}
		pages.Write(b)
	}
	if !strings.Contains(pages.String(), "xxxxx") {
		t.Errorf("the pages do not name the store (redacted):\n%s", pages.String())
	}
	if all := pages.String() + out.String() + errOut.String(); strings.Contains(all, secret) {
		t.Errorf("the password shows:\n%s", all)
	}
}
