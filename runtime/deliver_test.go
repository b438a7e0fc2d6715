package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// The seed of every delivery test's Options.Rand; the tests draw the same
// sequence from their own copy to know each retry time in advance.
const deliverSeed1, deliverSeed2 = 7, 11

// The example's retry (examples/warehouse: pack_order).
var packOrderRetry = ir.Retry{MaxAttempts: 8, FirstDelayMS: 10_000, MaxDelayMS: 3_600_000}

// deliverClock is the injected clock: it moves only when a test moves it.
type deliverClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *deliverClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *deliverClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *deliverClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// recordingStore records the claims and settlements that go through it.
type recordingStore struct {
	store.Store
	mu      sync.Mutex
	claims  []store.Claimed
	settles []recordedSettle
	starts  int // handlers' starts written
}

// startsWritten is how many handlers' starts were written.
func (r *recordingStore) startsWritten() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.starts
}

type recordedSettle struct {
	s  store.Settlement
	ok bool
}

func (r *recordingStore) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]store.Claimed, error) {
	c, err := r.Store.ClaimDeliveries(ctx, limit, lease)
	r.mu.Lock()
	r.claims = append(r.claims, c...)
	r.mu.Unlock()
	return c, err
}

func (r *recordingStore) SettleDelivery(ctx context.Context, s store.Settlement) (bool, error) {
	ok, err := r.Store.SettleDelivery(ctx, s)
	r.mu.Lock()
	if s.Outcome != store.SettleStarted { // a start ends no claim
		r.settles = append(r.settles, recordedSettle{s, ok})
	} else if ok {
		r.starts++
	}
	r.mu.Unlock()
	return ok, err
}

func (r *recordingStore) SettleAndClaim(ctx context.Context, ss []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	ok, c, err := r.Store.SettleAndClaim(ctx, ss, limit, lease)
	r.mu.Lock()
	for i, s := range ss {
		if s.Outcome != store.SettleStarted { // a start ends no claim
			r.settles = append(r.settles, recordedSettle{s, err == nil && ok[i]})
		} else if err == nil && ok[i] {
			r.starts++
		}
	}
	r.claims = append(r.claims, c...)
	r.mu.Unlock()
	return ok, c, err
}

// deliverWorld is one delivery test's world: the example app, a store, an
// injected clock, a seeded rand and its mirror.
type deliverWorld struct {
	t      *testing.T
	env    *runtimetest.Env
	st     store.Store
	clock  *deliverClock
	rt     *runtime.Runtime
	mirror *rand.Rand
}

var deliverT0 = testclock.Epoch()

func newDeliverWorld(t *testing.T, kind string, opts runtime.Options) *deliverWorld {
	t.Helper()
	return newDeliverWorldOf(t, kind, checktest.ExamplePlan(t, "warehouse"), opts)
}

// newDeliverWorldOf is newDeliverWorld on the warehouse's plan p, edited.
func newDeliverWorldOf(t *testing.T, kind string, p *ir.Program, opts runtime.Options) *deliverWorld {
	t.Helper()
	w := &deliverWorld{t: t, env: runtimetest.New(t, kind, p), clock: &deliverClock{t: deliverT0},
		mirror: rand.New(rand.NewPCG(deliverSeed1, deliverSeed2))}
	for _, s := range w.env.Plan.Subscribers {
		if s.Name == "pack_order" && s.Retry != packOrderRetry {
			t.Fatalf("the example's pack_order retry is %+v, the tests expect %+v", s.Retry, packOrderRetry)
		}
	}
	w.st = w.env.Store()
	w.rt = w.runtime(w.st, opts)
	return w
}

// runtime builds another runtime over st with the world's clock and a rand
// of the tests' seed.
func (w *deliverWorld) runtime(st store.Store, opts runtime.Options) *runtime.Runtime {
	opts.Now = w.clock.Now
	opts.Rand = rand.New(rand.NewPCG(deliverSeed1, deliverSeed2))
	st.SetClock(w.clock.Now) // the store's clock is the world's too
	return w.env.Runtime(st, opts)
}

