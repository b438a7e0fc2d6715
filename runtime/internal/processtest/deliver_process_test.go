package processtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// startRun starts `jadpo run examples/warehouse` on the world's store, its
// JSON log lines going to logPath. It is killed when the test ends, if
// still running.
func startRun(t *testing.T, env *runtimetest.Env, logPath string, extra ...string) *Proc {
	t.Helper()
	return startWarehouse(env, jadpoBin(t), logPath, extra...)
}

// stop sends SIGTERM and waits up to 30 s for exit 0.
func stop(t *testing.T, p *Proc) {
	t.Helper()
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("jadpo run: %v; its log: %s", err, tail(p.Log))
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// settledLines reads the "delivery settled" lines of a log: delivery ID ->
// outcomes. Lines that are not JSON (a panic, a start-up error) are
// returned apart.
func settledLines(t *testing.T, path string) (map[string][]string, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	var other []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg      string `json:"msg"`
			Delivery string `json:"delivery"`
			Outcome  string `json:"outcome"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			other = append(other, sc.Text())
			continue
		}
		if line.Msg == "delivery settled" {
			out[line.Delivery] = append(out[line.Delivery], line.Outcome)
		}
	}
	return out, other
}

// keepOrders keeps n OrderShipped events for pack_order (order ids o-0 ...
// o-<n-1>), as a tick would, in batches.
func keepOrders(t *testing.T, st store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	const batch = 1000
	for from := 0; from < n; from += batch {
		var keeps []store.Keep
		for i := from; i < min(from+batch, n); i++ {
			keeps = append(keeps, store.Keep{Source: "queue warehouse_queue", ReceivedID: fmt.Sprint("m-", i), EventName: "OrderShipped",
				EventJSON:   fmt.Appendf(nil, `{"carrier":"dhl","lines":[{"quantity":2,"sku":"SKU-1"}],"order_id":"o-%d","shipped_at":"2026-11-30T10:00:00Z"}`, i),
				Subscribers: []string{"pack_order"}})
		}
		res, err := st.KeepBatch(ctx, keeps)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Outcome != store.Kept {
				t.Fatalf("keep: %v %v", r.Outcome, r.Err)
			}
		}
	}
}

func stats(t *testing.T, st store.Store) store.Stats {
	t.Helper()
	s, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor polls cond every 100 ms until it holds; past limit the test
// fails with what().
func waitFor(t *testing.T, limit time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not done within %v: %s", limit, what())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// callsPerOrder counts the target's calls by order_id.
func callsPerOrder(tg *runtimetest.Target) map[string]int {
	out := map[string]int{}
	for _, c := range tg.Calls() {
		id, _ := c.Body["order_id"].(string)
		out[id]++
	}
	return out
}

// Three `jadpo run` processes share one PostgreSQL store and 10,000 due
// deliveries: every delivery is settled once, succeeded, and the target
// sees each order once.
func TestThreeProcessesTenThousandDeliveries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three jadpo run processes; not with -short")
	}
	const n = 10_000
	env := runtimetest.New(t, "postgres", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	keepOrders(t, st, n)
	jadpoBin(t)

	start := time.Now()
	logs := make([]string, 3)
	procs := make([]*Proc, 3)
	for i := range procs {
		logs[i] = filepath.Join(t.TempDir(), fmt.Sprintf("run-%d.log", i))
		procs[i] = startRun(t, env, logs[i], "--interval", "200ms")
	}
	waitFor(t, 150*time.Second, func() bool {
		return stats(t, st).Deliveries[store.DeliverySucceeded] == n
	}, func() string { return fmt.Sprint(stats(t, st).Deliveries) })
	elapsed := time.Since(start)
	for _, p := range procs {
		stop(t, p)
	}

	if got := stats(t, st).Deliveries; len(got) != 1 || got[store.DeliverySucceeded] != n {
		t.Errorf("deliveries by state %v, want %d succeeded", got, n)
	}
	perOrder := callsPerOrder(env.Target)
	twice := 0
	for i := range n {
		switch c := perOrder[fmt.Sprint("o-", i)]; {
		case c == 0:
			t.Errorf("the target never saw order o-%d", i)
		case c > 1:
			twice++
		}
	}
	if len(perOrder) != n || twice != 0 {
		t.Errorf("the target saw %d orders, %d of them more than once", len(perOrder), twice)
	}
	settledBy := map[string]int{}
	for i, path := range logs {
		lines, other := settledLines(t, path)
		for _, o := range other {
			t.Errorf("process %d: a line that is not JSON: %s", i, o)
		}
		for id, outcomes := range lines {
			for _, o := range outcomes {
				if o != "succeeded" {
					t.Errorf("process %d settled %s %s", i, id, o)
				}
				settledBy[id]++
			}
		}
		t.Logf("process %d settled %d deliveries", i, len(lines))
		if len(lines) == 0 {
			t.Errorf("process %d settled nothing", i)
		}
	}
	if len(settledBy) != n {
		t.Errorf("%d deliveries settled, want %d", len(settledBy), n)
	}
	for id, c := range settledBy {
		if c != 1 {
			t.Errorf("delivery %s settled %d times", id, c)
		}
	}
	t.Logf("%d deliveries by 3 processes in %v (%.0f/s, process start-up included)", n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
}

// `jadpo run` is killed (SIGKILL) again and again while its handlers run;
// restarted each time. Afterwards every delivery has succeeded, or failed
// by its budget, and none is left running.
func TestKilledWhileHandlersRun(t *testing.T) {
	if testing.Short() {
		t.Skip("kills jadpo run processes; not with -short")
	}
	const (
		n     = 300
		kills = 12
		lease = 1500 * time.Millisecond
	)
	env := runtimetest.New(t, "postgres", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	keepOrders(t, st, n)
	jadpoBin(t)
	var inflight atomic.Int64
	env.Target.Answer(func(r *http.Request) (int, string) {
		inflight.Add(1)
		defer inflight.Add(-1)
		select {
		case <-time.After(200 * time.Millisecond):
		case <-r.Context().Done():
		}
		return 200, `{"job_id":"j","state":"queued"}`
	})
	rng := rand.New(rand.NewPCG(2026, 1130))
	logDir := t.TempDir()
	args := []string{"--delivery-lease", lease.String(), "--interval", "100ms"}
	settledAll := func() bool {
		d := stats(t, st).Deliveries
		return d[store.DeliverySucceeded]+d[store.DeliveryFailed] == n
	}
	killed := 0
	for killed < kills {
		before := len(env.Target.Calls())
		p := startRun(t, env, filepath.Join(logDir, fmt.Sprintf("run-%d.log", killed)), args...)
		// Wait for this process's handlers to reach the target, then kill
		// it at a seeded moment within the next 400 ms.
		waitFor(t, 30*time.Second, func() bool { return len(env.Target.Calls()) > before || p.Exited() },
			func() string { return "no handler ran; log: " + tail(p.Log) })
		if p.Exited() {
			t.Fatalf("jadpo run ended by itself: %v; log: %s", p.Err(), tail(p.Log))
		}
		time.Sleep(time.Duration(rng.Int64N(int64(400 * time.Millisecond))))
		p.Kill()
		killed++
		if settledAll() {
			break
		}
	}
	if killed < 10 {
		t.Fatalf("only %d kills before everything settled: give the test more deliveries", killed)
	}
	mid := stats(t, st).Deliveries
	final := startRun(t, env, filepath.Join(logDir, "final.log"), args...)
	waitFor(t, 90*time.Second, settledAll, func() string { return fmt.Sprint(stats(t, st).Deliveries) })
	stop(t, final)

	s := stats(t, st)
	if s.Deliveries[store.DeliveryRunning]+s.Deliveries[store.DeliveryPending]+s.Deliveries[store.DeliveryRetryWait] != 0 {
		t.Errorf("deliveries left unsettled: %v", s.Deliveries)
	}
	entries, err := st.List(context.Background(), store.Filter{State: store.ListFailed})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// The target never refuses: a delivery fails only when kills used
		// its whole budget.
		if e.Code != runtime.CodeLeaseExpired || e.Attempts <= 8 {
			t.Errorf("%s failed with %q after %d attempts", e.ID, e.Code, e.Attempts)
		}
	}
	perOrder := callsPerOrder(env.Target)
	again := 0
	for i := range n {
		c := perOrder[fmt.Sprint("o-", i)]
		if c == 0 && !hasFailedOrder(entries, fmt.Sprint("m-", i)) {
			t.Errorf("order o-%d: succeeded without the target seeing it", i)
		}
		if c > 1 {
			again++
		}
	}
	t.Logf("%d kills (deliveries then %v); finally %v; %d orders sent more than once (at least once: a killed handler runs again)",
		killed, mid, s.Deliveries, again)
}

func hasFailedOrder(failed []store.Entry, receivedID string) bool {
	for _, e := range failed {
		if e.ReceivedID == receivedID {
			return true
		}
	}
	return false
}

// `jadpo deliveries retry` gives a failed delivery a fresh budget;
// `dismiss` sets one aside; both refuse a delivery in the wrong state.
// The binary reads the wall clock, so the whole test runs on it
// (docs/design/testing.md: never a mix of an injected clock and the wall clock).
func TestDeliveriesRetryAndDismissCommands(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	ctx := context.Background()
	rt := env.Runtime(st, runtime.Options{Rand: rand.New(rand.NewPCG(1, 2))})
	keepOrders(t, st, 2)
	env.Target.Script(400, 400)
	if rep, err := rt.Deliver(ctx); err != nil || rep.Failed != 2 {
		t.Fatalf("%+v %v", rep, err)
	}
	failed, err := st.List(ctx, store.Filter{State: store.ListFailed})
	if err != nil || len(failed) != 2 {
		t.Fatalf("%+v %v", failed, err)
	}
	first, second := failed[0].ID, failed[1].ID
	cli := func(args ...string) (string, error) {
		cmd := exec.Command(jadpoBin(t), append([]string{"deliveries"}, append(args, "--database", env.StoreURL)...)...)
		cmd.Env = runtimetest.ChildEnviron(env.Environ)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("retry", first.String()); err != nil {
		t.Fatalf("retry %s: %v\n%s", first, err, out)
	}
	if out, err := cli("dismiss", second.String()); err != nil {
		t.Fatalf("dismiss %s: %v\n%s", second, err, out)
	}
	for _, c := range []struct {
		id       store.ID
		state    store.DeliveryState
		attempts int
	}{{first, store.DeliveryPending, 0}, {second, store.DeliveryDismissed, 1}} {
		e, err := st.Show(ctx, c.id, false)
		if err != nil || e.RowState != string(c.state) || e.Attempts != c.attempts {
			t.Fatalf("%s: %+v %v, want %s after %d attempts", c.id, e, err, c.state, c.attempts)
		}
	}
	// Wrong states: retry a dismissed one, dismiss a pending one.
	for _, args := range [][]string{{"retry", second.String()}, {"dismiss", first.String()}} {
		out, err := cli(args...)
		var ee *exec.ExitError
		t.Logf("%v: %s", args, strings.TrimSpace(out))
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(out, args[1]) {
			t.Errorf("%v: exit %v, %q", args, err, out)
		}
	}
	// The retried delivery runs again from attempt 1 and succeeds.
	if rep, err := rt.Deliver(ctx); err != nil || rep.Claimed != 1 || rep.Succeeded != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if e, _ := st.Show(ctx, first, false); e.RowState != "succeeded" || e.Attempts != 1 {
		t.Fatalf("%+v", e)
	}
}
