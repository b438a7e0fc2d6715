package testclock

import (
	"sync"
	"time"
)

// Clock is a stand-in's time (the SQS fake's and the Cloudflare Queues
// fake's): visibility timeouts, leases, delays, retention, long polling and a
// signature's freshness are read from it. Wall is the machine's; Manual moves
// only when a test says so.
type Clock interface {
	Now() time.Time
	// Timer fires c once d has passed on this clock; stop releases it.
	Timer(d time.Duration) (c <-chan time.Time, stop func())
}

// Wall is a Clock on the machine's time: what a stand-in runs on unless told
// otherwise (jadpo dev, tests wholly on the wall clock).
type Wall struct{}

// Now is time.Now.
func (Wall) Now() time.Time { return time.Now() }

// Timer is a time.Timer.
func (Wall) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Manual is a Clock that moves only when told to, for tests.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
}

type manualWaiter struct {
	at time.Time
	ch chan time.Time
}

// Timer fires when Advance or Set reaches now+d (at once when d <= 0); stop
// withdraws it.
func (c *Manual) Timer(d time.Duration) (<-chan time.Time, func()) {
	ch := c.After(d)
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, w := range c.waiters {
			if w.ch == ch {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				return
			}
		}
	}
}

// NewManual starts a clock at t.
func NewManual(t time.Time) *Manual { return &Manual{now: t} }

// Now is the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires when Advance or Set reaches now+d (at once when d <= 0).
func (c *Manual) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: at, ch: ch})
	return ch
}

// Advance moves the clock forward by d, firing due waiters.
func (c *Manual) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards), firing due waiters.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// Waiters is how many After calls and timers are pending: a test can wait
// for a long poll to be parked before advancing the clock.
func (c *Manual) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