// orderJSON is an OrderShipped event as the store keeps it.
func orderJSON(n string) []byte {
	return fmt.Appendf(nil, `{"carrier":"dhl","lines":[{"quantity":2,"sku":"SKU-1"}],"order_id":"o-%s","shipped_at":"2026-11-30T10:00:00Z"}`, n)
}

// keep keeps OrderShipped events for pack_order, as the tick would, and
// returns their deliveries' IDs in order.
func keepOrders(t testing.TB, st store.Store, ns ...string) []store.ID {
	t.Helper()
	keeps := make([]store.Keep, len(ns))
	for i, n := range ns {
		keeps[i] = store.Keep{Source: "queue warehouse_queue", ReceivedID: n, EventName: "OrderShipped",
			EventJSON: orderJSON(n), Subscribers: []string{"pack_order"}}
	}
	res, err := st.KeepBatch(context.Background(), keeps)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != store.Kept {
			t.Fatalf("keep: %v %v", r.Outcome, r.Err)
		}
	}
	entries, err := st.List(context.Background(), store.Filter{State: store.ListPending})
	if err != nil {
		t.Fatal(err)
	}
	byReceived := map[string]store.ID{}
	for _, e := range entries {
		byReceived[e.ReceivedID] = e.ID
	}
	ids := make([]store.ID, len(ns))
	for i, n := range ns {
		id, ok := byReceived[n]
		if !ok {
			t.Fatalf("no pending delivery for %s among %+v", n, entries)
		}
		ids[i] = id
	}
	return ids
}

func (w *deliverWorld) keep(n string) store.ID { return keepOrders(w.t, w.st, n)[0] }

func (w *deliverWorld) deliver(want runtime.DeliverReport) {
	w.t.Helper()
	rep, err := w.rt.Deliver(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	rep.Full = false
	if rep != want {
		w.t.Fatalf("deliver report %+v, want %+v", rep, want)
	}
}

func (w *deliverWorld) show(id store.ID) store.Entry {
	w.t.Helper()
	e, err := w.st.Show(context.Background(), id, false)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// claimed draws what the runtime draws when it claims attempt n of a
// pack_order delivery: the pause should the attempt fail temporarily,
// uniform in [0, min(10s*2^(n-1), 1h)], and nothing for the last attempt.
func (w *deliverWorld) claimed(n int) time.Duration {
	if n >= packOrderRetry.MaxAttempts {
		return 0
	}
	ceil := 10 * time.Second
	for i := 1; i < n; i++ {
		ceil *= 2
	}
	ceil = min(ceil, time.Hour)
	return time.Duration(w.mirror.Int64N(int64(ceil) + 1))
}

// expect checks a delivery's state, attempts, code and (when not zero) its
// next attempt time, to the microsecond the store keeps.
func (w *deliverWorld) expect(id store.ID, state store.DeliveryState, attempts int, code string, next time.Time) store.Entry {
	w.t.Helper()
	e := w.show(id)
	if e.RowState != string(state) || e.Attempts != attempts || e.Code != code {
		w.t.Fatalf("%s: %s after %d attempts (code %q), want %s after %d (code %q)", id, e.RowState, e.Attempts, e.Code, state, attempts, code)
	}
	if !next.IsZero() && !e.NextAttemptAt.Equal(next.Truncate(time.Microsecond)) {
		w.t.Fatalf("%s: next attempt at %v, want %v", id, e.NextAttemptAt, next.Truncate(time.Microsecond))
	}
	return e
}

func eachStore(t *testing.T, f func(t *testing.T, kind string)) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) { f(t, kind) })
	}
}

func TestDeliverSucceeds(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		id := w.keep("1")
		w.claimed(1)
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		e := w.expect(id, store.DeliverySucceeded, 1, "", time.Time{})
		if !e.SettledAt.Equal(deliverT0) {
			t.Errorf("settled at %v, want %v", e.SettledAt, deliverT0)
		}
		if n := len(w.env.Target.Calls()); n != 1 {
			t.Errorf("the target saw %d calls, want 1", n)
		}
		w.deliver(runtime.DeliverReport{}) // nothing is due any more
	})
}

