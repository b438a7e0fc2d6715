package runtime

import (
	"context"
	"errors"
	"sync"
	"time"
)

// TickReport says what one tick did.
type TickReport struct {
	// Left counts received messages neither kept nor parked now (the store
	// could not take them, or a body did not match its checksum): they are
	// handed back to their queue, which sends them again. It is not what
	// waits on the queue.
	Received, Kept, Repeats, Parked, Left, Acked int
	// RetriedKept, RetriedRepeats and RetriedParked count the parked
	// messages an operator retried, read again from the store: kept, found
	// kept already (nothing added), or parked again.
	RetriedKept, RetriedRepeats, RetriedParked int
	Delivered                                  DeliverReport
	// Busy means work was left for the next tick (a full batch, the budget
	// spent, due deliveries beyond the claim size).
	Busy bool
}

// Unacknowledged is how many messages this tick settled (kept, repeated or
// parked) whose acknowledgement failed: they come back, as repeats.
func (rep TickReport) Unacknowledged() int {
	return max(rep.Kept+rep.Repeats+rep.Parked-rep.Acked, 0)
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
	// Each queue is received on its own, all at once, sharing the store: a
	// queue whose endpoint hangs delays only itself, and only until its
	// ask's deadline.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex                     // guards rep
		qerrs = make([]error, len(r.queues)) // in the plan's order, whichever ends first
	)
	for i, q := range r.queues {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var own TickReport
			qerrs[i] = q.receive(ctx, deadline, &own)
			mu.Lock()
			defer mu.Unlock()
			rep.addReceived(own)
			rep.Busy = rep.Busy || own.Busy
		}()
	}
	wg.Wait()
	errs = append(errs, qerrs...)
	if deliver && ctx.Err() == nil {
		if err := r.deliver.run(ctx, &rep.Delivered); err != nil {
			errs = append(errs, err)
		}
		if rep.Delivered.Claimed > 0 {
			rep.Busy = rep.Busy || rep.Delivered.Full
		}
	}
	if ctx.Err() == nil {
		err := r.house.run(ctx, deadline)
		r.health.observe(r.now(), err)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}
