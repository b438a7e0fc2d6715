package runtime

// BenchmarkReceive is in the runtime package itself (not runtime_test) so
// that it can run the receiving step of a tick alone, without the
// deliveries and housekeeping that follow it; so it builds its own world
// (runtimetest imports this package).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
	_ "github.com/jadpo/jadpo/runtime/store/postgres"
)

// benchRun makes the ids of each benchmark run distinct.
var benchRun atomic.Int64

const benchSecret = "bench-s3cr3t"

// benchBody is an OrderShipped message of the warehouse example: one
// subscriber, so keeping it writes a received id, an outbox row and one
// delivery.
func benchBody(id string) string {
	return fmt.Sprintf(`{"id":%q,"type":"order_shipped","order_id":"o-%s","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":2}]}`, id, id)
}

// BenchmarkReceive measures messages per second from the SQS fake (over
// loopback HTTP, each request's SigV4 signature checked) into PostgreSQL
// (fsync on): the runtime's receiving step of a tick (ReceiveMessage,
// reading, KeepBatch, one DeleteMessageBatch), next to raw pgx loops
// writing the same rows in the same transaction shape, one transaction per
// batch of 10 messages. One op is a batch of 10 messages.
func BenchmarkReceive(b *testing.B) {
	pgtest.Require(b)
	b.Run("runtime", benchReceiveRuntime)
	b.Run("raw_pgx", func(b *testing.B) { benchReceiveRaw(b, false) })
	b.Run("raw_pgx_pipelined", func(b *testing.B) { benchReceiveRaw(b, true) })
}

func benchReceiveRuntime(b *testing.B) {
	ctx := context.Background()
	plan := checktest.ExamplePlan(b, "warehouse")
	fake := sqsfake.New(sqsfake.Options{Credentials: map[string]string{"AKIDBENCH": benchSecret}})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	var urls []string
	for _, q := range []string{"warehouse", "returns"} {
		u, err := fake.CreateQueue(q, nil)
		if err != nil {
			b.Fatal(err)
		}
		urls = append(urls, u)
	}
	cfg, err := LoadConfig(plan, []string{
		"AWS_ACCESS_KEY_ID=AKIDBENCH", "AWS_SECRET_ACCESS_KEY=" + benchSecret, "SQS_HOST=" + srv.URL,
		"WAREHOUSE_QUEUE_URL=" + urls[0], "RETURNS_QUEUE_URL=" + urls[1],
		"PACKING_TOKEN=t", "PACKING_HOST=" + target.URL,
	}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	cpu, url := NewBenchCPU(pgtest.FreshURL(b))
	timed := benchDurableStoreAt(b, url)
	// The runtime's own client, its transport timed.
	hc := defaultHTTPClient()
	calls := &benchTimedTransport{next: hc.Transport}
	hc.Transport = calls
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg, HTTP: hc})
	if err != nil {
		b.Fatal(err)
	}
	run := benchRun.Add(1)
	want := b.N * 10
	benchReceiveLoop(ctx, b, r, want, cpu, func(i int) error {
		_, err := fake.SendMessage("warehouse", benchBody(fmt.Sprintf("r%d-%d", run, i)))
		return err
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	cpu.Stop(b, "ms/op", 1)
	// Where a batch's time goes: the store's KeepBatch, and the calls to the
	// queue (they may overlap).
	b.ReportMetric(float64(timed.keep.Load())/1e6/float64(b.N), "keep-ms/op")
	b.ReportMetric(float64(calls.receive.Load())/1e6/float64(b.N), "receive-ms/op")
	b.ReportMetric(float64(calls.delete.Load())/1e6/float64(b.N), "ack-ms/op")
	// What SQS bills: requests per batch of 10 (the receive and its
	// acknowledgement; each round's one empty ask of the returns queue adds
	// about 0.1).
	b.ReportMetric(float64(calls.requests.Load())/float64(b.N), "requests/batch")
}

// benchReceiveLoop runs the receiving step of ticks until want messages
// are kept, with the timer on only while it runs. Sending is not the
// runtime's work: send(i) tops the queue up outside the timer, to at most
// 200 messages (twice what a tick asks for).
func benchReceiveLoop(ctx context.Context, b *testing.B, r *Runtime, want int, cpu *BenchCPU, send func(i int) error) {
	sent := 0
	topUp := func(acked int) {
		for ; sent < want && sent-acked < 200; sent++ {
			if err := send(sent); err != nil {
				b.Fatal(err)
			}
		}
	}
	var rep TickReport
	topUp(0)
	b.ResetTimer()
	cpu.Start(b)
	for rep.Kept < want {
		before := rep.Kept
		// The receiving step of a tick: each queue, within the budget.
		deadline := time.Now().Add(r.budget)
		for _, q := range r.queues {
			if err := q.receive(ctx, deadline, &rep); err != nil {
				b.Fatal(err)
			}
		}
		if rep.Kept == before {
			b.Fatalf("a round kept nothing: %+v", rep)
		}
		b.StopTimer()
		topUp(rep.Acked)
		b.StartTimer()
	}
	b.StopTimer()
	if rep.Kept != want || rep.Acked != want || rep.Left != 0 {
		b.Fatalf("kept %d, acknowledged %d, left %d of %d", rep.Kept, rep.Acked, rep.Left, want)
	}
}

// benchDurableStore opens and migrates a store on a fresh PostgreSQL schema,
// refusing a server without fsync, and times its KeepBatch calls. It is
// closed when the benchmark ends.
func benchDurableStore(b *testing.B) *benchTimedStore {
	return benchDurableStoreAt(b, pgtest.FreshURL(b))
}

// benchDurableStoreAt is benchDurableStore on the schema of url.
func benchDurableStoreAt(b *testing.B, url string) *benchTimedStore {
	pgtest.RequireDurable(b, url)
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return &benchTimedStore{Store: st}
}

// benchTimedStore adds up the time spent in KeepBatch.
type benchTimedStore struct {
	store.Store
	keep atomic.Int64
}

func (s *benchTimedStore) KeepBatch(ctx context.Context, keeps []store.Keep) ([]store.KeepResult, error) {
	start := time.Now()
	defer func() { s.keep.Add(int64(time.Since(start))) }()
	return s.Store.KeepBatch(ctx, keeps)
}

// benchTimedTransport adds up the time spent in ReceiveMessage and
// DeleteMessage(Batch) calls, and counts the requests.
type benchTimedTransport struct {
	next            http.RoundTripper
	receive, delete atomic.Int64
	requests        atomic.Int64
}

func (t *benchTimedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	t.requests.Add(1)
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		// The answer is read by the caller; count the time to its headers.
		switch r.Header.Get("X-Amz-Target") {
		case "AmazonSQS.ReceiveMessage":
			t.receive.Add(int64(time.Since(start)))
		case "AmazonSQS.DeleteMessage", "AmazonSQS.DeleteMessageBatch":
			t.delete.Add(int64(time.Since(start)))
		}
	}
	return resp, err
}