func TestDeliverRetriesThrottlingThenSucceeds(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		id := w.keep("1")
		w.env.Target.Script(429)
		next := deliverT0.Add(w.claimed(1))
		w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
		w.expect(id, store.DeliveryRetryWait, 1, "status_429", next)

		// Not due a microsecond before its time; due at it.
		w.clock.Set(next.Truncate(time.Microsecond).Add(-time.Microsecond))
		w.deliver(runtime.DeliverReport{})
		w.clock.Set(next.Truncate(time.Microsecond))
		w.claimed(2)
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		e := w.expect(id, store.DeliverySucceeded, 2, "", time.Time{})
		if !e.SettledAt.Equal(next.Truncate(time.Microsecond)) {
			t.Errorf("settled at %v, want %v", e.SettledAt, next)
		}
		if n := len(w.env.Target.Calls()); n != 2 {
			t.Errorf("the target saw %d calls, want 2", n)
		}
	})
}

func TestDeliverServerErrorsUntilBudgetThenFails(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		ctx := context.Background()
		id := w.keep("1")
		w.env.Target.Script(500, 500, 500, 500, 500, 500, 500, 500)
		for n := 1; n < packOrderRetry.MaxAttempts; n++ {
			pause := w.claimed(n)
			ceil := min(10*time.Second<<(n-1), time.Hour)
			if pause < 0 || pause > ceil {
				t.Fatalf("attempt %d: pause %v outside [0, %v]", n, pause, ceil)
			}
			next := w.clock.Now().Add(pause)
			w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
			w.expect(id, store.DeliveryRetryWait, n, "status_500", next)
			w.clock.Set(next.Truncate(time.Microsecond))
		}
		w.claimed(packOrderRetry.MaxAttempts)
		w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
		w.expect(id, store.DeliveryFailed, packOrderRetry.MaxAttempts, "status_500", time.Time{})
		if n := len(w.env.Target.Calls()); n != packOrderRetry.MaxAttempts {
			t.Errorf("the target saw %d calls, want %d", n, packOrderRetry.MaxAttempts)
		}
		failed, err := w.st.List(ctx, store.Filter{State: store.ListFailed})
		if err != nil || len(failed) != 1 || failed[0].Label() != "subscriber pack_order · OrderShipped" || failed[0].Code != "status_500" {
			t.Fatalf("failed list %+v %v", failed, err)
		}
		w.deliver(runtime.DeliverReport{}) // failed is never claimed

		// `jadpo deliveries retry`: a fresh budget, from attempt 1 again.
		if err := w.st.Retry(ctx, []store.ID{id}); err != nil {
			t.Fatal(err)
		}
		w.expect(id, store.DeliveryPending, 0, "status_500", time.Time{})
		w.env.Target.Script(503)
		next := w.clock.Now().Add(w.claimed(1))
		w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
		w.expect(id, store.DeliveryRetryWait, 1, "status_503", next)
		w.clock.Set(next.Truncate(time.Microsecond))
		w.claimed(2)
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		w.expect(id, store.DeliverySucceeded, 2, "", time.Time{})
	})
}

func TestDeliverPermanentRefusalFailsAtOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		ctx := context.Background()
		id := w.keep("1")
		w.env.Target.Script(400)
		w.claimed(1)
		w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
		w.expect(id, store.DeliveryFailed, 1, "status_400", time.Time{})

		// `jadpo deliveries dismiss`: set aside; then neither retried nor
		// dismissed again, and never claimed.
		if err := w.st.Dismiss(ctx, []store.ID{id}); err != nil {
			t.Fatal(err)
		}
		w.expect(id, store.DeliveryDismissed, 1, "status_400", time.Time{})
		var se *store.StateError
		if err := w.st.Retry(ctx, []store.ID{id}); !errors.As(err, &se) {
			t.Fatalf("retrying a dismissed delivery: %v", err)
		}
		w.clock.Advance(24 * time.Hour)
		w.deliver(runtime.DeliverReport{})
		if n := len(w.env.Target.Calls()); n != 1 {
			t.Errorf("the target saw %d calls, want 1", n)
		}
	})
}

