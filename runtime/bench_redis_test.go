package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// BenchmarkReceiveRedisStreams is BenchmarkReceive for the redis_streams
// driver against the machine's Redis: runtime is the receiving step of
// ticks of examples/streams (a stream and group of its own) keeping into
// PostgreSQL with fsync on; raw is a loop of the same client (go-redis)
// doing what a hand-written consumer would: XREADGROUP of 10, one READ
// COMMITTED transaction writing each entry's received id (ON CONFLICT DO
// NOTHING) and outbox row with pgx, then one XACK. The stream is topped up
// to 200 entries outside the timer. One op is a batch of 10; redis-rt/op
// is the round trips to Redis (commands written) a batch.
func BenchmarkReceiveRedisStreams(b *testing.B) {
	pgtest.Require(b)
	url := brokertest.Redis.Require(b)
	b.Run("runtime", func(b *testing.B) { benchRedisRuntime(b, url) })
	b.Run("raw", func(b *testing.B) { benchRedisRaw(b, url) })
}

// benchStream makes a stream and group of the benchmark's own (deleted
// when it ends) and a client adding to it.
func benchStream(b *testing.B, url string) (c *redis.Client, key, group string) {
	var r [6]byte
	_, _ = rand.Read(r[:])
	key, group = "jadpo-bench:"+hex.EncodeToString(r[:]), "jadpo"
	o, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	o.Protocol, o.DisableIdentity = 2, true
	c = redis.NewClient(o)
	ctx := context.Background()
	if err := c.XGroupCreateMkStream(ctx, key, group, "0").Err(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Del(context.Background(), key)
		c.Close()
	})
	return c, key, group
}

func benchStreamOrder(run int64, i int) string {
	id := fmt.Sprintf("r%d-%d", run, i)
	return `{"id":"` + id + `","type":"order_placed","order_id":"` + id + `","customer_email":"ada@example.com","total_cents":1200}`
}

func benchRedisRuntime(b *testing.B, url string) {
	ctx := context.Background()
	client, key, group := benchStream(b, url)
	plan := checktest.ExamplePlan(b, "streams",
		checktest.Edit{File: "app.jadpo", Old: `stream: "orders"`, New: `stream: "` + key + `"`},
		checktest.Edit{File: "app.jadpo", Old: `group: "jadpo"`, New: `group: "` + group + `"`})
	cfg, err := LoadConfig(plan, []string{"ORDERS_REDIS_URL=" + url}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	timed := benchDurableStore(b)
	var writes atomic.Int64 // one a command (go-redis writes each, or a script's call, at once)
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg, Dial: countingDial(&writes)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	run := benchRun.Add(1)
	want := b.N * 10
	before := writes.Load()
	benchReceiveLoop(ctx, b, r, want, nil, func(i int) error {
		return client.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"body", benchStreamOrder(run, i)}}).Err()
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(timed.keep.Load())/1e6/float64(b.N), "keep-ms/op")
	b.ReportMetric(float64(writes.Load()-before)/float64(b.N), "redis-rt/op")
}

func benchRedisRaw(b *testing.B, url string) {
	ctx := context.Background()
	client, key, group := benchStream(b, url)
	pool := rawPool(b, pgtest.FreshURL(b))
	o, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	var writes atomic.Int64
	o.Protocol, o.DisableIdentity, o.Dialer = 2, true, countingDial(&writes)
	consumer := redis.NewClient(o)
	defer consumer.Close()
	const source = "queue orders_stream"
	run := benchRun.Add(1)
	want := b.N * 10
	sent, acked := 0, 0
	topUp := func() {
		for ; sent < want && sent-acked < 200; sent++ {
			if err := client.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"body", benchStreamOrder(run, sent)}}).Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	topUp()
	before := writes.Load()
	b.ResetTimer()
	for acked < want {
		streams, err := consumer.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "raw", Streams: []string{key, ">"}, Count: 10, Block: -1}).Result()
		if err != nil {
			b.Fatal(err)
		}
		msgs := streams[0].Messages
		now := time.Now().UTC()
		kept := make([]rawKept, len(msgs))
		for j, m := range msgs {
			body, _ := m.Values["body"].(string)
			// The raw loop reads no body: the entry id stands for the body's.
			kept[j] = rawKept{ID: m.ID, EventJSON: body}
		}
		if err := rawKeep(ctx, pool, source, "OrderPlaced", kept, now); err != nil {
			b.Fatal(err)
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
		}
		if err := consumer.XAck(ctx, key, group, ids...).Err(); err != nil {
			b.Fatal(err)
		}
		acked += len(msgs)
		b.StopTimer()
		topUp()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(writes.Load()-before)/float64(b.N), "redis-rt/op")
}
