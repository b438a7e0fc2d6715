package runtime_test

// Hostile provider answers (issue 11, points 1 and 6), on every store
// adapter: an answer's text is read byte for byte (two messages whose ids
// differ only in invalid text are never merged), one malformed item is
// parked on its own while the rest of its batch is kept, and a body that
// does not match its MD5OfBody is left on the queue to be sent again.

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

func md5Of(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// replacing rewrites an answer's raw bytes: each old text becomes its new
// text, as the answer holds it (inside a JSON string, so `\ud800` there is
// an escape of the answer's own).
func replacing(pairs ...string) func([]byte) []byte {
	return func(b []byte) []byte {
		for i := 0; i+1 < len(pairs); i += 2 {
			b = bytes.ReplaceAll(b, []byte(pairs[i]), []byte(pairs[i+1]))
		}
		return b
	}
}

// parkedBodies are the bodies of the parked messages, sorted, and their
// problems.
func (w *world) parkedBodies() (bodies []string, problems []string) {
	w.t.Helper()
	for _, e := range w.parked("failed") {
		full := w.show(e.ID)
		bodies = append(bodies, string(full.Body))
		problems = append(problems, full.Code+" "+problemsText(full.Problems))
	}
	slices.Sort(bodies)
	slices.Sort(problems)
	return bodies, problems
}

func TestAnswersInvalidTextIsNeverMerged(t *testing.T) {
	type invalid struct{ name, a, b string } // how RID-A and RID-B are rewritten in the answer
	sqsCases := []invalid{
		{"raw_invalid_bytes", "RID\xff", "RID\xfe"},
		{"raw_utf8_of_surrogates", "RID\xed\xa0\x80", "RID\xed\xbf\xbf"},
	}
	// The answer's escapes, and the bytes each body is parked as (an escaped
	// lone surrogate as UTF-8's scheme writes it: not valid UTF-8, distinct).
	cfCases := []struct{ name, a, b, parkedA, parkedB string }{
		{"escaped_lone_surrogates", `RID\ud800`, `RID\udfff`, "RID\xed\xa0\x80", "RID\xed\xbf\xbf"},
		{"raw_invalid_bytes", "RID\xff", "RID\xfe", "RID\xff", "RID\xfe"},
		{"a_lone_high_then_a_lone_low_surrogate", `RID\ud800x`, `RID\udbffx`, "RID\xed\xa0\x80x", "RID\xed\xaf\xbfx"},
	}
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range sqsCases {
				t.Run("sqs_"+c.name, func(t *testing.T) {
					w := newWorld(t, kind, nil)
					a, b := shipped("RID-A"), shipped("RID-B")
					w.send("warehouse_queue", a, b)
					wantA := strings.ReplaceAll(a, "RID-A", c.a)
					wantB := strings.ReplaceAll(b, "RID-B", c.b)
					// SQS's MD5OfBody is of the bytes it sends: the rewrite
					// keeps it true, so only the text is in question.
					w.env.Fake.RewriteAnswers("ReceiveMessage", replacing("RID-A", c.a, "RID-B", c.b,
						md5Of(a), md5Of(wantA), md5Of(b), md5Of(wantB)))
					wantReport(t, w.tick(), "received 2 kept 0 repeats 0 parked 2 left 0 acked 2")
					bodies, problems := w.parkedBodies()
					want := []string{wantA, wantB}
					slices.Sort(want)
					if !slices.Equal(bodies, want) {
						t.Fatalf("parked bodies are not the bodies sent:\n got %q\nwant %q", bodies, want)
					}
					wantRows(t, "problems", [][]string{problems}, []string{"unreadable :json", "unreadable :json"})
					wantRows(t, "outbox", w.outbox())
					if n := w.onQueue("warehouse_queue"); n != 0 {
						t.Fatalf("%d messages left on the queue", n)
					}
				})
			}
			for _, c := range cfCases {
				t.Run("cloudflare_"+c.name, func(t *testing.T) {
					w := newCFWorld(t, kind)
					w.sendCF(returnRequested("RID-A"), returnRequested("RID-B"))
					w.cf.RewriteAnswers("pull", replacing("RID-A", c.a, "RID-B", c.b))
					wantReport(t, w.tick(), "received 2 kept 0 repeats 0 parked 2 left 0 acked 2")
					bodies, problems := w.parkedBodies()
					want := []string{strings.ReplaceAll(returnRequested("RID-A"), "RID-A", c.parkedA),
						strings.ReplaceAll(returnRequested("RID-B"), "RID-B", c.parkedB)}
					slices.Sort(want)
					if !slices.Equal(bodies, want) {
						t.Fatalf("parked bodies are not the bodies sent:\n got %q\nwant %q", bodies, want)
					}
					wantRows(t, "problems", [][]string{problems}, []string{"unreadable :json", "unreadable :json"})
					wantRows(t, "outbox", w.outbox())
				})
			}
			// Valid text in the same places is still kept: the reading is
			// exact, not suspicious.
			t.Run("cloudflare_escaped_pairs_and_raw_utf8_are_kept_apart", func(t *testing.T) {
				w := newCFWorld(t, kind)
				w.sendCF(returnRequested("RID-A"), returnRequested("RID-B"))
				w.cf.RewriteAnswers("pull", replacing("RID-A", `RID\ud83d\ude00`, "RID-B", "RID\U0001F601"))
				wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
				ids := w.receivedIDs()
				if len(ids) != 2 || ids[0][1] == ids[1][1] {
					t.Fatalf("received ids %q: want two distinct ones", ids)
				}
			})
		})
	}
}

