package cfqueuesfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

const acct = "023e105f4ecef8ad9ca31a8372d0c353"

var start = testclock.Epoch()

type harness struct {
	t     *testing.T
	fake  *Fake
	clock *testclock.Manual
	srv   *httptest.Server
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	clock := testclock.NewManual(start)
	opts.Clock = clock
	fake := New(opts)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &harness{t: t, fake: fake, clock: clock, srv: srv}
}

func (h *harness) createQueue(id string, opts QueueOptions) {
	h.t.Helper()
	if err := h.fake.CreateQueue(acct, id, opts); err != nil {
		h.t.Fatal(err)
	}
}

type answer struct {
	status int
	body   map[string]any
}

// code is the first error's code (0 for none).
func (a answer) code() int {
	errs, _ := a.body["errors"].([]any)
	if len(errs) == 0 {
		return 0
	}
	c, _ := errs[0].(map[string]any)["code"].(float64)
	return int(c)
}

func (a answer) message() string {
	errs, _ := a.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	m, _ := errs[0].(map[string]any)["message"].(string)
	return m
}

func (a answer) result() map[string]any { r, _ := a.body["result"].(map[string]any); return r }

// request sends method to path (under the server) with body (a string is
// sent as is, anything else as JSON) and token ("" for no Authorization).
func (h *harness) request(method, path, token string, body any) answer {
	h.t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		raw = string(b)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		h.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatalf("%s %s: answer is not a JSON object: %q", method, path, b)
	}
	if s, ok := out["success"].(bool); !ok || s != (resp.StatusCode == 200) {
		h.t.Fatalf("%s %s: status %d with success %v", method, path, resp.StatusCode, out["success"])
	}
	return answer{status: resp.StatusCode, body: out}
}

func qpath(queue, suffix string) string {
	return "/client/v4/accounts/" + acct + "/queues/" + queue + "/messages" + suffix
}

// call sends an op to a queue with the default token.
func (h *harness) call(queue, op string, body any) answer {
	h.t.Helper()
	suffix := map[string]string{"pull": "/pull", "ack": "/ack", "push": ""}[op]
	return h.request("POST", qpath(queue, suffix), DefaultToken, body)
}

func (h *harness) ok(queue, op string, body any) answer {
	h.t.Helper()
	a := h.call(queue, op, body)
	if a.status != 200 {
		h.t.Fatalf("%s %s: %d %v", op, queue, a.status, a.body)
	}
	return a
}

type pulled struct {
	ID, Body, Lease string
	Attempts        int
	TimestampMs     int64
	Metadata        map[string]any
}

func (h *harness) pull(queue string, in any) ([]pulled, int) {
	h.t.Helper()
	r := h.ok(queue, "pull", in).result()
	var out []pulled
	list, ok := r["messages"].([]any)
	if !ok {
		h.t.Fatalf("pull: no messages list: %v", r)
	}
	for _, x := range list {
		m := x.(map[string]any)
		out = append(out, pulled{ID: m["id"].(string), Body: m["body"].(string), Lease: m["lease_id"].(string),
			Attempts: int(m["attempts"].(float64)), TimestampMs: int64(m["timestamp_ms"].(float64)),
			Metadata: m["metadata"].(map[string]any)})
	}
	return out, int(r["message_backlog_count"].(float64))
}

func leases(ls ...string) []map[string]any {
	var out []map[string]any
	for _, l := range ls {
		out = append(out, map[string]any{"lease_id": l})
	}
	return out
}

func (h *harness) ack(queue string, acks, retries []map[string]any) (int, int) {
	h.t.Helper()
	r := h.ok(queue, "ack", map[string]any{"acks": acks, "retries": retries}).result()
	if w, ok := r["warnings"].([]any); !ok || len(w) != 0 {
		h.t.Errorf("warnings %v", r["warnings"])
	}
	return int(r["ackCount"].(float64)), int(r["retryCount"].(float64))
}

