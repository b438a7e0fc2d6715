package runtime_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// counters are the counters of rt's metrics by name{label=value,...}; a
// series that is not there is not in the map.
func counters(t *testing.T, rt *runtime.Runtime) map[string]float64 {
	t.Helper()
	families, err := rt.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetCounter() == nil {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetCounter().GetValue()
		}
	}
	return got
}

// docs/guide/operating.md, "Metrics and health": a Redis Streams entry
// delivered more than max_deliveries times is parked (reason unreadable,
// problem delivery_count, as before) and counted apart in
// jadpo_messages_parked_delivery_limit_total, so it is told from an entry
// parked for its body; on miniredis, dev's stand-in, and on the machine's
// Redis (a stream of the test's own).
func TestDeliveryLimitParksAreCountedApart(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		testDeliveryLimitParks(t, "redis://"+miniredis.RunT(t).Addr()+"/0", "orders")
	})
	t.Run("redis", func(t *testing.T) {
		url := brokertest.Redis.Require(t)
		var b [6]byte
		_, _ = rand.Read(b[:])
		testDeliveryLimitParks(t, url, "jadpo-test:deliverylimit:"+hex.EncodeToString(b[:]))
	})
}

func testDeliveryLimitParks(t *testing.T, url, stream string) {
	ctx := context.Background()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.Protocol, o.DisableIdentity = 2, true
	client := redis.NewClient(o)
	t.Cleanup(func() {
		client.Del(context.Background(), stream)
		client.Close()
	})
	// examples/streams: group jadpo, claim_idle 1m, max_deliveries 5.
	if err := client.XGroupCreateMkStream(ctx, stream, "jadpo", "0").Err(); err != nil {
		t.Fatal(err)
	}
	add := func(body string) string {
		t.Helper()
		id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"body", body}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	order := func(id string) string {
		return `{"id":"` + id + `","type":"order_placed","order_id":"` + id + `","customer_email":"ada@example.com","total_cents":1200}`
	}
	// A well-formed order that a consumer gone since was handed 9 times,
	// idle longer than claim_idle: the next receive reclaims it, its 10th.
	poison := add(order("o-poison"))
	if err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "jadpo", Consumer: "gone", Streams: []string{stream, ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Do(ctx, "XCLAIM", stream, "jadpo", "gone", 0, poison, "IDLE", 120000, "RETRYCOUNT", 9, "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}
	add(order("o-1"))
	add(`not json`)

	plan := checktest.ExamplePlan(t, "streams", checktest.Edit{File: "app.jadpo", Old: `stream: "orders"`, New: `stream: "` + stream + `"`})
	cfg, err := runtime.LoadConfig(plan, []string{"ORDERS_REDIS_URL=" + url}, filepath.Join(t.TempDir(), ".env.local"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "events.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{Plan: plan, Store: st, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	rep, err := rt.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantReport(t, rep, "received 3 kept 1 repeats 0 parked 2 left 0 acked 3")

	got := counters(t, rt)
	for key, want := range map[string]float64{
		// Both parks are unreadable, as the store holds them...
		"jadpo_messages_parked_total{queue=orders_stream,reason=unreadable}": 2,
		// ...and only the one over the delivery limit is counted apart.
		"jadpo_messages_parked_delivery_limit_total{queue=orders_stream}": 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (there: %v), want %v", key, v, ok, want)
		}
	}

	// The parked rows read as before the count: the poison's problem is
	// its delivery count, the other's its body.
	es, err := st.List(ctx, store.Filter{State: store.ListFailed})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, e := range es {
		if e.ID.Kind != store.KindParked {
			continue
		}
		full, err := st.Show(ctx, e.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, full.Code+" "+problemsText(full.Problems))
	}
	slices.Sort(problems)
	if want := []string{"unreadable :json", "unreadable delivery_count:answer"}; !slices.Equal(problems, want) {
		t.Fatalf("parked problems %q, want %q", problems, want)
	}
	if n, err := client.XPending(ctx, stream, "jadpo").Result(); err != nil || n.Count != 0 {
		t.Fatalf("the group holds %+v (%v): every entry is acknowledged", n, err)
	}
}
