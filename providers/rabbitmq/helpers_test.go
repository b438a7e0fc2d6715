package rabbitmq_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/rabbitmq"
)

// broker is the test's admin connection to the real broker.
type broker struct {
	url  string
	conn *amqp.Connection
	ch   *amqp.Channel
	mu   sync.Mutex
}

func newBroker(t *testing.T) *broker {
	t.Helper()
	u := brokertest.RabbitMQ.Require(t)
	c, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("connecting to RabbitMQ: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// Publishes wait for the broker's confirm: a message sent is on the queue.
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return &broker{url: u, conn: c, ch: ch}
}

// channel is a fresh channel (a failed declare closes the one it ran on).
func (b *broker) channel(t *testing.T) *amqp.Channel {
	t.Helper()
	ch, err := b.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// queueName is a fresh, unique queue name.
func queueName(prefix string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return "jadpo_test_" + prefix + "_" + hex.EncodeToString(r[:])
}

// declare declares a durable queue with args, deleted when the test ends.
func (b *broker) declare(t *testing.T, name string, args amqp.Table) {
	t.Helper()
	ch := b.channel(t)
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declaring %s: %v", name, err)
	}
	t.Cleanup(func() { b.delete(name) })
}

func (b *broker) delete(name string) {
	c, err := amqp.Dial(b.url)
	if err != nil {
		return
	}
	defer c.Close()
	if ch, err := c.Channel(); err == nil {
		_, _ = ch.QueueDelete(name, false, false, false)
	}
}

func (b *broker) publish(t *testing.T, q, body, id string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dc, err := b.ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{Body: []byte(body), MessageId: id, DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatalf("publishing: %v", err)
	}
	if ok, err := dc.WaitContext(ctx); !ok || err != nil {
		t.Fatalf("the broker did not confirm a message: %v", err)
	}
}

// counts are the queue's ready messages and consumers, as the broker says.
func (b *broker) counts(t *testing.T, q string) (ready, consumers int) {
	t.Helper()
	ch := b.channel(t)
	defer ch.Close()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspecting %s: %v", q, err)
	}
	return st.Messages, st.Consumers
}

// conns keeps the connections a Source dials, to cut them as SIGKILL would.
type conns struct {
	mu  sync.Mutex
	all []net.Conn
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.all = append(c.all, nc)
		c.mu.Unlock()
	}
	return nc, err
}

func (c *conns) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nc := range c.all {
		nc.Close()
	}
}

func conn(rawURL, q string, declare rabbitmq.Declare) *queue.Conn {
	return &queue.Conn{Name: "jobs", Receiving: &ir.Receiving{Driver: "rabbitmq"},
		Settings:    map[string]any{"queue": q, "declare": string(declare)},
		Credentials: map[string]string{ir.MemberURL: rawURL}}
}