func TestPullVisibilityAndLeases(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	a := h.ok("q", "push", map[string]any{"body": "hello"})
	if a.body["result"] != nil || len(a.body["errors"].([]any)) != 0 || len(a.body["messages"].([]any)) != 0 {
		t.Errorf("push answer %v", a.body)
	}

	ms, backlog := h.pull("q", map[string]any{"visibility_timeout_ms": 10_000})
	if len(ms) != 1 || backlog != 1 {
		t.Fatalf("pull: %v backlog %d", ms, backlog)
	}
	m := ms[0]
	if m.Body != "hello" || m.Attempts != 1 || m.TimestampMs != start.UnixMilli() || len(m.ID) != 32 ||
		m.Metadata["CF-sourceMessageSource"] != "api" || m.Metadata["CF-Content-Type"] != "text" {
		t.Errorf("message %+v", m)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{InFlight: 1}) {
		t.Errorf("stats %+v", st)
	}
	// Invisible until the timeout is over, to the millisecond.
	h.clock.Advance(9999 * time.Millisecond)
	if ms, backlog := h.pull("q", nil); len(ms) != 0 || backlog != 1 {
		t.Fatalf("pulled while in flight: %v", ms)
	}
	h.clock.Advance(time.Millisecond)
	ms2, _ := h.pull("q", nil)
	if len(ms2) != 1 || ms2[0].ID != m.ID || ms2[0].Attempts != 2 || ms2[0].Lease == m.Lease {
		t.Fatalf("redelivery: %+v (first %+v)", ms2, m)
	}
	// The first lease is stale now: pulled again since.
	if a, r := h.ack("q", leases(m.Lease), nil); a != 0 || r != 0 {
		t.Errorf("stale ack took effect: %d %d", a, r)
	}
	// Acking the current lease twice in one request counts once.
	if a, r := h.ack("q", leases(ms2[0].Lease, ms2[0].Lease), nil); a != 1 || r != 0 {
		t.Errorf("ack: %d %d", a, r)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{}) {
		t.Errorf("stats after ack %+v", st)
	}
	if ms, backlog := h.pull("q", nil); len(ms) != 0 || backlog != 0 {
		t.Errorf("after ack: %v %d", ms, backlog)
	}
	if a, _ := h.ack("q", leases(ms2[0].Lease), nil); a != 0 {
		t.Errorf("ack of a gone message took effect")
	}
}

func TestBatchOrderAndDefaults(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	for i := range 12 {
		if _, err := h.fake.Send(acct, "q", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	ms, backlog := h.pull("q", nil) // default batch_size 5
	if len(ms) != 5 || backlog != 12 || ms[0].Body != "0" || ms[4].Body != "4" {
		t.Fatalf("default batch: %v backlog %d", ms, backlog)
	}
	ms, _ = h.pull("q", map[string]any{"batch_size": 100})
	if len(ms) != 7 || ms[0].Body != "5" {
		t.Fatalf("rest: %v", ms)
	}
	// The default visibility timeout is 30 s: after it, the earliest pulled
	// come back first.
	h.clock.Advance(30 * time.Second)
	ms, _ = h.pull("q", map[string]any{"batch_size": 1})
	if len(ms) != 1 || ms[0].Body != "0" || ms[0].Attempts != 2 {
		t.Fatalf("after 30 s: %v", ms)
	}
	if got := h.fake.Messages(acct, "q"); len(got) != 12 || got[0].Body != "0" || got[0].Attempts != 2 || got[0].Visible ||
		got[1].Attempts != 1 || !got[1].Visible {
		t.Errorf("messages %+v", got[:2])
	}
}

func TestAckAfterTimeoutIsStale(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	h.fake.Send(acct, "q", "x")
	ms, _ := h.pull("q", map[string]any{"visibility_timeout_ms": 1000})
	h.clock.Advance(time.Second)
	// Not pulled again, but its visibility timeout ran out.
	if a, r := h.ack("q", leases(ms[0].Lease), leases(ms[0].Lease)); a != 0 || r != 0 {
		t.Errorf("expired lease took effect: %d %d", a, r)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Visible: 1}) {
		t.Errorf("stats %+v", st)
	}
	// Leases of other queues, garbage and unknown ids are ignored alike.
	h.createQueue("other", QueueOptions{})
	h.fake.Send(acct, "other", "y")
	other, _ := h.pull("other", nil)
	if a, _ := h.ack("q", leases(other[0].Lease, "not-a-lease", "%%%", "YWJj"), nil); a != 0 {
		t.Errorf("foreign leases took effect")
	}
}

func TestRetryWithDelay(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	h.fake.Send(acct, "q", "a")
	h.fake.Send(acct, "q", "b")
	ms, _ := h.pull("q", nil)
	a, r := h.ack("q", leases(ms[0].Lease), []map[string]any{
		{"lease_id": ms[1].Lease, "delay_seconds": 10},
		{"lease_id": ms[0].Lease}, // acked just before: ignored
	})
	if a != 1 || r != 1 {
		t.Fatalf("ack/retry: %d %d", a, r)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Delayed: 1}) {
		t.Errorf("stats %+v", st)
	}
	// The retried lease is no longer current.
	if _, r := h.ack("q", nil, leases(ms[1].Lease)); r != 0 {
		t.Errorf("retry of a retried lease took effect")
	}
	h.clock.Advance(9 * time.Second)
	if got, _ := h.pull("q", nil); len(got) != 0 {
		t.Fatalf("pulled during the retry delay: %v", got)
	}
	h.clock.Advance(time.Second)
	got, _ := h.pull("q", nil)
	if len(got) != 1 || got[0].Body != "b" || got[0].Attempts != 2 {
		t.Fatalf("after the delay: %v", got)
	}
	// A retry without delay is visible at once.
	if _, r := h.ack("q", nil, leases(got[0].Lease)); r != 1 {
		t.Fatal("retry")
	}
	if got, _ := h.pull("q", nil); len(got) != 1 || got[0].Attempts != 3 {
		t.Fatalf("after retry 0: %v", got)
	}
}