// benchReceiveRaw writes, per batch of 10 messages in one READ COMMITTED
// transaction, what keeping them writes: the received id (ON CONFLICT DO
// NOTHING), the outbox row and one delivery. Plain: a round trip per
// statement; pipelined: the whole transaction in one round trip.
func benchReceiveRaw(b *testing.B, pipelined bool) {
	ctx := context.Background()
	cpu, url := NewBenchCPU(pgtest.FreshURL(b))
	pool := rawPool(b, url)
	const (
		insReceived = `INSERT INTO jadpo_received_events (source, received_id, received_at)
VALUES ($1, $2, $3) ON CONFLICT (source, received_id) DO NOTHING`
		insOutbox = `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at)
VALUES ($1, $2, $3, $4, $5) RETURNING id`
		insDelivery = `INSERT INTO jadpo_deliveries
    (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
VALUES ($1, $2, 'pending', 0, $3, 0, $3, $3)`
		// The pipelined form: one statement a message, the outbox row and
		// the delivery written only when the id was not recorded before.
		insAll = `WITH r AS (
    INSERT INTO jadpo_received_events (source, received_id, received_at)
    VALUES ($1, $4, $5) ON CONFLICT (source, received_id) DO NOTHING RETURNING 1
), o AS (
    INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at)
    SELECT $1, $2, $3, $4, $5 FROM r RETURNING id
)
INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
SELECT o.id, $6, 'pending', 0, $5, 0, $5, $5 FROM o`
	)
	const source = "queue warehouse_queue"
	run := benchRun.Add(1)
	now := time.Now().UTC().Truncate(time.Microsecond)
	b.ResetTimer()
	cpu.Start(b)
	for i := 0; i < b.N; i++ {
		err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
			if pipelined {
				batch := &pgx.Batch{}
				for j := range 10 {
					id := fmt.Sprintf("r%d-%d-%d", run, i, j)
					batch.Queue(insAll, source, "OrderShipped", benchBody(id), id, now, "pack_order")
				}
				return tx.SendBatch(ctx, batch).Close()
			}
			for j := range 10 {
				id := fmt.Sprintf("r%d-%d-%d", run, i, j)
				tag, err := tx.Exec(ctx, insReceived, source, id, now)
				if err != nil {
					return err
				}
				if tag.RowsAffected() == 0 {
					continue
				}
				var outbox int64
				if err := tx.QueryRow(ctx, insOutbox, source, "OrderShipped", benchBody(id), id, now).Scan(&outbox); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, insDelivery, outbox, "pack_order", now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "msgs/s")
	cpu.Stop(b, "ms/op", 1)
}