// A handler slower than its lease: another worker takes the delivery over
// and settles it; the first worker's late settlement names the old fencing
// token and changes nothing.
func TestDeliverLateWorkerChangesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		rec := &recordingStore{Store: w.st}
		slow, fast := w.runtime(rec, runtime.Options{}), w.runtime(rec, runtime.Options{})
		id := w.keep("1")

		arrived, release := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		calls := 0
		w.env.Target.Answer(func(r *http.Request) (int, string) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				close(arrived)
				<-release
				return 500, `{"error":{"code":"late_500"}}` // would be retry_wait, were it settled
			}
			return 200, `{"job_id":"j-2","state":"queued"}`
		})

		slowDone := make(chan runtime.DeliverReport)
		go func() {
			rep, err := slow.Deliver(context.Background())
			if err != nil {
				t.Error(err)
			}
			slowDone <- rep
		}()
		<-arrived
		// Its start is written with the engine's next write (an attempt
		// whose start is never written is not counted).
		for rec.startsWritten() == 0 {
			time.Sleep(time.Millisecond)
		}
		// The slow handler is still running when its lease runs out.
		w.clock.Advance(runtime.Lease + time.Second)
		takeover := w.clock.Now()
		rep, err := fast.Deliver(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Claimed != 1 || rep.Succeeded != 1 {
			t.Fatalf("the taking-over worker: %+v", rep)
		}
		w.clock.Advance(time.Second)
		close(release)
		if rep := <-slowDone; rep.Claimed != 1 || rep.Lost != 1 || rep.Succeeded+rep.Retried+rep.Failed != 0 {
			t.Fatalf("the late worker: %+v", rep)
		}

		e := w.expect(id, store.DeliverySucceeded, 2, "", time.Time{})
		if !e.SettledAt.Equal(takeover) {
			t.Errorf("settled at %v, want the taking-over worker's %v", e.SettledAt, takeover)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.claims) != 2 || rec.claims[0].ID != id.N || rec.claims[1].ID != id.N {
			t.Fatalf("claims %+v", rec.claims)
		}
		oldToken, newToken := rec.claims[0].Token, rec.claims[1].Token
		if newToken <= oldToken || rec.claims[1].Attempt != 2 {
			t.Fatalf("the takeover's token %d (attempt %d) after %d", newToken, rec.claims[1].Attempt, oldToken)
		}
		if len(rec.settles) != 2 {
			t.Fatalf("settlements %+v", rec.settles)
		}
		first, late := rec.settles[0], rec.settles[1]
		if first.s.Token != newToken || !first.ok || first.s.Outcome != store.SettleSucceeded {
			t.Errorf("the takeover's settlement %+v", first)
		}
		if late.s.Token != oldToken || late.ok || late.s.Outcome != store.SettleRetryWait || late.s.ErrorCode != "late_500" {
			t.Errorf("the late settlement %+v", late)
		}
	})
}

// A handler that outlives its timeout is cut short and retried as a
// temporary failure, with its lease still holding.
func TestDeliverHandlerTimeout(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{Lease: 2 * time.Second, HandlerTimeout: 200 * time.Millisecond})
		id := w.keep("1")
		w.env.Target.Answer(func(r *http.Request) (int, string) {
			<-r.Context().Done() // never answers: the client gives up
			return 200, `{}`
		})
		next := deliverT0.Add(w.claimed(1))
		w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
		w.expect(id, store.DeliveryRetryWait, 1, runtime.CodeTimeout, next)
	})
}

func TestDeliverOptionsRefuseATimeoutLongerThanTheLease(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	_, err := runtime.New(runtime.Options{Plan: env.Plan, Store: st, Config: env.Config(), Lease: time.Second, HandlerTimeout: time.Second})
	if err == nil {
		t.Fatal("a handler timeout as long as the lease was accepted")
	}
}

