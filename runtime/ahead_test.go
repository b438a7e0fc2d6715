package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// heldStore counts the deliveries the engine holds: claimed, and neither
// settled nor released yet.
type heldStore struct {
	store.Store
	mu       sync.Mutex
	held     int
	mostHeld int
}

func (h *heldStore) SettleAndClaim(ctx context.Context, ss []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	ok, c, err := h.Store.SettleAndClaim(ctx, ss, limit, lease)
	if err == nil {
		// A handler's start (SettleStarted) keeps its claim: only the
		// other settlements end one.
		ended := 0
		for _, st := range ss {
			if st.Outcome != store.SettleStarted {
				ended++
			}
		}
		h.mu.Lock()
		h.held += len(c) - ended
		h.mostHeld = max(h.mostHeld, h.held)
		h.mu.Unlock()
	}
	return ok, c, err
}

func (h *heldStore) most() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mostHeld
}

// deliverAll runs delivery steps until n deliveries have succeeded and adds
// up their reports.
func deliverAll(t *testing.T, rt *runtime.Runtime, n int) runtime.DeliverReport {
	t.Helper()
	var sum runtime.DeliverReport
	for sum.Succeeded < n {
		rep, err := rt.Deliver(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Claimed == 0 {
			t.Fatalf("nothing claimed after %+v, want %d succeeded", sum, n)
		}
		sum.Claimed += rep.Claimed
		sum.Succeeded += rep.Succeeded
		sum.Released += rep.Released
		sum.Retried += rep.Retried
		sum.Failed += rep.Failed
		sum.Lost += rep.Lost
	}
	return sum
}

// expectEachOnce checks that every delivery succeeded after one attempt and
// that the target was called once for each.
func (w *deliverWorld) expectEachOnce(ids []store.ID) {
	w.t.Helper()
	for _, id := range ids {
		w.expect(id, store.DeliverySucceeded, 1, "", time.Time{})
	}
	if n := len(w.env.Target.Calls()); n != len(ids) {
		w.t.Fatalf("the target saw %d calls for %d deliveries", n, len(ids))
	}
}

// While handlers are quick, the engine claims ahead of its free workers,
// so that a worker that comes free starts the next delivery at once; each
// delivery still runs once.
func TestDeliverClaimsAheadOfQuickHandlers(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		h := &heldStore{Store: w.st}
		rt := w.runtime(h, runtime.Options{})
		ns := make([]string, 12*runtime.Workers)
		for i := range ns {
			ns[i] = fmt.Sprint(i + 1)
		}
		ids := keepOrders(t, w.st, ns...)
		rep := deliverAll(t, rt, len(ns))
		if rep.Claimed != len(ns) || rep.Released != 0 || rep.Lost != 0 {
			t.Errorf("report %+v", rep)
		}
		if m := h.most(); m <= runtime.Workers {
			t.Errorf("at most %d deliveries held at once, want more than the %d workers", m, runtime.Workers)
		}
		w.expectEachOnce(ids)
	})
}

// quick is how many calls aheadWorld's target answers at once.
const quick = 40

// aheadWorld has quick handlers for the first calls, then handlers that
// hold every call until the test lets them go, with deliveries claimed
// ahead waiting for the held workers.
type aheadWorld struct {
	*deliverWorld
	rt      *runtime.Runtime
	ids     []store.ID
	release chan struct{}
	held    chan struct{}
}

func newAheadWorld(t *testing.T, kind string) *aheadWorld {
	w := &aheadWorld{deliverWorld: newDeliverWorld(t, kind, runtime.Options{}), release: make(chan struct{}),
		held: make(chan struct{}, 200)}
	w.rt = w.runtime(w.st, runtime.Options{})
	ns := make([]string, 100)
	for i := range ns {
		ns[i] = fmt.Sprint(i + 1)
	}
	w.ids = keepOrders(t, w.st, ns...)
	var calls atomic.Int64
	w.env.Target.Answer(func(r *http.Request) (int, string) {
		if calls.Add(1) > quick {
			w.held <- struct{}{}
			<-w.release
		}
		return 200, `{"job_id":"j","state":"queued"}`
	})
	return w
}

// waitAhead waits until every worker is held, the quick deliveries are
// settled and the deliveries claimed ahead stand still, and returns how
// many are running in the store: the held ones and those claimed ahead (a
// claim still on its way may add more).
func (w *aheadWorld) waitAhead() int64 {
	w.t.Helper()
	for range runtime.Workers {
		<-w.held
	}
	last := int64(-1)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		st, err := w.st.Stats(context.Background())
		if err != nil {
			w.t.Fatal(err)
		}
		n := st.Deliveries[store.DeliveryRunning]
		if n == last && n > runtime.Workers && st.Deliveries[store.DeliverySucceeded] == quick {
			return n
		}
		last = n
	}
	w.t.Fatalf("no deliveries claimed ahead of the held workers (%d running)", last)
	return 0
}

