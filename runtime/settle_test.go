package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// gatedStore holds settlement writes until the test opens the gate, and
// records how many settlements each write carried.
type gatedStore struct {
	store.Store
	gate   chan struct{}
	mu     sync.Mutex
	writes []int
	// refuseGroups makes every SettleDeliveries fail, as a store refusing
	// the statement would.
	refuseGroups bool
}

func (g *gatedStore) wait() { <-g.gate }

func (g *gatedStore) record(n int) {
	g.mu.Lock()
	g.writes = append(g.writes, n)
	g.mu.Unlock()
}

func (g *gatedStore) SettleDelivery(ctx context.Context, now time.Time, s store.Settlement) (bool, error) {
	g.wait()
	g.record(1)
	return g.Store.SettleDelivery(ctx, now, s)
}

func (g *gatedStore) SettleDeliveries(ctx context.Context, now time.Time, ss []store.Settlement) ([]bool, error) {
	g.wait()
	g.record(len(ss))
	if g.refuseGroups {
		return nil, errors.New("refused")
	}
	return g.Store.SettleDeliveries(ctx, now, ss)
}

// Issue 16, point 4: deliveries that finish while settlements are being
// written are settled together in the next transaction, one commit for
// all of them. Eight handlers run at once; every write is held until all
// eight settlements are handed in: the SettleWriters writers hold what
// they took, and what came after goes in one more write.
func TestSettlementsFinishingTogetherShareOneTransaction(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			writes := settleTogether(t, kind, false)
			sum := 0
			for _, n := range writes {
				sum += n
			}
			if sum != runtime.Workers || len(writes) > runtime.SettleWriters+1 {
				t.Fatalf("settlements per write %v, want %d in at most %d writes", writes, runtime.Workers, runtime.SettleWriters+1)
			}
		})
	}
}

// A group whose write fails as a whole is settled one by one: none is lost.
func TestSettlementsGroupFailingSettlesOneByOne(t *testing.T) {
	writes := settleTogether(t, "sqlite", true)
	grouped := 0
	for _, n := range writes {
		if n > 1 {
			grouped++
		}
	}
	if grouped == 0 {
		t.Fatalf("settlements per write %v: no group was tried", writes)
	}
}

// settleTogether delivers runtime.Workers deliveries at once with every
// settlement write held until all are handed in; it checks that each
// succeeded and returns the settlements each write carried.
func settleTogether(t *testing.T, kind string, refuseGroups bool) []int {
	w := newDeliverWorld(t, kind, runtime.Options{})
	g := &gatedStore{Store: w.st, gate: make(chan struct{}), refuseGroups: refuseGroups}
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
	ns := make([]string, runtime.Workers)
	for i := range ns {
		ns[i] = fmt.Sprint("m-", i)
	}
	ids := keepOrders(t, w.st, w.clock.Now(), ns...)
	rep, err := rt.Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Succeeded != runtime.Workers || rep.Lost != 0 {
		t.Fatalf("report %+v, want %d succeeded", rep, runtime.Workers)
	}
	g.mu.Lock()
	writes := append([]int(nil), g.writes...)
	g.mu.Unlock()
	for _, id := range ids {
		if e := w.show(id); e.RowState != "succeeded" || e.Attempts != 1 {
			t.Fatalf("%s: %+v, want succeeded after one attempt", id, e)
		}
	}
	return writes
}
