package receiving_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/receiving"
	"github.com/jadpo/jadpo/providers/sqsfake"
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
	root := checktest.RepoRoot(t)
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
