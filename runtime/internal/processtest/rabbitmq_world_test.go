package processtest

// The RabbitMQ counterparts of the SQL inbox world: a world running a copy
// of examples/rabbitmq whose queue is a fresh queue of the broker on this
// machine (ORDERS_BROKER_URL, ORDERS_QUEUE), with its events' store in a
// fresh PostgreSQL schema; `jadpo run` of that copy as a child process; a
// seeded workload of order messages published by a client of the test's
// own; and the checks that each message was kept, or parked, exactly once.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// OrdersSource is where the store records the messages of examples/rabbitmq's queue.
const OrdersSource = "queue orders"

// RabbitEnv is one test's RabbitMQ world.
type RabbitEnv struct {
	T        testing.TB
	AppDir   string // the copy of examples/rabbitmq
	Plan     *ir.Program
	StoreURL string // --database: the events' store's schema
	// BrokerURL is the broker's URL for the test's own client; the runs
	// get RunURL (the same, or through a proxy).
	BrokerURL, RunURL string
	Queue             string
	conn              *amqp.Connection
	mu                sync.Mutex
	pub               *amqp.Channel // in confirm mode
}

// NewRabbit builds the world: a fresh durable queue (quorum or classic),
// deleted when the test ends. runURL, when not "", is the URL the runs dial
// (a proxy's).
func NewRabbit(t testing.TB, quorum bool, runURL string) *RabbitEnv {
	t.Helper()
	u := brokertest.RabbitMQ.Require(t)
	e := &RabbitEnv{T: t, BrokerURL: u, RunURL: u}
	if runURL != "" {
		e.RunURL = runURL
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	e.Queue = "jadpo_test_kill_" + hex.EncodeToString(r[:])
	e.AppDir = checktest.CopyExample(t, "rabbitmq", filepath.Join(t.TempDir(), "rabbitmq"))
	e.Plan = checktest.PlanDir(t, e.AppDir)
	e.StoreURL = pgtest.FreshURL(t)
	c, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("connecting to RabbitMQ: %v", err)
	}
	e.conn = c
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	args := amqp.Table{}
	if quorum {
		args[amqp.QueueTypeArg] = amqp.QueueTypeQuorum
	}
	if _, err := ch.QueueDeclare(e.Queue, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ch, err := c.Channel(); err == nil {
			_, _ = ch.QueueDelete(e.Queue, false, false, false)
		}
		c.Close()
	})
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	e.pub = ch
	return e
}

// StartRun starts `bin run <AppDir> --database <StoreURL> --log-format json`
// and extra args, with the broker's URL and the queue in its environment.
func (e *RabbitEnv) StartRun(bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", e.AppDir, "--database", e.StoreURL, "--log-format", "json"}, extra...)
	env := runtimetest.ChildEnviron([]string{"ORDERS_BROKER_URL=" + e.RunURL, "ORDERS_QUEUE=" + e.Queue})
	return startProc(e.T, bin, args, env, logPath)
}

// Publish publishes bodies as a producer would (persistent, each with its
// message-id) and waits for the broker's confirms.
func (e *RabbitEnv) Publish(ctx context.Context, orders []RabbitOrder) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var confirms []*amqp.DeferredConfirmation
	for _, o := range orders {
		dc, err := e.pub.PublishWithDeferredConfirmWithContext(ctx, "", e.Queue, false, false,
			amqp.Publishing{Body: []byte(o.Body()), MessageId: o.ID, DeliveryMode: amqp.Persistent, ContentType: "application/json"})
		if err != nil {
			return err
		}
		confirms = append(confirms, dc)
	}
	for _, dc := range confirms {
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("the broker did not confirm a message: %v", err)
		}
	}
	return nil
}

