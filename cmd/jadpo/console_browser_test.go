package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/jadpo/jadpo/runtime/store"
)

// chromiumPath finds Debian's chromium; the browser tests skip without it, unless
// JADPO_REQUIRE_CHROMIUM=1 (which .ci/run sets). `make test` installs it when missing.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("JADPO_CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	msg := "the console's browser tests need Debian's chromium (apt-get install -y chromium, or make chromium)"
	if os.Getenv("JADPO_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + ", and JADPO_REQUIRE_CHROMIUM=1 is set")
	}
	t.Skip(msg + "; JADPO_REQUIRE_CHROMIUM=1 makes this a failure")
	return ""
}

// consoleWorld is the warehouse demo's store, with two rows added (a body holding a
// script, a failed delivery), and `jadpo console` serving it.
type consoleWorld struct {
	st             store.Store
	link           string // the login link printed
	base           string
	stdout, stderr *syncBuffer
}

func startConsole(t *testing.T, extra ...string) *consoleWorld {
	t.Helper()
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI("dev", dir, "--demo"); code != 0 {
		t.Fatalf("jadpo dev --demo: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, _, err := st.Park(ctx, store.Parked{Source: "queue warehouse_queue", WireType: "order.cancelled",
		Reason: store.ReasonUnlistedType, Body: []byte(`<script>alert(1)</script>`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeepBatch(ctx, []store.Keep{{Source: "queue warehouse_queue", ReceivedID: "m-2001", EventName: "OrderShipped",
		EventJSON: []byte(`{"order_id":"o-2001","carrier":"dhl"}`), Subscribers: []string{"pack_order"}}}); err != nil {
		t.Fatal(err)
	}
	claimed, err := st.ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if ok, err := st.SettleDelivery(ctx, store.Settlement{ID: claimed[0].ID, Token: claimed[0].Token, Outcome: store.SettleFailed, ErrorCode: "http.503"}); !ok || err != nil {
		t.Fatalf("settle: %v %v", ok, err)
	}
	w := &consoleWorld{st: st, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- runContext(cctx, append([]string{"console", dir, "--addr", "127.0.0.1:0", "--refresh", "200ms"}, extra...), strings.NewReader(""), w.stdout, w.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("jadpo console did not stop")
		}
	})
	re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/login\?token=[0-9a-f]{64}`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(w.stdout.String()); m != nil {
			w.link, w.base = m[0], m[1]
			return w
		}
		select {
		case code := <-done:
			t.Fatalf("jadpo console exited %d\n%s\n%s", code, w.stdout, w.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("jadpo console printed no login link:\n%s\n%s", w.stdout, w.stderr)
	return nil
}

func (w *consoleWorld) state(t *testing.T, id string) store.ListState {
	t.Helper()
	sid, err := store.ParseID(id)
	if err != nil {
		t.Fatal(err)
	}
	e, err := w.st.Show(context.Background(), sid, false)
	if err != nil {
		t.Fatal(err)
	}
	return e.State
}

// newBrowser starts headless chromium with a fresh profile and background networking off.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// tab is a new browser context (its own cookies) in the browser of ctx.
func tab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first call makes the tab, which lives as long as that call's context: this one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// step runs actions with a time limit, failing the test on an error.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		d, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		where, _ := chromedp.Run(d, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("%s: %v; the page: %s", what, err, where)
	}
}

func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot takes the page whole. It is written to docs/guide/console-NAME.png, which
// docs/guide/console.md shows, with -update or when the file is missing.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !slices.Contains(consoleScreenshots, name) {
		t.Fatalf("screenshot %s is not one of consoleScreenshots", name)
	}
	png := value(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if len(png) < 1000 {
		t.Fatalf("screenshot %s: %d bytes", name, len(png))
	}
	path := filepath.Join(repoRoot(t), "docs", "guide", "console-"+name+".png")
	if _, err := os.Stat(path); err == nil && (updateDocs == nil || updateDocs.Value.String() != "true") {
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitPage evaluates js until it is true, across navigations, for at most 10 seconds.
func waitPage(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: still false after 10s (%v)", js, last)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return value(t, ctx, "the text of "+sel, chromedp.TextContent(chromedp.CSS(sel)))
}

// The console in a real browser (issue 27): log in with the printed link, the demo's
// counts, filter, open, retry one, dismiss a filtered selection and everything a filter
// matches, and the store changes; a script in a body does not run; a change without the
// CSRF token is refused; another browser without the token gets the login page.
func TestConsoleInABrowser(t *testing.T) {
	browser := newBrowser(t)
	w := startConsole(t)
	ctx := tab(t, browser)
	var dialogs atomic.Int32
	go func() {
		for _, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			dialogs.Add(1)
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, _ = chromedp.Call(c, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			cancel()
		}
	}()

	// Log in with the link: the overview, with the store's counts.
	step(t, ctx, "log in", chromedp.Navigate(w.link))
	waitPage(t, ctx, `location.pathname === "/" && document.readyState === "complete" && !!document.getElementById("live")`)
	if loc := value(t, ctx, "location", chromedp.Location()); loc != w.base+"/" {
		t.Errorf("after the login link the browser is at %s, want the overview (the token out of the address bar)", loc)
	}
	stats, err := w.st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	live := text(t, ctx, "#live")
	for _, want := range []string{
		fmt.Sprintf("last hour: %d kept, %d parked", stats.ReceivedIDs, stats.ParkedTotal()),
		"queue warehouse_queue", "pack_order", "jadpo_parked_messages",
	} {
		if !strings.Contains(live, want) {
			t.Errorf("the overview lacks %q:\n%s", want, live)
		}
	}
	if stats.ReceivedIDs != 3 || stats.ParkedTotal() != 4 {
		t.Errorf("the seeded store holds %d received ids and %d parked messages, want 3 and 4 (the demo's and two more)", stats.ReceivedIDs, stats.ParkedTotal())
	}
	screenshot(t, ctx, "overview")

	// The overview refreshes itself: a message parked now shows without a reload.
	if _, _, err := w.st.Park(context.Background(), store.Parked{Source: "queue warehouse_queue", WireType: "order.lost",
		Reason: store.ReasonUnlistedType, Body: []byte(`{"late":true}`)}); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, fmt.Sprintf(`document.getElementById("live").textContent.includes("last hour: %d kept, %d parked")`, stats.ReceivedIDs, stats.ParkedTotal()+1))

	// Filter the parked messages by reason.
	step(t, ctx, "filter by reason",
		chromedp.Navigate(w.base+"/parked"),
		chromedp.SetValue(chromedp.CSS(`select[name=reason]`), "unreadable"),
		chromedp.Click(chromedp.CSS(`form.filters button[type=submit]`)),
	)
	waitPage(t, ctx, `location.search.includes("reason=unreadable") && document.readyState === "complete" && !!document.querySelector("table.list")`)
	rows := text(t, ctx, "table.list tbody")
	if !strings.Contains(rows, "p2") || !strings.Contains(rows, "p3") || strings.Contains(rows, "too_large") || strings.Contains(rows, "unlisted_type") {
		t.Errorf("parked messages filtered by reason unreadable:\n%s", rows)
	}
	screenshot(t, ctx, "parked")

	// Open one: its problems.
	step(t, ctx, "open p2", chromedp.Click(chromedp.CSS(`a[href="/parked/p2"]`)), chromedp.WaitVisible(chromedp.CSS("#problems")))
	problems := text(t, ctx, "#problems")
	for _, want := range []string{"order_id", "min_length", "carrier", "enum"} {
		if !strings.Contains(problems, want) {
			t.Errorf("p2's problems lack %s:\n%s", want, problems)
		}
	}
	if body := text(t, ctx, "#body"); !strings.Contains(body, "\n  \"") {
		t.Errorf("p2's JSON body is not indented:\n%s", body)
	}
	screenshot(t, ctx, "message")

	// The page is reachable by keyboard: Tab reaches the Retry button.
	reached := false
	for range 40 {
		step(t, ctx, "tab", chromedp.KeyEvent("\t"))
		if v := value(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement ? (document.activeElement.value || "") : ""`)); v == "retry" {
			reached = true
			break
		}
	}
	if !reached {
		t.Error("40 presses of Tab do not reach the Retry button")
	}

	// Retry it: the store changes.
	step(t, ctx, "retry p2", chromedp.Click(chromedp.CSS(`form.actions button[value=retry]`)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if f := text(t, ctx, ".flash"); !strings.Contains(f, "Retried 1: p2") {
		t.Errorf("after retrying p2 the page says %q", f)
	}
	if s := w.state(t, "p2"); s != store.ListPending {
		t.Errorf("p2 is %s after the retry, want pending", s)
	}

	// Dismiss a filtered selection: failed unreadable ones, all selected.
	step(t, ctx, "dismiss a selection",
		chromedp.Navigate(w.base+"/parked?reason=unreadable&state=failed"),
		chromedp.Click(chromedp.CSS(`input[data-select-all]`)),
		chromedp.Click(chromedp.CSS(`#selection button[value=dismiss]`)),
		chromedp.WaitVisible(chromedp.CSS(".flash")),
	)
	if s := w.state(t, "p3"); s != store.ListDismissed {
		t.Errorf("p3 is %s after dismissing the selection, want dismissed", s)
	}
	if s := w.state(t, "p2"); s != store.ListPending {
		t.Errorf("p2 (pending, not in the failed filter) is %s, want pending", s)
	}

	// Everything a filter matches, after a confirmation with the count.
	step(t, ctx, "dismiss all too_large",
		chromedp.Navigate(w.base+"/parked?reason=too_large"),
		chromedp.Click(chromedp.CSS(`form.all button[value=dismiss]`)),
		chromedp.WaitVisible(chromedp.CSS("#count")),
	)
	if c := text(t, ctx, "#count"); !strings.Contains(c, "1 failed parked message(s) will be dismissed") {
		t.Errorf("the confirmation says %q", c)
	}
	screenshot(t, ctx, "confirm")
	if s := w.state(t, "p4"); s != store.ListFailed {
		t.Fatalf("p4 changed before the confirmation: %s", s)
	}
	step(t, ctx, "confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if s := w.state(t, "p4"); s != store.ListDismissed {
		t.Errorf("p4 is %s after the confirmed dismissal, want dismissed", s)
	}

	// A body holding a script shows it as text, and it does not run.
	step(t, ctx, "the script body", chromedp.Navigate(w.base+"/parked/p5"), chromedp.WaitVisible(chromedp.CSS("#body")))
	if b := text(t, ctx, "#body"); b != "<script>alert(1)</script>" {
		t.Errorf("p5's body shows as %q", b)
	}
	if n := value(t, ctx, "scripts", chromedp.Evaluate[int](`document.querySelectorAll("main script").length`)); n != 0 {
		t.Errorf("p5's page holds %d script elements", n)
	}

	// A delivery: its attempt, status and error, the event.
	step(t, ctx, "deliveries", chromedp.Navigate(w.base+"/deliveries"), chromedp.WaitVisible(chromedp.CSS("table.list")))
	screenshot(t, ctx, "deliveries")
	step(t, ctx, "the failed delivery", chromedp.Navigate(w.base+"/deliveries?state=failed"), chromedp.Click(chromedp.CSS(`table.list tbody a`)), chromedp.WaitVisible(chromedp.CSS("#attempts")))
	if a := text(t, ctx, "#attempts"); !strings.Contains(a, "http.503") || !strings.Contains(a, "failed") {
		t.Errorf("the failed delivery's attempts: %q", a)
	}
	if b := text(t, ctx, "#body"); !strings.Contains(b, `"order_id": "o-2001"`) {
		t.Errorf("the delivery's event: %q", b)
	}
	screenshot(t, ctx, "delivery")

	// A change posted without the CSRF token is refused, even with the session's cookie.
	status := value(t, ctx, "a change without CSRF", chromedp.Evaluate[int](`fetch("/change", {method: "POST",
		headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "action=retry&id=p3"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("a change without the CSRF token: status %d, want 403", status)
	}
	if s := w.state(t, "p3"); s != store.ListDismissed {
		t.Errorf("p3 is %s after a refused change, want dismissed", s)
	}

	// At 200% zoom of a 1280 px window (640 CSS px at scale 2) and on a phone's 390 px,
	// nothing runs off the side: the pages reflow, wide tables scroll in their own box.
	for _, vp := range []struct {
		width int64
		scale float64
	}{{640, 2}, {390, 1}} {
		step(t, ctx, fmt.Sprintf("%d px", vp.width), chromedp.EmulateViewport(vp.width, 844, chromedp.EmulateScale(vp.scale)))
		for _, path := range []string{"/", "/parked", "/parked/p2", "/deliveries", "/deliveries?state=failed"} {
			step(t, ctx, fmt.Sprintf("%d px %s", vp.width, path), chromedp.Navigate(w.base+path), chromedp.WaitVisible(chromedp.CSS("main")))
			if sw := value(t, ctx, "scroll width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); sw > int(vp.width) {
				t.Errorf("%s at %d px is %d px wide", path, vp.width, sw)
			}
			if path == "/" && vp.width == 390 {
				screenshot(t, ctx, "phone")
			}
		}
	}

	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs opened: a script of a body ran", n)
	}
	log := w.stderr.String()
	if !regexp.MustCompile(`msg="console change" session=s-[0-9a-f]{8} action=retry`).MatchString(log) || !strings.Contains(log, "action=dismiss") {
		t.Errorf("the changes are not logged with their session:\n%s", log)
	}

	// Another browser, without the token: the login page.
	stranger := tab(t, browser)
	step(t, stranger, "a stranger", chromedp.Navigate(w.base+"/parked"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
	if body := text(t, stranger, "main"); strings.Contains(body, "p2") || !strings.Contains(body, "Log in") {
		t.Errorf("without the token the console shows:\n%s", body)
	}
	screenshot(t, stranger, "login")
}

// --read-only in a browser: the pages show no change, and a posted one is refused.
func TestConsoleReadOnlyInABrowser(t *testing.T) {
	browser := newBrowser(t)
	w := startConsole(t, "--read-only")
	ctx := tab(t, browser)
	step(t, ctx, "log in", chromedp.Navigate(w.link))
	waitPage(t, ctx, `location.pathname === "/" && document.readyState === "complete" && !!document.getElementById("live")`)
	step(t, ctx, "p2", chromedp.Navigate(w.base+"/parked/p2"), chromedp.WaitVisible(chromedp.CSS("#problems")))
	if n := value(t, ctx, "buttons", chromedp.Evaluate[int](`document.querySelectorAll("button[value=retry], button[value=dismiss]").length`)); n != 0 {
		t.Errorf("read-only: %d retry or dismiss buttons", n)
	}
	if !strings.Contains(text(t, ctx, "header"), "read-only") {
		t.Error("read-only: the header does not say so")
	}
	csrf := value(t, ctx, "csrf", chromedp.Evaluate[string](`document.querySelector("input[name=csrf]").value`))
	status := value(t, ctx, "a change", chromedp.Evaluate[int](`fetch("/change", {method: "POST",
		headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "action=retry&id=p2&csrf=`+csrf+`"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("read-only: a change answered %d, want 403", status)
	}
	if s := w.state(t, "p2"); s != store.ListFailed {
		t.Errorf("read-only: p2 is %s, want failed", s)
	}
}
