package processtest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/tcpproxy"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestRedisStreamKilledAtRandomMomentsKeepsEachEntryOnce runs `jadpo run`
// of a copy of examples/streams as a child process: its queue is a stream
// of its own on the machine's Redis (a consumer group of its own,
// claim_idle 1s), its events' store a fresh PostgreSQL schema. While 1,900
// of 2,000 entries are added by the test's own client (XADD) over about
// 5 s (300 of 400 over 1 s with -short) (about 2% of an unlisted type, 2%
// unreadable: an email that is not one, or a body that is not valid UTF-8)
// it kills the process with SIGKILL at seeded random moments (50-1,500 ms
// after its start), at least 10 times, restarting it each time: each run is
// a new consumer, and reclaims (XAUTOCLAIM) what the killed ones left
// pending once claim_idle has passed. The last 100 are then added at once
// and one more run is killed the moment it logs a kept entry (its keep
// committed, its XACK not sent), then the last 50 (opening with two to
// park) and one more the moment it logs a parked one. A last run drains
// the group and exits 0 on SIGTERM.
//
// Then VerifyRedis: every entry kept or parked exactly once (a lost entry:
// "was lost: no outbox row"; a repeat not recognised: "twice"; a parked one
// parked again: "parked n times"), the parked bodies byte for byte the
// entries', and nothing pending or undelivered in the group (an
// acknowledgement never sent, or an entry never reclaimed, fails the drain
// wait and "the group still holds").
//
// Confirmed by running this test (-short) with GOFLAGS=-overlay=<json>, so
// that cmd/jadpo's build compiles a broken copy of
// providers/redisstreams/redisstreams.go kept outside the repository: with
// Receive sending XACK for each batch as it receives it (before the keep),
// it fails with "entry ... was lost: no outbox row" (the batches in flight
// at the kills); with the receive script's XAUTOCLAIM never reclaiming (a
// min-idle of 11 days), it fails waiting for the last run to drain the
// group (the killed runs' entries stay pending).
func TestRedisStreamKilledAtRandomMomentsKeepsEachEntryOnce(t *testing.T) {
	pgtest.Require(t)
	n, minKills, over := 2000, 10, 5*time.Second
	if testing.Short() {
		n, minKills, over = 400, 4, time.Second
	}
	sd := seed(t, 20261202)
	t.Logf("seed %d (set JADPO_FAULT_SEED to change it), %d entries over %v, at least %d kills", sd, n, over, minKills)
	bin := jadpoBin(t)
	e := NewRedis(t)
	w := NewOrdersWorkload(sd, n)
	tail := 100
	w.Orders[n-tail/2].Event, w.Orders[n-tail/2].Park = "", "unlisted_type"
	w.Orders[n-tail/2].Body = `{"id":"` + w.Orders[n-tail/2].ID + `","type":"order_refunded","order_id":"x"}`
	w.Orders[n-tail/2+1].Event, w.Orders[n-tail/2+1].Park = "", "unreadable"
	w.Orders[n-tail/2+1].Body = "\xff" + `{"id":"` + w.Orders[n-tail/2+1].ID + `","type":"order_placed"}`
	rng := rand.New(rand.NewPCG(sd, 0x7265646973))
	start := time.Now()
	l := newLives(t, func(log string) *Proc { return e.StartRun(bin, log, "--interval", "200ms") })
	s := w.AddFlow(e, 0, n-tail, over)
	live := func(what string, until func(p *Proc) time.Duration) {
		t.Helper()
		msgs, life := l.kill(until)
		p, lag := e.Held()
		t.Logf("run %2d killed %s after %4d ms: kept %4d, repeats %3d, parked %2d; %5d added, %4d pending, %4d undelivered",
			l.kills, what, life.Milliseconds(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], s.Sent(), p, lag)
	}
	l.killWhileSending(rng, minKills, s, n-tail, live)
	w.Add(e, n-tail, n-tail/2)
	live("after a keep", untilLogged("kept"))
	w.Add(e, n-tail/2, n)
	live("after a park", untilLogged("parked"))
	pendingAtLastKill, _ := e.Held()
	msgs := l.last("the last run to drain the group", e.Drained)
	k := VerifyRedis(t, e, w, e.Plan.SubscribersByEvent())
	valid, toPark := w.Count()
	if l.totals["kept"] > k.Outbox {
		t.Errorf("the runs logged %d kept entries; the outbox holds %d", l.totals["kept"], k.Outbox)
	}
	t.Logf("%d entries (%d valid, to park %v) in %v: %d kills (%d of the killed runs had kept, repeated or parked something); %d pending at the last kill; the last run kept %d, repeated %d, parked %d",
		n, valid, toPark, time.Since(start).Round(time.Millisecond), l.kills, l.worked, pendingAtLastKill, msgs["kept"], msgs["repeat: already kept"], msgs["parked"])
	t.Logf("log lines over all runs: kept %d, repeats %d, parked %d, parked already %d; store: outbox %d, received ids %d, parked %v",
		l.totals["kept"], l.totals["repeat: already kept"], l.totals["parked"], l.totals["parked already: the same body from this queue; nothing added"],
		k.Outbox, k.ReceivedIDs, k.Parked)
}

