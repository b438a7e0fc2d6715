package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/store"
)

// dev runs examples/rabbitmq against the broker on this machine: a typed
// line is published on the queue and received, kept once; a broker URL off
// this machine is refused, naming the fix and never the password.
func TestDevRabbitMQ(t *testing.T) {
	u := brokertest.RabbitMQ.Require(t)
	c, err := amqp.Dial(u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	q := "jadpo_test_dev_" + hex.EncodeToString(r[:])
	if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	defer ch.QueueDelete(q, false, false, false)
	t.Setenv("ORDERS_BROKER_URL", u)
	t.Setenv("ORDERS_QUEUE", q)
	dir := copyExample(t, "rabbitmq")
	dials := recordDials(t)
	errOut, code := runDevToEnd(t, dir, `orders {"message_id":"o-1","kind":"placed","order_id":5,"total_cents":1200}`+"\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"queues: orders;", "rabbitmq queue of connection orders, on the broker of ORDERS_BROKER_URL", "sent to orders"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("dev does not say %q:\n%s", want, errOut)
		}
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "local.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.Stats(context.Background()); err != nil || s.Outbox != 1 {
		t.Fatalf("the typed message was not kept: %+v %v\n%s", s, err, errOut)
	}
	if got, err := ch.QueueDeclarePassive(q, true, false, false, false, nil); err != nil || got.Messages != 0 {
		t.Fatalf("the queue holds %d after dev: %v", got.Messages, err)
	}
	broker := 0
	for _, a := range dials() {
		if !strings.Contains(a, "127.0.0.1:") && !strings.Contains(a, "localhost:") {
			t.Errorf("dialled %s", a)
		}
		if a == "tcp "+brokertest.RabbitMQ.Addr() {
			broker++
		}
	}
	// The driver's connection and the typed line's, both through dev's dialler.
	if broker < 2 {
		t.Errorf("the broker was dialled %d times through dev's dialler, want the driver's and Send's", broker)
	}

	dials = recordDials(t)
	t.Setenv("ORDERS_BROKER_URL", "amqp://jadpo:s3cret-pw@rabbit.example.com:5672/shop")
	errOut, code = runDevToEnd(t, copyExample(t, "rabbitmq"), "")
	if code == 0 || !strings.Contains(errOut, "connection orders: its broker is on rabbit.example.com, not this machine") ||
		!strings.Contains(errOut, "set ORDERS_BROKER_URL to a RabbitMQ broker on this machine (amqp://guest:guest@127.0.0.1:5672/)") || strings.Contains(errOut, "s3cret-pw") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if got := dials(); len(got) != 0 {
		t.Fatalf("dialled %v", got)
	}
}