// The budget counts attempts at the claim: attempts whose handler started
// and whose process died before settling use it up, and the claim after
// the last one fails the delivery without calling anything.
func TestDeliverBudgetSpentByLostLeases(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		ctx := context.Background()
		id := w.keep("1")
		for n := 1; n <= packOrderRetry.MaxAttempts; n++ {
			c, err := w.st.ClaimDeliveries(ctx, 10, runtime.Lease)
			if err != nil || len(c) != 1 || c[0].Attempt != n {
				t.Fatalf("claim %d: %+v %v", n, c, err)
			}
			if ok, err := w.st.SettleDelivery(ctx, store.Settlement{ID: c[0].ID, Token: c[0].Token, Outcome: store.SettleStarted}); !ok || err != nil {
				t.Fatalf("start %d: %v %v", n, ok, err)
			}
			w.clock.Advance(runtime.Lease + time.Second) // the process died
		}
		w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
		w.expect(id, store.DeliveryFailed, packOrderRetry.MaxAttempts+1, runtime.CodeLeaseExpired, time.Time{})
		if n := len(w.env.Target.Calls()); n != 0 {
			t.Errorf("the target saw %d calls, want none", n)
		}
	})
}

// A claim asks for no more deliveries than there are free workers while
// the handlers are slow (or none has run yet), so no claimed delivery
// spends its lease waiting for one.
func TestDeliverClaimsOnlyWhatWorkersCanStart(t *testing.T) {
	for _, pace := range []time.Duration{0, runtime.AheadWait*runtime.Workers + time.Millisecond} {
		t.Run(fmt.Sprint("pace ", pace), func(t *testing.T) { claimsOnlyWhatWorkersCanStart(t, pace) })
	}
}

func claimsOnlyWhatWorkersCanStart(t *testing.T, pace time.Duration) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		runtime.SetHandlerPace(w.rt, pace)
		ctx := context.Background()
		ns := make([]string, 3*runtime.Workers)
		for i := range ns {
			ns[i] = fmt.Sprint(i + 1)
		}
		keepOrders(t, w.st, ns...)
		arrived := make(chan struct{}, len(ns))
		release := make(chan struct{})
		w.env.Target.Answer(func(r *http.Request) (int, string) {
			arrived <- struct{}{}
			<-release
			return 200, `{"job_id":"j","state":"queued"}`
		})
		done := make(chan runtime.DeliverReport)
		go func() {
			rep, err := w.rt.Deliver(ctx)
			if err != nil {
				t.Error(err)
			}
			done <- rep
		}()
		for range runtime.Workers {
			<-arrived
		}
		stats, err := w.st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Deliveries[store.DeliveryRunning] != runtime.Workers || stats.Deliveries[store.DeliveryPending] != int64(len(ns)-runtime.Workers) {
			t.Errorf("with every worker busy: %v", stats.Deliveries)
		}
		close(release)
		rep := <-done
		if rep.Claimed != len(ns) || rep.Succeeded != len(ns) {
			t.Errorf("report %+v", rep)
		}
	})
}

// The handler's arguments arrive as the operation's members: literals,
// event paths, non-secret config, record and list literals and json(event);
// the bearer token as Authorization.
func TestDeliverArgumentsOnTheWire(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
		st := env.Store()
		rt := env.Runtime(st, runtime.Options{})
		ctx := context.Background()
		env.Send("warehouse_queue", `{"id":"m-7","type":"order_shipped","order_id":"o-7","shipped_at":"2026-11-30T10:00:00Z","carrier":"ups","lines":[{"sku":"SKU-1","quantity":2},{"sku":"SKU-2","quantity":1}],"note":"fragile","extra":"left out"}`)
		rep, err := rt.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Kept != 1 || rep.Delivered.Succeeded != 1 {
			t.Fatalf("tick %+v", rep)
		}
		calls := env.Target.Calls()
		if len(calls) != 1 {
			t.Fatalf("calls %+v", calls)
		}
		c := calls[0]
		if c.Method != "POST" || c.Path != "/accounts/warehouse-1/jobs" {
			t.Errorf("request %s %s", c.Method, c.Path)
		}
		if c.Auth != "Bearer "+runtimetest.Canary+"-token" {
			t.Errorf("Authorization %q", c.Auth)
		}
		payload, _ := c.Body["payload"].(string)
		var event map[string]any
		if err := json.Unmarshal([]byte(payload), &event); err != nil {
			t.Fatalf("payload %q is not the event as JSON: %v", payload, err)
		}
		wantEvent := map[string]any{"order_id": "o-7", "shipped_at": "2026-11-30T10:00:00Z", "carrier": "ups", "note": "fragile",
			"lines": []any{map[string]any{"sku": "SKU-1", "quantity": 2.0}, map[string]any{"sku": "SKU-2", "quantity": 1.0}}}
		if !reflect.DeepEqual(event, wantEvent) {
			t.Errorf("json(shipment)\n got %v\nwant %v", event, wantEvent)
		}
		want := map[string]any{
			"order_id": "o-7",
			"carrier":  "ups",
			"priority": 2.0,
			"label":    map[string]any{"reference": "o-7", "account": "warehouse-1"},
			"tags":     []any{"shipped", "warehouse"},
			"payload":  payload,
		}
		if !reflect.DeepEqual(c.Body, want) {
			t.Errorf("body\n got %v\nwant %v", c.Body, want)
		}
	})
}

