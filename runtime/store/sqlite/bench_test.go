package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
)

// BenchmarkKeepBatch keeps batches of 10 messages (2 subscribers each), as the PostgreSQL
// adapter's benchmark of the same name does.
func BenchmarkKeepBatch(b *testing.B) {
	s, err := newStoreForBench(b)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		keeps := make([]store.Keep, 10)
		for j := range keeps {
			id := fmt.Sprintf("m%d-%d", i, j)
			keeps[j] = store.Keep{Source: "queue warehouse_queue", ReceivedID: id, EventName: "OrderShipped",
				EventJSON:   []byte(`{"order_id":"` + id + `","carrier":"dhl","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}]}`),
				Subscribers: []string{"pack_order", "notify_customer"}}
		}
		if _, err := s.KeepBatch(ctx, keeps); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10), "ns/message")
}

func newStoreForBench(b *testing.B) (store.Store, error) {
	d := &database{path: b.TempDir() + "/jadpo.db"}
	s, err := store.Open(context.Background(), "sqlite:"+d.path)
	if err != nil {
		return nil, err
	}
	b.Cleanup(func() { s.Close() })
	return s, s.Migrate(context.Background())
}
