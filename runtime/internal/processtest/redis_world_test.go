package processtest

// The Redis Streams counterparts of the SQL inbox world: a copy of
// examples/streams whose stream is a key of its own on the machine's real
// Redis (ORDERS_REDIS_URL, a group of its own, claim_idle 1s so a killed
// run's entries come back soon), its events' store a fresh PostgreSQL
// schema; `jadpo run` of that copy as a child process; a seeded workload
// of entries added by a client of the test's own (XADD) over a while; and
// the checks that each entry was kept, or parked, exactly once, and that the
// group holds nothing at the end.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// StreamsSource is where the store records the entries of examples/streams' queue.
const StreamsSource = "queue orders_stream"

// RedisEnv is one test's Redis Streams world.
type RedisEnv struct {
	T        testing.TB
	AppDir   string
	Plan     *ir.Program
	URL      string // the Redis the test's client uses
	Stream   string // the stream's key, the test's own
	Group    string
	StoreURL string
	// RunURL is ORDERS_REDIS_URL, the run's (URL, or a proxy's).
	RunURL string
	Client *redis.Client
}

// NewRedis builds the streams example's world on the machine's Redis (the
// test skips when it is down, unless JADPO_REQUIRE_BROKERS=1); the stream
// is deleted when the test ends.
func NewRedis(t testing.TB) *RedisEnv {
	t.Helper()
	url := brokertest.Redis.Require(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	e := &RedisEnv{T: t, URL: url, RunURL: url, Stream: "jadpo-test:processtest:" + hex.EncodeToString(b[:]), Group: "jadpo-" + hex.EncodeToString(b[:3])}
	e.AppDir = checktest.CopyExample(t, "streams", filepath.Join(t.TempDir(), "streams"),
		checktest.Edit{File: "app.jadpo", Old: `stream: "orders"`, New: `stream: "` + e.Stream + `"`},
		checktest.Edit{File: "app.jadpo", Old: `group: "jadpo"`, New: `group: "` + e.Group + `"`},
		// A killed run's entries come back after a second; a run never parks
		// an entry for its deliveries (the kills would push some over).
		checktest.Edit{File: "app.jadpo", Old: `claim_idle: 1m`, New: `claim_idle: 1s`},
		checktest.Edit{File: "app.jadpo", Old: `max_deliveries: 5`, New: `max_deliveries: 0`})
	e.Plan = checktest.PlanDir(t, e.AppDir)
	e.StoreURL = pgtest.FreshURL(t)
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.Protocol, o.DisableIdentity = 2, true
	e.Client = redis.NewClient(o)
	ctx := context.Background()
	// The group exists before the first run (create_group makes it too):
	// entries added before a run starts are the group's.
	if err := e.Client.XGroupCreateMkStream(ctx, e.Stream, e.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Client.Del(context.Background(), e.Stream)
		e.Client.Close()
	})
	return e
}

// StartRun starts `bin run <AppDir> --database <StoreURL> --log-format
// json` and extra args, ORDERS_REDIS_URL=RunURL in its environment.
func (e *RedisEnv) StartRun(bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", e.AppDir, "--database", e.StoreURL, "--log-format", "json"}, extra...)
	env := []string{"ORDERS_REDIS_URL=" + e.RunURL}
	return startProc(e.T, bin, args, runtimetest.ChildEnviron(env), logPath)
}

// Held is what the group still holds: entries pending to a consumer, and
// entries not yet delivered to it (its lag).
func (e *RedisEnv) Held() (pending, lag int) {
	e.T.Helper()
	groups, err := e.Client.XInfoGroups(context.Background(), e.Stream).Result()
	if err != nil {
		e.T.Fatal(err)
	}
	for _, g := range groups {
		if g.Name == e.Group {
			return int(g.Pending), int(g.Lag)
		}
	}
	e.T.Fatalf("the group %s is gone", e.Group)
	return 0, 0
}

// Drained: nothing pending, nothing undelivered.
func (e *RedisEnv) Drained() bool {
	p, l := e.Held()
	return p == 0 && l == 0
}

