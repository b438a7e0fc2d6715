package runtime

import (
	"context"
	"fmt"
	"strconv"
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
		w := &mappedWire{r: r, queue: q.Name, conn: conn, recv: rec, recvOp: recvOp, ackOp: ackOp, recvIn: recvIn, metrics: r.metrics.queue(q.Name)}
		if b := rec.AcknowledgeBatch; b != nil {
			if w.batch, err = newBatchAck(conn, b, op); err != nil {
				return nil, err
			}
		}
		return w, nil
	case "cloudflare_queues":
		recvOp.Items = "result.messages"
		return &cloudflareWire{r: r, queue: q.Name, conn: conn, pullOp: recvOp, ackOp: ackOp, pullIn: recvIn}, nil
	}
	return nil, fmt.Errorf("the %s driver is not built into this runtime", rec.Driver)
}

// mappedWire receives through a package's mapping: one receive call per
// batch, then one batch acknowledgement for its settled messages when the
// package maps one (`acknowledge_batch:`), else one acknowledge call per
// settled message.
type mappedWire struct {
	r             *Runtime
	queue         string
	conn          *connection
	recv          *ir.Receiving
	recvOp, ackOp wire.Operation
	recvIn        map[string]any
	batch         *batchAck // nil: the package maps only the single form
	metrics       *queueMetrics
}

// batchAck is a package's `acknowledge_batch:` made ready: the call's fixed
// inputs, and each entry's fixed fields and where its id and handle go.
type batchAck struct {
	plan     *ir.BatchCall
	op       wire.Operation
	in       map[string]any // settings and literals of `input:`
	fixed    map[string]any // settings and literals of `entry:`
	idAt     []string       // entry fields given message.entry_id
	handleAt []string       // entry fields given message.handle
}

func newBatchAck(conn *connection, b *ir.BatchCall, op func(*ir.Call) (wire.Operation, error)) (*batchAck, error) {
	o, err := op(&b.Call)
	if err != nil {
		return nil, err
	}
	in, err := conn.callInput(&b.Call, "")
	if err != nil {
		return nil, err
	}
	ba := &batchAck{plan: b, op: o, in: in, fixed: map[string]any{}}
	constant := map[string]ir.Value{}
	for k, v := range b.Entry {
		switch v.Message {
		case "entry_id":
			ba.idAt = append(ba.idAt, k)
		case "handle":
			ba.handleAt = append(ba.handleAt, k)
		default:
			constant[k] = v
		}
	}
	if ba.fixed, err = conn.callInput(&ir.Call{Operation: b.Operation, Input: constant}, ""); err != nil {
		return nil, err
	}
	return ba, nil
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
	var todo []*message
	for _, m := range msgs {
		if !m.settled {
			continue // left on the queue: it comes back after its visibility timeout
		}
		if m.handle == "" {
			w.r.log.Warn("a parked message has no handle to acknowledge it with; it will come back, parked already",
				"queue", w.queue, "provider_message_id", m.wireID)
			continue
		}
		todo = append(todo, m)
	}
	if w.batch == nil {
		return w.ackEach(ctx, todo)
	}
	acked := 0
	for len(todo) > 0 {
		n := min(len(todo), MaxBatch)
		acked += w.ackBatch(ctx, todo[:n])
		todo = todo[n:]
	}
	return acked
}

// ackBatch acknowledges msgs in one batch call. A call that fails as a
// whole falls back to one call per message; an entry the answer lists as
// failed is acknowledged once more on its own. One that fails again stays
// on the queue: it comes back after its visibility timeout, is a repeat
// (its id is recorded), and is acknowledged then; nothing is lost or kept
// twice.
func (w *mappedWire) ackBatch(ctx context.Context, msgs []*message) int {
	b := w.batch
	entries := make([]any, len(msgs))
	for i, m := range msgs {
		e := make(map[string]any, len(b.fixed)+len(b.idAt)+len(b.handleAt))
		for k, v := range b.fixed {
			e[k] = v
		}
		// The entry id is the message's place in the call: unique in it,
		// and within every provider's rules for ids (SQS: [A-Za-z0-9_-]{1,80}).
		for _, k := range b.idAt {
			e[k] = strconv.Itoa(i)
		}
		for _, k := range b.handleAt {
			e[k] = m.handle
		}
		entries[i] = e
	}
	in := make(map[string]any, len(b.in)+1)
	for k, v := range b.in {
		in[k] = v
	}
	in[b.plan.Entries] = entries
	answer, err := w.conn.client.Call(ctx, b.op, in)
	w.metrics.ackBatch.Inc()
	if err != nil {
		w.r.log.Warn("the batch acknowledgement failed; acknowledging its messages one by one", "queue", w.queue, "messages", len(msgs), "error", err)
		return w.ackEach(ctx, msgs)
	}
	failed, _ := answer[b.plan.Failed].([]any)
	var again []*message
	seen := make(map[int]bool, len(failed))
	for _, f := range failed {
		item, _ := f.(map[string]any)
		id, _ := item[b.plan.FailedID].(string)
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= len(msgs) || strconv.Itoa(i) != id || seen[i] {
			w.r.log.Warn("the batch acknowledgement's answer names an entry it was not sent", "queue", w.queue, "entry_id", id)
			continue
		}
		seen[i] = true
		again = append(again, msgs[i])
	}
	w.metrics.ackFailedEntries.Add(float64(len(again)))
	if len(again) > 0 {
		w.r.log.Warn("some entries of the batch acknowledgement failed; acknowledging them one by one", "queue", w.queue, "failed", len(again), "sent", len(msgs))
	}
	return len(msgs) - len(again) + w.ackEach(ctx, again)
}

// ackEach acknowledges each message with its own call.
func (w *mappedWire) ackEach(ctx context.Context, msgs []*message) int {
	acked := 0
	for _, m := range msgs {
		in, err := w.conn.callInput(w.recv.Acknowledge, m.handle)
		if err == nil {
			_, err = w.conn.client.Call(ctx, w.ackOp, in)
			w.metrics.ackSingle.Inc()
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
