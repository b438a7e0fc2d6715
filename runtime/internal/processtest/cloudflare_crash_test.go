package processtest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestCloudflareKilledAtRandomMomentsKeepsEachMessageOnce runs `jadpo run`
// of a copy of examples/returns as a child process against a Cloudflare
// Queues fake served on 127.0.0.1 (its real clock, leases of 2 s, a
// redelivery limit of 100 so that no kill makes it drop a message) and a
// fresh PostgreSQL schema. While 1,900 of 2,000 messages arrive over about
// 6 s (about 2% repeats of earlier bodies, about 2% that must be parked) it
// kills the process with SIGKILL at seeded random moments (50-1,500 ms
// after its start), at least 10 times, restarting it each time; the last
// 100 are then sent at once and two more runs are killed, one right after
// an acknowledgement, one while it holds leases. A last run drains the
// queue (the leases of the killed runs running out) and exits 0 on SIGTERM.
// With -short: 400 messages, at least 4 random kills.
//
// Then every message must be kept exactly once. What catches what:
//   - a message lost (acknowledged before its keep committed, or dropped by
//     the queue): VerifyExactlyOnce's "was lost: no outbox row" and its
//     received ids count; a message the redelivery limit took also shows in
//     the dead-letter queue check, and one never acknowledged keeps the
//     queue from draining (the wait for an empty queue fails);
//   - a message kept twice (a repeat not recognised after a kill):
//     VerifyExactlyOnce's "outbox holds ... n times" / "as two events" and
//     "received ids, want", and the check that the runs did not log more
//     kept messages than the outbox holds;
//   - a bad body not parked, parked twice, or a valid one parked:
//     VerifyExactlyOnce's "not parked", "parked twice" and "should not have
//     been";
//   - a message left on the queue: the Stats check at the end.
func TestCloudflareKilledAtRandomMomentsKeepsEachMessageOnce(t *testing.T) {
	pgtest.Require(t)
	n, minKills, over := 2000, 10, 6*time.Second
	if testing.Short() {
		n, minKills, over = 400, 4, 2*time.Second
	}
	sd := seed(t, 20261203)
	t.Logf("seed %d (set JADPO_FAULT_SEED to change it), %d messages over %v, at least %d kills", sd, n, over, minKills)
	bin := jadpoBin(t)
	// A killed process's leased messages come back after 2 s.
	e := NewCF(t, "postgres", CFOptions{VisibilityTimeoutMs: 2000, MaxRetries: 100})
	w := workload.NewReturns(sd, n)
	rng := rand.New(rand.NewPCG(sd, 0x63666b696c6c))
	start := time.Now()
	l := newLives(t, func(log string) *Proc { return e.StartRun(bin, log, "--interval", "200ms") })

	// The last twentieth is held back for the last killed run (below).
	tail := n / 20
	s := flowCF(w, e, 0, n-tail, over)
	live := func(what string, until func(*Proc) time.Duration) {
		t.Helper()
		msgs, life := l.kill(until)
		st := e.QueueStats()
		t.Logf("run %2d killed %s after %4d ms: kept %4d, repeats %3d, parked %2d; %5d sent; queue: %4d visible, %3d leased, %3d delayed",
			l.kills, what, life.Milliseconds(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], s.Sent(), st.Visible, st.InFlight, st.Delayed)
	}
	l.killWhileSending(rng, minKills, s, n-tail, live)
	// A run that keeps up is mostly idle, so random kills seldom fall between
	// a pull and its acknowledgement, and the last one (the flow over) never
	// does. So the held-back tail is sent at once and two more runs are
	// killed at chosen moments: one the moment the fake has answered an
	// acknowledgement (a runtime acknowledging before its keep commits would
	// lose the batch there; this one has batches pulled behind it), the last
	// the moment the fake has leased it messages of its own, which the last
	// run must then wait for.
	sendCF(w, e, n-tail, n)
	acks := e.Fake.Calls("ack")
	live("after an ack", killWhen(func() bool { return e.Fake.Calls("ack") > acks }))
	before := e.Attempts()
	live("holding leases", killWhen(func() bool { return e.LeasedSince(before) > 0 }))
	killPhase := time.Since(start)
	atLastKill := e.QueueStats()

	// A last run drains the queue (what the killed runs held leased comes
	// back when the lease runs out) and stops cleanly on SIGTERM.
	msgs := l.last("the last run to drain the Cloudflare queue", e.QueueEmpty)
	kills, worked, totals := l.kills, l.worked, l.totals
	duration := time.Since(start)
	drain := duration - killPhase

	// The queue: nothing visible, leased or delayed, and nothing taken by
	// the redelivery limit.
	if st := e.QueueStats(); st.Visible+st.InFlight+st.Delayed != 0 {
		t.Errorf("the Cloudflare queue still holds %d visible, %d leased, %d delayed", st.Visible, st.InFlight, st.Delayed)
	}
	if dead := e.DeadLettered(); len(dead) > 0 {
		t.Errorf("the redelivery limit moved %d messages to the dead-letter queue, the first: %.80s", len(dead), dead[0])
	}
	// The store: each distinct valid return_id once in the outbox and the
	// received ids, exactly the distinct bad bodies parked, once each.
	k := workload.VerifyExactlyOnce(t, e.StoreURL, w, e.Plan.SubscribersByEvent())
	distinct, repeats, toPark := w.Count()
	if k.Outbox != distinct || k.ReceivedIDs != distinct || k.Parked != toPark {
		t.Errorf("store: outbox %d, received ids %d, parked %d; want %d, %d, %d",
			k.Outbox, k.ReceivedIDs, k.Parked, distinct, distinct, toPark)
	}
	// A run killed between a commit and its log line kept messages it never
	// logged; no run may log more than the outbox holds.
	if totals["kept"] > k.Outbox {
		t.Errorf("the runs logged %d kept messages; the outbox holds %d rows", totals["kept"], k.Outbox)
	}

	t.Logf("%d messages (%d distinct return ids, %d repeats sent, %d to park) in %v: %d kills over %v (%d of the killed runs had kept, repeated or parked something); at the last kill the queue held %d visible, %d leased, %d delayed; the last run kept %d, repeated %d, parked %d and stopped after %v",
		n, distinct, repeats, toPark, duration.Round(time.Millisecond), kills, killPhase.Round(time.Millisecond), worked,
		atLastKill.Visible, atLastKill.InFlight, atLastKill.Delayed, msgs["kept"], msgs["repeat: already kept"], msgs["parked"], drain.Round(time.Millisecond))
	t.Logf("log lines over all runs: kept %d, repeat %d, parked %d, store unavailable %d, ack failed %d; store: outbox %d, received ids %d, parked %d; fake: %d pulls, %d acks",
		totals["kept"], totals["repeat: already kept"], totals["parked"], totals["the store cannot take messages now; they stay on the queue"],
		totals["acknowledging failed; the batch will come back, its kept messages as repeats"],
		k.Outbox, k.ReceivedIDs, k.Parked, e.Fake.Calls("pull"), e.Fake.Calls("ack"))
	t.Logf("kept by a run killed before it logged them (so before the acknowledgement): %d", k.Outbox-totals["kept"])
}
