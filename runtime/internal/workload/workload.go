// Package workload makes the seeded message workloads the runtime's fault
// tests send (to the SQS fake of a runtimetest.Env, or the Cloudflare Queues
// fake), spread over a while as messages arrive on a real queue, and checks
// with SQL on a PostgreSQL store that a workload was kept exactly once. It
// serves the runtime's own tests and the process tests of
// runtime/internal/processtest, and, being internal, nothing outside
// runtime/. It reads plans, never source.
package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// Msg is one message of a workload and what the store must end up holding
// for it.
type Msg struct {
	// Queue is the app's queue it is sent to: "warehouse_queue".
	Queue string
	Body  string
	// Source is where the store records it: "queue warehouse_queue".
	Source string
	// ID is the id the runtime reads from it; "" for a message to be parked.
	ID string
	// Event is the event it is kept as; "" for a message to be parked.
	Event string
	// Park: the runtime must park it (an unlisted type, not JSON, a field its
	// event refuses).
	Park bool
	// Repeat: the same body was sent before; it keeps nothing new.
	Repeat bool
}

// Workload is a seeded mix of messages for the warehouse example: mostly
// OrderShipped (one subscriber), some OrderCancelled (none) on the
// warehouse queue, ReturnRequested on the returns queue, about 3% repeats
// of an earlier message and about 2% that must be parked, each body
// distinct.
type Workload struct {
	Msgs []Msg
}

// MsgKey names a kept message: its source and id.
type MsgKey struct{ Source, ID string }

// New makes n messages for the warehouse example from seed.
func New(seed uint64, n int) *Workload {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := &Workload{Msgs: make([]Msg, 0, n)}
	var valid []int
	for i := 0; i < n; i++ {
		r := rng.IntN(100)
		var m Msg
		switch {
		case r < 3 && len(valid) > 0:
			m = w.Msgs[valid[rng.IntN(len(valid))]]
			m.Repeat = true
		case r < 5:
			m = parkable(i)
		case r < 11:
			id := 100000 + i
			m = Msg{Queue: "returns_queue", ID: strconv.Itoa(id), Event: "ReturnRequested",
				Body: fmt.Sprintf(`{"meta":{"return_id":%d},"order_id":"o-r%d","customer_email":"r%d@example.com","items":{"SKU-%d":%d},"requested_at":"2026-11-30T10:00:00Z"}`,
					id, i, i, i%97, 1+i%5)}
		case r < 19:
			id := fmt.Sprintf("c-%d", i)
			m = Msg{Queue: "warehouse_queue", ID: id, Event: "OrderCancelled",
				Body: fmt.Sprintf(`{"id":%q,"type":"order_cancelled","order_id":"o-%s","reason":"customer asked"}`, id, id)}
		default:
			id := fmt.Sprintf("s-%d", i)
			m = Msg{Queue: "warehouse_queue", ID: id, Event: "OrderShipped", Body: runtimetest.OrderShipped(id)}
		}
		m.Source = "queue " + m.Queue
		if !m.Park && !m.Repeat {
			valid = append(valid, len(w.Msgs))
		}
		w.Msgs = append(w.Msgs, m)
	}
	return w
}

// parkable is a distinct message the runtime must park.
func parkable(i int) Msg {
	m := Msg{Queue: "warehouse_queue", Park: true}
	switch i % 3 {
	case 0:
		m.Body = fmt.Sprintf(`{"id":"u-%d","type":"order_delayed","order_id":"o-%d"}`, i, i)
	case 1:
		m.Body = fmt.Sprintf(`not json %d`, i)
	default:
		m.Body = fmt.Sprintf(`{"id":"b-%d","type":"order_shipped","order_id":"o-%d","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":0}]}`, i, i)
	}
	return m
}

// Kept is what the store must keep: each distinct valid message by key, with
// its event.
func (w *Workload) Kept() map[MsgKey]string {
	out := map[MsgKey]string{}
	for _, m := range w.Msgs {
		if !m.Park {
			out[MsgKey{m.Source, m.ID}] = m.Event
		}
	}
	return out
}

// parked is the set of bodies the store must hold parked, by source.
func (w *Workload) parked() map[MsgKey]bool {
	out := map[MsgKey]bool{}
	for _, m := range w.Msgs {
		if m.Park {
			out[MsgKey{m.Source, m.Body}] = true
		}
	}
	return out
}

// Send puts messages [from, to) of the workload on their queues.
func (w *Workload) Send(e *runtimetest.Env, from, to int) {
	e.T.Helper()
	for _, m := range w.Msgs[from:to] {
		e.Send(m.Queue, m.Body)
	}
}

// Count says how many messages of each kind the workload holds.
func (w *Workload) Count() (kept, repeats, parked int) {
	for _, m := range w.Msgs {
		switch {
		case m.Park:
			parked++
		case m.Repeat:
			repeats++
		default:
			kept++
		}
	}
	return
}

// NewReturns makes n messages for examples/returns' returns_queue
// from seed: mostly distinct return_requested bodies, about 2% repeats of an
// earlier valid body, about 2% that must be parked (not JSON, an unlisted
// type, an order_id its event refuses), each of those distinct.
func NewReturns(seed uint64, n int) *Workload {
	rng := rand.New(rand.NewPCG(seed, seed^0x636c6f7564666c72))
	w := &Workload{Msgs: make([]Msg, 0, n)}
	var valid []int
	for i := 0; i < n; i++ {
		r := rng.IntN(100)
		var m Msg
		switch {
		case r < 2 && len(valid) > 0:
			m = w.Msgs[valid[rng.IntN(len(valid))]]
			m.Repeat = true
		case r < 4:
			m = Msg{Queue: "returns_queue", Park: true}
			switch i % 3 {
			case 0:
				m.Body = fmt.Sprintf(`not json %d`, i)
			case 1:
				m.Body = fmt.Sprintf(`{"return_id":"u-%d","type":"return_lost","order_id":"o-u-%d"}`, i, i)
			default:
				m.Body = fmt.Sprintf(`{"return_id":"b-%d","type":"return_requested","order_id":"o","customer_email":"b%d@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`, i, i)
			}
		default:
			id := fmt.Sprintf("r-%d", i)
			m = Msg{Queue: "returns_queue", ID: id, Event: "ReturnRequested",
				Body: fmt.Sprintf(`{"return_id":%q,"type":"return_requested","order_id":"o-%s","customer_email":"c%d@example.com","items":{"SKU-%d":%d},"requested_at":"2026-11-30T10:00:00Z"}`,
					id, id, i, i%97, 1+i%5)}
		}
		m.Source = "queue " + m.Queue
		if !m.Park && !m.Repeat {
			valid = append(valid, len(w.Msgs))
		}
		w.Msgs = append(w.Msgs, m)
	}
	return w
}
