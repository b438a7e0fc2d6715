// Package cfqueues is the cloudflare_queues queue driver (docs/guide/receiving.md, "Cloudflare Queues"):
// Cloudflare Queues' HTTP pull consumer. It pulls a batch with the
// package's messages.pull, and answers each batch with one messages.ack
// that acknowledges the settled messages' leases and hands back the others
// (`retries`), each after RetryDelay. It holds the members of Cloudflare's
// JSON it reads and writes; the package (CloudflareQueues.v4) declares the
// operations, and the checker holds it to them by the driver's contract
// (driver.go: Driver, its contract and its stand-in for `jadpo dev`).
package cfqueues

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/wire"
)

// RetryDelay is how long a message the store could not take is handed back
// for (`retries: [{lease_id, delay_seconds}]`). Each hand-back uses one of
// the queue's max_retries, as a lease running out would, so the delay gives
// the store as long to come back as an SQS visibility timeout would before
// the queue's dead-letter queue takes the message.
const RetryDelay = 30 * time.Second

// Cloudflare's members: the pull's answer is {result: {messages: [{id,
// body, lease_id}]}}; the ack sends {acks: [{lease_id}], retries:
// [{lease_id, delay_seconds}]} and answers {result: {ack_count}}.
const (
	memberResult       = "result"
	memberMessages     = "messages"
	memberID           = "id"
	memberBody         = "body"
	memberLeaseID      = "lease_id"
	memberAcks         = "acks"
	memberRetries      = "retries"
	memberDelaySeconds = "delay_seconds"
	memberAckCount     = "ack_count"
	// The message's metadata.CF-Content-Type, as the package names it.
	memberMetadata    = "metadata"
	memberContentType = "content_type"
)

// The content types a producer sends with (Cloudflare's docs, "Pull
// consumers"): a pull answers text and json bodies as they were sent, and
// bytes and v8 ones in base64. v8 is the Workers runtime's own
// serialization (a Worker producer's default), which nothing but a Worker
// can decode; bytes are whatever the producer wrote. The driver reads a
// bytes body as the JSON text it decodes to, and parks any other bytes
// body and every v8 one, unreadable, with the problem `content_type: <it>`.
const (
	contentBytes = "bytes"
	contentV8    = "v8"
)

// Source receives one Cloudflare queue.
type Source struct {
	log           *slog.Logger
	queue         string
	client        *wire.Client
	pullOp, ackOp wire.Operation
	pullIn        map[string]any
}

// Open prepares the pull and the ack the checker filled into the plan.
func Open(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	rec := conn.Receiving
	pullOp, err := conn.Operation(rec.Receive)
	if err != nil {
		return nil, err
	}
	ackOp, err := conn.Operation(rec.Acknowledge)
	if err != nil {
		return nil, err
	}
	pullIn, err := conn.Input(rec.Receive, "")
	if err != nil {
		return nil, err
	}
	pullOp.Items = memberResult + "." + memberMessages
	return &Source{log: opts.Log, queue: opts.Queue, client: conn.Client, pullOp: pullOp, ackOp: ackOp, pullIn: pullIn}, nil
}

// Close lets go of nothing: the client is the connection's.
func (s *Source) Close() {}

// LongPoll is 0: a pull answers at once.
func (s *Source) LongPoll() time.Duration { return 0 }

// Receive pulls one batch.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	answer, err := s.client.Call(ctx, s.pullOp, s.pullIn)
	if err != nil {
		return nil, err
	}
	result, _ := answer[memberResult].(map[string]any)
	items, _ := result[memberMessages].([]any)
	b := &queue.Batch{Messages: make([]queue.Message, 0, len(items))}
	fields := queue.ItemFields{Body: memberBody, Handle: memberLeaseID, ID: memberID}
	for _, it := range items {
		m := queue.FromItem(s.log, s.queue, it, fields)
		s.decode(&m, it)
		b.Messages = append(b.Messages, m)
	}
	return b, nil
}

// decode reads m's body as its metadata's content type says: text, json
// or none given leave it as it came; bytes that decode to JSON text become
// that text; v8 and other bytes mark m's ContentType, to be parked.
func (s *Source) decode(m *queue.Message, item any) {
	fields, _ := item.(map[string]any)
	meta, _ := fields[memberMetadata].(map[string]any)
	ct, _ := meta[memberContentType].(string)
	switch ct {
	case contentBytes:
		if raw, err := base64.StdEncoding.DecodeString(m.Body); err == nil && json.Valid(raw) && utf8.Valid(raw) {
			m.Body = string(raw)
			return
		}
	case contentV8:
	default:
		return
	}
	m.ContentType = ct
	s.log.Warn(`a received message's content type cannot be read by a pull consumer; it is parked: send it with contentType "json" or "text"`,
		"queue", s.queue, "provider_message_id", m.WireID, "content_type", ct, "acknowledged", m.Handle != "")
}

// Acknowledge answers the batch with one ack: the settled messages' leases
// acknowledged, the others handed back.
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	var acks, retries []any
	acked := 0
	for _, m := range b.Messages {
		if m.Handle == "" {
			// No lease to answer with: the message comes back when the
			// lease Cloudflare holds for it runs out.
			if m.Settled {
				s.log.Warn("a parked message has no lease to acknowledge it with; it will come back, parked already",
					"queue", s.queue, "provider_message_id", m.WireID)
			}
			continue
		}
		if m.Settled {
			acks = append(acks, map[string]any{memberLeaseID: m.Handle})
			acked++
		} else {
			retries = append(retries, map[string]any{memberLeaseID: m.Handle, memberDelaySeconds: int64(RetryDelay / time.Second)})
		}
	}
	if len(acks) == 0 && len(retries) == 0 {
		return queue.Acks{}
	}
	in := map[string]any{}
	if len(acks) > 0 {
		in[memberAcks] = acks
	}
	if len(retries) > 0 {
		in[memberRetries] = retries
	}
	answer, err := s.client.Call(ctx, s.ackOp, in)
	if err != nil {
		// The leases run out and the messages come back; the settled ones'
		// ids are recorded, so they are then repeats.
		s.log.Warn("acknowledging failed; the batch will come back, its kept messages as repeats", "queue", s.queue, "messages", len(b.Messages), "error", err)
		return queue.Acks{BatchCalls: 1}
	}
	// Cloudflare ignores a lease that ran out (the message is offered
	// again): its count says how many acknowledgements took.
	result, _ := answer[memberResult].(map[string]any)
	if n, ok := result[memberAckCount].(int64); ok && int(n) < acked {
		s.log.Warn("some leases had run out before they were acknowledged; those messages will come back as repeats",
			"queue", s.queue, "acknowledged", n, "sent", acked)
		acked = int(max(n, 0))
	}
	return queue.Acks{Acknowledged: acked, BatchCalls: 1}
}