func TestPushBodies(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	h.ok("q", "push", `{"body": {"a": [1, 2], "b": "x"}}`)
	h.ok("q", "push", map[string]any{"body": 42})
	h.ok("q", "push", map[string]any{"body": "text", "content_type": "json"})
	h.ok("q", "push", map[string]any{"body": "later", "delay_seconds": 5})
	ms, _ := h.pull("q", map[string]any{"batch_size": 10})
	want := []struct{ body, ct string }{{`{"a":[1,2],"b":"x"}`, "json"}, {"42", "json"}, {"text", "json"}}
	if len(ms) != len(want) {
		t.Fatalf("pulled %v", ms)
	}
	for i, w := range want {
		if ms[i].Body != w.body || ms[i].Metadata["CF-Content-Type"] != w.ct {
			t.Errorf("message %d: %q %v, want %q %s", i, ms[i].Body, ms[i].Metadata, w.body, w.ct)
		}
	}
	if st, _ := h.fake.Stats(acct, "q"); st.Delayed != 1 {
		t.Errorf("stats %+v", st)
	}
	h.clock.Advance(5 * time.Second)
	if ms, _ := h.pull("q", nil); len(ms) != 1 || ms[0].Body != "later" {
		t.Errorf("delayed: %v", ms)
	}
}

// exhaust pulls the queue's first message for deliveries from..to, letting
// each lease run out.
func (h *harness) exhaust(queue string, from, to int) string {
	h.t.Helper()
	var id string
	for i := from; i <= to; i++ {
		ms, _ := h.pull(queue, map[string]any{"batch_size": 1, "visibility_timeout_ms": 1000})
		if len(ms) != 1 || ms[0].Attempts != i {
			h.t.Fatalf("delivery %d: %+v", i, ms)
		}
		id = ms[0].ID
		h.clock.Advance(time.Second)
	}
	return id
}

