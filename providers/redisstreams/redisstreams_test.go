package redisstreams_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/redisstreams"
)

// logBuffer is a log a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func options(t *testing.T) (queue.Options, *logBuffer) {
	lb := &logBuffer{}
	return queue.Options{Queue: "orders", Log: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxBatch: 10, InFlight: 4}, lb
}

func receive(t *testing.T, src queue.Source) *queue.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := src.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return b
}

func ack(t *testing.T, src queue.Source, b *queue.Batch) queue.Acks {
	t.Helper()
	for i := range b.Messages {
		b.Messages[i].Settled = true
	}
	return src.Acknowledge(context.Background(), b)
}

// A body that is not valid UTF-8, and one with NUL and CR LF, arrive byte
// for byte; the entry's id is the message's WireID and Handle.
func TestBodyKeepsItsBytes(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, _ := options(t)
	src := st.open(t, opts, nil)
	t.Cleanup(src.Close)
	bodies := []string{"\xff\xfe{\"id\":\"a\"}\x80", "{\"id\":\"b\"}\x00\r\n", ""}
	var ids []string
	for _, b := range bodies {
		ids = append(ids, st.send(t, "body", b, "other", "x"))
	}
	b := receive(t, src)
	if len(b.Messages) != len(bodies) {
		t.Fatalf("received %d, want %d", len(b.Messages), len(bodies))
	}
	for i, m := range b.Messages {
		if m.Body != bodies[i] || m.WireID != ids[i] || m.Handle != ids[i] || len(m.Unfit) > 0 {
			t.Errorf("entry %d: body %q id %q handle %q unfit %v; want body %q id %q", i, m.Body, m.WireID, m.Handle, m.Unfit, bodies[i], ids[i])
		}
	}
	ack(t, src, b)
}

// The field setting names the body's field; an entry without it, or with
// it twice, is unfit by that field, its body its fields as JSON (the
// parked copy), and logged.
func TestBodyField(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, lb := options(t)
	src := st.open(t, opts, map[string]any{"field": "payload"})
	t.Cleanup(src.Close)
	st.send(t, "payload", `{"id":"1"}`)
	st.send(t, "body", `{"id":"2"}`, "kind", "x")
	st.send(t, "payload", `{"id":"3"}`, "payload", `{"id":"4"}`)
	b := receive(t, src)
	if len(b.Messages) != 3 {
		t.Fatalf("received %d", len(b.Messages))
	}
	if m := b.Messages[0]; m.Body != `{"id":"1"}` || len(m.Unfit) != 0 {
		t.Errorf("the payload field: %+v", m)
	}
	if m := b.Messages[1]; m.Body != `{"body":"{\"id\":\"2\"}","kind":"x"}` || fmt.Sprint(m.Unfit) != "[payload]" {
		t.Errorf("an entry without the field: body %q unfit %v", m.Body, m.Unfit)
	}
	if m := b.Messages[2]; fmt.Sprint(m.Unfit) != "[payload]" {
		t.Errorf("an entry with the field twice: body %q unfit %v", m.Body, m.Unfit)
	}
	for _, want := range []string{"an entry has no body field; it is parked", "an entry has its body field more than once"} {
		if !strings.Contains(lb.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, lb)
		}
	}
	ack(t, src, b)
}

// An entry left pending comes back after claim_idle with its delivery
// count; once that exceeds max_deliveries it is over the delivery limit
// (the runtime parks it once, counts it apart, and it is acknowledged),
// and logged. On the machine's Redis and on miniredis, dev's stand-in.
func TestMaxDeliveries(t *testing.T) {
	for name, srv := range map[string]func(*testing.T) server{"redis": realRedis, "miniredis": miniRedis} {
		t.Run(name, func(t *testing.T) { testMaxDeliveries(t, srv(t)) })
	}
}

