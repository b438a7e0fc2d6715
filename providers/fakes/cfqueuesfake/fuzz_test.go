package cfqueuesfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

// fuzzPaths are the paths a fuzzed request goes to, chosen by its first
// argument: the three operations, a missing queue and an unknown route.
var fuzzPaths = []string{
	"/client/v4/accounts/a/queues/q/messages/pull",
	"/client/v4/accounts/a/queues/q/messages/ack",
	"/client/v4/accounts/a/queues/q/messages",
	"/client/v4/accounts/a/queues/dlq/messages/pull",
	"/client/v4/accounts/a/queues/missing/messages/pull",
	"/client/v4/accounts/a/queues/q/messages/nope",
}

// FuzzRequest sends arbitrary bodies to each path of a fake holding a queue
// with a dead-letter queue and a few messages, two of them in flight (the
// placeholders LEASE0 and LEASE1 in a body become real leases, so acks and
// retries can take effect). Nothing may panic, every answer is a JSON
// object whose `success` matches its status (200, or a 4xx with an error
// code), and the queue's counts stay consistent.
func FuzzRequest(f *testing.F) {
	seeds := []struct {
		path uint8
		body string
	}{
		{0, `{"batch_size": 3, "visibility_timeout_ms": 1}`},
		{0, `{"batch_size": 100}`},
		{0, `{"batch_size": 0}`},
		{0, ``},
		{1, `{"acks": [{"lease_id": "LEASE0"}], "retries": [{"lease_id": "LEASE1", "delay_seconds": 5}]}`},
		{1, `{"retries": [{"lease_id": "LEASE0", "delay_seconds": 0}, {"lease_id": "LEASE0"}]}`},
		{1, `{"acks": [{"lease_id": ""}]}`},
		{1, `{"acks": {"lease_id": 1}}`},
		{2, `{"body": "hello", "content_type": "text", "delay_seconds": 3}`},
		{2, `{"body": {"a": [1, 2.5, null]}, "content_type": "json"}`},
		{2, `{"body": null}`},
		{2, `{"body": "\ud800x"}`},
		{3, `{}`},
		{4, `{}`},
		{5, `[]`},
		{0, `{"batch_size": 1e99}`},
		{0, `{} x`},
	}
	for _, s := range seeds {
		f.Add(s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		clock := testclock.NewManual(testclock.Epoch())
		fake := New(Options{Clock: clock})
		if err := fake.CreateQueue("a", "dlq", QueueOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := fake.CreateQueue("a", "q", QueueOptions{MaxRetries: -1, DeadLetterQueue: "dlq"}); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"one", "two", "three"} {
			if _, err := fake.Send("a", "q", b); err != nil {
				t.Fatal(err)
			}
		}
		// "one" is delivered once and its lease runs out: the next pull to
		// reach it moves it to the dead-letter queue.
		fake.pullDirect(t, "a", "q", 1, 500*time.Millisecond)
		clock.Advance(time.Second)
		got := fake.pullDirect(t, "a", "q", 2, 30*time.Second)
		body = bytes.ReplaceAll(body, []byte("LEASE0"), []byte(got[0].lease))
		body = bytes.ReplaceAll(body, []byte("LEASE1"), []byte(got[1].lease))

		path := fuzzPaths[int(which)%len(fuzzPaths)]
		req := httptest.NewRequest("POST", "http://h"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+DefaultToken)
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code > 499) {
			t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body.Bytes())
		}
		var out struct {
			Success *bool `json:"success"`
			Errors  []struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"errors"`
			Messages []any           `json:"messages"`
			Result   json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Success == nil || out.Errors == nil || out.Messages == nil {
			t.Fatalf("%s: not Cloudflare's envelope: %q", path, rec.Body.Bytes())
		}
		if *out.Success != (rec.Code == 200) || (rec.Code != 200 && (len(out.Errors) != 1 || out.Errors[0].Code == 0 || out.Errors[0].Message == "")) {
			t.Fatalf("%s: status %d with %s", path, rec.Code, rec.Body.Bytes())
		}
		for _, q := range []string{"q", "dlq"} {
			fake.checkBookkeeping(t, "a", q)
		}
	})
}

type directMessage struct{ id, lease string }

// pullDirect pulls without HTTP, for setting up fuzz cases.
func (f *Fake) pullDirect(t *testing.T, account, queueID string, n int, vis time.Duration) []directMessage {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queues[queueKey{account, queueID}]
	var out []directMessage
	for _, m := range f.pull(q, n, vis) {
		out = append(out, directMessage{m.ID, m.Handle})
	}
	if len(out) != n {
		t.Fatalf("pulled %d, want %d", len(out), n)
	}
	return out
}

// checkBookkeeping checks a queue's internal indexes against each other
// (visibility.Queue.Check).
func (f *Fake) checkBookkeeping(t *testing.T, account, queueID string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.queues[queueKey{account, queueID}].held.Check(); err != nil {
		t.Fatalf("%s: %v", queueID, err)
	}
}
