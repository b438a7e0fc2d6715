package runtime_test

// One test case per rule of how a queue's messages are received: when a
// message is acknowledged (only once what it brought is kept), parked, never
// dropped (a body that cannot be read is kept aside with its reasons),
// reading a message (JSON, the event's record, its rules) and when it is
// received (the tick's interval and limits). Each runs on every store adapter
// (runtimetest.Stores), in a world of its own (a fresh store and SQS fake),
// and quotes its rule in `sentence`; docs/design/runtime.md ("What the tick does,
// sentence by sentence") lists the rules with their cases.

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
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// seedCase is one sentence of the seed and the test that proves it.
type seedCase struct {
	name     string
	sentence string // quoted from the seed
	fake     *runtimetest.FakeOptions
	run      func(t *testing.T, w *world)
}

// world is one case's test world: the example app over a fresh store, a
// clock the test moves, and a store wrapper that can fail as the test asks.
type world struct {
	t     *testing.T
	ctx   context.Context
	env   *runtimetest.Env
	raw   store.Store
	st    *runtimetest.FlakyStore
	clock *testclock.Manual
	rt    *runtime.Runtime
	// fakeClock is the SQS fake's clock, with FakeOptions.ManualClock.
	fakeClock *testclock.Manual
}

// seedStart is the injected clock's start.
var seedStart = testclock.Epoch()

func newWorld(t *testing.T, kind string, fo *runtimetest.FakeOptions) *world {
	t.Helper()
	env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
	w := &world{t: t, ctx: context.Background(), env: env, clock: testclock.NewManual(seedStart)}
	if fo != nil {
		w.fakeClock = env.UseFake(*fo)
	}
	w.raw = env.Store()
	// The store's clock is the world's too: the test moves both.
	w.raw.SetClock(w.clock.Now)
	w.st = runtimetest.NewFlakyStore(w.raw)
	w.rt = w.runtime(env.Plan, runtime.Options{})
	return w
}

// runtime builds a runtime of plan p over the world's store and clock.
func (w *world) runtime(p *ir.Program, opts runtime.Options) *runtime.Runtime {
	opts.Now = w.clock.Now
	return w.env.RuntimeFor(p, w.st, opts)
}

func (w *world) send(queue string, bodies ...string) {
	w.t.Helper()
	for _, b := range bodies {
		w.env.Send(queue, b)
	}
}

func (w *world) tick() runtime.TickReport { return w.tickWith(w.rt) }

func (w *world) tickWith(rt *runtime.Runtime) runtime.TickReport {
	w.t.Helper()
	rep, err := rt.Tick(w.ctx)
	if err != nil {
		w.t.Fatalf("tick: %v", err)
	}
	return rep
}

func (w *world) stats() store.Stats {
	w.t.Helper()
	s, err := w.raw.Stats(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// onQueue counts the messages a queue still holds, visible or in flight.
func (w *world) onQueue(queue string) int {
	w.t.Helper()
	s, ok := w.env.Fake.Stats(queue)
	if !ok {
		w.t.Fatalf("no queue %s", queue)
	}
	return s.Visible + s.InFlight + s.Delayed
}

func (w *world) list(state store.ListState) []store.Entry {
	w.t.Helper()
	es, err := w.raw.List(w.ctx, store.Filter{State: state})
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

// parked lists the parked messages in state (all kinds of entries but
// deliveries).
func (w *world) parked(state store.ListState) []store.Entry {
	var out []store.Entry
	for _, e := range w.list(state) {
		if e.ID.Kind == store.KindParked {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) show(id store.ID) store.Entry {
	w.t.Helper()
	e, err := w.raw.Show(w.ctx, id, true)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// outbox returns the outbox rows: source, event name, received id, event JSON.
func (w *world) outbox() [][]string {
	return w.env.Query(`SELECT source, event_name, received_id, CAST(event_json AS TEXT) FROM jadpo_outbox ORDER BY id`)
}

// receivedIDs returns the rows of jadpo_received_events: source, id.
func (w *world) receivedIDs() [][]string {
	return w.env.Query(`SELECT source, received_id FROM jadpo_received_events ORDER BY source, received_id`)
}

// deliveries returns the deliveries: subscriber, state, the outbox row's received id.
func (w *world) deliveries() [][]string {
	return w.env.Query(`SELECT d.subscriber, d.state, o.received_id FROM jadpo_deliveries d JOIN jadpo_outbox o ON o.id = d.outbox_id ORDER BY d.id`)
}

func wantReport(t *testing.T, got runtime.TickReport, want string) {
	t.Helper()
	g := fmt.Sprintf("received %d kept %d repeats %d parked %d left %d acked %d",
		got.Received, got.Kept, got.Repeats, got.Parked, got.Left, got.Acked)
	if g != want {
		t.Fatalf("tick: %s\n want %s", g, want)
	}
}

func wantRows(t *testing.T, what string, got [][]string, want ...[]string) {
	t.Helper()
	if len(want) == 0 {
		want = [][]string{}
	}
	if got == nil {
		got = [][]string{}
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

func row(cols ...string) []string { return cols }

func problemsText(ps []store.Problem) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.Field+":"+p.Rule)
	}
	return strings.Join(parts, " ")
}

func runSeed(t *testing.T, cases []seedCase) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Logf("seed: %q", c.sentence)
					c.run(t, newWorld(t, kind, c.fake))
				})
			}
		})
	}
}

// Bodies.
func shipped(id string) string { return runtimetest.OrderShipped(id) }

// shippedCanonical is shipped(id)'s event as canonical JSON: members in
// bytewise order, the id and type left out.
func shippedCanonical(id string) string {
	return `{"carrier":"dhl","lines":[{"quantity":2,"sku":"SKU-1"}],"order_id":"o-` + id + `","shipped_at":"2026-11-30T10:00:00Z"}`
}

