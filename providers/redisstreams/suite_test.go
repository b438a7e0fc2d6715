package redisstreams_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/redisstreams"
)

// The redis_streams driver passes the shared suite against the real Redis
// of this machine (brokertest: skipped when it is down, unless
// JADPO_REQUIRE_BROKERS=1), and against miniredis, dev's stand-in. Each
// test has a stream of its own, with a random key, deleted when it ends.

// server is a Redis the tests use: its URL, and how to make a client of it.
type server struct {
	url string
}

func realRedis(t *testing.T) server { return server{url: brokertest.Redis.Require(t)} }

func miniRedis(t *testing.T) server {
	m := miniredis.RunT(t)
	return server{url: "redis://" + m.Addr() + "/0"}
}

func (s server) client(t *testing.T) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(s.url)
	if err != nil {
		t.Fatal(err)
	}
	o.Protocol = 2
	o.DisableIdentity = true
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// uniqueKey is a stream key no other test or session uses.
func uniqueKey(t *testing.T) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "jadpo-test:" + t.Name() + ":" + hex.EncodeToString(b[:])
}

// stream is one test's stream and group on a server, deleted when the test ends.
type stream struct {
	t         *testing.T
	srv       server
	admin     *redis.Client
	key       string
	group     string
	claimIdle time.Duration
}

func newStream(t *testing.T, srv server) *stream {
	t.Helper()
	st := &stream{t: t, srv: srv, admin: srv.client(t), key: uniqueKey(t), group: "jadpo-suite", claimIdle: 30 * time.Second}
	ctx := context.Background()
	if err := st.admin.XGroupCreateMkStream(ctx, st.key, st.group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.admin.Del(context.Background(), st.key) })
	return st
}

func (st *stream) settings(extra map[string]any) map[string]any {
	s := map[string]any{"stream": st.key, "group": st.group, "claim_idle": st.claimIdle.String()}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// open opens a Source on the stream with settings (the stream's, and extra).
func (st *stream) open(t *testing.T, opts queue.Options, extra map[string]any) queue.Source {
	t.Helper()
	conn := &queue.Conn{Name: "orders", Receiving: &ir.Receiving{Driver: redisstreams.Name}, Settings: st.settings(extra),
		Credentials: map[string]string{ir.MemberURL: st.srv.url}}
	src, err := redisstreams.Driver.Open(conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (st *stream) send(t *testing.T, fields ...any) string {
	t.Helper()
	id, err := st.admin.XAdd(context.Background(), &redis.XAddArgs{Stream: st.key, Values: fields}).Result()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// held is what the group still holds: entries pending, and entries not
// yet delivered to it (after its last delivered id; miniredis's lag counts
// the whole stream).
func (st *stream) held(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	groups, err := st.admin.XInfoGroups(ctx, st.key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if g.Name == st.group {
			after, err := st.admin.XRange(ctx, st.key, "("+g.LastDeliveredID, "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			return int(g.Pending) + len(after)
		}
	}
	t.Fatalf("the group %s is gone", st.group)
	return 0
}

// expire makes every pending entry idle longer than claim_idle (XCLAIM to
// its own consumer with IDLE, JUSTID, and RETRYCOUNT its count: unchanged,
// as Redis leaves it for JUSTID and miniredis would not), so the next
// receive reclaims it.
func (st *stream) expire(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pending, err := st.admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: st.key, Group: st.group, Start: "-", End: "+", Count: 100000}).Result()
	if err != nil {
		t.Fatal(err)
	}
	idle := strconv.FormatInt((st.claimIdle + time.Minute).Milliseconds(), 10)
	for _, p := range pending {
		if err := st.admin.Do(ctx, "XCLAIM", st.key, st.group, p.Consumer, 0, p.ID, "IDLE", idle, "RETRYCOUNT", p.RetryCount, "JUSTID").Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// hangDialer dials the server and can make the next answer on any of its
// connections hang: its bytes are read off the socket and dropped until
// the client's read deadline ends the read, as a server that never
// answers would.
type hangDialer struct {
	hang   atomic.Bool
	writes atomic.Int64
	mu     sync.Mutex
	conns  []net.Conn
}

func (d *hangDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	return &hangConn{Conn: c, d: d}, nil
}

// cut closes every connection it dialled, as a process's death would.
func (d *hangDialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

type hangConn struct {
	net.Conn
	d *hangDialer
}

func (c *hangConn) Write(p []byte) (int, error) {
	c.d.writes.Add(1)
	return c.Conn.Write(p)
}

func (c *hangConn) Read(p []byte) (int, error) {
	if c.d.hang.CompareAndSwap(true, false) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Conn.Read(buf); err != nil {
				return 0, err
			}
		}
	}
	return c.Conn.Read(p)
}

func harness(srv func(t *testing.T) server) queuetest.Harness {
	return queuetest.Harness{
		Caps: queuetest.Caps{Ack: queuetest.AckBatch, Lease: true, Hang: true},
		New: func(t *testing.T) *queuetest.Queue {
			st := newStream(t, srv(t))
			var mu sync.Mutex
			dialers := map[queue.Source]*hangDialer{}
			var last *hangDialer
			return &queuetest.Queue{
				Open: func(t *testing.T, opts queue.Options) queue.Source {
					d := &hangDialer{}
					opts.Dial = d.dial
					src := st.open(t, opts, nil)
					mu.Lock()
					dialers[src], last = d, d
					mu.Unlock()
					return src
				},
				Send:   func(t *testing.T, payload string) { st.send(t, "body", payload) },
				Held:   st.held,
				Expire: st.expire,
				Kill: func(t *testing.T, src queue.Source) {
					mu.Lock()
					d := dialers[src]
					mu.Unlock()
					d.cut()
				},
				Hang: func(t *testing.T) {
					mu.Lock()
					defer mu.Unlock()
					last.hang.Store(true)
				},
			}
		},
	}
}

func TestSuite(t *testing.T) { queuetest.Run(t, harness(realRedis)) }

// The stand-in dev runs the driver against passes the suite too.
func TestSuiteOnMiniredis(t *testing.T) { queuetest.Run(t, harness(miniRedis)) }