func TestRedeliveryLimitToDeadLetterQueue(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("dlq", QueueOptions{})
	h.createQueue("q", QueueOptions{MaxRetries: 2, DeadLetterQueue: "dlq"})
	h.fake.Send(acct, "q", "poison")
	h.fake.Send(acct, "q", "fine")
	ms, _ := h.pull("q", map[string]any{"batch_size": 2})
	h.ack("q", leases(ms[1].Lease), nil) // "fine" is acked at once
	h.clock.Advance(30 * time.Second)
	id := h.exhaust("q", 2, 3) // deliveries 2 and 3: MaxRetries+1 in all
	if id != ms[0].ID {
		t.Fatal("another message")
	}
	// The 4th delivery does not happen: the message moves.
	if got, backlog := h.pull("q", nil); len(got) != 0 || backlog != 0 {
		t.Fatalf("delivered past the limit: %v %d", got, backlog)
	}
	if got := h.fake.Messages(acct, "q"); len(got) != 0 {
		t.Errorf("still on the queue: %v", got)
	}
	dead := h.fake.Messages(acct, "dlq")
	if len(dead) != 1 || dead[0].ID != id || dead[0].Body != "poison" || dead[0].Attempts != 0 || !dead[0].Visible {
		t.Fatalf("dead letters %+v", dead)
	}
	got, _ := h.pull("dlq", nil)
	if len(got) != 1 || got[0].ID != id || got[0].Attempts != 1 || got[0].TimestampMs != start.UnixMilli() {
		t.Errorf("from the dead-letter queue: %+v", got)
	}
	// Retries count as deliveries too.
	h.fake.Send(acct, "q", "retried")
	for i := 1; i <= 3; i++ {
		ms, _ := h.pull("q", nil)
		if len(ms) != 1 || ms[0].Attempts != i {
			t.Fatalf("retried delivery %d: %v", i, ms)
		}
		h.ack("q", nil, leases(ms[0].Lease))
	}
	if got, _ := h.pull("q", nil); len(got) != 0 || len(h.fake.Messages(acct, "dlq")) != 2 {
		t.Errorf("retried message not moved: %v", got)
	}
}

func TestRedeliveryLimitDeletes(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{}) // MaxRetries 3
	h.fake.Send(acct, "q", "x")
	h.exhaust("q", 1, 4)
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Visible: 1}) {
		t.Errorf("before the 5th pull: %+v", st)
	}
	if got, backlog := h.pull("q", nil); len(got) != 0 || backlog != 0 {
		t.Fatalf("5th delivery: %v %d", got, backlog)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{}) {
		t.Errorf("after: %+v", st)
	}

	h.createQueue("once", QueueOptions{MaxRetries: -1})
	h.fake.Send(acct, "once", "y")
	h.fake.Send(acct, "once", "z")
	h.exhaust("once", 1, 1) // pulls "y"
	// "y" is dropped and "z" delivered in the same pull.
	if got, _ := h.pull("once", nil); len(got) != 1 || got[0].Body != "z" {
		t.Fatalf("MaxRetries -1: %v", got)
	}
}

func TestCreateQueue(t *testing.T) {
	f := New(Options{})
	for _, c := range []struct {
		acct, id string
		opts     QueueOptions
	}{
		{"", "q", QueueOptions{}},
		{"a", "", QueueOptions{}},
		{"a", "x/y", QueueOptions{}},
		{"a", "q", QueueOptions{MaxRetries: -2}},
		{"a", "q", QueueOptions{MaxRetries: 101}},
		{"a", "q", QueueOptions{DeadLetterQueue: "missing"}},
		{"a", "q", QueueOptions{DeadLetterQueue: "q"}},
	} {
		if err := f.CreateQueue(c.acct, c.id, c.opts); err == nil {
			t.Errorf("CreateQueue(%q, %q, %+v) accepted", c.acct, c.id, c.opts)
		}
	}
	if err := f.CreateQueue("a", "q", QueueOptions{MaxRetries: 5}); err != nil {
		t.Fatal(err)
	}
	if err := f.CreateQueue("a", "q", QueueOptions{MaxRetries: 5}); err != nil {
		t.Errorf("again, same options: %v", err)
	}
	if err := f.CreateQueue("a", "q", QueueOptions{}); err == nil {
		t.Error("again, other options: accepted")
	}
	// The dead-letter queue must be in the same account.
	if err := f.CreateQueue("b", "r", QueueOptions{DeadLetterQueue: "q"}); err == nil {
		t.Error("dead-letter queue of another account accepted")
	}
	if _, err := f.Send("a", "nope", "x"); err == nil {
		t.Error("Send to a missing queue")
	}
	if _, ok := f.Stats("a", "nope"); ok {
		t.Error("Stats of a missing queue")
	}
	if f.Messages("a", "nope") != nil {
		t.Error("Messages of a missing queue")
	}
	if _, err := f.Send("a", "q", strings.Repeat("x", maxMessageBytes+1)); err == nil {
		t.Error("Send of an oversized message")
	}
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	p := qpath("q", "/pull")
	if a := h.request("POST", p, "", nil); a.status != 400 || a.code() != 9106 ||
		a.message() != "Missing X-Auth-Key, X-Auth-Email or Authorization headers" {
		t.Errorf("missing: %d %v", a.status, a.body)
	}
	if a := h.request("POST", p, "wrong", nil); a.status != 403 || a.code() != 10000 || a.message() != "Authentication error" {
		t.Errorf("wrong: %d %v", a.status, a.body)
	}
	for _, hdr := range []string{"Basic " + DefaultToken, DefaultToken, "Bearer", "Bearer "} {
		req, _ := http.NewRequest("POST", h.srv.URL+p, nil)
		req.Header.Set("Authorization", hdr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("Authorization %q: %d", hdr, resp.StatusCode)
		}
	}
	// A refused request does nothing.
	h.fake.Send(acct, "q", "x")
	h.request("POST", qpath("q", ""), "wrong", map[string]any{"body": "y"})
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Visible: 1}) {
		t.Errorf("stats %+v", st)
	}
	if n := h.fake.Calls("pull"); n != 6 {
		t.Errorf("pull calls %d, want 6", n)
	}

	h2 := newHarness(t, Options{Tokens: []string{"t1", "t2"}})
	h2.createQueue("q", QueueOptions{})
	if a := h2.request("POST", p, "t2", nil); a.status != 200 {
		t.Errorf("own token: %v", a.body)
	}
	if a := h2.request("POST", p, DefaultToken, nil); a.status != 403 {
		t.Errorf("default token accepted with Tokens set")
	}
}