func testMaxDeliveries(t *testing.T, srv server) {
	st := newStream(t, srv)
	opts, lb := options(t)
	src := st.open(t, opts, map[string]any{"max_deliveries": int64(2)})
	t.Cleanup(src.Close)
	st.send(t, "body", `{"id":"poison"}`)
	for delivery := 1; delivery <= 3; delivery++ {
		b := receive(t, src)
		if len(b.Messages) != 1 {
			t.Fatalf("delivery %d: received %d", delivery, len(b.Messages))
		}
		m := b.Messages[0]
		if delivery <= 2 && (len(m.Unfit) != 0 || m.OverDeliveryLimit) {
			t.Fatalf("delivery %d of max 2 is parked: %+v", delivery, m)
		}
		if delivery == 3 {
			// The body is fine: only the count parks it, so it is not unfit.
			if !m.OverDeliveryLimit || len(m.Unfit) != 0 || m.Body != `{"id":"poison"}` {
				t.Fatalf("delivery 3 of max 2: over the limit %v unfit %v body %q", m.OverDeliveryLimit, m.Unfit, m.Body)
			}
			if !strings.Contains(lb.String(), "an entry was delivered more than max_deliveries times; it is parked") ||
				!strings.Contains(lb.String(), "deliveries=3") {
				t.Fatalf("the log does not count it:\n%s", lb)
			}
			if a := ack(t, src, b); a.Acknowledged != 1 {
				t.Fatalf("acks %+v", a)
			}
			break
		}
		src.Acknowledge(context.Background(), b) // nothing settled: left pending
		if b := receive(t, src); len(b.Messages) != 0 {
			t.Fatal("a pending entry came back before claim_idle")
		}
		st.expire(t)
	}
	if n := st.held(t); n != 0 {
		t.Fatalf("the group holds %d", n)
	}
}

// max_deliveries 0 never parks.
func TestMaxDeliveriesZeroNeverParks(t *testing.T) {
	st := newStream(t, miniRedis(t))
	opts, _ := options(t)
	src := st.open(t, opts, map[string]any{"max_deliveries": int64(0)})
	t.Cleanup(src.Close)
	st.send(t, "body", `{"id":"x"}`)
	for range 4 {
		b := receive(t, src)
		if len(b.Messages) != 1 || len(b.Messages[0].Unfit) != 0 || b.Messages[0].OverDeliveryLimit {
			t.Fatalf("%+v", b.Messages)
		}
		st.expire(t)
	}
}

// Entries reclaimed come first in a batch, and a batch of reclaimed and
// new entries holds at most ten.
func TestReclaimedComeFirst(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, _ := options(t)
	first := st.open(t, opts, nil)
	for i := range 4 {
		st.send(t, "body", fmt.Sprintf(`{"id":"old-%d"}`, i))
	}
	if b := receive(t, first); len(b.Messages) != 4 {
		t.Fatalf("received %d", len(b.Messages))
	}
	first.Close() // holding 4 pending: its consumer stays
	for i := range 12 {
		st.send(t, "body", fmt.Sprintf(`{"id":"new-%02d"}`, i))
	}
	st.expire(t)
	next := st.open(t, opts, nil)
	t.Cleanup(next.Close)
	b := receive(t, next)
	if len(b.Messages) != 10 {
		t.Fatalf("received %d, want 10", len(b.Messages))
	}
	for i, m := range b.Messages {
		want := fmt.Sprintf(`{"id":"new-%02d"}`, i-4)
		if i < 4 {
			want = fmt.Sprintf(`{"id":"old-%d"}`, i)
		}
		if m.Body != want {
			t.Fatalf("message %d is %s, want %s (reclaimed first, in order)", i, m.Body, want)
		}
	}
	ack(t, next, b)
	rest := receive(t, next)
	if len(rest.Messages) != 6 {
		t.Fatalf("then %d, want 6", len(rest.Messages))
	}
	ack(t, next, rest)
	if n := st.held(t); n != 0 {
		t.Fatalf("held %d", n)
	}
}