// waitRunning waits until exactly n deliveries are running in the store.
func (w *aheadWorld) waitRunning(n int64) {
	w.t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		st, err := w.st.Stats(context.Background())
		if err != nil {
			w.t.Fatal(err)
		}
		if st.Deliveries[store.DeliveryRunning] == n {
			return
		}
	}
	st, _ := w.st.Stats(context.Background())
	w.t.Fatalf("deliveries running never came to %d: %v", n, st.Deliveries)
}

// expectReleased checks that every delivery neither succeeded nor running
// is pending with no attempt counted.
func (w *aheadWorld) expectReleased() int {
	w.t.Helper()
	released := 0
	for _, id := range w.ids {
		switch e := w.show(id); e.RowState {
		case string(store.DeliverySucceeded), string(store.DeliveryRunning):
		case string(store.DeliveryPending):
			if e.Attempts != 0 {
				w.t.Fatalf("%s: pending after %d attempts, want the released claim's attempt uncounted", id, e.Attempts)
			}
			released++
		default:
			w.t.Fatalf("%s: %+v", id, e)
		}
	}
	return released
}

// A delivery claimed ahead that waits for a worker longer than half the
// lease's margin over the handler timeout is released, not started: it is
// pending again with its attempt uncounted, so that the settlement of any
// handler started is written well inside its lease. The engine claims no
// more ahead in that step; every delivery still runs once.
func TestDeliverReleasesWhatWaitedTooLong(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newAheadWorld(t, kind)
		reports := make(chan runtime.DeliverReport, 1)
		go func() {
			rep, err := w.rt.Deliver(context.Background())
			if err != nil {
				t.Error(err)
			}
			reports <- rep
		}()
		running := w.waitAhead()
		// Half the margin, to the microsecond, is not yet too long.
		w.clock.Advance((runtime.Lease - runtime.HandlerTimeout) / 2)
		time.Sleep(250 * time.Millisecond)
		if st, _ := w.st.Stats(context.Background()); st.Deliveries[store.DeliveryRunning] < running {
			t.Fatalf("%d running after waiting half the margin, want the %d claimed still held", st.Deliveries[store.DeliveryRunning], running)
		}
		w.clock.Advance(time.Millisecond)
		w.waitRunning(runtime.Workers)
		if n := w.expectReleased(); n != 100-quick-runtime.Workers {
			t.Fatalf("%d pending, want the %d neither run nor running", n, 100-quick-runtime.Workers)
		}
		close(w.release)
		rep := <-reports
		if rep.Released < int(running)-runtime.Workers || rep.Released != rep.Claimed-rep.Succeeded || rep.Succeeded != quick+runtime.Workers {
			t.Errorf("report %+v, want at least %d released, the rest succeeded", rep, running-runtime.Workers)
		}
		if got := metric(t, w.rt, "jadpo_deliveries_released_total", map[string]string{"subscriber": "pack_order"}); got != float64(rep.Released) {
			t.Errorf("jadpo_deliveries_released_total = %v, want %d", got, rep.Released)
		}
		sum := deliverAll(t, w.rt, 100-rep.Succeeded)
		if sum.Released != 0 || sum.Lost != 0 {
			t.Errorf("after the release: %+v", sum)
		}
		w.expectEachOnce(w.ids)
	})
}

// A signal releases the deliveries claimed ahead at once; the handlers in
// hand finish and settle.
func TestDeliverStoppingReleasesWhatWaits(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newAheadWorld(t, kind)
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		reports := make(chan runtime.DeliverReport, 1)
		go func() {
			rep, _ := w.rt.Deliver(ctx)
			reports <- rep
		}()
		running := w.waitAhead()
		stop()
		w.waitRunning(runtime.Workers)
		w.expectReleased()
		close(w.release)
		rep := <-reports
		if rep.Released < int(running)-runtime.Workers || rep.Released != rep.Claimed-rep.Succeeded || rep.Succeeded != quick+runtime.Workers {
			t.Errorf("report %+v, want at least %d released and the rest succeeded", rep, running-runtime.Workers)
		}
		if n := len(w.env.Target.Calls()); n != quick+runtime.Workers {
			t.Errorf("the target saw %d calls, want %d: none for a released delivery", n, quick+runtime.Workers)
		}
		deliverAll(t, w.rt, 100-rep.Succeeded)
		w.expectEachOnce(w.ids)
	})
}

// A lease a nanosecond longer than the handler timeout leaves no time to
// wait for a worker: nothing is claimed ahead for long, and the step runs.
func TestDeliverWithTheNarrowestLeaseMargin(t *testing.T) {
	w := newDeliverWorld(t, "sqlite", runtime.Options{Lease: time.Second, HandlerTimeout: time.Second - time.Nanosecond})
	ids := keepOrders(t, w.st, "1", "2", "3")
	if rep := deliverAll(t, w.rt, len(ids)); rep.Succeeded != len(ids) {
		t.Fatalf("report %+v", rep)
	}
	w.expectEachOnce(ids)
}
