package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

func TestTickKeepsParksAndDelivers(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind)
			st := env.Store()
			rt := env.Runtime(st, runtime.Options{})
			ctx := context.Background()
			env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
			env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
			env.Send("warehouse_queue", `{"id":"m-2","type":"order_delayed","order_id":"o-2"}`)
			env.Send("warehouse_queue", `not json`)
			env.Send("returns_queue", `{"meta":{"return_id":7},"order_id":"o-3","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`)
			rep, err := rt.Tick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Received != 5 || rep.Kept != 2 || rep.Repeats != 1 || rep.Parked != 2 || rep.Acked != 5 {
				t.Fatalf("tick report %+v", rep)
			}
			stats, err := st.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Outbox != 2 || stats.ReceivedIDs != 2 {
				t.Fatalf("stats %+v", stats)
			}
			for _, q := range []string{"warehouse", "returns"} {
				if qs, _ := env.Fake.Stats(q); qs.Visible+qs.InFlight != 0 {
					t.Fatalf("queue %s still holds %+v", q, qs)
				}
			}
			if calls := env.Target.Calls(); len(calls) != 1 || calls[0].Path != "/accounts/warehouse-1/jobs" || calls[0].Body["order_id"] != "o-m-1" {
				t.Fatalf("target calls %+v", calls)
			}
			entries, err := st.List(ctx, store.Filter{State: store.ListFailed})
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, en := range entries {
				labels = append(labels, en.Label()+" "+en.Code)
			}
			got := strings.Join(labels, "; ")
			if !strings.Contains(got, "queue warehouse_queue · order_delayed unlisted_type") || !strings.Contains(got, "unreadable") {
				t.Fatalf("listed %q", got)
			}
		})
	}
}