// StreamOrder is one entry of a streams workload and what the store must hold for it.
type StreamOrder struct {
	ID   string // the body's id
	Body string
	// Event is the event it is kept as; "" for one to park.
	Event string
	// Park is the reason it must be parked for; "" for one to keep.
	Park string
}

// OrdersWorkload is a seeded mix of entries for examples/streams.
type OrdersWorkload struct {
	Orders []StreamOrder
	mu     sync.Mutex
	added  int
}

// NewOrdersWorkload makes n entries from seed: about 2% of an unlisted type
// (parked unlisted_type), about 1% with an email that is not one and about
// 1% whose body is not valid UTF-8 (both parked unreadable), the rest
// order_placed (about 70%) and order_cancelled entries.
func NewOrdersWorkload(seed uint64, n int) *OrdersWorkload {
	rng := mrand.New(mrand.NewPCG(seed, seed^0x726564697373))
	w := &OrdersWorkload{Orders: make([]StreamOrder, 0, n)}
	for i := range n {
		id := fmt.Sprintf("o-%05d-%x", i, rng.Uint32())
		o := StreamOrder{ID: id}
		placed := fmt.Sprintf(`{"id":"%s","type":"order_placed","order_id":"%s","customer_email":"c%d@example.com","total_cents":%d}`, id, id, i, rng.IntN(100000))
		switch r := rng.IntN(100); {
		case r < 2:
			o.Body, o.Park = fmt.Sprintf(`{"id":"%s","type":"order_refunded","order_id":"%s"}`, id, id), "unlisted_type"
		case r < 3:
			o.Body, o.Park = strings.Replace(placed, "@example.com", " at example.com", 1), "unreadable"
		case r < 4:
			o.Body, o.Park = "\xff\xfe"+placed, "unreadable"
		case r < 74:
			o.Body, o.Event = placed, "OrderPlaced"
		default:
			o.Body, o.Event = fmt.Sprintf(`{"id":"%s","type":"order_cancelled","order_id":"%s","reason":"r\u00e9ason %d"}`, id, id, i), "OrderCancelled"
		}
		w.Orders = append(w.Orders, o)
	}
	return w
}

// Count says how many entries must be kept and parked (by reason).
func (w *OrdersWorkload) Count() (kept int, parked map[string]int) {
	parked = map[string]int{}
	for _, o := range w.Orders {
		if o.Park != "" {
			parked[o.Park]++
		} else {
			kept++
		}
	}
	return kept, parked
}

// Add adds entries [from, to) to the stream, in one pipeline.
func (w *OrdersWorkload) Add(e *RedisEnv, from, to int) {
	e.T.Helper()
	if err := w.add(e, from, to); err != nil {
		e.T.Fatal(err)
	}
}

func (w *OrdersWorkload) add(e *RedisEnv, from, to int) error {
	ctx := context.Background()
	_, err := e.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := from; i < to; i++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: e.Stream, Values: []any{"body", w.Orders[i].Body}})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("adding entries %d-%d: %w", from, to, err)
	}
	return nil
}

// AddFlow adds entries [from, to) from a goroutine of its own over a while.
func (w *OrdersWorkload) AddFlow(e *RedisEnv, from, to int, over time.Duration) *workload.Flow {
	return workload.StartFlow(e.T, from, to, over, func(i, j int) error { return w.add(e, i, j) })
}

// RedisCounts is what VerifyRedis found.
// VerifyRedis holds the store to each entry of w exactly once
// (VerifyKeptOnce), their bodies byte for byte the entries', and the group
// to holding nothing: no entry pending, none undelivered.
func VerifyRedis(t testing.TB, e *RedisEnv, w *OrdersWorkload, subs map[string][]string) StoreCounts {
	t.Helper()
	want := make([]Expected, 0, len(w.Orders))
	for _, o := range w.Orders {
		want = append(want, Expected{ID: o.ID, Body: []byte(o.Body), Event: o.Event, Park: o.Park})
	}
	return VerifyKeptOnce(t, e.StoreURL, StreamsSource, "id", want, subs, func(fail func(string, ...any)) {
		if pending, lag := e.Held(); pending != 0 || lag != 0 {
			fail("the group still holds %d entries pending and %d undelivered", pending, lag)
		}
	})
}
