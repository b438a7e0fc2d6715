package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// These tests run on the wall clock: each process's clock is the wall
// clock set apart by an offset, as a machine whose clock is wrong would
// be, and the store keeps its own (docs/design/store.md, "One clock: the
// store's").

// skewed is a process clock off by d.
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// clockEnv is the warehouse example on a fresh store of kind, whose clock
// is its own (no test pins it).
func clockEnv(t *testing.T, kind string) (*runtimetest.Env, store.Store) {
	t.Helper()
	env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
	return env, env.Store()
}

func tickOK(t *testing.T, rt *runtime.Runtime) runtime.TickReport {
	t.Helper()
	rep, err := rt.Tick(context.Background())
	if err != nil {
		t.Fatalf("tick: %v (%+v)", err, rep)
	}
	return rep
}

// Two processes on one store, one 3.5 s ahead of the other, with a 4 s
// lease and a 3 s handler timeout: the one ahead never claims a delivery the
// other is still running, so the target never sees two calls at once.
// (Each process measuring the lease on its own clock, the one ahead took the
// delivery over half a second into its run.) On SQLite both processes run
// on one machine, whose clock is the store's.
func TestClockSkewedProcessDoesNotTakeOverARunningDelivery(t *testing.T) {
	eachStore(t, testClockSkewedProcess)
}

func testClockSkewedProcess(t *testing.T, kind string) {
	env, st := clockEnv(t, kind)
	opts := func(now func() time.Time) runtime.Options {
		return runtime.Options{Now: now, Lease: 4 * time.Second, HandlerTimeout: 3 * time.Second}
	}
	right := env.Runtime(st, opts(time.Now))
	ahead := env.Runtime(st, opts(skewed(3500*time.Millisecond)))

	var inFlight, most, calls atomic.Int64
	started := make(chan struct{}, 10)
	env.Target.Answer(func(r *http.Request) (int, string) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		calls.Add(1)
		started <- struct{}{}
		time.Sleep(2500 * time.Millisecond) // inside the 3 s handler timeout
		return 200, `{"job_id":"j","state":"queued"}`
	})
	keepOrders(t, st, "1")

	var wg sync.WaitGroup
	var repRight runtime.DeliverReport
	wg.Go(func() {
		var err error
		if repRight, err = right.Deliver(context.Background()); err != nil {
			t.Error(err)
		}
	})
	<-started
	// One second into the handler, the clock ahead reads 0.5 s past the
	// lease's end as the process on time wrote it.
	time.Sleep(time.Second)
	repAhead, err := ahead.Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if most.Load() != 1 || calls.Load() != 1 {
		t.Fatalf("the target saw %d calls, at most %d at once; want 1 (the process ahead claimed %d)", calls.Load(), most.Load(), repAhead.Claimed)
	}
	if repAhead.Claimed != 0 || repRight.Succeeded != 1 || repRight.Lost != 0 {
		t.Fatalf("reports: on time %+v, ahead %+v", repRight, repAhead)
	}
}

// A process 31 days behind keeps m-1; the housekeeping of a process on
// time then keeps its id, so that m-1 sent again is a repeat. On SQLite
// the store's clock is the machine's, not the process's.
func TestClockProcessBehindKeepsAnIDThatHousekeepingKeeps(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		env, st := clockEnv(t, kind)
		behind := env.Runtime(st, runtime.Options{Now: skewed(-31 * 24 * time.Hour)})
		right := env.Runtime(st, runtime.Options{})
		env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
		wantReport(t, tickOK(t, behind), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
		tickOK(t, right) // housekeeps
		if s, err := st.Stats(context.Background()); err != nil || s.ReceivedIDs != 1 {
			t.Fatalf("received ids after housekeeping: %+v, %v; want m-1's", s, err)
		}
		env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
		wantReport(t, tickOK(t, right), "received 1 kept 0 repeats 1 parked 0 left 0 acked 1")
		if n := len(env.Target.Calls()); n != 1 {
			t.Fatalf("the target saw m-1 %d times, want once", n)
		}
	})
}

// One tick whose clock jumps 31 days ahead, then the clock back: no id is
// forgotten, and the same five messages sent again are repeats, not kept
// again.
func TestClockTickAheadForgetsNoID(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		env, st := clockEnv(t, kind)
		right := env.Runtime(st, runtime.Options{})
		ahead := env.Runtime(st, runtime.Options{Now: skewed(31 * 24 * time.Hour)})
		send := func() {
			for i := 1; i <= 5; i++ {
				env.Send("warehouse_queue", runtimetest.OrderShipped(fmt.Sprint("m-", i)))
			}
		}
		send()
		wantReport(t, tickOK(t, right), "received 5 kept 5 repeats 0 parked 0 left 0 acked 5")
		tickOK(t, ahead)
		if s, err := st.Stats(context.Background()); err != nil || s.ReceivedIDs != 5 {
			t.Fatalf("received ids after the tick ahead: %+v, %v; want 5", s, err)
		}
		send()
		wantReport(t, tickOK(t, right), "received 5 kept 0 repeats 5 parked 0 left 0 acked 5")
		if n := len(env.Target.Calls()); n != 5 {
			t.Fatalf("the target saw %d calls for 5 messages", n)
		}
	})
}