// Counts are the queue's ready messages and consumers, as the broker says.
func (e *RabbitEnv) Counts() (ready, consumers int) {
	e.T.Helper()
	ch, err := e.conn.Channel()
	if err != nil {
		e.T.Fatal(err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(e.Queue, true, false, false, false, nil)
	if err != nil {
		e.T.Fatal(err)
	}
	return q.Messages, q.Consumers
}

// RabbitOrder is one message of an orders workload and what the store must end
// up holding for it.
type RabbitOrder struct {
	ID, Kind, Note string
	OrderID, Total int64
	// Event is the event it is kept as; "" for one to park.
	Event string
	// Park is the reason it must be parked for; "" for one to keep.
	Park string
}

// Body is the message's body.
func (o RabbitOrder) Body() string {
	m := map[string]any{"message_id": o.ID, "kind": o.Kind, "order_id": o.OrderID}
	if o.Kind == "placed" {
		m["total_cents"] = o.Total
		if o.Note != "" {
			m["note"] = o.Note
		}
	} else if o.Note != "" {
		m["reason"] = o.Note
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// eventFields is the event JSON a kept order must have, its values as text.
func (o RabbitOrder) eventFields() map[string]string {
	m := map[string]string{"order_id": strconv.FormatInt(o.OrderID, 10)}
	if o.Kind == "placed" {
		m["total_cents"] = strconv.FormatInt(o.Total, 10)
		if o.Note != "" {
			m["note"] = o.Note
		}
	} else if o.Note != "" {
		m["reason"] = o.Note
	}
	return m
}

// NewRabbitOrders makes n messages from seed: about 2% of kind
// "refunded" (parked unlisted_type), about 1% with order_id 0 (parked
// unreadable), the rest placed (about 70%) and cancelled orders, a third
// with a note.
func NewRabbitOrders(seed uint64, n int) []RabbitOrder {
	rng := mrand.New(mrand.NewPCG(seed, seed^0x72616262))
	out := make([]RabbitOrder, 0, n)
	for i := range n {
		o := RabbitOrder{ID: fmt.Sprintf("ord-%05d-%x", i, rng.Uint32()), OrderID: int64(1 + rng.IntN(1_000_000)), Total: int64(rng.IntN(100_000))}
		if rng.IntN(3) == 0 {
			o.Note = fmt.Sprintf("note %d: \"fragile\" <ü>", i)
		}
		switch r := rng.IntN(100); {
		case r < 2:
			o.Kind, o.Park = "refunded", "unlisted_type"
		case r < 3:
			o.Kind, o.Park, o.OrderID = "placed", "unreadable", 0
		case r < 73:
			o.Kind, o.Event = "placed", "OrderPlaced"
		default:
			o.Kind, o.Event = "cancelled", "OrderCancelled"
		}
		out = append(out, o)
	}
	return out
}

// PublishFlow publishes orders [from, to) from a goroutine of its own, in
// steps of ten, spread over over.
func (e *RabbitEnv) PublishFlow(orders []RabbitOrder, from, to int, over time.Duration) *workload.Flow {
	return workload.StartFlow(e.T, from, to, over, func(i, j int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return e.Publish(ctx, orders[i:j])
	})
}

// StoreCounts are the outbox's and the parked messages' rows.
func (e *RabbitEnv) StoreCounts() (outbox, parked int) {
	e.T.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.StoreURL)
	if err != nil {
		return -1, -1
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM jadpo_outbox), (SELECT count(*) FROM jadpo_parked_messages)`).Scan(&outbox, &parked); err != nil {
		return -1, -1 // not migrated yet
	}
	return outbox, parked
}

// VerifyRabbit holds the store to each order exactly once
// (VerifyKeptOnce), a kept one's event with its fields, and the queue to
// holding nothing (every message acknowledged: one a run left
// unacknowledged would be ready again once its run ended).
func VerifyRabbit(t testing.TB, e *RabbitEnv, orders []RabbitOrder) StoreCounts {
	t.Helper()
	want := make([]Expected, 0, len(orders))
	for _, o := range orders {
		x := Expected{ID: o.ID, Body: []byte(o.Body()), Event: o.Event, Park: o.Park}
		if o.Park == "" {
			x.Fields = o.eventFields()
		}
		want = append(want, x)
	}
	return VerifyKeptOnce(t, e.StoreURL, OrdersSource, "message_id", want, e.Plan.SubscribersByEvent(), func(fail func(string, ...any)) {
		// The runs have ended, so a message one left unacknowledged is
		// ready again once the broker sees its consumer gone.
		workload.WaitUntil(t, 30*time.Second, "the runs' consumers to leave the queue", func() bool { _, c := e.Counts(); return c == 0 })
		time.Sleep(200 * time.Millisecond)
		if ready, _ := e.Counts(); ready != 0 {
			fail("the queue still holds %d messages", ready)
		}
	})
}

// countOrders says how many orders must be kept and parked.
func countOrders(orders []RabbitOrder) (valid, toPark int) {
	for _, o := range orders {
		if o.Park == "" {
			valid++
		} else {
			toPark++
		}
	}
	return valid, toPark
}

// Drained is a run's end: the queue holds nothing ready and the store holds
// every order (valid kept, toPark parked), or it has held the same for 3 s
// with nothing ready (some are lost, or kept twice: VerifyRabbit says which).
func (e *RabbitEnv) Drained(valid, toPark int) func() bool {
	var last [2]int
	var since time.Time
	return func() bool {
		ready, _ := e.Counts()
		outbox, parked := e.StoreCounts()
		if ready != 0 {
			since = time.Time{}
			return false
		}
		if outbox == valid && parked == toPark {
			return true
		}
		if now := [2]int{outbox, parked}; now != last || since.IsZero() {
			last, since = now, time.Now()
			return false
		}
		return time.Since(since) > 3*time.Second
	}
}