// rewriteItem decodes an answer, lets edit change the item at index i of the
// list at path (or replace it: edit's result), and encodes it again.
func rewriteItem(path []string, i int, edit func(item map[string]any) any) func([]byte) []byte {
	return func(b []byte) []byte {
		var answer map[string]any
		if err := json.Unmarshal(b, &answer); err != nil {
			return b
		}
		m := answer
		for _, p := range path[:len(path)-1] {
			m, _ = m[p].(map[string]any)
		}
		if m == nil {
			return b
		}
		items, _ := m[path[len(path)-1]].([]any)
		if i >= len(items) {
			return b
		}
		items[i] = edit(items[i].(map[string]any))
		out, err := json.Marshal(answer)
		if err != nil {
			return b
		}
		return out
	}
}

func TestAnswersMalformedItemIsParkedAlone(t *testing.T) {
	sqsCases := []struct {
		name    string
		edit    func(item map[string]any) any
		report  string
		problem string
		onQueue int                 // left on the queue: the malformed one has no handle to delete with
		then    func([]byte) []byte // a further rewrite of the raw answer
	}{
		{"no_md5_of_body", func(m map[string]any) any { delete(m, "MD5OfBody"); return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 3", "unreadable md5_of_body:answer", 0, nil},
		{"a_numeric_body", func(m map[string]any) any { m["Body"] = 42; return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 3", "unreadable :json body:answer", 0, nil},
		{"no_receipt_handle", func(m map[string]any) any { delete(m, "ReceiptHandle"); return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 2", "unreadable receipt_handle:answer", 1, nil},
		{"an_empty_receipt_handle", func(m map[string]any) any { m["ReceiptHandle"] = ""; return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 2", "unreadable receipt_handle:answer", 1, nil},
		{"not_an_object", func(m map[string]any) any { return 42 },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 2", "unreadable :answer :json", 1, nil},
		// A handle of invalid text could not be sent back as it came.
		{"a_receipt_handle_of_invalid_text", func(m map[string]any) any { m["ReceiptHandle"] = "HANDLE-X"; return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 2", "unreadable receipt_handle:answer", 1,
			replacing("HANDLE-X", `H\ud800`)},
	}
	cfCases := []struct {
		name    string
		edit    func(item map[string]any) any
		report  string
		problem string
		acked   []string // the ids acknowledged
	}{
		{"no_lease_id", func(m map[string]any) any { delete(m, "lease_id"); return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 2", "unreadable lease_id:answer", nil},
		{"a_numeric_body", func(m map[string]any) any { m["body"] = 7; return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 3", "unreadable :json body:answer", nil},
		{"no_id", func(m map[string]any) any { delete(m, "id"); return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 3", "unreadable id:answer", nil},
		{"text_attempts", func(m map[string]any) any { m["attempts"] = "one"; return m },
			"received 3 kept 2 repeats 0 parked 1 left 0 acked 3", "unreadable attempts:answer", nil},
	}
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range sqsCases {
				t.Run("sqs_"+c.name, func(t *testing.T) {
					w := newWorld(t, kind, nil)
					w.send("warehouse_queue", shipped("m-1"), shipped("m-2"), shipped("m-3"))
					rewrite := rewriteItem([]string{"Messages"}, 1, c.edit)
					if c.then != nil {
						edit := rewrite
						rewrite = func(b []byte) []byte { return c.then(edit(b)) }
					}
					w.env.Fake.RewriteAnswers("ReceiveMessage", rewrite)
					wantReport(t, w.tick(), c.report)
					if got := len(w.outbox()); got != 2 {
						t.Fatalf("%d kept, want the two good messages", got)
					}
					_, problems := w.parkedBodies()
					wantRows(t, "problems", [][]string{problems}, []string{c.problem})
					if n := w.onQueue("warehouse_queue"); n != c.onQueue {
						t.Fatalf("%d messages on the queue, want %d", n, c.onQueue)
					}
					// Parked as its body: an operator's retry reads the body
					// alone, so a good body is kept then.
					if c.name == "no_md5_of_body" {
						ps := w.parked("failed")
						if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID}); err != nil {
							t.Fatal(err)
						}
						rep := w.tick()
						if rep.RetriedKept != 1 || len(w.outbox()) != 3 {
							t.Fatalf("retried: %+v, %d kept; want the body kept", rep, len(w.outbox()))
						}
					}
				})
			}
			for _, c := range cfCases {
				t.Run("cloudflare_"+c.name, func(t *testing.T) {
					w := newCFWorld(t, kind)
					w.sendCF(returnRequested("r-1"), returnRequested("r-2"), returnRequested("r-3"))
					w.cf.RewriteAnswers("pull", rewriteItem([]string{"result", "messages"}, 1, c.edit))
					wantReport(t, w.tick(), c.report)
					if got := len(w.outbox()); got != 2 {
						t.Fatalf("%d kept, want the two good messages", got)
					}
					_, problems := w.parkedBodies()
					wantRows(t, "problems", [][]string{problems}, []string{c.problem})
					if got := w.cf.Calls("ack"); got != 1 {
						t.Fatalf("%d ack calls, want 1", got)
					}
				})
			}
		})
	}
}

func TestAnswersMD5MismatchIsLeftOnTheQueue(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind, &runtimetest.FakeOptions{ManualClock: true})
			var logged bytes.Buffer
			w.rt = w.runtime(w.env.Plan, runtime.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			w.send("warehouse_queue", shipped("m-1"), shipped("m-2"), shipped("m-3"))
			var damagedID string
			w.env.Fake.RewriteAnswers("ReceiveMessage", rewriteItem([]string{"Messages"}, 1, func(m map[string]any) any {
				damagedID, _ = m["MessageId"].(string)
				m["Body"] = strings.Replace(m["Body"].(string), "SKU-1", "SKU-7", 1) // damaged on the way
				return m
			}))
			wantReport(t, w.tick(), "received 3 kept 2 repeats 0 parked 0 left 1 acked 2")
			if damagedID == "" || !strings.Contains(logged.String(), "MD5OfBody") || !strings.Contains(logged.String(), damagedID) {
				t.Fatalf("the mismatch is not logged with the message's id %q:\n%s", damagedID, logged.String())
			}
			if bodies, _ := w.parkedBodies(); len(bodies) != 0 {
				t.Fatalf("parked %q: a damaged transfer is sent again, not parked", bodies)
			}
			if n := w.onQueue("warehouse_queue"); n != 1 {
				t.Fatalf("%d messages on the queue, want the damaged one", n)
			}
			// Sent again, undamaged: kept.
			w.env.Fake.RewriteAnswers("ReceiveMessage", nil)
			w.fakeClock.Advance(31 * time.Second)
			wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
			if got := len(w.outbox()); got != 3 {
				t.Fatalf("%d kept, want 3", got)
			}
		})
	}
}
