package runtime_test

import (
	"sync"
	"time"
)

// testClock is a clock a test sets and moves; its zero value reads as the
// moment it is first asked.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

// newTestClock is a clock at t.
func newTestClock(t time.Time) *testClock { return &testClock{now: t} }

// Now reads the clock.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = time.Now()
	}
	return c.now
}

// Advance moves the clock on by d.
func (c *testClock) Advance(d time.Duration) {
	c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