// Paths into lists and whole numbers, an absent optional member, and
// arguments that do not fit the operation's input (a permanent failure
// before any call).
func TestDeliverArgumentPaths(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	args := env.Plan.Subscribers[0].Handlers[0].Steps[0].Args
	if env.Plan.Subscribers[0].Name != "pack_order" || args["priority"].Literal == nil {
		t.Fatalf("the example's plan changed: %+v", env.Plan.Subscribers[0])
	}
	args["priority"] = ir.Expr{Path: []string{"lines", "1", "quantity"}}
	args["label"] = ir.Expr{Record: map[string]ir.Expr{
		"reference": {Path: []string{"lines", "0", "sku"}},
		"account":   {Config: "packing_account"},
	}}
	args["tags"] = ir.Expr{List: []ir.Expr{{Path: []string{"carrier"}}, {Literal: json.RawMessage(`"x"`)}}}
	now := func() time.Time { return deliverT0 }
	st.SetClock(now)
	rt := env.Runtime(st, runtime.Options{Now: now})
	ctx := context.Background()
	keepOrders(t, st, "1")
	if _, err := st.KeepBatch(ctx, []store.Keep{{Source: "queue warehouse_queue", ReceivedID: "2", EventName: "OrderShipped",
		EventJSON:   []byte(`{"carrier":"ups","lines":[{"quantity":2,"sku":"A-1"},{"quantity":5,"sku":"A-2"}],"order_id":"o-2","shipped_at":"2026-11-30T10:00:00Z"}`),
		Subscribers: []string{"pack_order"}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := rt.Deliver(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Order 1 has one line: lines.1.quantity is absent, and priority is
	// optional. Order 2 has two.
	if rep.Succeeded != 2 {
		t.Fatalf("report %+v", rep)
	}
	byOrder := map[string]map[string]any{}
	for _, c := range env.Target.Calls() {
		byOrder[c.Body["order_id"].(string)] = c.Body
	}
	if _, has := byOrder["o-1"]["priority"]; has {
		t.Errorf("order 1: an absent path gave priority %v", byOrder["o-1"]["priority"])
	}
	if byOrder["o-2"]["priority"] != 5.0 || !reflect.DeepEqual(byOrder["o-2"]["label"], map[string]any{"reference": "A-1", "account": "warehouse-1"}) ||
		!reflect.DeepEqual(byOrder["o-2"]["tags"], []any{"ups", "x"}) {
		t.Errorf("order 2: %v", byOrder["o-2"])
	}

	// A required member from an absent path: refused before any call.
	args["order_id"] = ir.Expr{Path: []string{"note"}}
	rt = env.Runtime(st, runtime.Options{Now: now})
	ids := keepOrders(t, st, "3")
	before := len(env.Target.Calls())
	if rep, err := rt.Deliver(ctx); err != nil || rep.Failed != 1 {
		t.Fatalf("report %+v %v", rep, err)
	}
	e, err := st.Show(ctx, ids[0], false)
	if err != nil || e.RowState != "failed" || e.Code != runtime.CodeInputInvalid || e.Attempts != 1 {
		t.Fatalf("%+v %v", e, err)
	}
	if len(env.Target.Calls()) != before {
		t.Error("arguments that do not fit were sent")
	}
}

// A 2xx answer that does not fit the operation's output still counts: the
// provider did what was asked, and no handler reads an answer.
func TestDeliverAnswerNotFittingCountsAsDone(t *testing.T) {
	w := newDeliverWorld(t, "sqlite", runtime.Options{})
	id := w.keep("1")
	w.env.Target.Answer(func(r *http.Request) (int, string) { return 201, `{"unexpected":true}` })
	w.claimed(1)
	w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
	w.expect(id, store.DeliverySucceeded, 1, "", time.Time{})
}

// A transport failure (the target is gone) is temporary.
func TestDeliverTransportFailureIsRetried(t *testing.T) {
	w := newDeliverWorld(t, "sqlite", runtime.Options{})
	id := w.keep("1")
	w.env.Target.Close()
	next := deliverT0.Add(w.claimed(1))
	w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
	w.expect(id, store.DeliveryRetryWait, 1, runtime.CodeTransport, next)
}

// An enum input given a bare variant (`carrier: express`) sends the
// variant's name.
func TestDeliverEnumVariantArgumentOnTheWire(t *testing.T) {
	dir := checktest.CaseProject(t, "pass_enum_argument") // carrier: express
	plan := checktest.PlanDir(t, dir)
	env := runtimetest.New(t, "sqlite", plan)
	rt := env.Runtime(env.Store(), runtime.Options{})
	env.Send("warehouse_queue", `{"id":"m-8","type":"order_shipped","order_id":"o-8","shipped_at":"2026-11-30T10:00:00Z","carrier":"ups","lines":[{"sku":"SKU-1","quantity":2}]}`)
	rep, err := rt.Tick(context.Background())
	if err != nil || rep.Delivered.Succeeded != 1 {
		t.Fatalf("tick %+v, %v", rep, err)
	}
	if calls := env.Target.Calls(); len(calls) != 1 || calls[0].Body["carrier"] != "express" {
		t.Fatalf("calls %+v, want one with carrier express", calls)
	}
}

// startsStore notes when a handler's start for a delivery has been
// written.
type startsStore struct {
	store.Store
	written atomic.Bool
}

func (s *startsStore) SettleAndClaim(ctx context.Context, ss []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	ok, c, err := s.Store.SettleAndClaim(ctx, ss, limit, lease)
	for i, st := range ss {
		if err == nil && ok[i] && st.Outcome == store.SettleStarted {
			s.written.Store(true)
		}
	}
	return ok, c, err
}

// Issue 24: a delivery on its last attempt has its handler's start written
// before the handler calls anything, so that an attempt that may reach the
// target is always counted; an earlier attempt calls at once, its start
// written with the engine's next write.
func TestDeliverLastAttemptWritesItsStartBeforeCalling(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newDeliverWorld(t, kind, runtime.Options{})
		ctx := context.Background()
		id := w.keep("1")
		// Attempts 1 to 7 started and lost with their process.
		for n := 1; n < packOrderRetry.MaxAttempts; n++ {
			c, err := w.st.ClaimDeliveries(ctx, 10, runtime.Lease)
			if err != nil || len(c) != 1 || c[0].Attempt != n {
				t.Fatalf("claim %d: %+v %v", n, c, err)
			}
			if ok, err := w.st.SettleDelivery(ctx, store.Settlement{ID: c[0].ID, Token: c[0].Token, Outcome: store.SettleStarted}); !ok || err != nil {
				t.Fatalf("start %d: %v %v", n, ok, err)
			}
			w.clock.Advance(runtime.Lease + time.Second)
		}
		st := &startsStore{Store: w.st}
		rt := w.runtime(st, runtime.Options{})
		var sawStart atomic.Bool
		w.env.Target.Answer(func(r *http.Request) (int, string) {
			sawStart.Store(st.written.Load())
			return 200, `{"job_id":"j","state":"queued"}`
		})
		if rep, err := rt.Deliver(ctx); err != nil || rep.Succeeded != 1 {
			t.Fatalf("deliver: %+v %v", rep, err)
		}
		if !sawStart.Load() {
			t.Fatal("the last attempt called the target before its start was written")
		}
		w.expect(id, store.DeliverySucceeded, packOrderRetry.MaxAttempts, "", time.Time{})
	})
}
