package cfqueuesfake

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

// BenchmarkPullAck is one consumer's batch against a queue holding `waiting`
// messages, half of them in flight for the whole run (so they sit first in
// send order): a pull of 10, an ack of the 10, and 10 new messages so the
// queue stays as long. It calls the operations behind ServeHTTP (no HTTP)
// to measure the fake's own bookkeeping, which must not grow with the
// queue's length nor with how many messages are in flight.
func BenchmarkPullAck(b *testing.B) {
	for _, waiting := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			clock := testclock.NewManual(start)
			f := New(Options{Clock: clock})
			if err := f.CreateQueue(acct, "q", QueueOptions{}); err != nil {
				b.Fatal(err)
			}
			key := queueKey{acct, "q"}
			for range waiting {
				f.Send(acct, "q", `{"id":"m","type":"order_shipped"}`)
			}
			// Half in flight for 12 h.
			for range waiting / 2 / 100 {
				if _, e := f.servePull(key, []byte(`{"batch_size":100,"visibility_timeout_ms":43200000}`)); e != nil {
					b.Fatal(e)
				}
			}
			pull := []byte(`{"batch_size":10}`)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, e := f.servePull(key, pull)
				if e != nil {
					b.Fatal(e)
				}
				got := res.(pullResult).Messages
				if len(got) != 10 {
					b.Fatalf("pulled %d, want 10", len(got))
				}
				acks := make([]map[string]string, len(got))
				for i, m := range got {
					acks[i] = map[string]string{"lease_id": m.LeaseID}
				}
				body, _ := json.Marshal(map[string]any{"acks": acks})
				res, e = f.serveAck(key, body)
				if e != nil || res.(ackResult).AckCount != 10 {
					b.Fatalf("ack: %v %v", res, e)
				}
				for range got {
					f.Send(acct, "q", `{"id":"m","type":"order_shipped"}`)
				}
				clock.Advance(time.Millisecond)
			}
		})
	}
}
