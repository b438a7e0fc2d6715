package runtime

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// BenchmarkReceiveCloudflare is BenchmarkReceive's runtime case for the
// cloudflare_queues driver: examples/returns pulling from the Cloudflare
// Queues fake over loopback HTTP (bearer token checked) into PostgreSQL
// with fsync on. A batch is two requests (one pull, one ack for all ten)
// where SQS's mapping takes eleven. The returns app has no subscriber, so a
// kept message writes a received id and an outbox row, and no delivery.
// One op is a batch of 10 messages.
func BenchmarkReceiveCloudflare(b *testing.B) {
	pgtest.Require(b)
	ctx := context.Background()
	plan := checktest.ExamplePlan(b, "returns")
	cf := cfqueuesfake.New(cfqueuesfake.Options{Tokens: []string{benchSecret}})
	srv := httptest.NewServer(cf)
	defer srv.Close()
	if err := cf.CreateQueue("acc", "returns", cfqueuesfake.QueueOptions{}); err != nil {
		b.Fatal(err)
	}
	cfg, err := LoadConfig(plan, []string{
		"CF_HOST=" + srv.URL, "CF_API_TOKEN=" + benchSecret, "CF_ACCOUNT_ID=acc", "CF_RETURNS_QUEUE_ID=returns", "REFUNDS_TOKEN=" + benchSecret,
	}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	timed := benchDurableStore(b)
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg, HTTP: defaultHTTPClient()})
	if err != nil {
		b.Fatal(err)
	}
	run := benchRun.Add(1)
	want := b.N * 10
	benchReceiveLoop(ctx, b, r, want, nil, func(i int) error {
		body := fmt.Sprintf(`{"return_id":"c%d-%d","type":"return_requested","order_id":"o-%d","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`, run, i, i)
		_, err := cf.Send("acc", "returns", body)
		return err
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(timed.keep.Load())/1e6/float64(b.N), "keep-ms/op")
	b.ReportMetric(float64(cf.Calls("pull")+cf.Calls("ack"))/float64(b.N), "requests/op")
}