func TestNotFound(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	for _, p := range []string{
		"/client/v4/accounts/other/queues/q/messages/pull",
		qpath("nope", "/pull"), qpath("nope", "/ack"), qpath("nope", ""),
	} {
		if a := h.request("POST", p, DefaultToken, map[string]any{"body": "x"}); a.status != 404 || a.code() != 11000 || a.message() != "Queue not found" {
			t.Errorf("%s: %d %v", p, a.status, a.body)
		}
	}
	for _, c := range []struct{ method, path string }{
		{"GET", qpath("q", "/pull")},
		{"PUT", qpath("q", "")},
		{"POST", qpath("q", "/pul")},
		{"POST", qpath("q", "/pull/x")},
		{"POST", "/client/v4/accounts/" + acct + "/queues/q"},
		{"POST", "/client/v4/accounts//queues/q/messages"},
		{"POST", "/"},
	} {
		// Before authentication: no token needed to learn a route is unknown.
		if a := h.request(c.method, c.path, "", nil); a.status != 404 || a.code() != 7000 || a.message() != "No route for that URI" {
			t.Errorf("%s %s: %d %v", c.method, c.path, a.status, a.body)
		}
	}
}

func TestValidation(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	lease := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"lease_id": "x"}
		}
		return out
	}
	for _, c := range []struct {
		op    string
		body  any
		field string // in the message
	}{
		{"pull", map[string]any{"batch_size": 0}, "batch_size"},
		{"pull", map[string]any{"batch_size": 101}, "batch_size"},
		{"pull", map[string]any{"batch_size": -1}, "batch_size"},
		{"pull", `{"batch_size": "5"}`, "batch_size"},
		{"pull", `{"batch_size": 1.5}`, "batch_size"},
		{"pull", map[string]any{"visibility_timeout_ms": 0}, "visibility_timeout_ms"},
		{"pull", map[string]any{"visibility_timeout_ms": 43_200_001}, "visibility_timeout_ms"},
		{"pull", `{"batch_size": 5`, "not valid JSON"},
		{"pull", `{} {}`, "after the JSON"},
		{"pull", `[]`, "JSON object"},
		{"ack", map[string]any{"acks": lease(101)}, "at most 100"},
		{"ack", map[string]any{"acks": lease(60), "retries": lease(41)}, "at most 100"},
		{"ack", map[string]any{"acks": []map[string]any{{}}}, "acks[0].lease_id"},
		{"ack", map[string]any{"retries": []map[string]any{{"lease_id": "x", "delay_seconds": -1}}}, "retries[0].delay_seconds"},
		{"ack", map[string]any{"retries": []map[string]any{{"lease_id": "x", "delay_seconds": 43201}}}, "retries[0].delay_seconds"},
		{"ack", `{"acks": {}}`, "acks"},
		{"push", map[string]any{}, "body"},
		{"push", map[string]any{"body": nil}, "body"},
		{"push", map[string]any{"body": "x", "content_type": "bytes"}, "content_type"},
		{"push", map[string]any{"body": 1, "content_type": "text"}, "content_type"},
		{"push", map[string]any{"body": "x", "delay_seconds": 43201}, "delay_seconds"},
		{"push", map[string]any{"body": strings.Repeat("x", 128<<10+1)}, "body"},
	} {
		a := h.call("q", c.op, c.body)
		if a.status != 400 || a.code() != 10001 || !strings.Contains(a.message(), c.field) {
			t.Errorf("%s %v: %d %v (want 400 10001 naming %s)", c.op, c.body, a.status, a.body, c.field)
		}
	}
	// The limits themselves are accepted.
	h.ok("q", "pull", map[string]any{"batch_size": 1, "visibility_timeout_ms": 1})
	h.ok("q", "pull", map[string]any{"batch_size": 100, "visibility_timeout_ms": 43_200_000})
	h.ok("q", "ack", map[string]any{"acks": lease(50), "retries": lease(50)})
	h.ok("q", "push", map[string]any{"body": strings.Repeat("x", 128<<10), "delay_seconds": 43200})
	h.ok("q", "pull", "")
	h.ok("q", "ack", "null")
	// Nothing refused was sent.
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Delayed: 1}) {
		t.Errorf("stats %+v", st)
	}
	// An oversized request.
	if a := h.call("q", "push", `{"body":"`+strings.Repeat("x", maxRequestBytes)+`"}`); a.status != 413 || a.code() != 10001 {
		t.Errorf("oversized: %d %v", a.status, a.body)
	}
}

