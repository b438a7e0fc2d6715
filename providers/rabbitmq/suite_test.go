package rabbitmq_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/rabbitmq"
)

// The rabbitmq driver passes the shared suite against the real broker, on
// a classic queue the driver declares and on a quorum queue it requires to
// exist. AMQP has no lease (a delivery is held until its channel ends: Kill
// cuts the connection) and no batch acknowledgement whose entries fail
// alone; acknowledgements are frames, counted as batch calls when they
// carry multiple=true.
func rabbitHarness(kind rabbitmq.Declare) queuetest.Harness {
	caps := queuetest.Caps{Ack: queuetest.AckBatch}
	return queuetest.Harness{Caps: caps, New: func(t *testing.T) *queuetest.Queue {
		b := newBroker(t)
		q := queueName(string(kind))
		args := amqp.Table{}
		declare := rabbitmq.DeclareClassic
		if kind == rabbitmq.DeclareQuorum {
			// The driver finds it as it is.
			args[amqp.QueueTypeArg] = amqp.QueueTypeQuorum
			declare = rabbitmq.DeclareExisting
		}
		b.declare(t, q, args)
		var mu sync.Mutex
		live := map[queue.Source]*conns{}
		var sent atomic.Int64
		return &queuetest.Queue{
			Open: func(t *testing.T, opts queue.Options) queue.Source {
				cs := &conns{}
				opts.Dial = cs.dial
				src, err := rabbitmq.Driver.Open(conn(b.url, q, declare), opts)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				live[src] = cs
				mu.Unlock()
				t.Cleanup(func() { mu.Lock(); delete(live, src); mu.Unlock() })
				return src
			},
			Send: func(t *testing.T, payload string) {
				b.publish(t, q, payload, fmt.Sprintf("wire-%d", sent.Add(1)))
			},
			// Ready on the broker, and held by the live sources; read until
			// five reads agree (a message handed back is pushed again at once,
			// and is between the two for a moment).
			Held: func(t *testing.T) int {
				mu.Lock()
				for src := range live {
					rabbitmq.Sync(src)
				}
				mu.Unlock()
				read := func() int {
					ready, _ := b.counts(t, q)
					mu.Lock()
					defer mu.Unlock()
					for src := range live {
						ready += rabbitmq.Holding(src)
					}
					return ready
				}
				last, same := read(), 0
				for range 200 {
					time.Sleep(25 * time.Millisecond)
					n := read()
					if n != last {
						last, same = n, 0
						continue
					}
					if same++; same == 4 {
						return n
					}
				}
				t.Fatalf("the queue's count does not settle (last %d)", last)
				return 0
			},
			Expire: func(t *testing.T) {}, // a message handed back is ready at once
			Kill: func(t *testing.T, src queue.Source) {
				mu.Lock()
				cs := live[src]
				delete(live, src)
				n := len(live)
				mu.Unlock()
				cs.cut()
				// The broker hands back what the connection held as it sees
				// the connection end.
				deadline := time.Now().Add(30 * time.Second)
				for {
					if _, consumers := b.counts(t, q); consumers <= n {
						return
					}
					if time.Now().After(deadline) {
						t.Fatal("the killed source's consumer is still on the queue")
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
		}
	}}
}

func TestSuite(t *testing.T) {
	for _, kind := range []rabbitmq.Declare{rabbitmq.DeclareClassic, rabbitmq.DeclareQuorum} {
		t.Run(string(kind), func(t *testing.T) { queuetest.Run(t, rabbitHarness(kind)) })
	}
}
