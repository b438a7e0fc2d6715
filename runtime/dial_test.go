package runtime_test

import (
	"context"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// Options.Dial opens every connection of provider calls (receiving and
// deliveries), as jadpo dev relies on to keep to the machine.
func TestDialOpensEveryProviderConnection(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	var mu sync.Mutex
	var dialled []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	st := env.Store()
	rt := env.Runtime(st, runtime.Options{Dial: dial})
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	rep, err := rt.Tick(context.Background())
	if err != nil || rep.Kept != 1 || rep.Delivered.Succeeded != 1 {
		t.Fatalf("tick %+v, %v", rep, err)
	}
	fake, _ := url.Parse(env.World.SQS.URL)
	target, _ := url.Parse(env.Target.URL)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(dialled, fake.Host) || !slices.Contains(dialled, target.Host) {
		t.Fatalf("dialled %v; want the queue's %s and the service's %s", dialled, fake.Host, target.Host)
	}
	if s, _ := st.Stats(context.Background()); s.Deliveries[store.DeliverySucceeded] != 1 {
		t.Fatalf("stats %+v", s)
	}
}