func TestFailNext(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	h.fake.Send(acct, "q", "x")

	h.fake.FailNext("pull", 2, 429)
	for i := range 2 {
		a := h.call("q", "pull", nil)
		if a.status != 429 || a.code() != 971 || a.message() != "Please wait and consider throttling your request speed" {
			t.Errorf("throttled %d: %d %v", i, a.status, a.body)
		}
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{Visible: 1}) {
		t.Errorf("a failed pull took messages: %+v", st)
	}
	ms, _ := h.pull("q", nil)
	if len(ms) != 1 || ms[0].Attempts != 1 {
		t.Fatalf("pull after faults: %v", ms)
	}

	h.fake.FailNext("ack", 1, 503)
	if a := h.call("q", "ack", map[string]any{"acks": leases(ms[0].Lease)}); a.status != 503 || a.code() != 10013 {
		t.Errorf("ack fault: %d %v", a.status, a.body)
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{InFlight: 1}) {
		t.Errorf("a failed ack acked: %+v", st)
	}
	if a, _ := h.ack("q", leases(ms[0].Lease), nil); a != 1 {
		t.Error("ack after fault")
	}

	h.fake.FailNext("push", 1, 500)
	h.fake.FailNext("", 1, 409)
	if a := h.call("q", "push", map[string]any{"body": "y"}); a.status != 500 || a.code() != 10013 {
		t.Errorf("push fault: %d %v", a.status, a.body)
	}
	// The "" rule waits behind the push one, then takes any op.
	if a := h.call("q", "pull", nil); a.status != 409 || a.code() != 10001 {
		t.Errorf("any-op fault: %d %v", a.status, a.body)
	}
	// Unauthenticated requests do not use up a rule.
	h.fake.FailNext("push", 1, 500)
	h.request("POST", qpath("q", ""), "", map[string]any{"body": "z"})
	if a := h.call("q", "push", map[string]any{"body": "z"}); a.status != 500 {
		t.Errorf("rule used up by a refused request: %d", a.status)
	}
	h.fake.FailNext("push", 5, 500)
	h.fake.ClearFaults()
	h.ok("q", "push", map[string]any{"body": "z"})
	if got := h.fake.Messages(acct, "q"); len(got) != 1 || got[0].Body != "z" {
		t.Errorf("messages %+v", got)
	}
	if p, a, s := h.fake.Calls("pull"), h.fake.Calls("ack"), h.fake.Calls("push"); p != 4 || a != 2 || s != 4 {
		t.Errorf("calls pull %d ack %d push %d", p, a, s)
	}
	for _, bad := range []func(){func() { h.fake.FailNext("pul", 1, 500) }, func() { h.fake.FailNext("pull", 1, 200) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("bad FailNext accepted")
				}
			}()
			bad()
		}()
	}
}

