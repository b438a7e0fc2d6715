package workload

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// Flow sends part of a workload to the fake from a goroutine of its own,
// spread over a while, as messages arrive on a real queue.
type Flow struct {
	sent atomic.Int64
	done chan struct{}
	stop chan struct{}
}

// Flow sends messages [from, to) of w to the SQS fake in steps of ten,
// message i at start + over*(i-from)/(to-from). It stops when the test ends.
func (w *Workload) Flow(e *runtimetest.Env, from, to int, over time.Duration) *Flow {
	return StartFlow(e.T, from, to, over, func(i, j int) error {
		for _, m := range w.Msgs[i:j] {
			if _, err := e.Fake.SendMessage(m.Queue, m.Body); err != nil {
				return fmt.Errorf("sending to the fake: %w", err)
			}
		}
		return nil
	})
}

// StartFlow calls send(i, j) from a goroutine of its own for [from, to) in
// steps of ten, step i at start + over*(i-from)/(to-from): messages arriving
// on a queue (or rows in an inbox) while a test runs. A send error fails the
// test and ends the flow. It stops when the test ends.
func StartFlow(t testing.TB, from, to int, over time.Duration, send func(i, j int) error) *Flow {
	f := &Flow{done: make(chan struct{}), stop: make(chan struct{})}
	f.sent.Store(int64(from))
	t.Cleanup(func() {
		select {
		case <-f.stop:
		default:
			close(f.stop)
		}
		<-f.done
	})
	go func() {
		defer close(f.done)
		start := time.Now()
		for i := from; i < to; i += 10 {
			at := start.Add(over * time.Duration(i-from) / time.Duration(max(1, to-from)))
			select {
			case <-f.stop:
				return
			case <-time.After(time.Until(at)):
			}
			j := min(i+10, to)
			if err := send(i, j); err != nil {
				t.Error(err)
				return
			}
			f.sent.Store(int64(j))
		}
	}()
	return f
}

// Sent is the index after the last message sent.
func (f *Flow) Sent() int { return int(f.sent.Load()) }

// Finished reports whether every message of the flow was sent.
func (f *Flow) Finished() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// Wait waits until every message of the flow was sent.
func (f *Flow) Wait() { <-f.done }
