package runtime_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// Issue 16: a package's acknowledge_batch acknowledges a batch's settled
// messages in one call (SQS: DeleteMessageBatch), falling back to the
// single acknowledge call for what the batch could not.

// ops counts the requests the fake received to the warehouse queue, by
// operation, and the entries of each DeleteMessageBatch.
func ops(w *world) (counts map[string]int, entries []int) {
	counts = map[string]int{}
	for _, r := range w.env.Requests() {
		if r.Input["QueueUrl"] != w.env.QueueURLs["warehouse_queue"] {
			continue
		}
		counts[r.Operation]++
		if r.Operation == "DeleteMessageBatch" {
			es, _ := r.Input["Entries"].([]any)
			entries = append(entries, len(es))
		}
	}
	return counts, entries
}

// metric reads one counter of the runtime's metrics (metricSample); a
// counter never incremented reads 0.
func metric(t *testing.T, rt *runtime.Runtime, name string, labels map[string]string) float64 {
	t.Helper()
	return max(metricSample(t, rt.Metrics(), name, labels), 0)
}

func sendShipped(w *world, n int) {
	for i := range n {
		w.send("warehouse_queue", shipped(fmt.Sprint("m-", i)))
	}
}

// Acceptance 1: with 100 messages waiting, one tick sends 10
// ReceiveMessage, 10 DeleteMessageBatch of 10 entries and no DeleteMessage.
func TestBatchAckOneCallPerBatch(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind, &runtimetest.FakeOptions{Record: true})
			sendShipped(w, 100)
			wantReport(t, w.tick(), "received 100 kept 100 repeats 0 parked 0 left 0 acked 100")
			counts, entries := ops(w)
			if counts["ReceiveMessage"] != 10 || counts["DeleteMessageBatch"] != 10 || counts["DeleteMessage"] != 0 {
				t.Fatalf("requests %v, want 10 ReceiveMessage, 10 DeleteMessageBatch, no DeleteMessage", counts)
			}
			for _, n := range entries {
				if n != 10 {
					t.Fatalf("DeleteMessageBatch entries %v, want 10 each", entries)
				}
			}
			if n := w.onQueue("warehouse_queue"); n != 0 {
				t.Fatalf("%d messages on the queue", n)
			}
			if got := metric(t, w.rt, "jadpo_acknowledge_requests_total", map[string]string{"form": "batch", "queue": "warehouse_queue"}); got != 10 {
				t.Fatalf("batch acknowledge requests %v, want 10", got)
			}
			if got := metric(t, w.rt, "jadpo_acknowledge_requests_total", map[string]string{"form": "single", "queue": "warehouse_queue"}); got != 0 {
				t.Fatalf("single acknowledge requests %v, want 0", got)
			}
		})
	}
}

// Acceptance 1, with entries failing by a fault switch (and the single
// DeleteMessage failing too, so nothing is acknowledged): the messages stay
// on the queue; once the switch clears and the visibility timeout passes on
// the fake's clock, the next tick empties the queue, each a repeat, and
// every message is kept exactly once.
func TestBatchAckFailedEntriesComeBackAsRepeats(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind, &runtimetest.FakeOptions{Record: true, ManualClock: true})
			w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultEntryFailed, Operation: "DeleteMessageBatch", Fraction: 1})
			w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultServerError, Operation: "DeleteMessage", Fraction: 1})
			sendShipped(w, 25)
			wantReport(t, w.tick(), "received 25 kept 25 repeats 0 parked 0 left 0 acked 0")
			counts, _ := ops(w)
			// Each failed entry is tried once on its own, then left.
			if counts["DeleteMessageBatch"] != 3 || counts["DeleteMessage"] != 25 {
				t.Fatalf("requests %v, want 3 DeleteMessageBatch and 25 DeleteMessage", counts)
			}
			if got := metric(t, w.rt, "jadpo_acknowledge_failed_entries_total", map[string]string{"queue": "warehouse_queue"}); got != 25 {
				t.Fatalf("failed entries %v, want 25", got)
			}
			if n := w.onQueue("warehouse_queue"); n != 25 {
				t.Fatalf("%d on the queue, want 25 left", n)
			}
			w.env.Fake.ClearFaults()
			// Before the visibility timeout the messages stay hidden.
			wantReport(t, w.tick(), "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
			w.fakeClock.Advance(31 * time.Second)
			wantReport(t, w.tick(), "received 25 kept 0 repeats 25 parked 0 left 0 acked 25")
			if n := w.onQueue("warehouse_queue"); n != 0 {
				t.Fatalf("%d on the queue after the repeats", n)
			}
			if s := w.stats(); s.Outbox != 25 {
				t.Fatalf("outbox %d, want each message kept once", s.Outbox)
			}
			if got := len(w.receivedIDs()); got != 25 {
				t.Fatalf("%d received ids, want 25", got)
			}
		})
	}
}

// An entry SQS reports failed is tried once on its own; when that takes,
// the message is gone at once.
func TestBatchAckFailedEntryTriedOnItsOwn(t *testing.T) {
	w := newWorld(t, "sqlite", &runtimetest.FakeOptions{Record: true})
	w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultEntryFailed, Operation: "DeleteMessageBatch", Next: 3})
	sendShipped(w, 10)
	wantReport(t, w.tick(), "received 10 kept 10 repeats 0 parked 0 left 0 acked 10")
	counts, _ := ops(w)
	if counts["DeleteMessageBatch"] != 1 || counts["DeleteMessage"] != 3 {
		t.Fatalf("requests %v, want 1 DeleteMessageBatch and 3 DeleteMessage", counts)
	}
	if n := w.onQueue("warehouse_queue"); n != 0 {
		t.Fatalf("%d on the queue", n)
	}
	if got := metric(t, w.rt, "jadpo_acknowledge_requests_total", map[string]string{"form": "single", "queue": "warehouse_queue"}); got != 3 {
		t.Fatalf("single acknowledge requests %v, want 3", got)
	}
}

