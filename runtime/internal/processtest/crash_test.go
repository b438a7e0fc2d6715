package processtest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestKilledAtRandomMomentsKeepsEachMessageOnce runs `jadpo run` as a child
// process against the SQS fake and a fresh PostgreSQL schema, kills it with
// SIGKILL at seeded random moments (at least 20 times) while 5,000
// messages flow, restarting it each time, then lets a last run drain the
// queue and stop on SIGTERM. Every message must then be kept exactly once:
// one outbox row and received id per distinct id, one delivery per
// subscriber of its event, nothing left on the queue and only the messages
// that had to be parked parked.
func TestKilledAtRandomMomentsKeepsEachMessageOnce(t *testing.T) {
	pgtest.Require(t)
	n, minKills := 5000, 20
	if testing.Short() {
		n, minKills = 1000, 6
	}
	sd := seed(t, 20261130)
	t.Logf("seed %d (set JADPO_FAULT_SEED to change it), %d messages, at least %d kills", sd, n, minKills)
	bin := jadpoBin(t)
	// A killed process's messages in flight come back after 2 s.
	e := runtimetest.NewWith(t, "postgres", checktest.ExamplePlan(t, "warehouse"), runtimetest.WorldOptions{QueueAttributes: map[string]string{"VisibilityTimeout": "2"}})
	w := workload.New(sd, n)
	rng := rand.New(rand.NewPCG(sd, 0x6b696c6c))
	start := time.Now()
	l := newLives(t, func(log string) *Proc { return startWarehouse(e, bin, log, "--interval", "200ms") })

	s := w.Flow(e, 0, n, time.Duration(minKills)*700*time.Millisecond)
	l.killWhileSending(rng, minKills, s, n, func(_ string, until func(*Proc) time.Duration) {
		msgs, life := l.kill(until)
		t.Logf("run %2d killed after %4d ms: kept %4d, repeats %3d, parked %2d; %5d sent, %5d on the queue",
			l.kills, life.Milliseconds(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], s.Sent(), e.QueueDepth())
	})
	killPhase := time.Since(start)
	queueAtEnd := e.QueueDepth()

	// A last run drains the queue (what the killed runs held in flight comes
	// back after the visibility timeout) and stops cleanly on SIGTERM.
	l.last("the last run to drain the queue", e.QueueEmpty)
	kills, worked, totals := l.kills, l.worked, l.totals

	k := workload.VerifyExactlyOnce(t, e.StoreURL, w, e.Plan.SubscribersByEvent())
	distinct, repeats, parked := w.Count()
	t.Logf("%d messages (%d distinct ids, %d repeats sent, %d to park) in %v: %d kills over %v (%d of the killed runs had kept, repeated or parked something), %d messages on the queue at the last kill",
		n, distinct, repeats, parked, time.Since(start).Round(time.Millisecond), kills, killPhase.Round(time.Millisecond), worked, queueAtEnd)
	t.Logf("log lines over all runs: kept %d, repeat %d, parked %d, store unavailable %d; store: outbox %d, received ids %d, deliveries %d %v, parked %d",
		totals["kept"], totals["repeat: already kept"], totals["parked"], totals["the store cannot take messages now; they stay on the queue"],
		k.Outbox, k.ReceivedIDs, k.Deliveries, k.DeliveryStates, k.Parked)
	// A run killed between a commit and its log line kept messages it never
	// logged; no run may log more than the outbox holds.
	if totals["kept"] > k.Outbox {
		t.Errorf("the runs logged %d kept messages; the outbox holds %d rows", totals["kept"], k.Outbox)
	}
	t.Logf("kept by a run killed before it logged them (so before the acknowledgement): %d", k.Outbox-totals["kept"])
}
