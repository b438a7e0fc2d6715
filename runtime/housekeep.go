package runtime

import (
	"context"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime/store"
)

// housekeeper runs the tick's housekeeping and refreshes the store's gauges.
type housekeeper struct {
	shared
	retention  store.Housekeeping // the plan's retention; the deadline is each tick's
	statsEvery time.Duration
	statsAt    time.Time // when the gauges were last refreshed; zero: never
}

// newHousekeeper keeps the retention of the plan's store (nil: the
// defaults) and refreshes the gauges every statsEvery (0: DefaultStatsEvery).
func newHousekeeper(sh shared, s *ir.Store, statsEvery time.Duration) *housekeeper {
	h := &housekeeper{shared: sh, statsEvery: statsEvery}
	if h.statsEvery <= 0 {
		h.statsEvery = DefaultStatsEvery
	}
	if s != nil {
		h.retention.Succeeded = time.Duration(s.Retention.SucceededMS) * time.Millisecond
		h.retention.Outbox = time.Duration(s.Retention.OutboxMS) * time.Millisecond
	}
	return h
}

// run runs the tick's housekeeping with the plan's retention, until
// deadline (at least one batch a table), and counts what went.
func (k *housekeeper) run(ctx context.Context, deadline time.Time) error {
	o := k.retention
	o.Deadline = deadline
	h, err := k.store.Housekeep(ctx, o)
	// What went before an error went: it is counted either way.
	k.metrics.housekept(h)
	if h.Total() > 0 {
		k.log.Info("housekeeping", "received_ids", h.ReceivedIDs, "parked_messages", h.ParkedMessages,
			"deliveries", h.Deliveries, "outbox", h.Outbox, "more", h.Busy)
	}
	if err != nil {
		return err
	}
	return k.refreshStats(ctx)
}

// refreshStats sets the store's gauges when they are statsEvery old: scrapes
// read the gauges, never the store.
func (k *housekeeper) refreshStats(ctx context.Context) error {
	now := k.now()
	if !k.statsAt.IsZero() && now.Sub(k.statsAt) < k.statsEvery {
		return nil
	}
	s, err := k.store.Stats(ctx)
	if err != nil {
		return err
	}
	k.statsAt = now
	k.metrics.storeStats(s, now)
	return nil
}
