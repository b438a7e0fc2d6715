package runtime

import (
	"context"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// housekeep runs the tick's housekeeping with the plan's retention, until
// deadline (at least one batch a table), and counts what went.
func (r *Runtime) housekeep(ctx context.Context, deadline time.Time) error {
	o := store.Housekeeping{Deadline: deadline}
	if s := r.plan.Store; s != nil {
		o.Succeeded = time.Duration(s.Retention.SucceededMS) * time.Millisecond
		o.Outbox = time.Duration(s.Retention.OutboxMS) * time.Millisecond
	}
	h, err := r.store.Housekeep(ctx, r.now(), o)
	// What went before an error went: it is counted either way.
	r.metrics.housekept(h)
	if h.Total() > 0 {
		r.log.Info("housekeeping", "received_ids", h.ReceivedIDs, "parked_messages", h.ParkedMessages,
			"deliveries", h.Deliveries, "outbox", h.Outbox, "more", h.Busy)
	}
	return err
}