// A receive is one round trip (after the script is loaded), an
// acknowledgement of a batch one XACK.
func TestRoundTrips(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, _ := options(t)
	d := &hangDialer{}
	opts.Dial = d.dial
	src := st.open(t, opts, nil)
	t.Cleanup(src.Close)
	st.send(t, "body", `{"id":"warm"}`)
	ack(t, src, receive(t, src)) // loads the script
	for i := range 10 {
		st.send(t, "body", fmt.Sprintf(`{"id":"%d"}`, i))
	}
	before := d.writes.Load()
	b := receive(t, src)
	if got := d.writes.Load() - before; got != 1 || len(b.Messages) != 10 {
		t.Fatalf("a receive of %d took %d round trips, want 1", len(b.Messages), got)
	}
	before = d.writes.Load()
	a := ack(t, src, b)
	if got := d.writes.Load() - before; got != 1 || a.Acknowledged != 10 || a.BatchCalls != 1 || a.SingleCalls != 0 {
		t.Fatalf("acknowledging 10 took %d round trips, acks %+v; want 1 XACK", got, a)
	}
}

// Without create_group, a stream or group the server lacks stops the
// start, naming XGROUP CREATE and the setting; with it, the group (and
// stream) are made, and made again if they go away while running.
func TestGroup(t *testing.T) {
	srv := realRedis(t)
	admin := srv.client(t)
	key := uniqueKey(t)
	t.Cleanup(func() { admin.Del(context.Background(), key) })
	opts, _ := options(t)
	conn := func(settings map[string]any) *queue.Conn {
		s := map[string]any{"stream": key, "group": "g1", "claim_idle": "30s"}
		for k, v := range settings {
			s[k] = v
		}
		return &queue.Conn{Name: "orders", Settings: s, Credentials: map[string]string{ir.MemberURL: srv.url}}
	}
	_, err := redisstreams.Open(conn(nil), opts)
	if err == nil || !strings.Contains(err.Error(), "there is no stream") || !strings.Contains(err.Error(), "XGROUP CREATE "+key+" g1 0 MKSTREAM") ||
		!strings.Contains(err.Error(), "create_group: true") {
		t.Fatalf("no stream: %v", err)
	}
	admin.XAdd(context.Background(), &redis.XAddArgs{Stream: key, Values: []any{"body", `{"id":"before"}`}})
	_, err = redisstreams.Open(conn(nil), opts)
	if err == nil || !strings.Contains(err.Error(), "has no consumer group \"g1\"") || !strings.Contains(err.Error(), "XGROUP CREATE") {
		t.Fatalf("no group: %v", err)
	}
	src, err := redisstreams.Open(conn(map[string]any{"create_group": true}), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	// From the stream's first entry: the one added before the group.
	if b := receive(t, src); len(b.Messages) != 1 || b.Messages[0].Body != `{"id":"before"}` {
		t.Fatalf("received %+v", b.Messages)
	} else {
		ack(t, src, b)
	}
	// A second process finds the group made.
	again, err := redisstreams.Open(conn(map[string]any{"create_group": true}), opts)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	// The stream deleted while running: made again at the next receive.
	admin.Del(context.Background(), key)
	if b := receive(t, src); len(b.Messages) != 0 {
		t.Fatalf("received %+v", b.Messages)
	}
	if n, _ := admin.Exists(context.Background(), key).Result(); n != 1 {
		t.Fatal("the stream was not made again")
	}
	// Without create_group, a group destroyed while running is named.
	plain, err := redisstreams.Open(conn(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	admin.XGroupDestroy(context.Background(), key, "g1")
	if _, err := plain.Receive(context.Background()); err == nil || !strings.Contains(err.Error(), "XGROUP CREATE") {
		t.Fatalf("a group destroyed: %v", err)
	}
}

// Close deletes the process's consumer when it holds nothing pending,
// and keeps it (and what it holds, for another to reclaim) when it does.
func TestCloseLeavesTheGroup(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, _ := options(t)
	consumers := func() []string {
		cs, err := st.admin.XInfoConsumers(context.Background(), st.key, st.group).Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s:%d", c.Name, c.Pending))
		}
		return out
	}
	idle := st.open(t, opts, nil)
	st.send(t, "body", `{"id":"taken"}`)
	ack(t, idle, receive(t, idle))
	if n := len(consumers()); n != 1 {
		t.Fatalf("consumers %v", consumers())
	}
	idle.Close()
	if cs := consumers(); len(cs) != 0 {
		t.Fatalf("after closing a consumer holding nothing: %v", cs)
	}
	holding := st.open(t, opts, nil).(*redisstreams.Source)
	st.send(t, "body", `{"id":"held"}`)
	receive(t, holding)
	holding.Close()
	if cs := consumers(); len(cs) != 1 || cs[0] != holding.Consumer()+":1" {
		t.Fatalf("after closing a consumer holding one: %v", cs)
	}
}

// Open deletes the consumers ended processes left: nothing pending and
// idle over PruneIdle (miniredis, whose clock the test sets).
func TestOpenPrunesLeftConsumers(t *testing.T) {
	m := miniredis.RunT(t)
	srv := server{url: "redis://" + m.Addr() + "/0"}
	st := newStream(t, srv)
	ctx := context.Background()
	now := time.Now()
	m.SetTime(now)
	// Each consumer reads an entry (the empty ones acknowledge it): at the
	// start two, then, an hour and more later, the recent one.
	read := func(consumer string, acknowledge bool) {
		id := st.send(t, "body", `{"id":"`+consumer+`"}`)
		if err := st.admin.XReadGroup(ctx, &redis.XReadGroupArgs{Group: st.group, Consumer: consumer, Streams: []string{st.key, ">"}, Count: 1, Block: -1}).Err(); err != nil {
			t.Fatal(err)
		}
		if acknowledge {
			st.admin.XAck(ctx, st.key, st.group, id)
		}
		// miniredis counts a consumer's idle time from its last XCLAIM only.
		st.admin.Do(ctx, "XCLAIM", st.key, st.group, consumer, 0, "0-1")
	}
	read("gone-empty", true)
	read("gone-holding", false)
	m.SetTime(now.Add(redisstreams.PruneIdle + time.Minute))
	read("recent-empty", true)
	opts, lb := options(t)
	src := st.open(t, opts, nil)
	t.Cleanup(src.Close)
	cs, err := st.admin.XInfoConsumers(ctx, st.key, st.group).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if fmt.Sprint(names) != "[gone-holding recent-empty]" {
		r, _ := st.admin.Do(ctx, "XINFO", "CONSUMERS", st.key, st.group).Result()
		t.Fatalf("consumers after Open: %v %v\n%s", names, r, lb)
	}
	if !strings.Contains(lb.String(), "consumers=1") {
		t.Fatalf("the log does not say it:\n%s", lb)
	}
}

// With block, a receive that finds nothing waits for an entry, within its
// context; LongPoll says how long.
func TestBlock(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, _ := options(t)
	src := st.open(t, opts, map[string]any{"block": "5s"})
	t.Cleanup(src.Close)
	if src.LongPoll() != 5*time.Second {
		t.Fatalf("LongPoll %s", src.LongPoll())
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		st.send(t, "body", `{"id":"late"}`)
	}()
	b := receive(t, src)
	if len(b.Messages) != 1 || b.Messages[0].Body != `{"id":"late"}` {
		t.Fatalf("a blocking receive brought %+v", b.Messages)
	}
	ack(t, src, b)
	// Bounded by its context: nothing comes, it ends empty before it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	b, err := src.Receive(ctx)
	if err != nil || len(b.Messages) != 0 {
		t.Fatalf("an empty blocking receive: %v %+v", err, b)
	}
	if ctx.Err() != nil {
		t.Fatalf("it ran to its context's end (%s): the block must end before, with an empty answer", time.Since(start))
	}
}

// Pending entries deleted from the stream (trimmed) before they were kept
// are logged as lost: Redis drops them from the group.
func TestTrimmedPendingLogged(t *testing.T) {
	st := newStream(t, realRedis(t))
	opts, lb := options(t)
	src := st.open(t, opts, map[string]any{"claim_idle": "1s"})
	t.Cleanup(src.Close)
	id := st.send(t, "body", `{"id":"trimmed"}`)
	receive(t, src)
	st.admin.XDel(context.Background(), st.key, id)
	time.Sleep(1100 * time.Millisecond) // claim_idle (XCLAIM would drop it from the group itself)
	if b := receive(t, src); len(b.Messages) != 0 {
		t.Fatalf("received %+v", b.Messages)
	}
	if !strings.Contains(lb.String(), "deleted from the stream before they were kept") || !strings.Contains(lb.String(), id) {
		t.Fatalf("the log:\n%s", lb)
	}
}
