package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// queueWire is how a queue's batches are fetched and settled on the wire: a
// package's `receive:`/`acknowledge:` mapping, or a driver built into the
// runtime. It knows no store: the runner decides what is settled.
type queueWire interface {
	// fetch asks for one batch: each message's body and handle, and how
	// many items the queue answered with (a full batch means ask again).
	fetch(ctx context.Context) (msgs []*message, n int, err error)
	// finish acknowledges a batch's settled messages (kept, repeated or
	// parked) and hands back the others as the queue allows; it returns how
	// many were acknowledged. A failed acknowledgement is logged: the
	// message comes back, a repeat.
	finish(ctx context.Context, msgs []*message) (acked int)
	// close lets go of what the wire holds (a database pool).
	close()
}

func newQueueWire(r *Runtime, q *ir.Queue, conn *connection, rec *ir.Receiving) (queueWire, error) {
	if rec.Driver == "sql_inbox" {
		return newSQLInboxWire(r, q.Name, conn)
	}
	op := func(call *ir.Call) (wire.Operation, error) {
		if call == nil {
			return wire.Operation{}, fmt.Errorf("connection %s's receiving lacks a call in the plan", conn.name)
		}
		o, ok := conn.ops[call.Operation]
		if !ok {
			return wire.Operation{}, fmt.Errorf("the plan lacks operation %s", call.Operation)
		}
		return o, nil
	}
	recvOp, err := op(rec.Receive)
	if err != nil {
		return nil, err
	}
	ackOp, err := op(rec.Acknowledge)
	if err != nil {
		return nil, err
	}
	recvIn, err := conn.callInput(rec.Receive, "")
	if err != nil {
		return nil, err
	}
	switch rec.Driver {
	case "":
		recvOp.Items = rec.Messages
		return &mappedWire{r: r, queue: q.Name, conn: conn, recv: rec, recvOp: recvOp, ackOp: ackOp, recvIn: recvIn}, nil
	case "cloudflare_queues":
		recvOp.Items = "result.messages"
		return &cloudflareWire{r: r, queue: q.Name, conn: conn, pullOp: recvOp, ackOp: ackOp, pullIn: recvIn}, nil
	}
	return nil, fmt.Errorf("the %s driver is not built into this runtime", rec.Driver)
}

// mappedWire receives through a package's mapping: one receive call per
// batch, one acknowledge call per settled message.
type mappedWire struct {
	r             *Runtime
	queue         string
	conn          *connection
	recv          *ir.Receiving
	recvOp, ackOp wire.Operation
	recvIn        map[string]any
}

func (w *mappedWire) close() {}

// longPoll is how long a receive may wait on purpose for messages: the
// mapping's `wait_time_seconds` input (SQS's long poll), 0 without one.
func (w *mappedWire) longPoll() time.Duration {
	switch v := w.recvIn["wait_time_seconds"].(type) {
	case int64:
		return time.Duration(max(v, 0)) * time.Second
	case float64:
		return time.Duration(max(v, 0) * float64(time.Second))
	}
	return 0
}

func (w *mappedWire) fetch(ctx context.Context) ([]*message, int, error) {
	answer, err := w.conn.client.Call(ctx, w.recvOp, w.recvIn)
	if err != nil {
		return nil, 0, err
	}
	items, _ := answer[w.recv.Messages].([]any)
	msgs := make([]*message, 0, len(items))
	fields := itemFields{body: w.recv.Body, handle: w.recv.Handle, id: "message_id", md5: "md5_of_body"}
	for _, it := range items {
		msgs = append(msgs, w.r.itemMessage(w.queue, it, fields))
	}
	return msgs, len(items), nil
}

func (w *mappedWire) finish(ctx context.Context, msgs []*message) int {
	acked := 0
	for _, m := range msgs {
		if !m.settled {
			continue // left on the queue: it comes back after its visibility timeout
		}
		if m.handle == "" {
			w.r.log.Warn("a parked message has no handle to acknowledge it with; it will come back, parked already",
				"queue", w.queue, "provider_message_id", m.wireID)
			continue
		}
		in, err := w.conn.callInput(w.recv.Acknowledge, m.handle)
		if err == nil {
			_, err = w.conn.client.Call(ctx, w.ackOp, in)
		}
		if err != nil {
			// The message comes back; its id is recorded, so it is then a
			// repeat and deleted without keeping anything.
			w.r.log.Warn("acknowledging failed; the message will come back as a repeat", "queue", w.queue, "message_id", m.out.ID, "error", err)
			continue
		}
		acked++
	}
	return acked
}
