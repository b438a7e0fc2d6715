package runtime

import (
	"context"
	"time"

	"github.com/jadpo/jadpo/providers/wire"
)

// CloudflareRetryDelay is how long a message the store could not take is
// handed back for (`retries: [{lease_id, delay_seconds}]`). Each hand-back
// uses one of the queue's max_retries, as a lease running out would, so the
// delay gives the store as long to come back as an SQS visibility timeout
// would before the queue's dead-letter queue takes the message.
const CloudflareRetryDelay = 30 * time.Second

// cloudflareWire is the cloudflare_queues driver (providers.md §5): an HTTP
// pull consumer. It pulls a batch with the package's messages.pull, and
// answers each batch with one messages.ack that acknowledges the settled
// messages' leases and hands back the others.
type cloudflareWire struct {
	r             *Runtime
	queue         string
	conn          *connection
	pullOp, ackOp wire.Operation
	pullIn        map[string]any
}

func (w *cloudflareWire) close() {}

func (w *cloudflareWire) fetch(ctx context.Context) ([]*message, int, error) {
	answer, err := w.conn.client.Call(ctx, w.pullOp, w.pullIn)
	if err != nil {
		return nil, 0, err
	}
	result, _ := answer["result"].(map[string]any)
	items, _ := result["messages"].([]any)
	msgs := make([]*message, 0, len(items))
	fields := itemFields{body: "body", handle: "lease_id", id: "id"}
	for _, it := range items {
		msgs = append(msgs, w.r.itemMessage(w.queue, it, fields))
	}
	return msgs, len(items), nil
}

func (w *cloudflareWire) finish(ctx context.Context, msgs []*message) int {
	var acks, retries []any
	acked := 0
	for _, m := range msgs {
		if m.handle == "" {
			// No lease to answer with: the message comes back when the
			// lease Cloudflare holds for it runs out.
			if m.settled {
				w.r.log.Warn("a parked message has no lease to acknowledge it with; it will come back, parked already",
					"queue", w.queue, "provider_message_id", m.wireID)
			}
			continue
		}
		if m.settled {
			acks = append(acks, map[string]any{"lease_id": m.handle})
			acked++
		} else {
			retries = append(retries, map[string]any{"lease_id": m.handle, "delay_seconds": int64(CloudflareRetryDelay / time.Second)})
		}
	}
	if len(acks) == 0 && len(retries) == 0 {
		return 0
	}
	in := map[string]any{}
	if len(acks) > 0 {
		in["acks"] = acks
	}
	if len(retries) > 0 {
		in["retries"] = retries
	}
	answer, err := w.conn.client.Call(ctx, w.ackOp, in)
	w.r.metrics.queue(w.queue).ackBatch.Inc()
	if err != nil {
		// The leases run out and the messages come back; the settled ones'
		// ids are recorded, so they are then repeats.
		w.r.log.Warn("acknowledging failed; the batch will come back, its kept messages as repeats", "queue", w.queue, "messages", len(msgs), "error", err)
		return 0
	}
	// Cloudflare ignores a lease that ran out (the message is offered
	// again): its count says how many acknowledgements took.
	result, _ := answer["result"].(map[string]any)
	if n, ok := result["ack_count"].(int64); ok && int(n) < acked {
		w.r.log.Warn("some leases had run out before they were acknowledged; those messages will come back as repeats",
			"queue", w.queue, "acknowledged", n, "sent", acked)
		acked = int(max(n, 0))
	}
	return acked
}
