package cfqueues_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/cfqueues"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/runtime"
)

// The cloudflare_queues driver passes the shared suite against the
// Cloudflare Queues fake, through examples/returns' CloudflareQueues.v4
// (which leases for 60 s).

const (
	account = "acc-1"
	queueID = "returns-queue-id"
)

func harness(t *testing.T) *queuetest.Queue {
	plan := checktest.PlanDir(t, filepath.Join(reporoot.Dir(t), "examples", "returns"))
	clock := testclock.NewManual(testclock.Epoch())
	fake := cfqueuesfake.New(cfqueuesfake.Options{Clock: clock})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	if err := fake.CreateQueue(account, queueID, cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := runtime.LoadConfig(plan, []string{"CF_HOST=" + srv.URL, "CF_API_TOKEN=" + cfqueuesfake.DefaultToken,
		"CF_ACCOUNT_ID=" + account, "CF_RETURNS_QUEUE_ID=" + queueID, "REFUNDS_TOKEN=r"}, "")
	if err != nil {
		t.Fatal(err)
	}
	q := &queuetest.Queue{
		Open: func(t *testing.T, opts queue.Options) queue.Source {
			conn, err := runtime.QueueConn(plan, "returns_queue", cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			src, err := cfqueues.Driver.Open(conn, opts)
			if err != nil {
				t.Fatal(err)
			}
			return src
		},
		Send: func(t *testing.T, body string) {
			if _, err := fake.Send(account, queueID, body); err != nil {
				t.Fatal(err)
			}
		},
		Held: func(t *testing.T) int {
			st, ok := fake.Stats(account, queueID)
			if !ok {
				t.Fatal("no queue on the fake")
			}
			return st.Visible + st.InFlight + st.Delayed
		},
		// The lease (60 s) and a hand-back's delay (RetryDelay) run out.
		Expire: func(t *testing.T) { clock.Advance(61*time.Second + cfqueues.RetryDelay) },
		Hang:   func(t *testing.T) { fake.HangNext("pull", 1) },
	}
	fakeOf[q] = fake
	return q
}

// fakeOf is each harness queue's fake.
var fakeOf = map[*queuetest.Queue]*cfqueuesfake.Fake{}

func TestSuite(t *testing.T) {
	queuetest.Run(t, queuetest.Harness{New: harness, Caps: queuetest.Caps{Ack: queuetest.AckBatch, Lease: true, Hang: true}})
}

// driverQueue opens the driver on a fresh fake queue, for the tests of
// what only this driver does.
func driverQueue(t *testing.T) (*queuetest.Queue, *cfqueuesfake.Fake, queue.Source) {
	q := harness(t)
	src := q.Open(t, queue.Options{Queue: "returns_queue", Log: slog.New(slog.DiscardHandler), MaxBatch: 10, InFlight: 1})
	t.Cleanup(src.Close)
	return q, fakeOf[q], src
}

// One ack answers the batch: the settled leases acknowledged, the others
// handed back with RetryDelay, in the same call.
func TestOneAckAcknowledgesAndHandsBack(t *testing.T) {
	q, fake, src := driverQueue(t)
	q.Send(t, `{"id":"a"}`)
	q.Send(t, `{"id":"b"}`)
	b, err := src.Receive(context.Background())
	if err != nil || len(b.Messages) != 2 {
		t.Fatalf("receive: %v, %d messages", err, len(b.Messages))
	}
	b.Messages[0].Settled = true
	acks := src.Acknowledge(context.Background(), b)
	if acks != (queue.Acks{Acknowledged: 1, BatchCalls: 1}) || fake.Calls("ack") != 1 {
		t.Fatalf("acks %+v, %d ack calls; want one call acknowledging one", acks, fake.Calls("ack"))
	}
	st, _ := fake.Stats(account, queueID)
	if st.Delayed != 1 || st.Visible+st.InFlight != 0 {
		t.Fatalf("queue %+v: want the other handed back with a delay", st)
	}
}

// Cloudflare's ack_count says how many leases were still held: fewer
// acknowledged than sent (a lease that ran out) is what it counts.
func TestAckCountBelowSentIsWhatTook(t *testing.T) {
	q, fake, src := driverQueue(t)
	q.Send(t, `{"id":"a"}`)
	q.Send(t, `{"id":"b"}`)
	b, err := src.Receive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Messages {
		b.Messages[i].Settled = true
	}
	fake.RewriteAnswers("ack", func(answer []byte) []byte {
		var doc map[string]any
		if err := json.Unmarshal(answer, &doc); err != nil {
			t.Errorf("the fake's ack answer: %v", err)
			return answer
		}
		doc["result"].(map[string]any)["ackCount"] = 1
		out, _ := json.Marshal(doc)
		return out
	})
	if acks := src.Acknowledge(context.Background(), b); acks.Acknowledged != 1 {
		t.Fatalf("acks %+v, want 1 acknowledged as the answer counts", acks)
	}
}

// An ack that fails acknowledges nothing: the leases run out and the
// messages come back, repeats.
func TestAFailedAckAcknowledgesNothing(t *testing.T) {
	q, fake, src := driverQueue(t)
	q.Send(t, `{"id":"a"}`)
	b, err := src.Receive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b.Messages[0].Settled = true
	fake.FailNext("ack", 1, 500)
	if acks := src.Acknowledge(context.Background(), b); acks != (queue.Acks{BatchCalls: 1}) {
		t.Fatalf("acks %+v, want one call, nothing acknowledged", acks)
	}
	if n := q.Held(t); n != 1 {
		t.Fatalf("%d held, want the message still on the queue", n)
	}
}

// A message's metadata names its content type (docs/guide/receiving.md,
// "Cloudflare Queues"): json and text bodies are read as they came, bytes
// that decode to JSON text as that text; a v8 body (a Worker producer's
// default) is marked for parking, logged with its id, and its lease
// acknowledged once it is parked.
func TestContentTypes(t *testing.T) {
	q := harness(t)
	fake := fakeOf[q]
	var logs bytes.Buffer
	src := q.Open(t, queue.Options{Queue: "returns_queue", Log: slog.New(slog.NewJSONHandler(&logs, nil)), MaxBatch: 10, InFlight: 1})
	t.Cleanup(src.Close)
	sent := map[string]string{}
	for _, s := range []struct{ ct, payload string }{{"json", `{"id":"a"}`}, {"text", `{"id":"b"}`}, {"bytes", `{"id":"c"}`}, {"v8", "\xff\x0fo\"\x02id\"\x01d{\x01"}} {
		id, err := fake.SendAs(account, queueID, s.ct, []byte(s.payload))
		if err != nil {
			t.Fatal(err)
		}
		sent[id] = s.ct
	}
	b, err := src.Receive(context.Background())
	if err != nil || len(b.Messages) != 4 {
		t.Fatalf("receive: %v, %v", err, b)
	}
	for i, m := range b.Messages {
		switch ct := sent[m.WireID]; ct {
		case "v8":
			if m.ContentType != "v8" || len(m.Unfit) != 0 {
				t.Errorf("the v8 message: content type %q, unfit %v; want it marked v8", m.ContentType, m.Unfit)
			}
			if !strings.Contains(logs.String(), `"provider_message_id":"`+m.WireID+`","content_type":"v8"`) ||
				!strings.Contains(logs.String(), `contentType \"json\" or \"text\"`) {
				t.Errorf("the log does not name the v8 message and its fix:\n%s", logs.String())
			}
		default:
			if m.ContentType != "" || m.Body != `{"id":"`+string(rune('a'+i))+`"}` {
				t.Errorf("the %s message: content type %q, body %q; want its JSON text", ct, m.ContentType, m.Body)
			}
		}
		b.Messages[i].Settled = true // kept, or parked
	}
	if acks := src.Acknowledge(context.Background(), b); acks.Acknowledged != 4 {
		t.Fatalf("acks %+v, want all 4 acknowledged, the parked v8 one too", acks)
	}
	if n := q.Held(t); n != 0 {
		t.Fatalf("%d held, want none", n)
	}
}
