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
	if err != nil {
		return err
	}
	return r.refreshStats(ctx)
}

// refreshStats sets the store's gauges when they are StatsEvery old: scrapes
// read the gauges, never the store.
func (r *Runtime) refreshStats(ctx context.Context) error {
	now := r.now()
	if !r.statsAt.IsZero() && now.Sub(r.statsAt) < r.statsEvery {
		return nil
	}
	s, err := r.store.Stats(ctx)
	if err != nil {
		return err
	}
	r.statsAt = now
	r.metrics.storeStats(s, now)
	return nil
}
