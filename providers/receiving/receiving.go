// Package receiving is the queue driver of a package's own receiving
// mapping (`provide receiving { receive: ... acknowledge: ... }`, SQS and
// its like): one receive call per batch, then one batch acknowledgement
// for its settled messages when the package maps one (`acknowledge_batch:`,
// SQS's DeleteMessageBatch), else one acknowledge call per settled message.
// A batch call that fails as a whole, or the entries its answer lists as
// failed, fall back to one call per message.
package receiving

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/wire"
)

// Item fields the driver reads besides the mapping's body and handle: the
// provider's own id, for logs, and the body's checksum, when the answer's
// items carry them (SQS's MessageId and MD5OfBody, as the package names
// their fields).
const (
	fieldMessageID = "message_id"
	fieldMD5OfBody = "md5_of_body"
	// inputWaitTime is the receive input of a long poll (SQS's WaitTimeSeconds).
	inputWaitTime = "wait_time_seconds"
)

// Source receives one queue through its package's mapping.
type Source struct {
	log           *slog.Logger
	queue         string
	maxBatch      int
	conn          *queue.Conn
	recv          *ir.Receiving
	recvOp, ackOp wire.Operation
	recvIn        map[string]any
	batch         *batchAck // nil: the package maps only the single form
}

// Open prepares the mapping's calls: an operation or input the plan lacks
// stops the start.
func Open(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	rec := conn.Receiving
	recvOp, err := conn.Operation(rec.Receive)
	if err != nil {
		return nil, err
	}
	ackOp, err := conn.Operation(rec.Acknowledge)
	if err != nil {
		return nil, err
	}
	recvIn, err := conn.Input(rec.Receive, "")
	if err != nil {
		return nil, err
	}
	recvOp.Items = rec.Messages
	s := &Source{log: opts.Log, queue: opts.Queue, maxBatch: opts.MaxBatch, conn: conn, recv: rec, recvOp: recvOp, ackOp: ackOp, recvIn: recvIn}
	if b := rec.AcknowledgeBatch; b != nil {
		if s.batch, err = newBatchAck(conn, b); err != nil {
			return nil, err
		}
	}
	return s, nil
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

func newBatchAck(conn *queue.Conn, b *ir.BatchCall) (*batchAck, error) {
	o, err := conn.Operation(&b.Call)
	if err != nil {
		return nil, err
	}
	in, err := conn.Input(&b.Call, "")
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
	if ba.fixed, err = conn.Input(&ir.Call{Operation: b.Operation, Input: constant}, ""); err != nil {
		return nil, err
	}
	return ba, nil
}

// Close lets go of nothing: the client is the connection's.
func (s *Source) Close() {}

// LongPoll is the mapping's `wait_time_seconds` input (SQS's long poll), 0
// without one.
func (s *Source) LongPoll() time.Duration {
	switch v := s.recvIn[inputWaitTime].(type) {
	case int64:
		return time.Duration(max(v, 0)) * time.Second
	case float64:
		return time.Duration(max(v, 0) * float64(time.Second))
	}
	return 0
}

// Receive makes one receive call.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	answer, err := s.conn.Client.Call(ctx, s.recvOp, s.recvIn)
	if err != nil {
		return nil, err
	}
	items, _ := answer[s.recv.Messages].([]any)
	b := &queue.Batch{Messages: make([]queue.Message, 0, len(items))}
	fields := queue.ItemFields{Body: s.recv.Body, Handle: s.recv.Handle, ID: fieldMessageID, MD5: fieldMD5OfBody}
	for _, it := range items {
		b.Messages = append(b.Messages, queue.FromItem(s.log, s.queue, it, fields))
	}
	return b, nil
}

// Acknowledge acknowledges the settled messages, MaxBatch to a batch call
// when the package maps one; the others are left on the queue, which sends
// them again after their visibility timeout.
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	var todo []*queue.Message
	for i := range b.Messages {
		m := &b.Messages[i]
		if !m.Settled {
			continue // left on the queue: it comes back after its visibility timeout
		}
		if m.Handle == "" {
			s.log.Warn("a parked message has no handle to acknowledge it with; it will come back, parked already",
				"queue", s.queue, "provider_message_id", m.WireID)
			continue
		}
		todo = append(todo, m)
	}
	var acks queue.Acks
	if s.batch == nil {
		s.ackEach(ctx, todo, &acks)
		return acks
	}
	for len(todo) > 0 {
		n := min(len(todo), s.maxBatch)
		s.ackBatch(ctx, todo[:n], &acks)
		todo = todo[n:]
	}
	return acks
}