// TestRedisStreamConnectionCutMidBatch runs `jadpo run` of examples/streams
// through a TCP proxy of the test's own to Redis, and cuts every connection
// through it (refusing new ones for up to 1.5 s) again and again while 600
// entries are added and received: receives and XACKs fail mid-batch, the
// run logs and goes on. Nothing is lost (an entry whose XREADGROUP answer
// was cut is pending to the run, reclaimed after claim_idle) and nothing is
// kept twice (an entry kept whose XACK was cut comes back a repeat); at the
// end the group holds nothing.
func TestRedisStreamConnectionCutMidBatch(t *testing.T) {
	pgtest.Require(t)
	n := 600
	if testing.Short() {
		n = 200
	}
	bin := jadpoBin(t)
	e := NewRedis(t)
	proxy := tcpproxy.New(t, e.Client.Options().Addr)
	e.RunURL = proxy.Via(e.URL)
	w := NewOrdersWorkload(seed(t, 20261203), n)
	l := newLives(t, func(log string) *Proc { return e.StartRun(bin, log, "--interval", "100ms") })
	flow := w.AddFlow(e, 0, n, 4*time.Second)
	rng := rand.New(rand.NewPCG(7, 11))
	cuts := 0
	msgs := l.last("the run to drain the group through the cuts", func() bool {
		if flow.Finished() && cuts >= 10 {
			return e.Drained()
		}
		// Cut once the run is receiving (something is pending: a batch in
		// flight, between its receive and its XACK), or after a while.
		deadline := time.Now().Add(time.Duration(100+rng.IntN(900)) * time.Millisecond)
		for time.Now().Before(deadline) {
			if p, _ := e.Held(); p > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		proxy.Cut()
		cuts++
		// Longer than go-redis's own retries (3, backing off to 512 ms) now
		// and then, so that a call fails for the run to see.
		time.Sleep(time.Duration(50+rng.IntN(1500)) * time.Millisecond)
		proxy.Restore()
		return false
	})
	k := VerifyRedis(t, e, w, e.Plan.SubscribersByEvent())
	t.Logf("%d entries, %d cuts, %d connections through the proxy; the run logged kept %d, repeats %d, parked %d, receive failures %d, ack failures %d; outbox %d, parked %v",
		n, cuts, proxy.Accepted(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], msgs["tick failed"],
		msgs["acknowledging entries failed; they stay pending and come back after claim_idle, the kept ones as repeats"], k.Outbox, k.Parked)
	if proxy.Accepted() < 2 || msgs["tick failed"]+msgs["acknowledging entries failed; they stay pending and come back after claim_idle, the kept ones as repeats"] == 0 {
		t.Errorf("the cuts did not reach the run (%d connections, no failure logged): the test saw nothing", proxy.Accepted())
	}
}
