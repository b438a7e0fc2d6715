package processtest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/tcpproxy"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestNATSKilledAtRandomMomentsKeepsEachMessageOnce runs `jadpo run` of a
// copy of examples/natsorders as a child process, reading a fresh
// work-queue stream of the NATS server on this machine through the durable
// pull consumer the app makes (create_consumer; ack_wait 2 s, so that what a
// killed run held comes back soon). While 1,900 of 2,000 order messages are
// published by the test's own client over about 5 s (about 2% of a type the
// queue does not list, to park unlisted_type, about 1% unreadable), it kills
// the process with SIGKILL at seeded random moments (50-1,500 ms after its
// start), at least 10 times; then 50 are published at once and a run is
// killed the moment it logs a kept message (kept, not yet acknowledged),
// then the last 50 (opening with two to park) and a run killed the moment
// it logs a parked one. A last run drains the consumer and exits 0 on
// SIGTERM. Then VerifyNATS: each valid order kept once (a lost one: "was
// lost"; one kept twice: "twice" and the counts), each to park parked once
// with its body as published, and the broker holding nothing: no message in
// the stream, none pending or unacknowledged for the consumer (an
// acknowledgement never sent, or a message never handed back, fails here).
func TestNATSKilledAtRandomMomentsKeepsEachMessageOnce(t *testing.T) {
	pgtest.Require(t)
	n, minKills, over := 2000, 10, 5*time.Second
	if testing.Short() {
		n, minKills, over = 400, 4, time.Second
	}
	sd := seed(t, 20261202)
	t.Logf("seed %d (set JADPO_FAULT_SEED to change it), %d messages over %v, at least %d kills", sd, n, over, minKills)
	bin := jadpoBin(t)
	e := NewNATS(t, 2*time.Second, "")
	w := NewNATSOrders(sd, n)
	tail := 100
	for _, i := range []int{n - tail/2, n - tail/2 + 1} {
		w.Orders[i] = parkedOrder(w.Orders[i])
	}
	rng := rand.New(rand.NewPCG(sd, 0x6e6174736b696c6c))
	start := time.Now()
	l := newLives(t, func(log string) *Proc { return e.StartRun(bin, log, "--interval", "200ms") })
	s := w.PublishFlow(e, 0, n-tail, over)
	live := func(what string, until func(p *Proc) time.Duration) {
		t.Helper()
		msgs, life := l.kill(until)
		m, p, a := e.Held()
		t.Logf("run %2d killed %s after %4d ms: kept %4d, repeats %3d, parked %2d; %5d published; stream %d, pending %d, unacknowledged %d",
			l.kills, what, life.Milliseconds(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], s.Sent(), m, p, a)
	}
	l.killWhileSending(rng, minKills, s, n-tail, live)
	if err := w.Publish(e, n-tail, n-tail/2); err != nil {
		t.Fatal(err)
	}
	live("after a keep", untilLogged("kept"))
	if err := w.Publish(e, n-tail/2, n); err != nil {
		t.Fatal(err)
	}
	live("after a park", untilLogged("parked"))
	msgs := l.last("the last run to drain the consumer", e.Drained)
	k := VerifyNATS(t, e, w, e.Plan.SubscribersByEvent())
	if l.totals["kept"] > k.Outbox {
		t.Errorf("the runs logged %d kept messages; the outbox holds %d", l.totals["kept"], k.Outbox)
	}
	t.Logf("%d messages in %v: %d kills (%d had kept, repeated or parked something); the last run kept %d, repeated %d, parked %d; over all runs kept %d, repeats %d, parked %d; store: outbox %d, deliveries %d, parked %v",
		n, time.Since(start).Round(time.Millisecond), l.kills, l.worked, msgs["kept"], msgs["repeat: already kept"], msgs["parked"],
		l.totals["kept"], l.totals["repeat: already kept"], l.totals["parked"], k.Outbox, k.Deliveries, k.Parked)
}

// parkedOrder makes o one to park: a type the queue does not list.
func parkedOrder(o NATSOrder) NATSOrder {
	o.Type, o.Event, o.Park = "order.refunded", "", "unlisted_type"
	o.Body = []byte(`{"id":"` + o.ID + `","type":"order.refunded","order_id":1}`)
	return o
}

// TestNATSConnectionCutMidBatchLosesNothing runs one `jadpo run` whose NATS
// connection goes through a proxy of the test's own, and cuts it (every
// connection closed, new ones refused for 300 ms) each time the run logs a
// kept message after the client reconnected, at most 5 times, while 600
// messages are published: batches
// fetched, kept and not yet acknowledged lose their acknowledgements, and
// others are fetched into a connection about to die. The client reconnects;
// what was not acknowledged comes back after the ack wait (2 s) and is
// recognised as a repeat. Then VerifyNATS: each kept once, nothing lost,
// nothing left on the broker.
func TestNATSConnectionCutMidBatchLosesNothing(t *testing.T) {
	pgtest.Require(t)
	bin := jadpoBin(t)
	proxy := tcpproxy.New(t, natsAddr(t))
	e := NewNATS(t, 2*time.Second, "nats://"+proxy.Addr())
	n := 600
	w := NewNATSOrders(seed(t, 20261203), n)
	p := e.StartRun(bin, t.TempDir()+"/run.log", "--interval", "100ms")
	s := w.PublishFlow(e, 0, n, 2*time.Second)
	cuts := 0
	kept := 0
	connected := 0 // connections through the proxy at the last cut: each cut waits for the client to be back
	for cuts < 5 && !e.Drained() || !s.Finished() {
		if p.Exited() {
			t.Fatalf("jadpo run ended by itself: %v", p.Err())
		}
		if c := loggedCount(p, "kept"); c > kept && cuts < 5 && proxy.Accepted() > connected {
			kept = c
			connected = proxy.Accepted()
			proxy.Cut()
			cuts++
			time.Sleep(300 * time.Millisecond)
			proxy.Restore()
		}
		time.Sleep(5 * time.Millisecond)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !e.Drained() {
		if time.Now().After(deadline) {
			m, pe, a := e.Held()
			t.Fatalf("the run did not drain the consumer: stream %d, pending %d, unacknowledged %d", m, pe, a)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatalf("stopping the run: %v", err)
	}
	k := VerifyNATS(t, e, w, e.Plan.SubscribersByEvent())
	t.Logf("%d cuts, %d connections through the proxy; outbox %d, parked %v", cuts, proxy.Accepted(), k.Outbox, k.Parked)
	if cuts == 0 {
		t.Fatal("the connection was never cut")
	}
}
