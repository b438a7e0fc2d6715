package console_test

import (
	"context"
	"fmt"
	"github.com/jadpo/jadpo/runtime/store/storetest"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/console"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

const token = "0123456789abcdef0123456789abcdef"

var t0 = testclock.Epoch()

// world is a console over a fresh SQLite store, served by httptest.
type world struct {
	t   *testing.T
	st  *sqlite.Store
	srv *httptest.Server
	log strings.Builder
}

func newWorld(t *testing.T, mod func(*console.Options)) *world {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenPath(ctx, filepath.Join(t.TempDir(), "s.sqlite"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, st: st}
	srv := httptest.NewUnstartedServer(nil)
	o := console.Options{Store: st, Token: token, Hosts: []string{srv.Listener.Addr().String()},
		Now: func() time.Time { return t0.Add(time.Hour) }, Log: slogTo(&w.log)}
	if mod != nil {
		mod(&o)
	}
	h, err := console.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	w.srv = srv
	return w
}

// timed is the store with a time given per call (the store's clock pinned to it).
func (w *world) timed() storetest.Timed { return storetest.Timed{Store: w.st} }

func (w *world) park(p store.Parked) store.ID {
	w.t.Helper()
	_, id, err := w.timed().Park(context.Background(), t0, p)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func (w *world) show(id store.ID) store.Entry {
	w.t.Helper()
	e, err := w.st.Show(context.Background(), id, false)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// client is a browser: its own cookie jar, and no redirects followed.
func (w *world) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (w *world) loggedIn() *http.Client {
	w.t.Helper()
	c := w.client()
	resp := w.get(c, "/login?token="+token)
	if resp.code != 200 || !strings.Contains(resp.body, "Logged in") {
		w.t.Fatalf("login: %d %s", resp.code, resp.body)
	}
	return c
}

type response struct {
	code   int
	header http.Header
	body   string
}

func (w *world) get(c *http.Client, path string) response {
	w.t.Helper()
	r, err := c.Get(w.srv.URL + path)
	if err != nil {
		w.t.Fatal(err)
	}
	return read(w.t, r)
}

func (w *world) post(c *http.Client, path string, form url.Values) response {
	w.t.Helper()
	r, err := c.PostForm(w.srv.URL+path, form)
	if err != nil {
		w.t.Fatal(err)
	}
	return read(w.t, r)
}

func read(t *testing.T, r *http.Response) response {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return response{r.StatusCode, r.Header, string(b)}
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

func parked(body string, reason store.Reason) store.Parked {
	p := store.Parked{Source: "queue warehouse_queue", Reason: reason, Body: []byte(body), WireType: "order.delayed"}
	if reason == store.ReasonUnreadable {
		p.EventName, p.WireType = "OrderShipped", ""
		p.Problems = []store.Problem{{Field: "order_id", Rule: "min_length"}}
	}
	return p
}

func TestPagesNeedASession(t *testing.T) {
	w := newWorld(t, func(o *console.Options) { o.StoreName = "postgres://ops@db.internal/events" })
	c := w.client()
	for _, path := range []string{"/", "/parked", "/deliveries", "/parked/p1", "/live", "/parked/p1/body", "/login"} {
		r := w.get(c, path)
		if strings.Contains(r.body, "db.internal") {
			t.Errorf("GET %s without a session names the store:\n%s", path, r.body)
		}
		if path == "/login" {
			continue
		}
		if r.code != http.StatusUnauthorized || !strings.Contains(r.body, `name="token"`) {
			t.Errorf("GET %s without a session: %d, want 401 and the login page:\n%s", path, r.code, r.body)
		}
	}
	if r := w.get(c, "/login?token=not-the-token-0123456789"); r.code != http.StatusUnauthorized || len(c.Jar.Cookies(mustURL(w.srv.URL))) != 0 {
		t.Errorf("a wrong token: %d, cookies %v", r.code, c.Jar.Cookies(mustURL(w.srv.URL)))
	}
	if r := w.post(c, "/change", url.Values{"action": {"retry"}, "id": {"p1"}}); r.code != http.StatusUnauthorized {
		t.Errorf("POST /change without a session: %d, want 401", r.code)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestLoginCookieIsHttpOnlyStrict(t *testing.T) {
	w := newWorld(t, nil)
	r, err := w.client().Get(w.srv.URL + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	sc := r.Header.Get("Set-Cookie")
	for _, want := range []string{"jadpo_console=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if strings.Contains(sc, "Secure") || strings.Contains(sc, token) {
		t.Errorf("Set-Cookie %q: Secure without TLS, or the token itself", sc)
	}
	// Behind TLS the cookie is Secure.
	w2 := newWorld(t, func(o *console.Options) { o.SecureCookie = true })
	r, err = w2.client().Get(w2.srv.URL + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if sc := r.Header.Get("Set-Cookie"); !strings.Contains(sc, "Secure") {
		t.Errorf("Set-Cookie %q behind TLS lacks Secure", sc)
	}
	if !strings.Contains(w.log.String(), "console login") {
		t.Errorf("the login is not logged: %s", w.log.String())
	}
}

func TestHostMustBeTheAddressServed(t *testing.T) {
	w := newWorld(t, nil)
	req, _ := http.NewRequest("GET", w.srv.URL+"/login", nil)
	req.Host = "attacker.example:8484"
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := read(t, r)
	if resp.code != http.StatusMisdirectedRequest || !strings.Contains(resp.body, "DNS rebinding") {
		t.Errorf("Host attacker.example: %d %s, want 421 naming DNS rebinding", resp.code, resp.body)
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	w := newWorld(t, nil)
	w.park(parked(`{}`, store.ReasonUnlistedType))
	c := w.loggedIn()
	for _, path := range []string{"/login", "/", "/parked", "/parked/p1", "/static/console.css", "/static/console.js", "/nope"} {
		r := w.get(c, path)
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q", path, r.header.Get("X-Frame-Options"), r.header.Get("X-Content-Type-Options"))
		}
		// Nothing from another origin, no inline script or style.
		if strings.Contains(r.body, "http://") || strings.Contains(r.body, "https://") || regexp.MustCompile(`<script>|<script [^s]|style=`).MatchString(r.body) {
			t.Errorf("%s refers to another origin or inlines script or style:\n%s", path, r.body)
		}
	}
}

func TestChangeWithoutCSRFIsRefused(t *testing.T) {
	w := newWorld(t, nil)
	id := w.park(parked(`{}`, store.ReasonUnlistedType))
	c := w.loggedIn()
	for _, form := range []url.Values{
		{"action": {"retry"}, "id": {id.String()}},
		{"action": {"retry"}, "id": {id.String()}, "csrf": {strings.Repeat("0", 64)}},
	} {
		if r := w.post(c, "/change", form); r.code != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
			t.Errorf("a change posted with csrf %q: %d %s, want 403", form.Get("csrf"), r.code, r.body)
		}
	}
	if e := w.show(id); e.State != store.ListFailed {
		t.Errorf("%s is %s after refused changes, want failed", id, e.State)
	}
	// Another origin's form, with the right token (a stolen one), is refused too.
	page := w.get(c, "/parked")
	req, _ := http.NewRequest("POST", w.srv.URL+"/change", strings.NewReader(url.Values{"action": {"retry"}, "id": {id.String()}, "csrf": {csrfOf(t, page.body)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://attacker.example")
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp := read(t, r); resp.code != http.StatusForbidden {
		t.Errorf("a change from another origin: %d, want 403", resp.code)
	}
}

func TestReadOnlyHidesAndRefusesChanges(t *testing.T) {
	w := newWorld(t, func(o *console.Options) { o.ReadOnly = true })
	id := w.park(parked(`{}`, store.ReasonUnlistedType))
	c := w.loggedIn()
	for _, path := range []string{"/parked", "/parked/" + id.String(), "/deliveries"} {
		r := w.get(c, path)
		if strings.Contains(r.body, `value="retry"`) || strings.Contains(r.body, `value="dismiss"`) || !strings.Contains(r.body, "read-only") {
			t.Errorf("%s shows a change in read-only mode:\n%s", path, r.body)
		}
	}
	csrf := csrfOf(t, w.get(c, "/parked").body) // the logout form's
	if r := w.post(c, "/change", url.Values{"action": {"retry"}, "id": {id.String()}, "csrf": {csrf}}); r.code != http.StatusForbidden {
		t.Errorf("a change in read-only mode: %d, want 403", r.code)
	}
	if e := w.show(id); e.State != store.ListFailed {
		t.Errorf("%s is %s, want failed", id, e.State)
	}
}

func TestBodiesAndFieldsShowAsText(t *testing.T) {
	w := newWorld(t, nil)
	p := parked(`{"note":"<script>alert(1)</script>","x":"`+"\x1b[2J"+`"}`, store.ReasonUnreadable)
	p.ReceivedID = "<img src=x onerror=alert(2)>"
	p.Problems = []store.Problem{{Field: "note</td><script>", Rule: "max_length\u202e"}}
	id := w.park(p)
	c := w.loggedIn()
	for _, path := range []string{"/parked", "/parked/" + id.String()} {
		r := w.get(c, path)
		if strings.Contains(r.body, "<script>alert") || strings.Contains(r.body, "<img src=x") || strings.Contains(r.body, "\x1b") ||
			strings.Contains(r.body, "\u202e") || strings.Contains(r.body, "</td><script>") {
			t.Errorf("%s holds the producer's markup or control characters as they are:\n%s", path, r.body)
		}
		if !strings.Contains(r.body, "&lt;img src=x onerror=alert(2)&gt;") {
			t.Errorf("%s does not show the message id as text", path)
		}
	}
	page := w.get(c, "/parked/"+id.String()).body
	for _, want := range []string{`&lt;script&gt;alert(1)&lt;/script&gt;`, `\u001b[2J`, `max_length\u202e`, `note&lt;/td&gt;&lt;script&gt;`} {
		if !strings.Contains(page, want) {
			t.Errorf("the message page lacks %s:\n%s", want, page)
		}
	}
	// The download is the exact bytes, as an attachment.
	r := w.get(c, "/parked/"+id.String()+"/body")
	if r.body != string(p.Body) || !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("the body's download: %q %v", r.body, r.header)
	}
}

func TestRetryOneThenDismissAllMatching(t *testing.T) {
	w := newWorld(t, nil)
	one := w.park(parked(`{"a":1}`, store.ReasonUnlistedType))
	var unreadable []store.ID
	for i := range 3 {
		unreadable = append(unreadable, w.park(parked(fmt.Sprintf(`{"b":%d}`, i), store.ReasonUnreadable)))
	}
	c := w.loggedIn()
	csrf := csrfOf(t, w.get(c, "/parked").body)
	r := w.post(c, "/change", url.Values{"action": {"retry"}, "id": {one.String()}, "csrf": {csrf}, "return": {"/parked/" + one.String()}})
	if r.code != http.StatusSeeOther || r.header.Get("Location") != "/parked/"+one.String() {
		t.Fatalf("retry: %d %v %s", r.code, r.header, r.body)
	}
	if e := w.show(one); e.State != store.ListPending {
		t.Errorf("%s is %s after retry, want pending", one, e.State)
	}
	if page := w.get(c, "/parked/"+one.String()).body; !strings.Contains(page, "Retried 1: "+one.String()) {
		t.Errorf("the page after the retry does not say so:\n%s", page)
	}
	// Retrying it again: the store's rule, only failed is retried, refuses it.
	w.post(c, "/change", url.Values{"action": {"retry"}, "id": {one.String()}, "csrf": {csrf}, "return": {"/parked"}})
	if page := w.get(c, "/parked").body; !strings.Contains(page, "Nothing changed: retry refused") {
		t.Errorf("a second retry is not refused:\n%s", page)
	}
	// Everything matching reason=unreadable: a confirmation with the count first.
	all := url.Values{"action": {"dismiss"}, "all": {"1"}, "kind": {"parked"}, "reason": {"unreadable"}, "csrf": {csrf}, "return": {"/parked?reason=unreadable"}}
	r = w.post(c, "/change", all)
	if r.code != 200 || !strings.Contains(r.body, "<strong>3</strong> failed parked message(s) will be dismissed") {
		t.Fatalf("the confirmation: %d\n%s", r.code, r.body)
	}
	for _, id := range unreadable {
		if e := w.show(id); e.State != store.ListFailed {
			t.Fatalf("%s changed before the confirmation: %s", id, e.State)
		}
	}
	// Confirmed with a count that no longer holds: nothing changes.
	stale := cloneValues(all)
	stale.Set("confirm", "yes")
	stale.Set("count", "2")
	w.post(c, "/change", stale)
	if e := w.show(unreadable[0]); e.State != store.ListFailed {
		t.Errorf("a stale confirmation changed %s", unreadable[0])
	}
	ok := cloneValues(all)
	ok.Set("confirm", "yes")
	ok.Set("count", "3")
	if r := w.post(c, "/change", ok); r.code != http.StatusSeeOther {
		t.Fatalf("confirmed: %d %s", r.code, r.body)
	}
	for _, id := range unreadable {
		if e := w.show(id); e.State != store.ListDismissed {
			t.Errorf("%s is %s, want dismissed", id, e.State)
		}
	}
	if e := w.show(one); e.State != store.ListPending {
		t.Errorf("the unlisted_type message %s changed: %s", one, e.State)
	}
	log := w.log.String()
	if !strings.Contains(log, "action=dismiss") || !strings.Contains(log, "count=3") || !regexp.MustCompile(`session=s-[0-9a-f]{8}`).MatchString(log) {
		t.Errorf("the change is not logged with its session:\n%s", log)
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func TestListsPageByKeyset(t *testing.T) {
	w := newWorld(t, nil)
	for i := range 60 {
		w.park(parked(fmt.Sprintf(`{"n":%d}`, i), store.ReasonUnlistedType))
	}
	c := w.loggedIn()
	first := w.get(c, "/parked").body
	if n := strings.Count(first, `name="id"`); n != 50 {
		t.Errorf("the first page has %d rows, want 50", n)
	}
	next := regexp.MustCompile(`href="(/parked\?before=(\d+))" rel="next"`).FindStringSubmatch(first)
	if next == nil || next[2] != "11" {
		t.Fatalf("the first page's next link: %v", next)
	}
	second := w.get(c, strings.ReplaceAll(next[1], "&amp;", "&")).body
	if n := strings.Count(second, `name="id"`); n != 10 || strings.Contains(second, `rel="next"`) || !strings.Contains(second, ">p10<") || !strings.Contains(second, ">p1<") {
		t.Errorf("the second page: %d rows\n%s", n, second)
	}
}

func TestOverviewCountsAndRefreshes(t *testing.T) {
	w := newWorld(t, nil)
	at := t0.Add(time.Hour - 3*time.Minute)
	if _, err := w.timed().KeepBatch(context.Background(), at, []store.Keep{
		{Source: "queue warehouse_queue", ReceivedID: "m1", EventName: "OrderShipped", EventJSON: []byte(`{}`), Subscribers: []string{"pack_order"}},
		{Source: "queue warehouse_queue", ReceivedID: "m2", EventName: "OrderShipped", EventJSON: []byte(`{}`), Subscribers: []string{"pack_order"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.timed().Park(context.Background(), at, parked(`{}`, store.ReasonUnlistedType)); err != nil {
		t.Fatal(err)
	}
	c := w.loggedIn()
	page := w.get(c, "/").body
	for _, want := range []string{"last hour: <strong class=\"kept-text\">2 kept</strong>", ">1 parked</a>", `aria-label="queue warehouse_queue, last day: 2 kept, 1 parked"`,
		`data-src="/live"`, "pack_order", "jadpo_outbox"} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %q:\n%s", want, page)
		}
	}
	live := w.get(c, "/live").body
	if strings.Contains(live, "<html") || !strings.Contains(live, "2 kept") {
		t.Errorf("/live is not the overview's live part alone:\n%s", live)
	}
}

func TestNewRefusesAWeakToken(t *testing.T) {
	w := newWorld(t, nil)
	if _, err := console.New(console.Options{Store: w.st, Token: "short"}); err == nil || !strings.Contains(err.Error(), "16 characters") {
		t.Errorf("a short token: %v", err)
	}
}

func TestMountedUnderAPrefix(t *testing.T) {
	w := newWorld(t, func(o *console.Options) { o.Prefix = "/ops/console" })
	c := w.client()
	r := w.get(c, "/ops/console/login?token="+token)
	if r.code != 200 || !strings.Contains(r.body, `href="/ops/console/"`) {
		t.Fatalf("login under a prefix: %d %s", r.code, r.body)
	}
	if r := w.get(c, "/ops/console/parked"); r.code != 200 || !strings.Contains(r.body, `action="/ops/console/parked"`) {
		t.Errorf("the parked list under a prefix: %d", r.code)
	}
	if r := w.get(c, "/parked"); r.code != http.StatusNotFound {
		t.Errorf("outside the prefix: %d, want 404", r.code)
	}
}

// With MetricsURL the overview shows what the store does not keep: repeats, the parks
// over a broker's delivery limit (the store has them as unreadable), and what
// housekeeping deleted, from jadpo run's metrics.
func TestOverviewShowsRunMetrics(t *testing.T) {
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# TYPE jadpo_messages_received_total counter
jadpo_messages_received_total{queue="warehouse_queue"} 6
# TYPE jadpo_messages_kept_total counter
jadpo_messages_kept_total{queue="warehouse_queue"} 1
# TYPE jadpo_messages_repeated_total counter
jadpo_messages_repeated_total{queue="warehouse_queue"} 1
# TYPE jadpo_messages_parked_total counter
jadpo_messages_parked_total{queue="warehouse_queue",reason="unreadable"} 2
jadpo_messages_parked_total{queue="warehouse_queue",reason="too_large"} 2
# TYPE jadpo_messages_parked_delivery_limit_total counter
jadpo_messages_parked_delivery_limit_total{queue="warehouse_queue"} 1
# TYPE jadpo_store_housekept_rows_total counter
jadpo_store_housekept_rows_total{table="jadpo_received_events"} 17
`)
	}))
	defer metrics.Close()
	var hours atomic.Int64 // each request an hour later: the figures are read afresh each time
	w := newWorld(t, func(o *console.Options) {
		o.MetricsURL, o.Refresh = metrics.URL, time.Nanosecond
		o.Now = func() time.Time { return t0.Add(time.Duration(hours.Add(1)) * time.Hour) }
	})
	page := w.get(w.loggedIn(), "/").body
	for _, want := range []string{
		`<th scope="row">warehouse_queue</th><td class="num">6</td><td class="num">1</td><td class="num">1</td><td class="num">4</td><td class="num">1</td>`,
		`<th scope="row">jadpo_received_events</th><td class="num">17</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %s:\n%s", want, page)
		}
	}
	metrics.Close()
	page = w.get(w.loggedIn(), "/live").body
	if !strings.Contains(page, "Could not read them") {
		t.Errorf("an unreachable metrics page is not said:\n%s", page)
	}
	// Without MetricsURL, the overview says where those counts are.
	w2 := newWorld(t, nil)
	if page := w2.get(w2.loggedIn(), "/").body; !strings.Contains(page, "jadpo_messages_repeated_total") || strings.Contains(page, `id="run"`) {
		t.Errorf("without metrics:\n%s", page)
	}
}

// countingStore counts the store's Stats calls, each taking at least delay.
type countingStore struct {
	*sqlite.Store
	stats atomic.Int32
	delay time.Duration
}

func (c *countingStore) Stats(ctx context.Context) (store.Stats, error) {
	c.stats.Add(1)
	time.Sleep(c.delay)
	return c.Store.Stats(ctx)
}

// Every open overview polls: within half a refresh interval they share one reading of the
// store's figures.
func TestOverviewFiguresAreReadOncePerRefresh(t *testing.T) {
	var now atomic.Int64 // microseconds from t0; the server's goroutines read it
	var cs *countingStore
	w := newWorld(t, func(o *console.Options) {
		cs = &countingStore{Store: o.Store.(*sqlite.Store)}
		o.Store = cs
		o.Refresh = 10 * time.Second
		o.Now = func() time.Time { return t0.Add(time.Duration(now.Load()) * time.Microsecond) }
	})
	a, b := w.loggedIn(), w.loggedIn()
	w.get(a, "/")
	w.get(b, "/live")
	w.get(a, "/live")
	if n := cs.stats.Load(); n != 1 {
		t.Errorf("three overviews within 5s read the store's figures %d times, want 1", n)
	}
	now.Store((5 * time.Second).Microseconds())
	w.get(b, "/live")
	if n := cs.stats.Load(); n != 2 {
		t.Errorf("an overview half a refresh later read the figures %d times in all, want 2", n)
	}
}

// A filter the console cannot read is a 400 saying how to write it, not an empty list.
func TestBadFiltersSayHowToFixThem(t *testing.T) {
	w := newWorld(t, nil)
	w.park(parked(`{}`, store.ReasonUnlistedType))
	c := w.loggedIn()
	for path, want := range map[string]string{
		"/parked?from=yesterday":  "write it as 2026-01-31T14:05 (UTC)",
		"/parked?reason=bogus":    "not one of unlisted_type, unreadable, too_large",
		"/parked?state=lost":      "not one of failed, pending, dismissed",
		"/parked?before=p3":       "is not a row id",
		"/deliveries?state=gone":  "not a delivery state",
		"/parked/d1":              "is not a parked message",
		"/deliveries/42":          "no such delivery",
		"/parked?to=2026-13-01T0": "is not a time",
	} {
		r := w.get(c, path)
		if (r.code != http.StatusBadRequest && r.code != http.StatusNotFound) || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d, want 400 or 404 saying %q:\n%s", path, r.code, want, r.body)
		}
	}
	// A time range that holds the message lists it; one that does not, not.
	in := "/parked?from=" + t0.Add(-time.Hour).Format("2006-01-02T15:04") + "&to=" + t0.Add(time.Hour).Format("2006-01-02T15:04")
	if r := w.get(c, in); !strings.Contains(r.body, ">p1<") {
		t.Errorf("a range holding p1 does not list it (parked at %s)", t0)
	}
	if r := w.get(c, "/parked?to=2000-01-01T00:00"); strings.Contains(r.body, ">p1<") {
		t.Error("a range before p1 lists it")
	}
}

// A store whose figures take long to count is not counted again and again: at most once per
// ten times the last count's duration, however short the refresh interval.
func TestOverviewOfASlowStoreIsReadLessOften(t *testing.T) {
	var now atomic.Int64
	var cs *countingStore
	w := newWorld(t, func(o *console.Options) {
		cs = &countingStore{Store: o.Store.(*sqlite.Store), delay: 30 * time.Millisecond}
		o.Store = cs
		o.Refresh = time.Nanosecond
		o.Now = func() time.Time { return t0.Add(time.Duration(now.Load()) * time.Microsecond) }
	})
	c := w.loggedIn()
	w.get(c, "/live")
	now.Store((100 * time.Millisecond).Microseconds()) // under 10 x 30 ms later
	w.get(c, "/live")
	if n := cs.stats.Load(); n != 1 {
		t.Errorf("a store counted in 30 ms was counted %d times within 100 ms, want 1", n)
	}
	now.Store((2 * time.Second).Microseconds())
	w.get(c, "/live")
	if n := cs.stats.Load(); n != 2 {
		t.Errorf("2 s later the figures were read %d times in all, want 2", n)
	}
}

// Two operators retry the same message at once: one change wins, the other changes
// nothing and is told so (the store's rule, as for jadpo deliveries retry).
func TestConcurrentChangesWinOnce(t *testing.T) {
	w := newWorld(t, nil)
	id := w.park(parked(`{}`, store.ReasonUnlistedType))
	a, b := w.loggedIn(), w.loggedIn()
	csrfA, csrfB := csrfOf(t, w.get(a, "/parked").body), csrfOf(t, w.get(b, "/parked").body)
	var wg sync.WaitGroup
	for _, cl := range []struct {
		c    *http.Client
		csrf string
	}{{a, csrfA}, {b, csrfB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cl.c.PostForm(w.srv.URL+"/change", url.Values{"action": {"retry"}, "id": {id.String()}, "csrf": {cl.csrf}, "return": {"/parked"}})
			if err == nil {
				r.Body.Close()
			}
		}()
	}
	wg.Wait()
	pa, pb := w.get(a, "/parked").body, w.get(b, "/parked").body
	won := strings.Count(pa+pb, "Retried 1: "+id.String())
	lost := strings.Count(pa+pb, "Nothing changed: retry refused, nothing changed: "+id.String()+" is pending")
	if won != 1 || lost != 1 {
		t.Errorf("two retries of %s at once: %d won and %d were refused, want 1 and 1\n%s\n%s", id, won, lost, pa, pb)
	}
	if e := w.show(id); e.State != store.ListPending {
		t.Errorf("%s is %s, want pending", id, e.State)
	}
}

// A delivery's page lists each settled attempt: time, number, outcome, code and error
// text, escaped like every value (issue 27).
func TestDeliveryPageListsEachAttempt(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	tm := w.timed()
	if _, err := tm.KeepBatch(ctx, t0, []store.Keep{
		{Source: "queue warehouse_queue", ReceivedID: "m1", EventName: "OrderShipped", EventJSON: []byte(`{}`), Subscribers: []string{"pack_order"}},
	}); err != nil {
		t.Fatal(err)
	}
	settle := func(at time.Time, outcome store.SettleOutcome, code, text string) int64 {
		t.Helper()
		cl, err := tm.ClaimDeliveries(ctx, at, 1, time.Minute)
		if err != nil || len(cl) != 1 {
			t.Fatalf("claim: %v %v", cl, err)
		}
		if ok, err := tm.SettleDelivery(ctx, at, store.Settlement{ID: cl[0].ID, Token: cl[0].Token, Outcome: outcome, RetryAfter: time.Second, ErrorCode: code, Error: text}); err != nil || !ok {
			t.Fatalf("settle: %v %v", ok, err)
		}
		return cl[0].ID
	}
	c := w.loggedIn()
	id := settle(t0.Add(time.Minute), store.SettleReleased, "", "")
	if page := w.get(c, fmt.Sprintf("/deliveries/d%d", id)).body; !strings.Contains(page, "Not attempted yet") {
		t.Errorf("a released claim shows as an attempt:\n%s", page)
	}
	settle(t0.Add(2*time.Minute), store.SettleRetryWait, "http_503", "jobs.create_job refused: http_503 (HTTP 503, temporary)")
	settle(t0.Add(3*time.Minute), store.SettleFailed, "handler</td>", "boom <script>alert(1)</script>\x1b[2J")
	page := w.get(c, fmt.Sprintf("/deliveries/d%d", id)).body
	rows := regexp.MustCompile(`(?s)<table id="attempts">.*?</table>`).FindString(page)
	want := regexp.MustCompile(`(?s)<tr><td><time datetime="` + regexp.QuoteMeta(t0.Add(2*time.Minute).Format("2006-01-02 15:04:05Z")) + `">[^<]*</time></td><td>1</td><td><span class="state state-retry_wait">retry_wait</span></td><td><code>http_503</code></td><td>jobs.create_job refused: http_503 \(HTTP 503, temporary\)</td></tr>` +
		`\s*<tr><td><time datetime="` + regexp.QuoteMeta(t0.Add(3*time.Minute).Format("2006-01-02 15:04:05Z")) + `">[^<]*</time></td><td>2</td><td><span class="state state-failed">failed</span></td><td><code>handler&lt;/td&gt;</code></td><td>boom &lt;script&gt;alert\(1\)&lt;/script&gt;\\u001b\[2J</td></tr>`)
	if !want.MatchString(rows) {
		t.Errorf("the attempts table:\n%s", rows)
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "\x1b") {
		t.Errorf("the page holds an error's markup or control characters as they are:\n%s", page)
	}
}

// The overview lists what housekeeping deleted from the store's record of its runs, with
// or without jadpo run's metrics (issue 27).
func TestOverviewShowsHousekeepingFromTheStore(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	c := w.loggedIn()
	if page := w.get(c, "/").body; !strings.Contains(page, "None recorded yet.") {
		t.Errorf("a store never housekept:\n%s", page)
	}
	if _, err := w.timed().KeepBatch(ctx, t0, []store.Keep{
		{Source: "queue warehouse_queue", ReceivedID: "m1", EventName: "OrderShipped", EventJSON: []byte(`{}`)},
		{Source: "queue warehouse_queue", ReceivedID: "m2", EventName: "OrderShipped", EventJSON: []byte(`{}`)},
	}); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(store.HousekeepAfter + time.Minute)
	if h, err := w.timed().Housekeep(ctx, at, store.Housekeeping{}); err != nil || h.ReceivedIDs != 2 || h.Outbox != 2 {
		t.Fatalf("Housekeep = %+v, %v", h, err)
	}
	w2 := newWorld(t, func(o *console.Options) { o.Store = w.st })
	page := w2.get(w2.loggedIn(), "/").body
	want := `<tr><td><time datetime="` + at.Format("2006-01-02 15:04:05Z") + `">` + at.Format("2006-01-02 15:04:05Z") + `</time></td><td class="num">2</td><td class="num">0</td><td class="num">0</td><td class="num">2</td></tr>`
	if !strings.Contains(page, want) {
		t.Errorf("the overview lacks the run %s:\n%s", want, page)
	}
}