// ackBatch acknowledges msgs in one batch call. A call that fails as a
// whole falls back to one call per message; an entry the answer lists as
// failed, or (when the package maps the list of those that took) does not
// name at all, is acknowledged once more on its own. One that fails again stays
// on the queue: it comes back after its visibility timeout, is a repeat
// (its id is recorded), and is acknowledged then; nothing is lost or kept
// twice.
func (s *Source) ackBatch(ctx context.Context, msgs []*queue.Message, acks *queue.Acks) {
	b := s.batch
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
			e[k] = m.Handle
		}
		entries[i] = e
	}
	in := make(map[string]any, len(b.in)+1)
	for k, v := range b.in {
		in[k] = v
	}
	in[b.plan.Entries] = entries
	answer, err := s.conn.Client.Call(ctx, b.op, in)
	acks.BatchCalls++
	if err != nil {
		s.log.Warn("the batch acknowledgement failed; acknowledging its messages one by one", "queue", s.queue, "messages", len(msgs), "error", err)
		s.ackEach(ctx, msgs, acks)
		return
	}
	// Each entry the answer names as failed is acknowledged again alone.
	// With a mapped list of the entries that took, the answer is read
	// strictly: an entry it names neither way did not take either (issue
	// 24), and is acknowledged again alone, counted and logged by its
	// message id. Failed wins over succeeded for an entry named both ways.
	failed := s.answerEntries(answer, b.plan.Failed, b.plan.FailedID, len(msgs))
	var took map[int]bool
	if b.plan.Succeeded != "" {
		took = s.answerEntries(answer, b.plan.Succeeded, b.plan.SucceededID, len(msgs))
	}
	var again []*queue.Message
	nFailed, nUnanswered := 0, 0
	for i, m := range msgs {
		switch {
		case failed[i]:
			nFailed++
		case took != nil && !took[i]:
			nUnanswered++
			s.log.Warn("the batch acknowledgement's answer names this entry neither as taken nor as failed; acknowledging it on its own",
				"queue", s.queue, "message_id", m.ID, "provider_message_id", m.WireID, "entry_id", strconv.Itoa(i))
		default:
			continue
		}
		again = append(again, m)
	}
	acks.FailedEntries += nFailed
	acks.UnansweredEntries += nUnanswered
	if nFailed > 0 {
		s.log.Warn("some entries of the batch acknowledgement failed; acknowledging them one by one", "queue", s.queue, "failed", nFailed, "sent", len(msgs))
	}
	acks.Acknowledged += len(msgs) - len(again)
	s.ackEach(ctx, again, acks)
}

// answerEntries reads the batch answer's list field by each item's id
// field: the entries (their places in the call) it names. An id the call
// was not sent, or named twice, is logged and left out.
func (s *Source) answerEntries(answer map[string]any, list, idField string, sent int) map[int]bool {
	items, _ := answer[list].([]any)
	out := make(map[int]bool, len(items))
	for _, f := range items {
		item, _ := f.(map[string]any)
		id, _ := item[idField].(string)
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= sent || strconv.Itoa(i) != id || out[i] {
			s.log.Warn("the batch acknowledgement's answer names an entry it was not sent", "queue", s.queue, "entry_id", id, "list", list)
			continue
		}
		out[i] = true
	}
	return out
}

// ackEach acknowledges each message with its own call.
func (s *Source) ackEach(ctx context.Context, msgs []*queue.Message, acks *queue.Acks) {
	for _, m := range msgs {
		in, err := s.conn.Input(s.recv.Acknowledge, m.Handle)
		if err == nil {
			_, err = s.conn.Client.Call(ctx, s.ackOp, in)
			acks.SingleCalls++
		}
		if err != nil {
			// The message comes back; its id is recorded, so it is then a
			// repeat and deleted without keeping anything.
			s.log.Warn("acknowledging failed; the message will come back as a repeat", "queue", s.queue, "message_id", m.ID, "error", err)
			continue
		}
		acks.Acknowledged++
	}
}

// Driver is the driver of a package's own mapping (providers.Drivers
// registers it): its contract is the mapping the package writes, which the
// checker reads as it is; `jadpo dev` points its connections at a stand-in
// by their provider (the SQS fake for AmazonSQS).
var Driver = queue.Driver{Contract: ir.DriverContract{Name: ir.DriverMapping}, Open: Open}
