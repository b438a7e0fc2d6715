package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

func TestTickKeepsParksAndDelivers(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
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
			for _, q := range []string{"warehouse_queue", "returns_queue"} {
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

// docs/guide/operating.md, "Logs": one log line per kept, repeated and parked message and per
// settled delivery, each with the message id, never a body value.
func TestLogsOneLinePerMessageWithItsIDAndNoBodyValue(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
			var logged bytes.Buffer
			rt := env.Runtime(env.Store(), runtime.Options{Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
			const value = "BODYVALUE-7c1e" // in every body; must never be logged
			shipped := strings.Replace(runtimetest.OrderShipped("m-1"), `"o-m-1"`, `"o-`+value+`"`, 1)
			env.Send("warehouse_queue", shipped)
			env.Send("warehouse_queue", shipped)
			env.Send("warehouse_queue", `{"id":"m-2","type":"order_delayed","order_id":"`+value+`"}`)
			env.Send("warehouse_queue", `{"id":"m-3","type":"order_shipped","order_id":"`+value+`","carrier":"`+value+`"}`)
			if _, err := rt.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(logged.String(), value) {
				t.Fatalf("a body value was logged:\n%s", logged.String())
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("not a JSON log line: %q", l)
				}
				switch rec["msg"] {
				case "kept", "repeat: already kept", "parked", "delivery settled":
					lines = append(lines, fmt.Sprintf("%s %v", rec["msg"], rec["message_id"]))
				}
			}
			slices.Sort(lines)
			want := []string{"delivery settled m-1", "kept m-1", "parked m-2", "parked m-3", "repeat: already kept m-1"}
			if !slices.Equal(lines, want) {
				t.Fatalf("log lines %q\nwant %q", lines, want)
			}
		})
	}
}

// docs/guide/operating.md, "Metrics and health": the metrics count received, kept, repeated and parked (by
// reason) messages, deliveries by outcome and the ticks' duration.
func TestMetricsCountWhatTheTickDid(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	rt := env.Runtime(env.Store(), runtime.Options{})
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	env.Send("warehouse_queue", `{"id":"m-2","type":"order_delayed"}`)
	env.Send("warehouse_queue", `not json`)
	if _, err := rt.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	families, err := rt.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				got[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	for key, want := range map[string]float64{
		"jadpo_messages_received_total{queue=warehouse_queue}":                    4,
		"jadpo_messages_kept_total{queue=warehouse_queue}":                        1,
		"jadpo_messages_repeated_total{queue=warehouse_queue}":                    1,
		"jadpo_messages_parked_total{queue=warehouse_queue,reason=unlisted_type}": 1,
		"jadpo_messages_parked_total{queue=warehouse_queue,reason=unreadable}":    1,
		"jadpo_deliveries_total{outcome=succeeded,subscriber=pack_order}":         1,
		"jadpo_tick_duration_seconds{}":                                           1,
		// The four are settled and deleted in one DeleteMessageBatch.
		"jadpo_acknowledge_requests_total{form=batch,queue=warehouse_queue}":  1,
		"jadpo_acknowledge_requests_total{form=single,queue=warehouse_queue}": 0,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}

// docs/guide/operating.md, "Running": an app that receives a queue ticks at least every 10
// seconds, whatever interval it is given; a tick that used all its asks is
// followed at once by the next.
func TestRunTicksAtLeastEveryTenSeconds(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		want     time.Duration
	}{{time.Hour, runtime.MaxTickInterval}, {0, runtime.MaxTickInterval}, {-time.Second, runtime.MaxTickInterval}, {2 * time.Second, 2 * time.Second}} {
		t.Run(c.interval.String(), func(t *testing.T) {
			env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
			// 105 messages: the first tick takes 100 in its 10 asks and is
			// busy (no pause), the second takes 5.
			for i := range 105 {
				env.Send("warehouse_queue", runtimetest.OrderShipped(fmt.Sprintf("m-%d", i)))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var pauses []time.Duration
			now := make(chan time.Time, 1)
			now <- time.Now()
			close(now)
			rt := env.Runtime(env.Store(), runtime.Options{After: func(d time.Duration) <-chan time.Time {
				pauses = append(pauses, d)
				if len(pauses) == 3 {
					cancel()
				}
				return now
			}})
			if err := rt.Run(ctx, c.interval); err != nil {
				t.Fatal(err)
			}
			if want := []time.Duration{0, c.want, c.want}; !slices.Equal(pauses, want) {
				t.Fatalf("pauses between ticks %v, want %v", pauses, want)
			}
		})
	}
}
