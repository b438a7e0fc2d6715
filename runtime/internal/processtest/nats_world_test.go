package processtest

// The NATS JetStream counterparts of the SQL inbox world: a copy of
// examples/natsorders whose connection reads a fresh work-queue stream of
// the NATS server on this machine (its consumer made by the app,
// create_consumer), its events' store a fresh PostgreSQL schema; `jadpo run`
// of that copy as a child process; a seeded workload of order messages
// published by a client of the test's own; and the checks that each was
// kept, or parked, exactly once and that the consumer holds nothing
// unacknowledged.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// NATSOrdersSource is where the store records the messages of examples/natsorders' queue.
const NATSOrdersSource = "queue orders"

// NATSEnv is one test's NATS world.
type NATSEnv struct {
	T                  testing.TB
	AppDir             string
	Plan               *ir.Program
	StoreURL           string
	Stream, Consumer   string
	Subject            string
	Environ            []string
	NC                 *nats.Conn
	JS                 jetstream.JetStream
	natsURL, proxyAddr string
}

// NewNATS builds the orders example's world on a fresh stream (deleted when
// the test ends); the app's consumer acknowledges within ackWait. natsURL
// is where the app connects ("" for the test server: a proxy's URL).
func NewNATS(t testing.TB, ackWait time.Duration, natsURL string) *NATSEnv {
	t.Helper()
	u := brokertest.NATS.Require(t)
	if natsURL == "" {
		natsURL = u
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	e := &NATSEnv{T: t, Stream: "kill_" + id, Consumer: "jadpo_" + id, Subject: "killtest." + id}
	e.AppDir = checktest.CopyExample(t, "natsorders", filepath.Join(t.TempDir(), "natsorders"),
		checktest.Edit{File: "app.jadpo", Old: `stream: "ORDERS"`, New: `stream: "` + e.Stream + `"`},
		checktest.Edit{File: "app.jadpo", Old: `consumer: "jadpo_orders"`, New: `consumer: "` + e.Consumer + `"`},
		checktest.Edit{File: "app.jadpo", Old: `subject: "orders.>"`, New: `subject: "` + e.Subject + `.>"`},
		checktest.Edit{File: "app.jadpo", Old: `ack_wait: 30s`, New: `ack_wait: ` + fmt.Sprintf("%dms", ackWait.Milliseconds())},
		checktest.Edit{File: "app.jadpo", Old: `max_deliver: 5`, New: `max_deliver: 1000
        nak_delay: 100ms`})
	e.Plan = checktest.PlanDir(t, e.AppDir)
	e.StoreURL = pgtest.FreshURL(t)
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	e.NC = nc
	if e.JS, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.JS.CreateStream(ctx, jetstream.StreamConfig{Name: e.Stream, Subjects: []string{e.Subject + ".>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.JS.DeleteStream(context.Background(), e.Stream) })
	// The real server asks no sign-in; the example's token is sent and ignored.
	e.Environ = []string{"NATS_URL=" + natsURL, "NATS_TOKEN=unused"}
	return e
}

// StartRun starts `bin run <AppDir> --database <StoreURL> --log-format json`.
func (e *NATSEnv) StartRun(bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", e.AppDir, "--database", e.StoreURL, "--log-format", "json"}, extra...)
	return startProc(e.T, bin, args, runtimetest.ChildEnviron(e.Environ), logPath)
}

// Held is what the broker still holds for the app: messages in the stream
// (a work queue drops each acknowledged one), and the consumer's pending
// and unacknowledged counts (-1 before the app made the consumer).
func (e *NATSEnv) Held() (msgs, pending, ackPending int) {
	e.T.Helper()
	ctx := context.Background()
	st, err := e.JS.Stream(ctx, e.Stream)
	if err != nil {
		e.T.Fatal(err)
	}
	si, err := st.Info(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	c, err := st.Consumer(ctx, e.Consumer)
	if err != nil {
		return int(si.State.Msgs), -1, -1
	}
	ci, err := c.Info(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	return int(si.State.Msgs), int(ci.NumPending), ci.NumAckPending
}

// Drained: nothing left on the broker.
func (e *NATSEnv) Drained() bool {
	m, p, a := e.Held()
	return m == 0 && p == 0 && a == 0
}

// NATSOrder is one message of an orders workload.
type NATSOrder struct {
	ID, Type string
	Body     []byte
	// Event is what it is kept as; "" for one to park, Park its reason.
	Event, Park string
}

// NATSOrders is a seeded mix of order messages: about 2% of a type the
// queue does not list (parked unlisted_type), about 1% without a customer
// (parked unreadable), the rest OrderPlaced and OrderCancelled.
type NATSOrders struct{ Orders []NATSOrder }

func NewNATSOrders(seed uint64, n int) *NATSOrders {
	rng := mrand.New(mrand.NewPCG(seed, seed^0x6e617473))
	w := &NATSOrders{}
	for i := range n {
		o := NATSOrder{ID: fmt.Sprintf("o-%05d-%x", i, rng.Uint32())}
		var body map[string]any
		switch r := rng.IntN(100); {
		case r < 2:
			o.Type, o.Park = "order.refunded", "unlisted_type"
			body = map[string]any{"order_id": i + 1}
		case r < 3:
			o.Type, o.Park = "order.placed", "unreadable"
			body = map[string]any{"order_id": i + 1, "customer": "", "total_cents": 5}
		case r < 70:
			o.Type, o.Event = "order.placed", "OrderPlaced"
			body = map[string]any{"order_id": i + 1, "customer": fmt.Sprintf("c-%d \"ü\"", rng.IntN(50)), "total_cents": rng.IntN(100000)}
		default:
			o.Type, o.Event = "order.cancelled", "OrderCancelled"
			body = map[string]any{"order_id": i + 1, "reason": "changed mind"}
		}
		body["id"], body["type"] = o.ID, o.Type
		o.Body, _ = json.Marshal(body)
		w.Orders = append(w.Orders, o)
	}
	return w
}

// Publish publishes orders [from, to) at once, each confirmed by JetStream.
func (w *NATSOrders) Publish(e *NATSEnv, from, to int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := from; i < to; i++ {
		if _, err := e.JS.Publish(ctx, e.Subject+".orders", w.Orders[i].Body); err != nil {
			return fmt.Errorf("publishing order %d: %w", i, err)
		}
	}
	return nil
}

// PublishFlow publishes orders [from, to) over a while from a goroutine.
func (w *NATSOrders) PublishFlow(e *NATSEnv, from, to int, over time.Duration) *workload.Flow {
	return workload.StartFlow(e.T, from, to, over, func(i, j int) error { return w.Publish(e, i, j) })
}

// NATSCounts is what VerifyNATS found.
// VerifyNATS holds the store to each order exactly once (VerifyKeptOnce),
// their bodies as published, and the broker to holding nothing for the
// app: no message in the stream, none pending for the consumer or
// unacknowledged.
func VerifyNATS(t testing.TB, e *NATSEnv, w *NATSOrders, subs map[string][]string) StoreCounts {
	t.Helper()
	want := make([]Expected, 0, len(w.Orders))
	for _, o := range w.Orders {
		want = append(want, Expected{ID: o.ID, Body: o.Body, Event: o.Event, Park: o.Park})
	}
	return VerifyKeptOnce(t, e.StoreURL, NATSOrdersSource, "id", want, subs, func(fail func(string, ...any)) {
		if m, p, a := e.Held(); m != 0 || p != 0 || a != 0 {
			fail("the broker still holds %d messages (%d pending for the consumer, %d unacknowledged)", m, p, a)
		}
	})
}

// natsAddr is the test server's host:port.
func natsAddr(t testing.TB) string {
	t.Helper()
	brokertest.NATS.Require(t)
	return brokertest.NATS.Addr()
}

// loggedCount counts p's JSON log lines with msg so far.
func loggedCount(p *Proc, msg string) int {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `"msg":"`+msg+`"`)
}
