package runtime_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// retriedWorld is a world where the queue brought bodies, and its one
// parked message, delayed("m-1") (a type the example does not list), an
// operator has retried: it is pending.
func retriedWorld(t *testing.T, kind string, bodies ...string) *world {
	t.Helper()
	w := newWorld(t, kind, nil)
	w.send("warehouse_queue", append(bodies, delayed("m-1"))...)
	rep := w.tick()
	if rep.Parked != 1 || rep.Kept != len(bodies) {
		t.Fatalf("first tick %+v", rep)
	}
	ps := w.parked(store.ListFailed)
	if len(ps) != 1 {
		t.Fatalf("parked %+v", ps)
	}
	if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID}); err != nil {
		t.Fatal(err)
	}
	return w
}

// A retried parked message whose id is kept already (here a message of the
// queue with the same id; with several processes, one that read the same
// retried row first) adds nothing: it is a repeat after retry, logged and
// counted as one, not "kept after retry". Its parked row goes all the same.
func TestRetriedParkedMessageAlreadyKeptIsARepeat(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := retriedWorld(t, kind, shipped("m-1"))
			logs := &faultLog{}
			rt := w.runtime(planWithDelayed(t), runtime.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			rep := w.tickWith(rt)
			if rep.RetriedRepeats != 1 || rep.RetriedKept != 0 || rep.RetriedParked != 0 || rep.Repeats != 0 {
				t.Fatalf("after the retry %+v", rep)
			}
			if n, k := logs.count("repeat after retry: already kept"), logs.count("kept after retry"); n != 1 || k != 0 {
				t.Fatalf("%d repeat-after-retry lines and %d kept-after-retry lines, want 1 and 0:\n%s", n, k, logs.buf.String())
			}
			if !strings.Contains(logs.buf.String(), `"parked_id":"p`) {
				t.Errorf("the repeat-after-retry line does not name the parked message:\n%s", logs.buf.String())
			}
			if got := counters(t, rt)["jadpo_messages_repeated_total{queue=warehouse_queue}"]; got != 1 {
				t.Errorf("jadpo_messages_repeated_total = %v, want 1", got)
			}
			if s := w.stats(); s.ParkedTotal() != 0 || s.Outbox != 1 {
				t.Fatalf("after the repeat %+v", s)
			}
		})
	}
}

// When the store cannot set a retried message back to failed, the message
// is on no queue: its row stays pending and the next tick reads it again.
// The log says so (not "it stays on the queue"), nothing counts it as left
// on a queue, and the tick returns the store's error, so `jadpo tick`
// exits 1.
func TestRetriedParkedMessageTheStoreCannotParkStaysPending(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := retriedWorld(t, kind)
			logs := &faultLog{}
			w.rt = w.runtime(w.env.Plan, runtime.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			w.st.FailParks(1)
			rep, err := w.rt.Tick(w.ctx)
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("tick error %v, want the store's", err)
			}
			if rep.RetriedParked != 0 || rep.Left != 0 || rep.Parked != 0 {
				t.Fatalf("tick %+v", rep)
			}
			if p := w.parked(store.ListPending); len(p) != 1 || len(w.parked(store.ListFailed)) != 0 {
				t.Fatalf("the retried message is not pending: %+v", p)
			}
			if n, q := logs.count("the store cannot park a retried message now; it stays pending and is read again next tick"),
				logs.count("the store cannot park a message now; it stays on the queue"); n != 1 || q != 0 {
				t.Fatalf("%d stays-pending lines and %d stays-on-the-queue lines, want 1 and 0:\n%s", n, q, logs.buf.String())
			}
			if got := counters(t, w.rt)["jadpo_messages_left_on_queue_total{queue=warehouse_queue}"]; got != 0 {
				t.Errorf("jadpo_messages_left_on_queue_total = %v, want 0", got)
			}
			// The next tick reads it again and parks it.
			rep = w.tick()
			if rep.RetriedParked != 1 || len(w.parked(store.ListFailed)) != 1 || len(w.parked(store.ListPending)) != 0 {
				t.Fatalf("the next tick %+v", rep)
			}
		})
	}
}

// twiceRetried is a store whose RetriedParked lists each retried row twice:
// what two `jadpo run` processes reading the same pending rows at once (the
// read is no claim) settle, one after the other.
type twiceRetried struct{ store.Store }

func (s twiceRetried) RetriedParked(ctx context.Context, limit int) ([]store.ParkedMessage, error) {
	ps, err := s.Store.RetriedParked(ctx, limit)
	return append(ps, ps...), err
}

// Two readers of one retried row: the one that settles it second changes
// nothing, and says so; the row is counted once, as what the first did.
func TestRetriedParkedMessageReadTwiceIsSettledOnce(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range []struct {
				name      string
				plan      func(*testing.T) *ir.Program
				once      string // the first reader's line
				second    string // the second's
				kept, rep int    // RetriedKept, RetriedRepeats
				parked    int    // RetriedParked
			}{
				{"kept", planWithDelayed, "kept after retry", "repeat after retry: already kept", 1, 1, 0},
				{"parked_again", func(t *testing.T) *ir.Program { return checktest.ExamplePlan(t, "warehouse") },
					"parked", "parked already: the retried message is no longer pending; nothing changed", 0, 0, 1},
			} {
				t.Run(c.name, func(t *testing.T) {
					w := retriedWorld(t, kind)
					logs := &faultLog{}
					rt := w.env.RuntimeFor(c.plan(t), twiceRetried{w.st}, runtime.Options{Now: w.clock.Now, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
					rep := w.tickWith(rt)
					if rep.RetriedKept != c.kept || rep.RetriedRepeats != c.rep || rep.RetriedParked != c.parked {
						t.Fatalf("after the retry %+v", rep)
					}
					if a, b := logs.count(c.once), logs.count(c.second); a != 1 || b != 1 {
						t.Fatalf("%d %q lines and %d %q lines, want 1 each:\n%s", a, c.once, b, c.second, logs.buf.String())
					}
					if strings.Contains(logs.buf.String(), `"parked_id":"?`) {
						t.Errorf("a line names no parked message:\n%s", logs.buf.String())
					}
					if got := counters(t, rt)["jadpo_messages_parked_total{queue=warehouse_queue,reason=unlisted_type}"]; got != float64(c.parked) {
						t.Errorf("jadpo_messages_parked_total = %v, want %d", got, c.parked)
					}
					if len(w.parked(store.ListPending)) != 0 {
						t.Fatal("the retried message is still pending")
					}
				})
			}
		})
	}
}
