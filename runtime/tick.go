package runtime

import (
	"context"
	"errors"
	"time"
)

// TickReport says what one tick did.
type TickReport struct {
	Received, Kept, Repeats, Parked, Left, Acked int
	RetriedKept, RetriedParked                   int
	Delivered                                    DeliverReport
	// Busy means work was left for the next tick (a full batch, the budget
	// spent, due deliveries beyond the claim size).
	Busy bool
}

// Tick runs one tick: operator-retried parked messages, each queue, due
// deliveries, then housekeeping. An error is returned only for what stopped
// the tick as a whole; a message the store can't take now stays on its
// queue and is counted in Left.
func (r *Runtime) Tick(ctx context.Context) (TickReport, error) { return r.tick(ctx, true) }

// tick runs one tick; Run passes deliver false, since it runs deliveries in
// a loop of their own so that slow handlers never hold up receiving.
func (r *Runtime) tick(ctx context.Context, deliver bool) (TickReport, error) {
	start := time.Now()
	defer func() { r.metrics.tickSeconds.Observe(time.Since(start).Seconds()) }()
	var rep TickReport
	var errs []error
	if err := r.rereadRetried(ctx, &rep); err != nil {
		errs = append(errs, err)
	}
	deadline := start.Add(r.budget)
	for _, q := range r.queues {
		if ctx.Err() != nil {
			break
		}
		if err := q.receive(ctx, deadline, &rep); err != nil {
			errs = append(errs, err)
		}
	}
	if deliver && ctx.Err() == nil {
		if err := r.deliver.run(ctx, &rep.Delivered); err != nil {
			errs = append(errs, err)
		}
		if rep.Delivered.Claimed > 0 {
			rep.Busy = rep.Busy || rep.Delivered.Full
		}
	}
	if ctx.Err() == nil {
		if err := r.housekeep(ctx, deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}
