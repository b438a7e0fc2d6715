package visibility

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// BenchmarkReceiveDelete is one consumer's batch against a queue of each
// order holding `waiting` messages, half of them in flight for the whole
// run (they sit first in the order added): a delivery of 10, a delete of
// each, and 10 added so the queue stays as long. EarliestVisible's batch
// does not grow with the queue's length nor with how many are in flight;
// SendOrder's scan passes over the messages in flight at the front, so its
// batch grows with their number (about 6 ms at 50,000 on this machine,
// against 0.1 ms for EarliestVisible): the price of its order, paid only by
// a queue whose front is held for long (the fakes' own benchmarks,
// sqsfake's BenchmarkReceiveDelete and cfqueuesfake's BenchmarkPullAck,
// measure their batches with their wire around them).
func BenchmarkReceiveDelete(b *testing.B) {
	for _, order := range []Order{SendOrder, EarliestVisible} {
		for _, waiting := range []int{100, 10_000, 100_000} {
			b.Run(fmt.Sprintf("order=%d/waiting=%d", order, waiting), func(b *testing.B) {
				q := New[*msg](order)
				now := t0
				n := 0
				next := func() string { n++; return strconv.Itoa(n) }
				for range waiting {
					add(q, next(), now)
				}
				h := func(m *msg) string { return m.ID }
				q.Receive(now, waiting/2, 12*time.Hour, nil, h) // half in flight
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					got, _ := q.Receive(now, 10, 30*time.Second, nil, h)
					if len(got) != 10 {
						b.Fatalf("received %d, want 10", len(got))
					}
					for _, m := range got {
						q.Delete(m)
						add(q, next(), now)
					}
					now = now.Add(time.Millisecond)
				}
			})
		}
	}
}
