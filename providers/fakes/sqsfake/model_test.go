package sqsfake

import (
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

// modelMessage is what the test knows of a message it sent.
type modelMessage struct {
	sent      time.Time
	visibleAt time.Time
	received  int
	handle    string // the latest receipt handle
	where     string // "q", "dlq", "deleted" or "expired"
}

// TestLongQueueAgainstAModel drives a queue with a dead-letter queue through
// thousands of random sends, receives, deletes (with current and stale
// handles), visibility changes and clock moves, and after every step checks
// the fake against what the test itself worked out: each message is on
// exactly one queue until deleted or expired, in send order, received only
// when visible, and moved to the dead-letter queue only after
// maxReceiveCount receives. The queue grows past the size where the fake
// tidies the messages it removed, so the bookkeeping that keeps receiving
// and deleting cheap (see queue.msgs) is covered.
func TestLongQueueAgainstAModel(t *testing.T) {
	const steps = 20_000 // half a second
	clock := testclock.NewManual(testclock.Epoch())
	f := New(Options{Clock: clock, SkipSignatureCheck: true})
	base := "http://127.0.0.1"
	const retention = 1800 * time.Second
	if _, e := f.createQueue(base, &createQueueInput{QueueName: "dlq"}); e != nil {
		t.Fatal(e)
	}
	if _, e := f.createQueue(base, &createQueueInput{QueueName: "q", Attributes: map[string]string{
		"VisibilityTimeout":      "30",
		"MessageRetentionPeriod": "1800",
		"RedrivePolicy":          `{"deadLetterTargetArn":"` + f.arn("dlq") + `","maxReceiveCount":"3"}`,
	}}); e != nil {
		t.Fatal(e)
	}
	qURL := f.queueURL(base, "q")
	req := httptest.NewRequest("POST", "/", nil)
	rng := rand.New(rand.NewPCG(5, 7))

	model := map[string]*modelMessage{}
	var order []string // ids in send order
	var handles []string
	handleID := map[string]string{}
	body := "b"
	none := 0

	longest := 0
	for step := range steps {
		now := clock.Now()
		switch r := rng.IntN(100); {
		case r < 40: // send
			out, e := f.sendMessage(&sendMessageInput{QueueUrl: qURL, MessageBody: &body})
			if e != nil {
				t.Fatal(e)
			}
			id := out.(sendMessageOutput).MessageId
			model[id] = &modelMessage{sent: now, visibleAt: now, where: "q"}
			order = append(order, id)
		case r < 52: // receive
			n := 1 + rng.IntN(10)
			out, e := f.receiveMessage(req, &receiveMessageInput{QueueUrl: qURL, MaxNumberOfMessages: &n, WaitTimeSeconds: &none})
			if e != nil {
				t.Fatal(e)
			}
			got := out.(receiveMessageOutput).Messages
			if len(got) > n {
				t.Fatalf("step %d: asked for %d, received %d", step, n, len(got))
			}
			seen := map[string]bool{}
			for _, o := range got {
				m := model[o.MessageId]
				switch {
				case m == nil || m.where != "q":
					t.Fatalf("step %d: received %s, which is %v", step, o.MessageId, m)
				case seen[o.MessageId]:
					t.Fatalf("step %d: %s received twice in one answer", step, o.MessageId)
				case m.visibleAt.After(now):
					t.Fatalf("step %d: %s received while in flight", step, o.MessageId)
				case m.received >= 3:
					t.Fatalf("step %d: %s received a 4th time instead of moved to the dead-letter queue", step, o.MessageId)
				}
				seen[o.MessageId] = true
				m.received++
				m.visibleAt = now.Add(30 * time.Second)
				m.handle = o.ReceiptHandle
				handles = append(handles, o.ReceiptHandle)
				handleID[o.ReceiptHandle] = o.MessageId
			}
			// The fake looks at the queue in send order up to the last
			// message it hands out (or to the end when it had fewer than
			// asked): a visible message it passed was received 3 times
			// already and is now on the dead-letter queue.
			last := len(order)
			if len(got) == n {
				last = slices.Index(order, got[len(got)-1].MessageId)
			}
			for _, id := range order[:last] {
				if m := model[id]; m.where == "q" && !m.visibleAt.After(now) && !seen[id] {
					if m.received < 3 {
						t.Fatalf("step %d: %s visible on the queue but passed over (%d asked, %d given)", step, id, n, len(got))
					}
					m.where = "dlq"
				}
			}
		case r < 85: // delete, mostly with a recent handle, sometimes a stale one
			if len(handles) == 0 {
				continue
			}
			h := handles[max(0, len(handles)-1-rng.IntN(20))]
			if _, e := f.deleteMessage(&deleteMessageInput{QueueUrl: qURL, ReceiptHandle: h}); e != nil {
				t.Fatal(e)
			}
			if m := model[handleID[h]]; m.where == "q" && m.handle == h {
				m.where = "deleted"
			}
		case r < 88: // make an in-flight message visible again
			if len(handles) == 0 {
				continue
			}
			h := handles[rng.IntN(len(handles))]
			m := model[handleID[h]]
			zero := 0
			_, e := f.changeMessageVisibility(&changeMessageVisibilityInput{QueueUrl: qURL, ReceiptHandle: h, VisibilityTimeout: &zero})
			if ok := m.where == "q" && m.handle == h && m.visibleAt.After(now); ok != (e == nil) {
				t.Fatalf("step %d: ChangeMessageVisibility answered %v for a message %+v", step, e, m)
			}
			if e == nil {
				m.visibleAt = now
			}
		default: // time passes
			clock.Advance(time.Duration(rng.IntN(9)) * time.Second)
			// What has expired now (the fake drops it on the next call to
			// the queue; the dead-letter queue keeps its messages 4 days,
			// longer than the test's clock moves).
			for _, m := range model {
				if m.where == "q" && m.sent.Before(clock.Now().Add(-retention)) {
					m.where = "expired"
				}
			}
		}
		if step%25 == 0 || step == steps-1 {
			longest = max(longest, checkAgainstModel(t, f, step, order, model))
		}
	}
	counts := map[string]int{}
	for _, m := range model {
		counts[m.where]++
	}
	t.Logf("%d messages, at most %d on the queue at once: %v", len(model), longest, counts)
	if longest < 1000 {
		t.Errorf("the queue never held 1,000 messages: the run does not cover a long queue")
	}
	for _, where := range []string{"q", "dlq", "deleted", "expired"} {
		if counts[where] == 0 {
			t.Errorf("no message ended %q: the run does not cover it", where)
		}
	}
}

// checkAgainstModel compares both queues' messages with the model.
// It returns how many messages the queue holds.
func checkAgainstModel(t *testing.T, f *Fake, step int, order []string, model map[string]*modelMessage) int {
	t.Helper()
	var wantQ []string
	for _, id := range order {
		if model[id].where == "q" {
			wantQ = append(wantQ, id)
		}
	}
	var gotQ []string
	for _, m := range f.Messages("q") {
		gotQ = append(gotQ, m.ID)
		if want := model[m.ID]; want != nil && m.ReceiveCount != want.received {
			t.Fatalf("step %d: %s received %d times, the model says %d", step, m.ID, m.ReceiveCount, want.received)
		}
	}
	if !slices.Equal(gotQ, wantQ) {
		t.Fatalf("step %d: queue holds %d messages, the model %d (first difference at %d)", step, len(gotQ), len(wantQ), firstDifference(gotQ, wantQ))
	}
	f.mu.Lock()
	for _, name := range []string{"q", "dlq"} {
		if err := f.queues[name].held.Check(); err != nil {
			f.mu.Unlock()
			t.Fatalf("step %d: %s: %v", step, name, err)
		}
	}
	f.mu.Unlock()
	dlq := map[string]bool{}
	for _, m := range f.Messages("dlq") {
		if dlq[m.ID] {
			t.Fatalf("step %d: %s twice on the dead-letter queue", step, m.ID)
		}
		dlq[m.ID] = true
		if m.SourceQueueArn != f.arn("q") {
			t.Fatalf("step %d: %s on the dead-letter queue without its source", step, m.ID)
		}
	}
	for id, m := range model {
		if dlq[id] != (m.where == "dlq") {
			t.Fatalf("step %d: %s on the dead-letter queue: %v, the model says %q", step, id, dlq[id], m.where)
		}
	}
	return len(gotQ)
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
