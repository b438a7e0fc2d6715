package runtime_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/tcpproxy"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// faultLog is a log the runtime writes while the test reads it.
type faultLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *faultLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is how many log lines have msg.
func (l *faultLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), `"msg":"`+msg+`"`)
}

// TestDatabaseFaultsLeaveMessagesOnTheQueue runs the runtime (runtime.Run,
// in this process) against PostgreSQL through a TCP proxy of the test's
// own while messages flow, and, without restarting it: terminates its
// backends (pg_terminate_backend, found by application_name) again and
// again, then cuts the proxy for three seconds (every connection closed,
// new ones refused). While the database is unreachable nothing is kept and
// the messages wait on the queue; afterwards every message is kept exactly
// once and none was parked for the store's failure.
func TestDatabaseFaultsLeaveMessagesOnTheQueue(t *testing.T) {
	n, terminations := 3000, 6
	if testing.Short() {
		n, terminations = 800, 4
	}
	e := runtimetest.NewWith(t, "postgres", checktest.ExamplePlan(t, "warehouse"), runtimetest.WorldOptions{QueueAttributes: map[string]string{"VisibilityTimeout": "2"}})
	server, err := url.Parse(pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.New(t, server.Host)
	b := make([]byte, 6)
	rand.Read(b)
	app := "jadpo_fault_" + hex.EncodeToString(b)
	u, err := url.Parse(proxy.Via(e.StoreURL))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()

	ctx := context.Background()
	st, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	logs := &faultLog{}
	rt := e.Runtime(st, runtime.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- rt.Run(runCtx, 100*time.Millisecond) }()
	running := func() {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("the runtime stopped by itself: %v", err)
		default:
		}
	}

	// A connection of the test's own, straight to the server.
	admin, err := pgx.Connect(ctx, e.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	outbox := func() int {
		t.Helper()
		var c int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM jadpo_outbox").Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	terminated := 0
	terminate := func() {
		t.Helper()
		before := outbox()
		// CASE, not AND: PostgreSQL may evaluate the terms of a WHERE clause
		// in any order, and would then end everyone's backends; CASE tests
		// the name first.
		var c int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM (
    SELECT CASE WHEN application_name = $1 THEN pg_terminate_backend(pid) ELSE false END AS ended
    FROM pg_stat_activity) AS a
WHERE ended`, app).Scan(&c); err != nil {
			t.Fatal(err)
		}
		terminated += c
		// The runtime reconnects and keeps going.
		workload.WaitUntil(t, 30*time.Second, "messages kept after the backends were terminated", func() bool {
			running()
			return outbox() > before
		})
	}

	w := workload.New(20261201, n)
	first, cut, rest := n*2/5, n*3/5, n
	start := time.Now()

	// Backends terminated while messages flow.
	flow := w.Flow(e, 0, first, 4*time.Second)
	for range terminations / 2 {
		terminate()
	}
	flow.Wait()

	// The database refused: the proxy closes every connection and refuses
	// new ones. Messages sent meanwhile wait on the queue.
	unavailableBefore := logs.count("the store cannot take messages now; they stay on the queue")
	proxy.Cut()
	// A commit already on the wire still lands, later on a loaded machine:
	// the count is taken once it has stood still for half a second.
	keptAtCut := outbox()
	for still, give := time.Now(), time.Now().Add(10*time.Second); time.Since(still) < 500*time.Millisecond && time.Now().Before(give); {
		time.Sleep(100 * time.Millisecond)
		if c := outbox(); c != keptAtCut {
			keptAtCut, still = c, time.Now()
		}
	}
	w.Send(e, first, cut)
	time.Sleep(3 * time.Second)
	running()
	if got := outbox(); got != keptAtCut {
		t.Errorf("%d messages were kept while the database was unreachable", got-keptAtCut)
	}
	waiting := e.QueueDepth()
	if waiting < cut-first {
		t.Errorf("%d messages on the queue after the cut; the %d sent during it should all wait there", waiting, cut-first)
	}
	unavailable := logs.count("the store cannot take messages now; they stay on the queue") - unavailableBefore
	proxy.Restore()

	// Back again, and terminated again.
	flow = w.Flow(e, cut, rest, 3*time.Second)
	for range terminations - terminations/2 {
		terminate()
	}
	flow.Wait()
	workload.WaitUntil(t, time.Minute, "the queue to be drained", func() bool {
		running()
		return e.QueueEmpty()
	})
	running()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	k := workload.VerifyExactlyOnce(t, e.StoreURL, w, e.Plan.SubscribersByEvent())
	distinct, repeats, parked := w.Count()
	if unavailable == 0 {
		t.Error("the runtime never found the store unavailable during the cut: the cut did not reach it")
	}
	t.Logf("%d messages (%d distinct ids, %d repeats sent, %d to park) in %v; %d backends terminated in %d rounds; cut for 3 s with %d messages waiting on the queue; %d connections through the proxy",
		n, distinct, repeats, parked, time.Since(start).Round(time.Millisecond), terminated, terminations, waiting, proxy.Accepted())
	t.Logf("log lines: kept %d, repeat %d, parked %d, store unavailable %d (%d of them during the cut), tick failed %d; store: outbox %d, deliveries %d %v, parked %d",
		logs.count("kept"), logs.count("repeat: already kept"), logs.count("parked"),
		logs.count("the store cannot take messages now; they stay on the queue"), unavailable, logs.count("tick failed"),
		k.Outbox, k.Deliveries, k.DeliveryStates, k.Parked)
}
