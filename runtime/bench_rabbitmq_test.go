package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// BenchmarkReceiveRabbitMQ measures messages per second from a queue of the
// RabbitMQ broker on this machine into PostgreSQL (fsync on): the runtime's
// receiving step of a tick for the rabbitmq driver (examples/rabbitmq: a
// kept message writes a received id and an outbox row; the app has no
// subscriber), next to a raw loop of the same client (amqp091-go, a
// consumer with the same prefetch) that receives 10 deliveries, inserts
// the same rows with pgx in one transaction and acknowledges the 10 with
// one multiple basic.ack. The queue is topped up to 200 messages outside
// the timer, with publisher confirms. One op is a batch of 10 messages.
//
// frames-out/batch counts what the client writes to the broker a batch
// (its acknowledgements: basic.ack and basic.nack have no answer, so a
// batch costs the broker no round trip; heartbeats are counted too).
func BenchmarkReceiveRabbitMQ(b *testing.B) {
	pgtest.Require(b)
	u := brokertest.RabbitMQ.Require(b)
	for _, kind := range []string{"classic", "quorum"} {
		b.Run(kind+"/runtime", func(b *testing.B) { benchRabbitRuntime(b, u, kind == "quorum") })
		b.Run(kind+"/raw_amqp", func(b *testing.B) { benchRabbitRaw(b, u, kind == "quorum") })
	}
}

// benchRabbit is a fresh queue and a publisher for it.
type benchRabbit struct {
	queue string
	ch    *amqp.Channel
}

func newBenchRabbit(b *testing.B, u string, quorum bool) *benchRabbit {
	c, err := amqp.Dial(u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ch, err := c.Channel()
	if err != nil {
		b.Fatal(err)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	q := "jadpo_bench_" + hex.EncodeToString(r[:])
	args := amqp.Table{}
	if quorum {
		args[amqp.QueueTypeArg] = amqp.QueueTypeQuorum
	}
	if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = ch.QueueDelete(q, false, false, false) })
	if err := ch.Confirm(false); err != nil {
		b.Fatal(err)
	}
	return &benchRabbit{queue: q, ch: ch}
}

// publish publishes one message and waits for its confirm.
func (r *benchRabbit) publish(body, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dc, err := r.ch.PublishWithDeferredConfirmWithContext(ctx, "", r.queue, false, false,
		amqp.Publishing{Body: []byte(body), MessageId: id, DeliveryMode: amqp.Persistent})
	if err != nil {
		return err
	}
	if ok, err := dc.WaitContext(ctx); !ok || err != nil {
		return fmt.Errorf("not confirmed: %v", err)
	}
	return nil
}

func benchOrder(id string) string {
	return fmt.Sprintf(`{"message_id":%q,"kind":"placed","order_id":42,"total_cents":1999,"note":"fragile"}`, id)
}

func benchRabbitRuntime(b *testing.B, u string, quorum bool) {
	ctx := context.Background()
	rq := newBenchRabbit(b, u, quorum)
	plan := checktest.ExamplePlan(b, "rabbitmq")
	cfg, err := LoadConfig(plan, []string{"ORDERS_BROKER_URL=" + u, "ORDERS_QUEUE=" + rq.queue}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	timed := benchDurableStore(b)
	var writes atomic.Int64
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg, Dial: countingDial(&writes)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	run := benchRun.Add(1)
	want := b.N * 10
	var before int64
	benchReceiveLoop(ctx, b, r, want, nil, func(i int) error {
		if i == 0 {
			before = writes.Load()
		}
		return rq.publish(benchOrder(fmt.Sprintf("r%d-%d", run, i)), "")
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(timed.keep.Load())/1e6/float64(b.N), "keep-ms/op")
	b.ReportMetric(float64(writes.Load()-before)/float64(b.N), "frames-out/batch")
}

func benchRabbitRaw(b *testing.B, u string, quorum bool) {
	ctx := context.Background()
	rq := newBenchRabbit(b, u, quorum)
	pool := rawPool(b, pgtest.FreshURL(b))
	var writes atomic.Int64
	c, err := amqp.DialConfig(u, amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		return countingDial(&writes)(ctx, network, addr)
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		b.Fatal(err)
	}
	if err := ch.Qos(40, 0, false); err != nil {
		b.Fatal(err)
	}
	deliveries, err := ch.Consume(rq.queue, "", false, false, false, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	const source = "queue orders"
	run := benchRun.Add(1)
	want := b.N * 10
	sent, acked := 0, 0
	topUp := func() {
		for ; sent < want && sent-acked < 200; sent++ {
			if err := rq.publish(benchOrder(fmt.Sprintf("r%d-%d", run, sent)), ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	topUp()
	before := writes.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch := make([]amqp.Delivery, 0, 10)
		for len(batch) < 10 {
			batch = append(batch, <-deliveries)
		}
		now := time.Now().UTC()
		kept := make([]rawKept, len(batch))
		for j := range batch {
			kept[j] = rawKept{ID: fmt.Sprintf("r%d-%d-%d", run, i, j), EventJSON: `{"order_id":42,"total_cents":1999,"note":"fragile"}`}
		}
		if err := rawKeep(ctx, pool, source, "OrderPlaced", kept, now); err != nil {
			b.Fatal(err)
		}
		if err := ch.Ack(batch[len(batch)-1].DeliveryTag, true); err != nil {
			b.Fatal(err)
		}
		acked += 10
		b.StopTimer()
		topUp()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(writes.Load()-before)/float64(b.N), "frames-out/batch")
}
