package runtime_test

// Issue 11, point 5: one slow endpoint stalls only itself. These run wholly
// on the wall clock (the fake's hang is held until the runtime's deadline);
// nothing asserts how long anything took: a tick that is not bounded never
// returns and the test times out.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// A returns queue whose every receive hangs (the first queue of the plan)
// does not keep the warehouse queue from being received in the same tick;
// its receive is cut at the tick's budget and the tick says so.
func TestHangingQueueDelaysOnlyItself(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultHang, Operation: "ReceiveMessage", Queue: "returns_queue", Fraction: 1})
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	env.Send("returns_queue", returnBody("7"))
	// The client's own timeout is what bounded a hung receive before (three
	// tries of it); the budget is far shorter.
	rt := env.Runtime(env.Store(), runtime.Options{Budget: 300 * time.Millisecond, HTTP: &http.Client{Timeout: 5 * time.Second}})
	rep, err := rt.Tick(context.Background())
	if rep.Kept != 1 || rep.Acked != 1 {
		t.Fatalf("the warehouse queue's message was not kept in the tick: %+v (error %v)", rep, err)
	}
	if err == nil || !strings.Contains(err.Error(), "queue returns_queue: receiving: no answer within the tick's budget") {
		t.Fatalf("the hung queue's error: %v", err)
	}
	if strings.Contains(err.Error(), "warehouse_queue") {
		t.Fatalf("the warehouse queue failed too: %v", err)
	}
	if qs, _ := env.Fake.Stats("warehouse_queue"); qs.Visible+qs.InFlight != 0 {
		t.Fatalf("the warehouse queue still holds %+v", qs)
	}
	if qs, _ := env.Fake.Stats("returns_queue"); qs.Visible != 1 {
		t.Fatalf("the return is not left on its queue: %+v", qs)
	}
}

// A delete that hangs is bounded by Options.AckTimeout for the whole batch
// (before, by the client's timeout per message: here an hour): the tick
// returns with every message kept, none acknowledged (they come back as
// repeats), and the acknowledgements were attempted.
func TestHangingDeleteIsBounded(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultHang, Operation: "DeleteMessageBatch", Fraction: 1})
	env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultHang, Operation: "DeleteMessage", Fraction: 1})
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		env.Send("warehouse_queue", runtimetest.OrderShipped(id))
	}
	rt := env.Runtime(env.Store(), runtime.Options{
		AckTimeout: 300 * time.Millisecond, HTTP: &http.Client{Timeout: time.Hour},
	})
	rep, err := rt.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Received != 3 || rep.Kept != 3 || rep.Acked != 0 || rep.Unacknowledged() != 3 {
		t.Fatalf("tick report %+v", rep)
	}
	if n := env.Fake.Calls("DeleteMessageBatch") + env.Fake.Calls("DeleteMessage"); n == 0 {
		t.Fatal("no acknowledgement was attempted")
	}
	if qs, _ := env.Fake.Stats("warehouse_queue"); qs.InFlight != 3 {
		t.Fatalf("the kept messages should wait on the queue to come back as repeats: %+v", qs)
	}
}

// The long poll and the budget: a receive long-polling for 2 s
// (wait_time_seconds) is not cut by a budget of 300 ms; the tick is
// stretched for it (docs/design/runtime.md, "The tick's budget"), so a message
// sent during the poll is kept in that tick and no error is reported.
func TestLongPollStretchesTheBudget(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	p := checktest.ExamplePlan(t, "warehouse", checktest.Edit{File: "app.jadpo", Old: "wait_time_seconds: 0", New: "wait_time_seconds: 2"})
	rt := env.RuntimeFor(p, env.Store(), runtime.Options{Budget: 300 * time.Millisecond})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		// Sent once the tick's poll is waiting: the fake counts the call
		// when it arrives.
		for env.Fake.Calls("ReceiveMessage") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // past the budget, within the poll
		env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	}()
	rep, err := rt.Tick(context.Background())
	<-sent
	if err != nil {
		t.Fatalf("the long poll was cut: %v", err)
	}
	if rep.Kept != 1 {
		t.Fatalf("the message sent during the long poll was not kept in the tick: %+v", rep)
	}
}

// The same bounds on the cloudflare_queues driver (examples/returns), on the
// wall clock: a pull that hangs is cut at the budget and the message is
// pulled by the next tick; an ack that hangs is cut at AckTimeout, and the
// kept message comes back a repeat once its lease runs out.
func TestHangingCloudflarePullAndAckAreBounded(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	cf := cfqueuesfake.New(cfqueuesfake.Options{})
	srv := httptest.NewServer(cf)
	t.Cleanup(srv.Close)
	if err := cf.CreateQueue(cfAccount, cfQueue, cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	env.SetEnv("CF_HOST", srv.URL)
	env.SetEnv("CF_API_TOKEN", cfqueuesfake.DefaultToken)
	env.SetEnv("CF_ACCOUNT_ID", cfAccount)
	env.SetEnv("CF_RETURNS_QUEUE_ID", cfQueue)
	env.SetEnv("REFUNDS_TOKEN", "refunds-token") // examples/returns' subscriber; its service is not run here
	rt := env.RuntimeFor(returnsPlan(t), env.Store(), runtime.Options{
		Budget: 300 * time.Millisecond, AckTimeout: 300 * time.Millisecond, HTTP: &http.Client{Timeout: time.Hour},
	})
	if _, err := cf.Send(cfAccount, cfQueue, returnRequested("r-1")); err != nil {
		t.Fatal(err)
	}
	cf.HangNext("pull", 1)
	rep, err := rt.Tick(context.Background())
	if err == nil || !strings.Contains(err.Error(), "queue returns_queue: receiving: no answer within the tick's budget") || rep.Received != 0 {
		t.Fatalf("a hanging pull: %+v, %v", rep, err)
	}
	cf.HangNext("ack", 1)
	rep, err = rt.Tick(context.Background())
	if err != nil || rep.Kept != 1 || rep.Acked != 0 {
		t.Fatalf("a hanging ack: %+v, %v", rep, err)
	}
	if s, _ := cf.Stats(cfAccount, cfQueue); s.InFlight != 1 {
		t.Fatalf("the kept message should wait leased, to come back a repeat: %+v", s)
	}
}
