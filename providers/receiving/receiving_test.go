package receiving_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/receiving"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// The mapping driver passes the shared suite against the SQS fake through
// the catalogue's AmazonSqs package as examples/warehouse installs it
// (DeleteMessageBatch), and as a copy from before acknowledge_batch does
// (one DeleteMessage a message).

const sqsQueue = "warehouse_queue"

// sqsHarness is the suite's harness for plan's warehouse_queue on a fresh
// SQS fake driven by a manual clock.
func sqsHarness(plan *ir.Program, caps queuetest.Caps) queuetest.Harness {
	return queuetest.Harness{Caps: caps, New: func(t *testing.T) *queuetest.Queue {
		env := runtimetest.New(t, "sqlite", plan)
		clock := env.UseFake(runtimetest.FakeOptions{ManualClock: true})
		cfg := env.Config()
		return &queuetest.Queue{
			Open: func(t *testing.T, opts queue.Options) queue.Source {
				conn, err := runtime.QueueConn(plan, sqsQueue, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				src, err := receiving.Open(conn, opts)
				if err != nil {
					t.Fatal(err)
				}
				return src
			},
			Send: func(t *testing.T, body string) { env.Send(sqsQueue, body) },
			Held: func(t *testing.T) int {
				st, ok := env.Fake.Stats(sqsQueue)
				if !ok {
					t.Fatal("no queue on the fake")
				}
				return st.Visible + st.InFlight + st.Delayed
			},
			// The queue's visibility timeout is SQS's default, 30 s.
			Expire: func(t *testing.T) { clock.Advance(31 * time.Second) },
			FailEntries: func(t *testing.T, n int) {
				env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultEntryFailed, Operation: "DeleteMessageBatch", Next: n})
			},
			Hang: func(t *testing.T) {
				env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultHang, Operation: "ReceiveMessage", Next: 1})
			},
		}
	}}
}

func TestSuiteSQSBatch(t *testing.T) {
	plan := checktest.ExamplePlan(t, "warehouse")
	queuetest.Run(t, sqsHarness(plan, queuetest.Caps{Ack: queuetest.AckBatch, PartialFailure: true, Lease: true, Hang: true}))
}

// A project that installed the SQS package before DeleteMessageBatch maps
// only the single form.
func TestSuiteSQSSingle(t *testing.T) {
	root := reporoot.Dir(t)
	old := filepath.Join(root, "testdata", "cases", "package_earlier_catalogue_copy")
	var edits []checktest.Edit
	for _, f := range []string{"jadpo.lock", "packages/AmazonSqs.v2012_11_05/provides/receiving.jadpo", "packages/AmazonSqs.v2012_11_05/resources/messages.jadpo"} {
		was, err := os.ReadFile(filepath.Join(old, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		now, err := os.ReadFile(filepath.Join(root, "examples", "warehouse", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		edits = append(edits, checktest.Edit{File: f, Old: string(now), New: string(was)})
	}
	plan := checktest.ExamplePlan(t, "warehouse", edits...)
	for _, c := range plan.Connections {
		if c.Name == sqsQueue && (c.Receiving == nil || c.Receiving.AcknowledgeBatch != nil) {
			t.Fatal("the earlier copy should map no acknowledge_batch")
		}
	}
	queuetest.Run(t, sqsHarness(plan, queuetest.Caps{Ack: queuetest.AckSingle, Lease: true, Hang: true}))
}

// batchQueue opens the driver on the warehouse's queue (DeleteMessageBatch)
// with n messages received and settled, for what only this driver does.
func batchQueue(t *testing.T, n int) (*sqsfake.Fake, queue.Source, *queue.Batch) {
	plan := checktest.ExamplePlan(t, "warehouse")
	env := runtimetest.New(t, "sqlite", plan)
	env.UseFake(runtimetest.FakeOptions{ManualClock: true})
	conn, err := runtime.QueueConn(plan, sqsQueue, env.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := receiving.Driver.Open(conn, queue.Options{Queue: sqsQueue, Log: slog.New(slog.DiscardHandler), MaxBatch: 10, InFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		env.Send(sqsQueue, fmt.Sprintf(`{"id":"m-%d"}`, i))
	}
	b, err := src.Receive(context.Background())
	if err != nil || len(b.Messages) != n {
		t.Fatalf("receive: %v, %d messages", err, len(b.Messages))
	}
	for i := range b.Messages {
		b.Messages[i].Settled = true
	}
	return env.Fake, src, b
}

// A batch answer that names an entry neither as taken nor as failed is read
// strictly (the package maps Successful): that entry is acknowledged alone.
func TestAnEntryTheBatchAnswerDoesNotNameIsAcknowledgedAlone(t *testing.T) {
	fake, src, b := batchQueue(t, 3)
	fake.RewriteAnswers("DeleteMessageBatch", func(answer []byte) []byte {
		var doc map[string][]map[string]any
		if err := json.Unmarshal(answer, &doc); err != nil {
			return answer
		}
		doc["Successful"] = slices.DeleteFunc(doc["Successful"], func(e map[string]any) bool { return e["Id"] == "1" })
		out, _ := json.Marshal(doc)
		return out
	})
	want := queue.Acks{Acknowledged: 3, BatchCalls: 1, SingleCalls: 1, UnansweredEntries: 1}
	if acks := src.Acknowledge(context.Background(), b); acks != want {
		t.Fatalf("acks %+v, want %+v", acks, want)
	}
}

// A batch call that fails as a whole falls back to one call a message.
func TestAFailedBatchCallFallsBackToSingleCalls(t *testing.T) {
	fake, src, b := batchQueue(t, 3)
	fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultServerError, Operation: "DeleteMessageBatch", Next: 1})
	want := queue.Acks{Acknowledged: 3, BatchCalls: 1, SingleCalls: 3}
	if acks := src.Acknowledge(context.Background(), b); acks != want {
		t.Fatalf("acks %+v, want %+v", acks, want)
	}
	if st, _ := fake.Stats(sqsQueue); st.Visible+st.InFlight != 0 {
		t.Fatalf("queue %+v, want empty", st)
	}
}
