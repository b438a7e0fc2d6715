package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// The checker's retention defaults are the store's.
func TestRetentionDefaultsAgree(t *testing.T) {
	if check.DefaultKeepSucceeded != store.DefaultKeepSucceeded || check.DefaultKeepOutbox != store.DefaultKeepOutbox {
		t.Fatalf("check keeps %v/%v, the store %v/%v", check.DefaultKeepSucceeded, check.DefaultKeepOutbox,
			store.DefaultKeepSucceeded, store.DefaultKeepOutbox)
	}
}

// metricSample reads one sample of m by name and labels; -1 when absent.
func metricSample(t *testing.T, m *runtime.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range s.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case s.Gauge != nil:
				return s.Gauge.GetValue()
			case s.Counter != nil:
				return s.Counter.GetValue()
			}
		}
	}
	return -1
}

// A tick housekeeps with the plan's retention, counts what went, and refreshes the
// store's gauges at most once per StatsEvery of its clock.
func TestTickHousekeepsWithPlanRetention(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
			st := env.Store()
			plan := *env.Plan
			ps := *plan.Store
			ps.Retention.SucceededMS = time.Hour.Milliseconds()
			ps.Retention.OutboxMS = time.Hour.Milliseconds()
			plan.Store = &ps
			clock := testclock.NewManual(testclock.Epoch())
			st.SetClock(clock.Now) // the store's clock and the runtime's, moved together
			m := runtime.NewMetrics(nil)
			rt := env.RuntimeFor(&plan, st, runtime.Options{Now: clock.Now, Metrics: m})
			ctx := context.Background()
			env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
			if rep, err := rt.Tick(ctx); err != nil || rep.Kept != 1 || rep.Delivered.Succeeded != 1 {
				t.Fatalf("tick %+v, %v", rep, err)
			}
			outbox := map[string]string{"table": "jadpo_outbox"}
			if got := metricSample(t, m, "jadpo_store_table_rows", outbox); got != 1 {
				t.Fatalf("outbox rows gauge = %v after the first tick, want 1", got)
			}
			if got := metricSample(t, m, "jadpo_store_deliveries", map[string]string{"subscriber": "pack_order", "state": "succeeded"}); got != 1 {
				t.Fatalf("succeeded deliveries gauge = %v, want 1", got)
			}
			clock.Advance(time.Hour)
			if _, err := rt.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if s, _ := st.Stats(ctx); s.Outbox != 1 || s.DeliveriesTotal() != 1 {
				t.Fatalf("at exactly an hour: %+v", s)
			}
			// Within a minute (StatsEvery) of the last refresh the gauges stay as they were.
			clock.Advance(30 * time.Second)
			if _, err := rt.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if s, _ := st.Stats(ctx); s.Outbox != 0 || s.DeliveriesTotal() != 0 || s.ReceivedIDs != 1 {
				t.Fatalf("an hour and a half minute on, with a 1h retention: %+v", s)
			}
			if got := metricSample(t, m, "jadpo_store_housekept_rows_total", map[string]string{"table": "jadpo_deliveries"}); got != 1 {
				t.Fatalf("housekept deliveries counter = %v, want 1", got)
			}
			if got := metricSample(t, m, "jadpo_store_housekept_rows_total", outbox); got != 1 {
				t.Fatalf("housekept outbox counter = %v, want 1", got)
			}
			if got := metricSample(t, m, "jadpo_store_table_rows", outbox); got != 1 {
				t.Fatalf("outbox rows gauge = %v within a minute of the last refresh, want 1 (not refreshed)", got)
			}
			clock.Advance(time.Minute)
			if _, err := rt.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if got := metricSample(t, m, "jadpo_store_table_rows", outbox); got != 0 {
				t.Fatalf("outbox rows gauge = %v after a minute, want 0", got)
			}
		})
	}
}
