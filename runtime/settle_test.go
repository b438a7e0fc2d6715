package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// write is one transaction the delivery engine asked of the store: the
// settlements it carried and how many deliveries it claimed.
type write struct{ settled, claimed int }

func (w write) String() string { return fmt.Sprintf("settle %d claim %d", w.settled, w.claimed) }

// gatedStore holds the writes that settle anything until the test opens
// the gate, and records every write.
type gatedStore struct {
	store.Store
	gate   chan struct{}
	mu     sync.Mutex
	writes []write
	// refuse makes every write that settles more than one delivery fail,
	// as a store refusing the statement would.
	refuse bool
}

func (g *gatedStore) record(w write) {
	g.mu.Lock()
	g.writes = append(g.writes, w)
	g.mu.Unlock()
}

func (g *gatedStore) SettleAndClaim(ctx context.Context, ss []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	if settlements(ss) > 0 { // a write of handlers' starts alone is not held
		<-g.gate
	}
	if g.refuse && len(ss) > 1 {
		g.record(write{settlements(ss), -1})
		return nil, nil, errors.New("refused")
	}
	ok, claimed, err := g.Store.SettleAndClaim(ctx, ss, limit, lease)
	g.record(write{settlements(ss), len(claimed)})
	return ok, claimed, err
}

func (g *gatedStore) SettleDelivery(ctx context.Context, s store.Settlement) (bool, error) {
	g.record(write{settlements([]store.Settlement{s}), 0})
	return g.Store.SettleDelivery(ctx, s)
}

// settlements counts the settlements among ss that end a claim: not the
// handlers' starts written with them.
func settlements(ss []store.Settlement) int {
	n := 0
	for _, s := range ss {
		if s.Outcome != store.SettleStarted {
			n++
		}
	}
	return n
}

// Issue 16, point 4: deliveries that finish while a settlement is being
// written are settled together in a later transaction, each under its own
// token, and the deliveries for the workers they free are claimed in that
// same transaction. 216 deliveries, 8 workers (enough that claims go on
// after the engine has claimed ahead as far as it may); the writes that settle are held
// until all 8 handlers of the first claim have finished. Before, each
// delivery was settled in its own transaction and claims in others.
func TestSettlementsFinishingTogetherShareOneTransaction(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			n := 3 * (1 + runtime.MaxAheadPerWorker) * runtime.Workers
			writes := settleTogether(t, kind, false, n)
			settled, together := 0, false
			for _, w := range writes {
				settled += w.settled
				together = together || w.settled > 1 && w.claimed > 0
			}
			if settled != n || !together || len(writes) >= n {
				t.Fatalf("writes %v: want %d settlements in fewer transactions, one of them settling several and claiming",
					writes, n)
			}
		})
	}
}

// A group whose write fails as a whole is settled one by one: none is lost.
func TestSettlementsGroupFailingSettlesOneByOne(t *testing.T) {
	writes := settleTogether(t, "sqlite", true, 2*runtime.Workers)
	refused, single := 0, 0
	for _, w := range writes {
		switch {
		case w.claimed == -1: // refused (a group may hold one settlement and handlers' starts)
			refused += w.settled
		case w.settled == 1:
			single++
		}
	}
	if refused == 0 || single != 2*runtime.Workers {
		t.Fatalf("writes %v: want refused groups, then every delivery settled on its own", writes)
	}
}

// settleTogether delivers n deliveries with the first settling write held
// until every worker's handler has finished; it checks that each delivery
// succeeded once and returns the writes.
func settleTogether(t *testing.T, kind string, refuse bool, n int) []write {
	w := newDeliverWorld(t, kind, runtime.Options{})
	g := &gatedStore{Store: w.st, gate: make(chan struct{}), refuse: refuse}
	rt := w.runtime(g, runtime.Options{})
	var mu sync.Mutex
	queued := 0
	runtime.SetSettleQueuedHook(rt, func() {
		mu.Lock()
		defer mu.Unlock()
		if queued++; queued == runtime.Workers {
			close(g.gate)
		}
	})
	ns := make([]string, n)
	for i := range ns {
		ns[i] = fmt.Sprint("m-", i)
	}
	ids := keepOrders(t, w.st, ns...)
	succeeded := 0
	for succeeded < len(ns) {
		rep, err := rt.Deliver(context.Background())
		// A refused group took the claim with it: the step says so, and
		// the next one claims again. Two groups in flight at once can both
		// be refused in one step: their errors come joined, one a line.
		if err != nil && !(refuse && onlyRefusals(err)) {
			t.Fatal(err)
		}
		if rep.Claimed == 0 || rep.Lost != 0 || rep.Failed != 0 || rep.Retried != 0 {
			t.Fatalf("report %+v after %d succeeded", rep, succeeded)
		}
		succeeded += rep.Succeeded
	}
	for _, id := range ids {
		if e := w.show(id); e.RowState != "succeeded" || e.Attempts != 1 {
			t.Fatalf("%s: %+v, want succeeded after one attempt", id, e)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]write(nil), g.writes...)
}

// onlyRefusals reports whether every line of err is a refused group's.
func onlyRefusals(err error) bool {
	for _, line := range strings.Split(err.Error(), "\n") {
		if line != "claiming deliveries: refused" {
			return false
		}
	}
	return true
}