// TestConcurrentPullAck pushes 2,000 messages from 4 goroutines and drains
// them with 8 pulling and acking: each is delivered once and acked once.
func TestConcurrentPullAck(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	const total, pushers, pullers = 2000, 4, 8
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: pullers + pushers}}
	post := func(path string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", h.srv.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+DefaultToken)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %d %v %v", path, resp.StatusCode, out, err)
		}
		return out, nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, pushers+pullers)
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < total; i += pushers {
				if _, err := post(qpath("q", ""), map[string]any{"body": fmt.Sprint(i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	if st, _ := h.fake.Stats(acct, "q"); st.Visible != total {
		t.Fatalf("pushed: %+v", st)
	}

	var mu sync.Mutex
	delivered := map[string]int{} // body -> deliveries
	acked := 0
	for range pullers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				out, err := post(qpath("q", "/pull"), map[string]any{"batch_size": 37})
				if err != nil {
					errs <- err
					return
				}
				list := out["result"].(map[string]any)["messages"].([]any)
				if len(list) == 0 {
					return // nothing is in flight long enough to come back
				}
				var ls []map[string]any
				mu.Lock()
				for _, x := range list {
					m := x.(map[string]any)
					delivered[m["body"].(string)]++
					ls = append(ls, map[string]any{"lease_id": m["lease_id"]})
				}
				mu.Unlock()
				out, err = post(qpath("q", "/ack"), map[string]any{"acks": ls})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked += int(out["result"].(map[string]any)["ackCount"].(float64))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(delivered) != total || acked != total {
		t.Fatalf("delivered %d distinct, acked %d, want %d", len(delivered), acked, total)
	}
	for body, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times", body, n)
		}
	}
	if st, _ := h.fake.Stats(acct, "q"); st != (QueueStats{}) {
		t.Errorf("left: %+v", st)
	}
	if n := h.fake.Calls("push"); n != total {
		t.Errorf("push calls %d", n)
	}
}

func TestServer(t *testing.T) {
	s, err := Start("", Options{Tokens: []string{"tok"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateQueue(acct, "q", QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.URL+qpath("q", ""), strings.NewReader(`{"body":"hi"}`))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(s.Messages(acct, "q")) != 1 {
		t.Fatalf("push through the server: %d", resp.StatusCode)
	}
}

func TestRewriteAnswers(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	h.ok("q", "push", map[string]any{"body": "RID-A"})
	h.fake.RewriteAnswers("pull", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("RID-A"), []byte("RID-B")) })
	if got, _ := h.pull("q", map[string]any{}); len(got) != 1 || got[0].Body != "RID-B" {
		t.Fatalf("pulled %+v, want the rewritten body", got)
	}
	// Only the op named is rewritten, and nil removes the hook.
	h.ok("q", "push", map[string]any{"body": "RID-A"})
	h.fake.RewriteAnswers("pull", nil)
	if got, _ := h.pull("q", map[string]any{}); len(got) != 1 || got[0].Body != "RID-A" {
		t.Fatalf("pulled %+v after the hook was removed", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown op does not panic")
		}
	}()
	h.fake.RewriteAnswers("pul", nil)
}

// SendAs answers a message as Cloudflare does for its content type: text
// and json bodies as sent, bytes and v8 ones in base64, the type in the
// metadata's CF-Content-Type.
func TestSendAs(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQueue("q", QueueOptions{})
	want := []struct{ ct, payload, body string }{
		{"text", "hi", "hi"}, {"json", `{"a":1}`, `{"a":1}`},
		{"bytes", "\x00\x01", "AAE="}, {"v8", "\xff\x0f\"\x02hi", "/w8iAmhp"},
	}
	for _, w := range want {
		if _, err := h.fake.SendAs(acct, "q", w.ct, []byte(w.payload)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.fake.SendAs(acct, "q", "xml", nil); err == nil {
		t.Error("SendAs took a content type Cloudflare has not")
	}
	ms, _ := h.pull("q", map[string]any{"batch_size": 10})
	if len(ms) != len(want) {
		t.Fatalf("pulled %v", ms)
	}
	for i, w := range want {
		if ms[i].Body != w.body || ms[i].Metadata["CF-Content-Type"] != w.ct {
			t.Errorf("message %d: %q %v, want %q %s", i, ms[i].Body, ms[i].Metadata, w.body, w.ct)
		}
	}
}
