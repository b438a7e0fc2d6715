package processtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestThreeProcessesShareOneQueue runs three `jadpo run` processes, started
// together (so migrating the fresh schema at once), on the same queues and
// the same PostgreSQL store while 10,000 messages arrive. Every message is
// kept exactly once, every delivery written once and run once: the packing
// service is called once per OrderShipped. Each process exits 0 on
// SIGTERM.
func TestThreeProcessesShareOneQueue(t *testing.T) {
	pgtest.Require(t)
	const procs = 3
	n := 10000
	if testing.Short() {
		n = 2000
	}
	sd := seed(t, 20261202)
	t.Logf("seed %d, %d messages, %d processes", sd, n, procs)
	bin := jadpoBin(t)
	e := runtimetest.NewWith(t, "postgres", checktest.ExamplePlan(t, "warehouse"), runtimetest.WorldOptions{})
	w := workload.New(sd, n)
	logs := t.TempDir()
	start := time.Now()

	// Half waits on the queue when the processes start; the rest arrives
	// while they run.
	w.Send(e, 0, n/2)
	ps := make([]*Proc, procs)
	for i := range ps {
		ps[i] = startWarehouse(e, bin, filepath.Join(logs, fmt.Sprintf("proc-%d.log", i)), "--interval", "200ms")
	}
	flow := w.Flow(e, n/2, n, 5*time.Second)
	flow.Wait()

	subs := e.Plan.SubscribersByEvent()
	kept := w.Kept()
	wantDeliveries := 0
	for _, ev := range kept {
		wantDeliveries += len(subs[ev])
	}
	workload.WaitUntil(t, 2*time.Minute, "the queue drained and every delivery settled", func() bool {
		for i, p := range ps {
			if p.Exited() {
				b, _ := os.ReadFile(p.Log)
				t.Fatalf("process %d ended by itself (%v):\n%s", i, p.Err(), b)
			}
		}
		if !e.QueueEmpty() {
			return false
		}
		for _, p := range ps {
			if !p.Logged("running") {
				return false
			}
		}
		k := workload.PGStoreCounts(t, e.StoreURL)
		return k.DeliveryStates["succeeded"] == wantDeliveries
	})
	elapsed := time.Since(start)
	perProc := make([]map[string]int, procs)
	for i, p := range ps {
		if err := p.Stop(30 * time.Second); err != nil {
			b, _ := os.ReadFile(p.Log)
			t.Fatalf("process %d did not exit 0 on SIGTERM: %v\n%s", i, err, b)
		}
		var other []string
		perProc[i], other = logLines(t, p.Log)
		if len(other) > 0 {
			t.Errorf("process %d wrote lines that are not JSON log lines:\n%s", i, strings.Join(other, "\n"))
		}
	}

	k := workload.VerifyExactlyOnce(t, e.StoreURL, w, subs)
	// Each delivery ran once: one call to the packing service per order.
	calls := map[string]int{}
	for _, c := range e.Target.Calls() {
		id, _ := c.Body["order_id"].(string)
		calls[id]++
	}
	shipped := 0
	for key, ev := range kept {
		if ev != "OrderShipped" {
			continue
		}
		shipped++
		if c := calls["o-"+key.ID]; c != 1 {
			t.Errorf("the packing service was called %d times for %s", c, key.ID)
		}
	}
	if len(e.Target.Calls()) != shipped {
		t.Errorf("the packing service was called %d times for %d orders shipped", len(e.Target.Calls()), shipped)
	}
	distinct, repeats, parked := w.Count()
	t.Logf("%d messages (%d distinct ids, %d repeats sent, %d to park) kept and delivered by %d processes in %v; store: outbox %d, deliveries %d %v, parked %d",
		n, distinct, repeats, parked, procs, elapsed.Round(time.Millisecond), k.Outbox, k.Deliveries, k.DeliveryStates, k.Parked)
	total := 0
	for i, m := range perProc {
		total += m["kept"]
		t.Logf("process %d: kept %d, repeat %d, parked %d, deliveries settled %d, store unavailable %d",
			i, m["kept"], m["repeat: already kept"], m["parked"], m["delivery settled"], m["the store cannot take messages now; they stay on the queue"])
	}
	if total != k.Outbox {
		t.Errorf("the processes logged %d kept messages; the outbox holds %d", total, k.Outbox)
	}
}