func returnBody(id string) string {
	return `{"meta":{"return_id":` + id + `},"order_id":"o-r","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`
}

// delayed is a body of a type the example's queue does not list.
func delayed(id string) string {
	return `{"id":"` + id + `","type":"order_delayed","order_id":"o-` + id + `"}`
}

// planWithDelayed is the example with OrderDelayed listed as order_delayed.
func planWithDelayed(t *testing.T) *ir.Program {
	return checktest.ExamplePlan(t, "warehouse",
		checktest.Edit{File: "stock/events.jadpo", New: "\npublic event OrderDelayed {\n    order_id: OrderId\n}\n"},
		checktest.Edit{File: "app.jadpo", Old: "use stock/events { OrderShipped, OrderCancelled }", New: "use stock/events { OrderShipped, OrderCancelled, OrderDelayed }"},
		checktest.Edit{File: "app.jadpo", Old: `OrderCancelled { wire_name: "order_cancelled" }`, New: `OrderCancelled { wire_name: "order_cancelled" }
        OrderDelayed { wire_name: "order_delayed" }`},
	)
}

// tooLarge is an OrderShipped body whose event's canonical JSON is over 64 KB.
func tooLarge(id string) string { return withLines(id, 2600) }

// withLines is an OrderShipped body with n lines: its event's canonical JSON
// is 96 bytes and 27 to 32 a line.
func withLines(id string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[`, id)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%d","quantity":1}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestSeedWhenAMessageIsAcknowledged(t *testing.T) {
	runSeed(t, []seedCase{
		{
			name: "kept_in_one_transaction_then_deleted",
			sentence: "Once the transaction keeping its event commits: in one read-committed transaction in the events' store, " +
				"its id is recorded under `queue <connection>` in `jadpo_received_events` and its outbox row and a delivery for " +
				"each subscriber are written, as a webhook's are; then the message is deleted from the queue.",
			run: func(t *testing.T, w *world) {
				// A second subscriber of OrderShipped: one delivery each.
				p := checktest.ExamplePlan(t, "warehouse", checktest.Edit{File: "app.jadpo", New: `
subscriber audit_order {
    on OrderShipped(shipment) {
        attempt packing.jobs.create_job(
            order_id: shipment.order_id,
            carrier: shipment.carrier,
            priority: 1,
            label: { reference: shipment.order_id account: config.packing_account },
            tags: ["audit"],
            payload: json(shipment)
        )
    }
    retry: { max_attempts: 3 first_delay: 10s max_delay: 1h }
}
`})
				rt := w.runtime(p, runtime.Options{})
				var deletesAtKeep, deletesAfterKeep = -1, -1
				var keptInOneCall []int
				w.st.BeforeKeep = func(keeps []store.Keep) {
					deletesAtKeep = w.env.Fake.Calls("DeleteMessage") + w.env.Fake.Calls("DeleteMessageBatch")
					keptInOneCall = append(keptInOneCall, len(keeps))
				}
				w.st.AfterKeep = func([]store.Keep, []store.KeepResult, error) {
					deletesAfterKeep = w.env.Fake.Calls("DeleteMessage") + w.env.Fake.Calls("DeleteMessageBatch")
				}
				w.send("warehouse_queue", shipped("m-1"), shipped("m-2"))
				wantReport(t, w.tickWith(rt), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
				if deletesAtKeep != 0 || deletesAfterKeep != 0 {
					t.Fatalf("DeleteMessage calls before the keep committed: %d, %d; want none", deletesAtKeep, deletesAfterKeep)
				}
				if !slices.Equal(keptInOneCall, []int{2}) {
					t.Fatalf("KeepBatch calls %v, want one call keeping the batch", keptInOneCall)
				}
				// The batch's two messages are deleted in one DeleteMessageBatch.
				if got, single := w.env.Fake.Calls("DeleteMessageBatch"), w.env.Fake.Calls("DeleteMessage"); got != 1 || single != 0 || w.onQueue("warehouse_queue") != 0 {
					t.Fatalf("DeleteMessageBatch calls %d, DeleteMessage %d, on the queue %d; want 1, 0 and 0", got, single, w.onQueue("warehouse_queue"))
				}
				wantRows(t, "received ids", w.receivedIDs(), row("queue warehouse_queue", "m-1"), row("queue warehouse_queue", "m-2"))
				wantRows(t, "outbox", w.outbox(),
					row("queue warehouse_queue", "OrderShipped", "m-1", shippedCanonical("m-1")),
					row("queue warehouse_queue", "OrderShipped", "m-2", shippedCanonical("m-2")))
				var subs []string
				for _, d := range w.deliveries() {
					subs = append(subs, d[0]+"/"+d[2])
				}
				slices.Sort(subs)
				if !slices.Equal(subs, []string{"audit_order/m-1", "audit_order/m-2", "pack_order/m-1", "pack_order/m-2"}) {
					t.Fatalf("deliveries %v, want one per subscriber and message", subs)
				}
			},
		},
		{
			name:     "a_failed_keep_writes_nothing",
			sentence: "in one read-committed transaction in the events' store, its id is recorded ... and its outbox row and a delivery for each subscriber are written",
			run: func(t *testing.T, w *world) {
				// The batch's keep fails as a whole: no id, no outbox row, no delivery.
				w.st.FailKeeps(1)
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 0 left 1 acked 0")
				s := w.stats()
				if s.ReceivedIDs != 0 || s.Outbox != 0 || s.DeliveriesTotal() != 0 {
					t.Fatalf("a failed keep left %+v", s)
				}
				if w.env.Fake.Calls("DeleteMessage")+w.env.Fake.Calls("DeleteMessageBatch") != 0 || w.onQueue("warehouse_queue") != 1 {
					t.Fatal("a message not kept was deleted")
				}
			},
		},
		{
			name: "subscribers_run_from_the_outbox_and_one_that_gives_up_is_parked",
			sentence: "Its subscribers run from the outbox with their usual retries, and one that gives up is parked as any delivery is, " +
				"so \"after the subscriber's transaction commits\" is read as the transaction that hands the event to them",
			run: func(t *testing.T, w *world) {
				w.env.Target.Script(503, 400)
				w.send("warehouse_queue", shipped("m-1"))
				rep := w.tick()
				// The message is deleted once kept, whatever its subscriber does.
				wantReport(t, rep, "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
				if w.onQueue("warehouse_queue") != 0 {
					t.Fatal("the message is still on the queue")
				}
				if rep.Delivered.Retried != 1 {
					t.Fatalf("a 503 should wait to retry: %+v", rep.Delivered)
				}
				wantRows(t, "deliveries", w.deliveries(), row("pack_order", "retry_wait", "m-1"))
				w.clock.Advance(2 * time.Hour)
				rep = w.tick()
				if rep.Delivered.Failed != 1 || rep.Received != 0 {
					t.Fatalf("a 400 should give up: %+v", rep)
				}
				failed := w.list(store.ListFailed)
				if len(failed) != 1 || failed[0].Label() != "subscriber pack_order · OrderShipped" || failed[0].Code != "status_400" || failed[0].Attempts != 2 {
					t.Fatalf("failed %+v", failed)
				}
				if len(w.env.Target.Calls()) != 2 {
					t.Fatalf("target calls %d, want 2", len(w.env.Target.Calls()))
				}
			},
		},
		{
			name:     "a_repeat_is_deleted_and_keeps_nothing",
			sentence: "A repeat, its id recorded already, is deleted and keeps nothing.",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
				// The same id again, in a later tick and twice in one batch, with
				// another body: a repeat by its id alone.
				other := strings.Replace(shipped("m-1"), `"carrier":"dhl"`, `"carrier":"ups"`, 1)
				w.send("warehouse_queue", shipped("m-1"), other, shipped("m-2"), shipped("m-2"))
				wantReport(t, w.tick(), "received 4 kept 1 repeats 3 parked 0 left 0 acked 4")
				s := w.stats()
				if s.ReceivedIDs != 2 || s.Outbox != 2 || s.DeliveriesTotal() != 2 || s.ParkedTotal() != 0 {
					t.Fatalf("a repeat kept something: %+v", s)
				}
				if w.onQueue("warehouse_queue") != 0 {
					t.Fatal("a repeat is still on the queue")
				}
				if n := len(w.env.Target.Calls()); n != 2 {
					t.Fatalf("subscriber ran %d times, want 2", n)
				}
			},
		},
		{
			name:     "a_message_whose_deletion_failed_comes_back_a_repeat",
			sentence: "A repeat, its id recorded already, is deleted and keeps nothing.",
			fake:     &runtimetest.FakeOptions{ManualClock: true},
			run: func(t *testing.T, w *world) {
				// The batch call fails, and so does the single one it falls back to.
				w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultUnavailable, Operation: "DeleteMessageBatch", Next: 1})
				w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultUnavailable, Operation: "DeleteMessage", Next: 1})
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 0")
				w.fakeClock.Advance(31 * time.Second)
				wantReport(t, w.tick(), "received 1 kept 0 repeats 1 parked 0 left 0 acked 1")
				if s := w.stats(); s.Outbox != 1 || w.onQueue("warehouse_queue") != 0 {
					t.Fatalf("after the repeat: %+v, on the queue %d", s, w.onQueue("warehouse_queue"))
				}
			},
		},
		{
			name:     "ids_are_deleted_by_the_tick_after_30_days",
			sentence: "Ids are deleted by the tick after 30 days, as a webhook's are.",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
				w.clock.Advance(30*24*time.Hour - time.Second)
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 0 repeats 1 parked 0 left 0 acked 1")
				wantRows(t, "received ids at 30 days less a second", w.receivedIDs(), row("queue warehouse_queue", "m-1"))
				w.clock.Advance(2 * time.Second)
				wantReport(t, w.tick(), "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
				wantRows(t, "received ids after 30 days", w.receivedIDs())
				// The id is forgotten: the same message is kept again.
				w.send("warehouse_queue", shipped("m-1"))
				wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
			},
		},
	})
}

func TestSeedParkedNeverDropped(t *testing.T) {
	runSeed(t, []seedCase{
		{
			name:     "unlisted_type_parked_whole_and_deleted",
			sentence: "A message whose type the queue doesn't list (`unlisted_type`) ... kept whole in `jadpo_parked_messages` ... and deleted from the queue.",
			run: func(t *testing.T, w *world) {
				body := delayed("m-1")
				w.send("warehouse_queue", body)
				wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 1 left 0 acked 1")
				ps := w.parked(store.ListFailed)
				if len(ps) != 1 {
					t.Fatalf("parked %+v", ps)
				}
				e := w.show(ps[0].ID)
				if e.Code != "unlisted_type" || e.WireType != "order_delayed" || e.EventName != "" || len(e.Problems) != 0 || string(e.Body) != body {
					t.Fatalf("parked %+v body %q", e, e.Body)
				}
				if w.onQueue("warehouse_queue") != 0 || w.stats().Outbox != 0 {
					t.Fatal("an unlisted type was kept or left on the queue")
				}
			},
		},
		{
			name: "unreadable_each_problem_by_field_and_rule_never_a_value",
			sentence: "one that can't be read as its event (`unreadable`: not JSON, no id or type where the queue says, a field its " +
				"event refuses, each problem kept by field and rule, never a value)",
			run: func(t *testing.T, w *world) {
				const secretish = "VALUE-NOT-TO-SHOW"
				cases := []struct {
					queue, body, label, problems string
				}{
					{"warehouse_queue", `not json ` + secretish, "queue warehouse_queue · ?", ":json"},
					{"warehouse_queue", `{"type":"order_shipped","order_id":"` + secretish + `"}`, "queue warehouse_queue · OrderShipped", "id:required"},
					{"warehouse_queue", `{"id":"m-3","order_id":"` + secretish + `"}`, "queue warehouse_queue · ?", "type:required"},
					{"warehouse_queue", strings.Replace(strings.Replace(shipped("m-4"), `"quantity":2`, `"quantity":0`, 1), `"carrier":"dhl"`, `"carrier":"`+secretish+`"`, 1),
						"queue warehouse_queue · OrderShipped", "carrier:enum lines.0.quantity:min"},
					{"returns_queue", `{"meta":{"return_id":5},"order_id":"o","customer_email":"` + secretish + `","items":{},"requested_at":"2026-11-30T10:00:00Z"}`,
						"queue returns_queue · ReturnRequested", "customer_email:format"},
				}
				for _, c := range cases {
					w.send(c.queue, c.body)
				}
				rep := w.tick()
				if rep.Parked != len(cases) || rep.Acked != len(cases) || rep.Kept != 0 {
					t.Fatalf("tick %+v", rep)
				}
				ps := w.parked(store.ListFailed)
				if len(ps) != len(cases) {
					t.Fatalf("parked %d, want %d", len(ps), len(cases))
				}
				for _, c := range cases {
					var found *store.Entry
					for i := range ps {
						if e := w.show(ps[i].ID); string(e.Body) == c.body {
							found = &e
						}
					}
					if found == nil {
						t.Fatalf("%s is not parked whole", c.body)
					}
					if found.Code != "unreadable" || found.Label() != c.label || problemsText(found.Problems) != c.problems {
						t.Errorf("%s: parked %s %s %q, want unreadable %s %q", c.body, found.Code, found.Label(), problemsText(found.Problems), c.label, c.problems)
					}
					pj, _ := json.Marshal(found.Problems)
					if bytes.Contains(pj, []byte(secretish)) || strings.Contains(found.Label(), secretish) {
						t.Errorf("a problem or label holds a value: %s %s", pj, found.Label())
					}
				}
				// Never a value in the problems column itself, either.
				for _, r := range w.env.Query(`SELECT problems FROM jadpo_parked_messages`) {
					if strings.Contains(r[0], secretish) {
						t.Fatalf("problems column holds a value: %s", r[0])
					}
				}
				if w.onQueue("warehouse_queue")+w.onQueue("returns_queue") != 0 {
					t.Fatal("an unreadable message is still on its queue")
				}
			},
		},
		{
			name:     "too_large_over_64KB_as_its_event",
			sentence: "one over 64 KB as its event (`too_large`) [is] kept whole in `jadpo_parked_messages`",
			run: func(t *testing.T, w *world) {
				body := tooLarge("m-big")
				under := withLines("m-under", 2000) // just under 64 KB
				w.send("warehouse_queue", body, under)
				wantReport(t, w.tick(), "received 2 kept 1 repeats 0 parked 1 left 0 acked 2")
				out := w.outbox()
				if len(out) != 1 || len(out[0][3]) > 65536 || len(out[0][3]) < 60000 {
					t.Fatalf("the event under 64 KB: %d rows, %d bytes", len(out), len(out[0][3]))
				}
				ps := w.parked(store.ListFailed)
				if len(ps) != 1 {
					t.Fatalf("parked %+v", ps)
				}
				e := w.show(ps[0].ID)
				if e.Code != "too_large" || e.Label() != "queue warehouse_queue · OrderShipped" || string(e.Body) != body {
					t.Fatalf("parked %s %s, body kept whole: %v", e.Code, e.Label(), string(e.Body) == body)
				}
			},
		},
		{
			name:     "once_per_queue_and_body",
			sentence: "are kept whole in `jadpo_parked_messages`, once per queue and body, and deleted from the queue.",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", "not json", "not json")
				w.send("returns_queue", "not json")
				wantReport(t, w.tick(), "received 3 kept 0 repeats 0 parked 3 left 0 acked 3")
				w.send("warehouse_queue", "not json")
				var logged bytes.Buffer
				w.rt = w.runtime(w.env.Plan, runtime.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
				wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 1 left 0 acked 1")
				if !strings.Contains(logged.String(), "parked already: the same body from this queue; nothing added") {
					t.Fatalf("the second identical body is not logged as parked already:\n%s", logged.String())
				}
				wantRows(t, "parked", w.env.Query(`SELECT source, reason, state FROM jadpo_parked_messages ORDER BY source`),
					row("queue returns_queue", "unreadable", "failed"), row("queue warehouse_queue", "unreadable", "failed"))
				if w.onQueue("warehouse_queue")+w.onQueue("returns_queue") != 0 {
					t.Fatal("a parked message is still on its queue")
				}
			},
		},
		{
			name:     "listed_as_failed_with_its_reason_as_the_code",
			sentence: "`jadpo deliveries` lists each as `failed` (`queue warehouse_queue · OrderShipped`, its reason as the code)",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue",
					strings.Replace(shipped("m-1"), `"quantity":2`, `"quantity":0`, 1), // unreadable, read as OrderShipped
					tooLarge("m-2"),
					delayed("m-3"))
				wantReport(t, w.tick(), "received 3 kept 0 repeats 0 parked 3 left 0 acked 3")
				var got []string
				for _, e := range w.list(store.ListFailed) {
					got = append(got, string(e.State)+" "+e.Label()+" "+e.Code)
				}
				slices.Sort(got)
				want := []string{
					"failed queue warehouse_queue · OrderShipped too_large",
					"failed queue warehouse_queue · OrderShipped unreadable",
					"failed queue warehouse_queue · order_delayed unlisted_type",
				}
				if !slices.Equal(got, want) {
					t.Fatalf("listed %q\nwant %q", got, want)
				}
			},
		},
		{
			name: "retry_then_the_next_tick_reads_it_with_the_build_running_then",
			sentence: "`retry` makes it `pending` and the app's next tick reads it again with the build running then, " +
				"keeping it or parking it again",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", delayed("m-1"), delayed("m-2"))
				w.tick()
				ps := w.parked(store.ListFailed)
				if len(ps) != 2 {
					t.Fatalf("parked %d", len(ps))
				}
				if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID, ps[1].ID}); err != nil {
					t.Fatal(err)
				}
				if p := w.parked(store.ListPending); len(p) != 2 || len(w.parked(store.ListFailed)) != 0 {
					t.Fatalf("retried messages are not pending: %+v", p)
				}
				// The same build: parked again, the same row failed again.
				rep := w.tick()
				if rep.RetriedParked != 2 || rep.RetriedKept != 0 {
					t.Fatalf("with the same build %+v", rep)
				}
				again := w.parked(store.ListFailed)
				if len(again) != 2 || again[0].ID != ps[0].ID && again[0].ID != ps[1].ID || w.stats().ParkedTotal() != 2 {
					t.Fatalf("parked again %+v", again)
				}
				// A new build that lists order_delayed: kept, the parked row gone.
				if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID, ps[1].ID}); err != nil {
					t.Fatal(err)
				}
				var logged bytes.Buffer
				rt := w.runtime(planWithDelayed(t), runtime.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
				rep = w.tickWith(rt)
				if rep.RetriedKept != 2 || rep.RetriedParked != 0 {
					t.Fatalf("with a build listing the type %+v", rep)
				}
				// Issue 30, item 7: the parked message is named as everywhere else, p7.
				lines := 0
				for _, l := range strings.Split(logged.String(), "\n") {
					if strings.Contains(l, `msg="kept after retry"`) {
						lines++
						if !strings.Contains(l, "parked_id=p") {
							t.Errorf("the kept-after-retry line does not name the parked message as p7: %s", l)
						}
					}
				}
				if lines != 2 {
					t.Fatalf("%d kept-after-retry lines, want 2:\n%s", lines, logged.String())
				}
				if s := w.stats(); s.ParkedTotal() != 0 || s.Outbox != 2 || s.ReceivedIDs != 2 {
					t.Fatalf("after keeping the retried messages %+v", s)
				}
				wantRows(t, "outbox", w.outbox(),
					row("queue warehouse_queue", "OrderDelayed", "m-1", `{"order_id":"o-m-1"}`),
					row("queue warehouse_queue", "OrderDelayed", "m-2", `{"order_id":"o-m-2"}`))
			},
		},
		{
			name:     "dismiss_sets_it_aside_deleted_30_days_later",
			sentence: "`dismiss` sets it aside, deleted by the tick 30 days later.",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", "not json")
				w.tick()
				ps := w.parked(store.ListFailed)
				if len(ps) != 1 {
					t.Fatalf("parked %d", len(ps))
				}
				if err := w.raw.Dismiss(w.ctx, []store.ID{ps[0].ID}); err != nil {
					t.Fatal(err)
				}
				if len(w.parked(store.ListFailed)) != 0 || len(w.parked(store.ListDismissed)) != 1 {
					t.Fatal("a dismissed message is not set aside")
				}
				// A dismissed message is not read again by a tick.
				if rep := w.tick(); rep.RetriedKept+rep.RetriedParked != 0 {
					t.Fatalf("a dismissed message was read again: %+v", rep)
				}
				w.clock.Advance(30*24*time.Hour - time.Second)
				w.tick()
				if len(w.parked(store.ListDismissed)) != 1 {
					t.Fatal("a dismissed message went before 30 days")
				}
				w.clock.Advance(2 * time.Second)
				w.tick()
				if len(w.parked(store.ListAll)) != 0 || w.stats().ParkedTotal() != 0 {
					t.Fatal("a dismissed message is kept after 30 days")
				}
			},
		},
		{
			name:     "a_message_the_store_cant_take_now_is_left_on_the_queue",
			sentence: "A message the store can't take now is left on the queue, which sends it again",
			fake:     &runtimetest.FakeOptions{ManualClock: true},
			run: func(t *testing.T, w *world) {
				w.st.FailKeeps(1)
				if _, err := w.st.KeepBatch(w.ctx, nil); !store.IsTransient(err) {
					t.Fatalf("the injected failure %v is not transient", err)
				}
				w.st.FailKeeps(1)
				w.st.FailParks(1)
				w.send("warehouse_queue", shipped("m-1"), "not json")
				wantReport(t, w.tick(), "received 2 kept 0 repeats 0 parked 0 left 2 acked 0")
				if s := w.stats(); s.ReceivedIDs+s.Outbox+s.ParkedTotal() != 0 {
					t.Fatalf("the store took something: %+v", s)
				}
				if w.env.Fake.Calls("DeleteMessage")+w.env.Fake.Calls("DeleteMessageBatch") != 0 || w.onQueue("warehouse_queue") != 2 {
					t.Fatal("a message the store could not take was deleted")
				}
				// The queue sends them again once their visibility timeout is over.
				w.fakeClock.Advance(31 * time.Second)
				wantReport(t, w.tick(), "received 2 kept 1 repeats 0 parked 1 left 0 acked 2")
				if w.onQueue("warehouse_queue") != 0 {
					t.Fatal("still on the queue")
				}
			},
		},
		{
			name:     "the_queues_dead_letter_queue_takes_one_that_keeps_failing",
			sentence: "and the queue's own dead-letter queue takes one that keeps failing",
			fake: &runtimetest.FakeOptions{
				ManualClock: true,
				Extra:       []string{"warehouse_dlq"},
				Attributes: map[string]map[string]string{"warehouse_queue": {
					"RedrivePolicy": `{"deadLetterTargetArn":"{arn:warehouse_dlq}","maxReceiveCount":"2"}`,
				}},
			},
			run: func(t *testing.T, w *world) {
				w.st.FailKeeps(-1)
				w.send("warehouse_queue", shipped("m-1"))
				for range 3 {
					w.tick()
					w.fakeClock.Advance(31 * time.Second)
				}
				dlq := w.env.Fake.Messages("warehouse_dlq")
				if len(dlq) != 1 || dlq[0].Body != shipped("m-1") || w.onQueue("warehouse_queue") != 0 {
					t.Fatalf("dead-letter queue %+v, on the queue %d", dlq, w.onQueue("warehouse_queue"))
				}
				if s := w.stats(); s.Outbox+s.ParkedTotal() != 0 {
					t.Fatalf("%+v", s)
				}
			},
		},
		{
			name:     "one_the_store_refuses_as_a_statement_is_parked_unreadable",
			sentence: "one whose event the store refuses as a statement, as it would every time, is parked `unreadable`.",
			run: func(t *testing.T, w *world) {
				// A NUL character in the id: text both stores refuse (PostgreSQL
				// 22021; SQLite's CHECK refusing what PostgreSQL refuses).
				nulID := strings.Replace(shipped("m-nul"), `"id":"m-nul"`, `"id":"m-\u0000"`, 1)
				w.send("warehouse_queue", shipped("m-1"), nulID, shipped("m-2"))
				wantReport(t, w.tick(), "received 3 kept 2 repeats 0 parked 1 left 0 acked 3")
				ps := w.parked(store.ListFailed)
				if len(ps) != 1 {
					t.Fatalf("parked %+v", ps)
				}
				e := w.show(ps[0].ID)
				if e.Code != "unreadable" || string(e.Body) != nulID || problemsText(e.Problems) != ":store" {
					t.Fatalf("parked %s %q body %q", e.Code, problemsText(e.Problems), e.Body)
				}
				wantRows(t, "received ids", w.receivedIDs(), row("queue warehouse_queue", "m-1"), row("queue warehouse_queue", "m-2"))
			},
		},
	})
}

func TestSeedReadingAMessage(t *testing.T) {
	runSeed(t, []seedCase{
		{
			name:     "its_body_is_JSON",
			sentence: "Its body is JSON",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", `{"id":"m-1","type":"order_shipped"`, `["m-1"]`, `{"id":"m-1","id":"m-2","type":"order_shipped"}`)
				wantReport(t, w.tick(), "received 3 kept 0 repeats 0 parked 3 left 0 acked 3")
				for _, e := range w.parked(store.ListFailed) {
					if e.Code != "unreadable" || problemsText(e.Problems) != ":json" {
						t.Fatalf("parked %s %q", e.Code, problemsText(e.Problems))
					}
				}
			},
		},
		{
			name:     "its_id_is_the_text_or_whole_number_at_id_at",
			sentence: "its id is the text or whole number at `id_at:`",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue",
					shipped("m-1"),
					strings.Replace(shipped("x"), `"id":"x"`, `"id":42`, 1),
					strings.Replace(shipped("y"), `"id":"y"`, `"id":"42"`, 1), // the same id as 42: a repeat
					strings.Replace(shipped("z"), `"id":"z"`, `"id":4.5`, 1),
					strings.Replace(shipped("v"), `"id":"v"`, `"id":true`, 1),
					strings.Replace(shipped("u"), `"id":"u"`, `"id":""`, 1))
				w.send("returns_queue", returnBody("7"), returnBody(`"r-8"`))
				wantReport(t, w.tick(), "received 8 kept 4 repeats 1 parked 3 left 0 acked 8")
				wantRows(t, "received ids", w.receivedIDs(),
					row("queue returns_queue", "7"), row("queue returns_queue", "r-8"),
					row("queue warehouse_queue", "42"), row("queue warehouse_queue", "m-1"))
				var probs []string
				for _, e := range w.parked(store.ListFailed) {
					probs = append(probs, e.Code+" "+problemsText(e.Problems))
				}
				slices.Sort(probs)
				if !slices.Equal(probs, []string{"unreadable id:required", "unreadable id:type", "unreadable id:type"}) {
					t.Fatalf("parked %q", probs)
				}
			},
		},
		{
			name:     "its_type_is_the_text_at_type_at_matched_against_wire_name",
			sentence: "its type the text at `type_at:`, matched against each listed event's `wire_name:`",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue",
					`{"id":"c-1","type":"order_cancelled","order_id":"o-1","reason":"changed mind"}`,
					`{"id":"c-2","type":"OrderCancelled","order_id":"o-1","reason":"changed mind"}`, // the event's name is not its wire name
					`{"id":"c-3","type":"Order_Cancelled","order_id":"o-1","reason":"changed mind"}`,
					`{"id":"c-4","type":7,"order_id":"o-1","reason":"changed mind"}`,
					`{"id":"c-5","type":"parcel_lost","parcel_id":"p-1","lost_at":"2026-11-30T10:00:00Z"}`)
				wantReport(t, w.tick(), "received 5 kept 2 repeats 0 parked 3 left 0 acked 5")
				wantRows(t, "outbox", w.outbox(),
					row("queue warehouse_queue", "OrderCancelled", "c-1", `{"order_id":"o-1","reason":"changed mind"}`),
					row("queue warehouse_queue", "Packing.ParcelLost", "c-5", `{"lost_at":"2026-11-30T10:00:00Z","parcel_id":"p-1"}`))
				var got []string
				for _, e := range w.parked(store.ListFailed) {
					got = append(got, e.Label()+" "+e.Code+" "+problemsText(e.Problems))
				}
				slices.Sort(got)
				want := []string{
					"queue warehouse_queue · ? unreadable type:type",
					"queue warehouse_queue · OrderCancelled unlisted_type ",
					"queue warehouse_queue · Order_Cancelled unlisted_type ",
				}
				if !slices.Equal(got, want) {
					t.Fatalf("parked %q\nwant %q", got, want)
				}
			},
		},
		{
			name:     "a_queue_of_one_kind_has_no_type",
			sentence: "a queue of one kind has no type.",
			run: func(t *testing.T, w *world) {
				withType := strings.Replace(returnBody("1"), `{"meta"`, `{"type":"something_else","meta"`, 1)
				w.send("returns_queue", withType, returnBody("2"))
				wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
				for _, r := range w.outbox() {
					if r[1] != "ReturnRequested" {
						t.Fatalf("outbox %v", r)
					}
				}
			},
		},
		{
			name: "the_event_is_read_from_the_root_undeclared_members_left_out",
			sentence: "The event is read from the body's root, every member it doesn't declare left out, the queue's own id and " +
				"type among them, as a webhook's are.",
			run: func(t *testing.T, w *world) {
				extra := strings.Replace(shipped("m-1"), `"order_id"`, `"sent_by":"warehouse-7","trace":{"hops":3},"order_id"`, 1)
				extra = strings.Replace(extra, `"quantity":2}`, `"quantity":2,"bin":"A1"}`, 1)
				w.send("warehouse_queue", extra)
				w.send("returns_queue", returnBody("9"))
				wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
				// (Queues are received at once: the outbox rows in source order.)
				rows := w.outbox()
				slices.SortStableFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
				wantRows(t, "outbox", rows,
					row("queue returns_queue", "ReturnRequested", "9",
						`{"customer_email":"a@example.com","items":{"SKU-1":1},"order_id":"o-r","requested_at":"2026-11-30T10:00:00Z"}`),
					row("queue warehouse_queue", "OrderShipped", "m-1", shippedCanonical("m-1")))
				// The subscriber is handed the event as kept.
				calls := w.env.Target.Calls()
				if len(calls) != 1 {
					t.Fatalf("target calls %d", len(calls))
				}
				if p, _ := calls[0].Body["payload"].(string); p != shippedCanonical("m-1") {
					t.Fatalf("payload %q", p)
				}
			},
		},
	})
}

func TestSeedWhenItIsReceived(t *testing.T) {
	record := &runtimetest.FakeOptions{Record: true}
	runSeed(t, []seedCase{
		{
			name:     "up_to_ten_at_a_time_again_while_a_batch_comes_back_full",
			sentence: "each queue is asked for up to ten messages at a time, again while a batch comes back full",
			fake:     record,
			run: func(t *testing.T, w *world) {
				for i := range 25 {
					w.send("warehouse_queue", shipped(fmt.Sprint("m-", i)))
				}
				rep := w.tick()
				wantReport(t, rep, "received 25 kept 25 repeats 0 parked 0 left 0 acked 25")
				var asks []string
				for _, r := range w.env.Requests() {
					if r.Operation == "ReceiveMessage" {
						asks = append(asks, fmt.Sprint(r.Input["MaxNumberOfMessages"], "@", r.Input["QueueUrl"] == w.env.QueueURLs["warehouse_queue"]))
					}
				}
				// Returns: one empty ask. Warehouse: 10, 10, 5 (not full: stop).
				// The queues are asked at once, so only each queue's own order
				// is fixed: the returns ask is put first.
				slices.SortStableFunc(asks, func(a, b string) int { return strings.Compare(a, b) })
				want := []string{"10@false", "10@true", "10@true", "10@true"}
				if !slices.Equal(asks, want) {
					t.Fatalf("asks %v, want %v", asks, want)
				}
				if rep.Busy {
					t.Fatal("a tick that emptied its queues is busy")
				}
			},
		},
		{
			name:     "at_most_ten_times_a_tick",
			sentence: "at most ten times a tick",
			run: func(t *testing.T, w *world) {
				for i := range 150 {
					w.send("warehouse_queue", shipped(fmt.Sprint("m-", i)))
				}
				rep := w.tick()
				wantReport(t, rep, "received 100 kept 100 repeats 0 parked 0 left 0 acked 100")
				if n := w.env.Fake.Calls("ReceiveMessage"); n != 11 { // 10 for warehouse, 1 for returns
					t.Fatalf("ReceiveMessage calls %d, want 11", n)
				}
				if !rep.Busy || w.onQueue("warehouse_queue") != 50 {
					t.Fatalf("busy %v, on the queue %d", rep.Busy, w.onQueue("warehouse_queue"))
				}
				rep = w.tick()
				wantReport(t, rep, "received 50 kept 50 repeats 0 parked 0 left 0 acked 50")
				if n := w.env.Fake.Calls("ReceiveMessage"); n != 11+6+1 {
					t.Fatalf("ReceiveMessage calls %d, want 18", n)
				}
			},
		},
		{
			name:     "within_the_ticks_budget",
			sentence: "within the tick's budget",
			run: func(t *testing.T, w *world) {
				for i := range 5 {
					w.send("warehouse_queue", shipped(fmt.Sprint("m-", i)))
				}
				// A budget spent before the first ask: no queue is asked, and the
				// tick says work is left.
				spent := w.runtime(w.env.Plan, runtime.Options{Budget: time.Nanosecond})
				rep := w.tickWith(spent)
				if rep.Received != 0 || !rep.Busy || w.env.Fake.Calls("ReceiveMessage") != 0 {
					t.Fatalf("with the budget spent: %+v, %d asks", rep, w.env.Fake.Calls("ReceiveMessage"))
				}
				wantReport(t, w.tick(), "received 5 kept 5 repeats 0 parked 0 left 0 acked 5")
			},
		},
		{
			name:     "up_to_20_retried_parked_messages_are_read_first",
			sentence: "up to 20 parked messages an operator retried are read first.",
			run: func(t *testing.T, w *world) {
				for i := range 25 {
					w.send("warehouse_queue", delayed(fmt.Sprint("m-", i)))
				}
				w.tick()
				w.tick()
				var ids []store.ID
				for _, e := range w.parked(store.ListFailed) {
					ids = append(ids, e.ID)
				}
				if len(ids) != 25 {
					t.Fatalf("parked %d", len(ids))
				}
				if err := w.raw.Retry(w.ctx, ids); err != nil {
					t.Fatal(err)
				}
				rt := w.runtime(planWithDelayed(t), runtime.Options{})
				// m-0 is on the queue again too: the retried copy, read first, is
				// kept; the queue's is a repeat.
				w.send("warehouse_queue", delayed("m-0"))
				rep := w.tickWith(rt)
				if rep.RetriedKept != 20 || rep.Received != 1 || rep.Repeats+rep.Kept != 1 {
					t.Fatalf("tick %+v", rep)
				}
				if len(w.parked(store.ListPending)) != 5 || w.stats().Outbox != 20 {
					t.Fatalf("pending %d outbox %d", len(w.parked(store.ListPending)), w.stats().Outbox)
				}
				rep = w.tickWith(rt)
				if rep.RetriedKept != 5 || len(w.parked(store.ListAll)) != 0 {
					t.Fatalf("second tick %+v", rep)
				}
			},
		},
		{
			name:     "read_first_before_the_queue",
			sentence: "up to 20 parked messages an operator retried are read first.",
			run: func(t *testing.T, w *world) {
				w.send("warehouse_queue", delayed("m-1"))
				w.tick()
				ps := w.parked(store.ListFailed)
				if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID}); err != nil {
					t.Fatal(err)
				}
				w.send("warehouse_queue", delayed("m-1"))
				rep := w.tickWith(w.runtime(planWithDelayed(t), runtime.Options{}))
				// Read first: the retried copy is kept, the queue's copy is the repeat.
				if rep.RetriedKept != 1 || rep.Kept != 0 || rep.Repeats != 1 {
					t.Fatalf("tick %+v", rep)
				}
				if s := w.stats(); s.Outbox != 1 || s.ParkedTotal() != 0 {
					t.Fatalf("%+v", s)
				}
			},
		},
	})
}

// Acceptance 5: a message whose event text holds a NUL character (`\u0000`
// in a Text field), among others in its batch.
//
// What the stores do (docs/design/store.md, "Error classification"): the outbox's event_json is
// PostgreSQL `json` (SQLite: TEXT with json_valid), which keeps an *escaped*
// NUL — the canonical JSON writes it as `\u0000` — so neither store refuses
// this message and it is kept, NUL and all; only `jsonb` would refuse it. A
// NUL the store must hold as text is refused by both: a NUL in the message's
// id (PostgreSQL 22021, SQLite's CHECK mirroring it), which is parked
// `unreadable` with the rest of its batch kept.
func TestNULInEventText(t *testing.T) {
	// Acceptance 5: a message whose event text holds a NUL character is
	// refused by the store as it would be every time (PostgreSQL's text
	// cannot hold U+0000: the jsonb cast refuses it, 22P05; SQLite refuses it
	// alike), so it is parked unreadable, and the rest of its batch is kept.
	// A NUL in the id is refused the same way.
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind, nil)
			nulNote := strings.Replace(shipped("m-nul"), `"carrier":"dhl"`, `"carrier":"dhl","note":"left at\u0000door"`, 1)
			nulID := strings.Replace(shipped("x"), `"id":"x"`, `"id":"m-\u0000"`, 1)
			w.send("warehouse_queue", shipped("m-1"), nulNote, nulID, shipped("m-2"))
			wantReport(t, w.tick(), "received 4 kept 2 repeats 0 parked 2 left 0 acked 4")
			wantRows(t, "received ids", w.receivedIDs(),
				row("queue warehouse_queue", "m-1"), row("queue warehouse_queue", "m-2"))
			ps := w.parked(store.ListFailed)
			if len(ps) != 2 {
				t.Fatalf("parked %+v", ps)
			}
			bodies := map[string]bool{}
			for _, p := range ps {
				e := w.show(p.ID)
				if e.Code != "unreadable" || problemsText(e.Problems) != ":store" {
					t.Fatalf("parked %s %q", e.Code, problemsText(e.Problems))
				}
				bodies[string(e.Body)] = true
			}
			if !bodies[nulNote] || !bodies[nulID] {
				t.Fatalf("the parked bodies are not the messages whole: %v", bodies)
			}
			for _, c := range w.env.Target.Calls() {
				if p, _ := c.Body["payload"].(string); strings.Contains(p, "left at") {
					t.Fatalf("the subscriber was handed the NUL event: %q", p)
				}
			}
		})
	}
}
