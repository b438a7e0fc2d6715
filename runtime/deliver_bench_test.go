package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
	"github.com/jadpo/jadpo/runtime/store/postgres"
)

// BenchmarkDeliver measures deliveries per second from PostgreSQL (fsync on)
// to a local no-op HTTP target: the runtime's delivery engine (claim, ahead
// of the free workers while handlers are quick; the pack_order handler
// through json_http with bearer; the settlements that finish together
// written in one transaction with the next claim; 8 workers),
// next to a raw pgx loop doing the same claim and settle statements and the
// same HTTP call with 8 goroutines, one settle commit per delivery. One op is one delivery settled
// succeeded; the b.N deliveries are kept before the timer starts.
//
//	go test ./runtime -run '^$' -bench BenchmarkDeliver -benchtime 6000x
func BenchmarkDeliver(b *testing.B) {
	pgtest.Require(b)
	b.Run("runtime", benchDeliverRuntime)
	b.Run("raw_pgx", benchDeliverRaw)
}

// benchDeliverTarget is a no-op HTTP target: it reads the request and
// answers create_job's answer. It counts calls and the connections opened.
func benchDeliverTarget(b *testing.B) (*httptest.Server, *benchDeliverCounts) {
	var n benchDeliverCounts
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"job_id":"j-1","state":"queued"}`)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.conns.Add(1)
		}
	}
	srv.Start()
	b.Cleanup(srv.Close)
	return srv, &n
}

type benchDeliverCounts struct{ calls, conns atomic.Int64 }

// benchDeliverWorld is the example app on a fresh PostgreSQL schema, its
// packing host the no-op target, with b.N due deliveries kept.
func benchDeliverWorld(b *testing.B) (*runtimetest.Env, store.Store, *httptest.Server, *benchDeliverCounts, *runtime.BenchCPU) {
	env := runtimetest.New(b, "postgres", checktest.ExamplePlan(b, "warehouse"))
	cpu, url := runtime.NewBenchCPU(env.StoreURL)
	env.StoreURL = url
	srv, calls := benchDeliverTarget(b)
	for i, kv := range env.Environ {
		if strings.HasPrefix(kv, "PACKING_HOST=") {
			env.Environ[i] = "PACKING_HOST=" + srv.URL
		}
	}
	pgtest.RequireDurable(b, env.StoreURL)
	st := env.Store()
	ns := make([]string, 0, 1000)
	for i := 0; i < b.N; i++ {
		ns = append(ns, fmt.Sprint(i))
		if len(ns) == cap(ns) || i == b.N-1 {
			benchDeliverKeep(b, st, ns)
			ns = ns[:0]
		}
	}
	return env, st, srv, calls, cpu
}

func benchDeliverKeep(b *testing.B, st store.Store, ns []string) {
	keeps := make([]store.Keep, len(ns))
	for i, n := range ns {
		keeps[i] = store.Keep{Source: "queue warehouse_queue", ReceivedID: n, EventName: "OrderShipped",
			EventJSON: orderJSON(n), Subscribers: []string{"pack_order"}}
	}
	if _, err := st.KeepBatch(context.Background(), keeps); err != nil {
		b.Fatal(err)
	}
}

// benchCommits counts the store transactions the engine writes.
type benchCommits struct {
	store.Store
	n atomic.Int64
}

func (c *benchCommits) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]store.Claimed, error) {
	c.n.Add(1)
	return c.Store.ClaimDeliveries(ctx, limit, lease)
}

func (c *benchCommits) SettleDelivery(ctx context.Context, s store.Settlement) (bool, error) {
	c.n.Add(1)
	return c.Store.SettleDelivery(ctx, s)
}

func (c *benchCommits) SettleAndClaim(ctx context.Context, ss []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	c.n.Add(1)
	return c.Store.SettleAndClaim(ctx, ss, limit, lease)
}

func benchDeliverRuntime(b *testing.B) {
	env, raw, _, calls, cpu := benchDeliverWorld(b)
	st := &benchCommits{Store: raw}
	rt := env.Runtime(st, runtime.Options{Logger: slog.New(slog.DiscardHandler), Rand: rand.New(rand.NewPCG(1, 2))})
	ctx := context.Background()
	b.ResetTimer()
	cpu.Start(b)
	done := 0
	for done < b.N {
		rep, err := rt.Deliver(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Succeeded != rep.Claimed {
			b.Fatalf("report %+v", rep)
		}
		done += rep.Succeeded
		if rep.Claimed == 0 {
			b.Fatalf("nothing due after %d of %d", done, b.N)
		}
	}
	b.StopTimer()
	benchDeliverReport(b, calls, cpu)
	// Transactions (claims and settlements) per delivery; the raw loop's is
	// 1.25 (a settle each, a claim per 4).
	b.ReportMetric(float64(st.n.Load())/float64(b.N), "tx/delivery")
}

// The raw loop's statements: the store's claim and settle for PostgreSQL.
var (
	benchRawClaim  = postgres.ClaimSQL()
	benchRawSettle = postgres.SettleSQL()
)

// benchDeliverRaw: 8 goroutines, each claiming 4 deliveries at a time, then
// for each one POST the body create_job sends, with the bearer token, and
// settle it.
func benchDeliverRaw(b *testing.B) {
	env, _, srv, calls, cpu := benchDeliverWorld(b)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, env.StoreURL)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = runtime.Workers
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	url := srv.URL + "/accounts/warehouse-1/jobs"
	auth := "Bearer " + runtimetest.Canary + "-token"
	var settled atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, runtime.Workers)
	b.ResetTimer()
	cpu.Start(b)
	for range runtime.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The clock parameter NULL: the database's now(), as the store runs it.
				rows, err := pool.Query(ctx, benchRawClaim, nil, runtime.Lease.Microseconds(), runtime.Workers/2)
				if err != nil {
					errs <- err
					return
				}
				type claimed struct {
					id, token int64
					orderJSON string
				}
				var cs []claimed
				var c claimed
				var attempts int
				var maxAttempts *int32
				var lease time.Time
				var sub, source, received, event string
				var outbox int64
				_, err = pgx.ForEachRow(rows, []any{&c.id, &c.token, &attempts, &maxAttempts, &lease, &sub, &outbox, &source, &received, &event, &c.orderJSON},
					func() error { cs = append(cs, c); return nil })
				if err != nil {
					errs <- err
					return
				}
				if len(cs) == 0 {
					return
				}
				for _, c := range cs {
					body := benchRawBody(c.orderJSON)
					req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", auth)
					resp, err := hc.Do(req)
					if err != nil {
						errs <- err
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- fmt.Errorf("status %d", resp.StatusCode)
						return
					}
					if _, err := pool.Exec(ctx, benchRawSettle, c.id, c.token, "succeeded", nil, nil, nil, nil); err != nil {
						errs <- err
						return
					}
					settled.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	if n := settled.Load(); n != int64(b.N) {
		b.Fatalf("settled %d of %d", n, b.N)
	}
	benchDeliverReport(b, calls, cpu)
}

// benchRawBody is the body pack_order's create_job sends for an event.
func benchRawBody(eventJSON string) []byte {
	i := strings.Index(eventJSON, `"order_id":"`) + len(`"order_id":"`)
	order := eventJSON[i : i+strings.IndexByte(eventJSON[i:], '"')]
	return fmt.Appendf(nil, `{"order_id":%q,"carrier":"dhl","priority":2,"label":{"reference":%q,"account":"warehouse-1"},"tags":["shipped","warehouse"],"payload":%q}`,
		order, order, eventJSON)
}

// benchDeliverReport checks the target's calls and reports the rate, the
// connections opened and the CPU per delivery (µs) of the test process and
// of the PostgreSQL backends.
func benchDeliverReport(b *testing.B, n *benchDeliverCounts, cpu *runtime.BenchCPU) {
	if c := n.calls.Load(); c != int64(b.N) {
		b.Fatalf("the target saw %d calls for %d deliveries", c, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(n.conns.Load()), "conns")
	cpu.Stop(b, "us/op", 1000)
}