// A batch call that fails as a whole falls back to the single form.
func TestBatchAckCallFailingFallsBackToSingle(t *testing.T) {
	w := newWorld(t, "sqlite", &runtimetest.FakeOptions{Record: true})
	w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultUnavailable, Operation: "DeleteMessageBatch", Next: 1})
	sendShipped(w, 10)
	wantReport(t, w.tick(), "received 10 kept 10 repeats 0 parked 0 left 0 acked 10")
	counts, _ := ops(w)
	if counts["DeleteMessageBatch"] != 1 || counts["DeleteMessage"] != 10 {
		t.Fatalf("requests %v, want 1 DeleteMessageBatch and 10 DeleteMessage", counts)
	}
	if n := w.onQueue("warehouse_queue"); n != 0 {
		t.Fatalf("%d on the queue", n)
	}
}

// A project that installed the SQS package before DeleteMessageBatch keeps
// the single form: one DeleteMessage per message, no batch call.
func TestEarlierSQSCopyAcknowledgesOneByOne(t *testing.T) {
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
	p := checktest.ExamplePlan(t, "warehouse", edits...)
	if c := p.Connections; len(c) == 0 {
		t.Fatal("no connections in the plan")
	}
	w := newWorld(t, "sqlite", &runtimetest.FakeOptions{Record: true})
	rt := w.runtime(p, runtime.Options{})
	sendShipped(w, 10)
	wantReport(t, w.tickWith(rt), "received 10 kept 10 repeats 0 parked 0 left 0 acked 10")
	counts, _ := ops(w)
	if counts["DeleteMessageBatch"] != 0 || counts["DeleteMessage"] != 10 {
		t.Fatalf("requests %v, want 10 DeleteMessage and no batch", counts)
	}
}

// dropSuccessful rewrites DeleteMessageBatch answers to leave the entries
// with the ids given out of Successful (and out of Failed): an answer that
// names them neither way.
func dropSuccessful(ids ...string) func([]byte) []byte {
	return func(answer []byte) []byte {
		var doc map[string][]map[string]any
		if err := json.Unmarshal(answer, &doc); err != nil {
			return answer
		}
		doc["Successful"] = slices.DeleteFunc(doc["Successful"], func(e map[string]any) bool { return slices.Contains(ids, fmt.Sprint(e["Id"])) })
		out, _ := json.Marshal(doc)
		return out
	}
}

// Issue 24: a DeleteMessageBatch answer that leaves entries out of both
// Successful and Failed does not acknowledge them: each is acknowledged
// again on its own (DeleteMessage), counted
// (jadpo_acknowledge_unanswered_entries_total) and logged with its message
// id; when that fails too the message is unacknowledged, so tick exits 1.
func TestBatchAckEntryTheAnswerNamesNeitherWay(t *testing.T) {
	for _, singleFails := range []bool{false, true} {
		t.Run(fmt.Sprint("single fails ", singleFails), func(t *testing.T) {
			w := newWorld(t, "sqlite", &runtimetest.FakeOptions{Record: true, ManualClock: true})
			logs := &faultLog{}
			rt := w.runtime(w.env.Plan, runtime.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			w.env.Fake.RewriteAnswers("DeleteMessageBatch", dropSuccessful("2", "5", "7"))
			if singleFails {
				w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultServerError, Operation: "DeleteMessage", Fraction: 1})
			}
			sendShipped(w, 10)
			rep := w.tickWith(rt)
			counts, _ := ops(w)
			if counts["DeleteMessageBatch"] != 1 || counts["DeleteMessage"] != 3 {
				t.Fatalf("requests %v, want 1 DeleteMessageBatch and 3 DeleteMessage", counts)
			}
			if got := metric(t, rt, "jadpo_acknowledge_unanswered_entries_total", map[string]string{"queue": "warehouse_queue"}); got != 3 {
				t.Fatalf("unanswered entries %v, want 3", got)
			}
			if got := metric(t, rt, "jadpo_acknowledge_failed_entries_total", map[string]string{"queue": "warehouse_queue"}); got != 0 {
				t.Fatalf("failed entries %v, want 0", got)
			}
			const msg = "the batch acknowledgement's answer names this entry neither as taken nor as failed; acknowledging it on its own"
			if n := logs.count(msg); n != 3 {
				t.Fatalf("%d log lines %q, want 3:\n%s", n, msg, logs.buf.String())
			}
			for _, id := range []string{"m-2", "m-5", "m-7"} {
				if !strings.Contains(logs.buf.String(), `"message_id":"`+id+`"`) {
					t.Errorf("no log line names %s", id)
				}
			}
			want, onQueue := "received 10 kept 10 repeats 0 parked 0 left 0 acked 10", 0
			if singleFails {
				want, onQueue = "received 10 kept 10 repeats 0 parked 0 left 0 acked 7", 3
			}
			wantReport(t, rep, want)
			if rep.Unacknowledged() != onQueue {
				t.Fatalf("unacknowledged %d, want %d", rep.Unacknowledged(), onQueue)
			}
			// (The fake did delete them: only its answer left them out.
			// The runtime cannot know, so it counts them unacknowledged.)
			if n := w.onQueue("warehouse_queue"); n != 0 {
				t.Fatalf("%d on the queue", n)
			}
		})
	}
}
