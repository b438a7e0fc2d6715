package processtest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// TestSQLInboxKilledAtRandomMomentsKeepsEachRowOnce runs `jadpo run` of a
// copy of examples/jobs as a child process: its queue is the table
// order_jobs in a fresh PostgreSQL schema (JOBS_DATABASE_URL), its events'
// store another fresh schema (--database), so nothing ties the two but the
// runtime. Once for each claim form (row_lock: the claim's transaction
// holds the rows, a kill rolls it back; lease: claims set locked_until for
// 2 s, a killed run's rows come back when it runs out), while 1,900 of
// 2,000 rows are inserted over about 5 s (300 of 400 over 1 s with -short) (about 2% of kind "refund", which
// the queue does not list and so never claims, about 1% packing rows with an empty tenant to be
// parked unreadable, the rest valid packing and receipts rows) it kills the
// process with SIGKILL at seeded random moments (50-1,500 ms after its
// start), at least 10 times, restarting it each time; the last 100 rows are
// then inserted at once and one more run is killed the moment it logs a
// kept row (its batch's keep committed, the rows not yet deleted, other
// batches claimed behind it), then the last 50 (opening with a refund and a
// row to park) and one more run killed the moment it logs a parked row. A
// last run drains the table (of all but the refunds) and exits 0 on SIGTERM. With -short: 400 rows, at least
// 4 random kills, the two forms at once (about 7 s).
//
// Then every row must have been kept or parked exactly once
// (VerifySQLInbox). What catches what:
//   - a row lost (deleted from the inbox before its keep committed, or a
//     claim committed without the keep): "was lost: no outbox row" and the
//     outbox and received ids counts below the valid job ids (the table is
//     empty at the end, so the row is nowhere);
//   - a row kept twice (a repeat not recognised after a kill): "outbox holds
//     job ... twice" and the outbox count above the received ids, and the
//     check that the runs did not log more kept rows than the outbox holds;
//   - a row to park not parked, parked twice or for another reason, or a
//     valid row parked: "was not parked", "was parked n times", "parked
//     ..., not ..." and "valid job ... was parked";
//   - a row left in the table (never deleted, or a lease never claimed
//     again): the wait for a drained table and "the inbox table still
//     holds"; a refund claimed or taken: "was claimed", "left the table";
//   - headers or fields lost on the way: the event JSON and headers checks.
//
// Confirmed by running this test with GOFLAGS=-overlay=<json> (so that
// the go build of cmd/jadpo compiles a broken copy of runtime/sqlinbox.go
// kept outside the repository, which stays untouched): with fetch finishing
// each claim at once (deleting the claimed rows and committing) before the
// rows are kept, both subtests fail with about 40-50 "job ... was lost: no
// outbox row" (the rows of the batches in flight when a run was killed, most
// of them from the kill after a keep) and outbox/received ids below the
// valid job ids; with finish deleting no row, the table never empties and
// both fail in the wait for the last run to drain it.
//
// The lease form's parked rows: a lease claim increments attempt and sets
// locked_until (committed at once), so a row parked by a run killed before
// it deleted the row comes back with another body. This test found the
// runtime parking such a row twice; the driver now parks a row's body
// without its claim columns, and a second park is a failure here.
func TestSQLInboxKilledAtRandomMomentsKeepsEachRowOnce(t *testing.T) {
	pgtest.Require(t)
	for _, form := range []struct {
		name string
		opts SQLInboxOptions
	}{
		{"row_lock", SQLInboxOptions{}},
		{"lease", SQLInboxOptions{Lease: 2 * time.Second}},
		{"advisory_lock", SQLInboxOptions{LockKey: "tenant"}},
	} {
		// The forms run at once, each on schemas of its own.
		t.Run(form.name, func(t *testing.T) { t.Parallel(); sqlInboxKills(t, form.name, form.opts) })
	}
}

func sqlInboxKills(t *testing.T, form string, opts SQLInboxOptions) {
	lease := opts.Lease
	n, minKills, over := 2000, 10, 5*time.Second
	if testing.Short() {
		n, minKills, over = 400, 4, time.Second
	}
	sd := seed(t, 20261204)
	t.Logf("seed %d (set JADPO_FAULT_SEED to change it), %d rows over %v, at least %d kills", sd, n, over, minKills)
	bin := jadpoBin(t)
	e := NewSQLInbox(t, opts)
	w := NewJobsWorkload(sd, n)
	tail := 100
	// The second half of the tail (below) opens with a refund, which stays in
	// the table, and a row to park.
	w.Jobs[n-tail/2].Name, w.Jobs[n-tail/2].Event, w.Jobs[n-tail/2].Park, w.Jobs[n-tail/2].Stays = "refund", "", "", true
	w.Jobs[n-tail/2+1].Name, w.Jobs[n-tail/2+1].Event, w.Jobs[n-tail/2+1].Park, w.Jobs[n-tail/2+1].Tenant = "packing", "", "unreadable", ""
	rng := rand.New(rand.NewPCG(sd, 0x73716c6b696c6c^uint64(lease)^uint64(len(opts.LockKey))))
	start := time.Now()
	l := newLives(t, func(log string) *Proc { return e.StartRun(bin, log, "--interval", "200ms") })

	// The last 100 rows are held back for the last two killed runs (below).
	s := w.InsertFlow(e, 0, n-tail, over)
	live := func(what string, until func(p *Proc) time.Duration) {
		t.Helper()
		msgs, life := l.kill(until)
		t.Logf("run %2d killed %s after %4d ms: kept %4d, repeats %3d, parked %2d; %5d inserted, %4d in the table",
			l.kills, what, life.Milliseconds(), msgs["kept"], msgs["repeat: already kept"], msgs["parked"], s.Sent(), e.InboxRows())
	}
	l.killWhileSending(rng, minKills, s, n-tail, live)
	// A run that keeps up is mostly idle, so random kills seldom fall between
	// a keep and the delete of its rows. So the held-back tail is inserted at
	// once and one more run is killed the moment it logs a kept row: its
	// batch's keep has committed and (row_lock) the claim's transaction,
	// which deletes the rows, has not, or other batches are in flight.
	w.Insert(e, n-tail, n-tail/2)
	live("after a keep", untilLogged("kept"))
	// The second half of the tail starts with a row to park: the last run is
	// killed the moment it logs a parked row, before its batch's rows are
	// deleted, so the row is claimed again and must not be parked twice.
	w.Insert(e, n-tail/2, n)
	live("after a park", untilLogged("parked"))
	killPhase := time.Since(start)
	atLastKill := e.InboxRows()

	// A last run drains the table of all but the refunds (row_lock: the
	// killed runs' claims rolled back; lease: their leases run out) and
	// stops cleanly on SIGTERM.
	_, _, stay := w.Count()
	msgs := l.last("the last run to drain the inbox table", func() bool { return e.InboxRows() == stay })
	kills, worked, totals := l.kills, l.worked, l.totals
	duration := time.Since(start)

	k := VerifySQLInbox(t, e, w, e.Plan.SubscribersByEvent())
	valid, toPark, _ := w.Count()
	// A run killed between a commit and its log line kept rows it never
	// logged; no run may log more than the outbox holds.
	if totals["kept"] > k.Outbox {
		t.Errorf("the runs logged %d kept rows; the outbox holds %d", totals["kept"], k.Outbox)
	}
	t.Logf("%s: %d rows (%d valid, to park %v, %d refunds to leave) in %v: %d kills over %v (%d of the killed runs had kept, repeated or parked something); %d rows in the table at the last kill; the last run kept %d, repeated %d, parked %d",
		form, n, valid, toPark, stay, duration.Round(time.Millisecond), kills, killPhase.Round(time.Millisecond), worked,
		atLastKill, msgs["kept"], msgs["repeat: already kept"], msgs["parked"])
	t.Logf("%s: log lines over all runs: kept %d, repeats %d, parked %d, parked already %d, store unavailable %d, delete failed %d, leases ran out %d; store: outbox %d, received ids %d, deliveries %d, parked %v",
		form, totals["kept"], totals["repeat: already kept"], totals["parked"], totals["parked already: the same body from this queue; nothing added"],
		totals["the store cannot take messages now; they stay on the queue"],
		totals["deleting settled rows failed; they will be claimed again, the kept ones as repeats"],
		totals["some rows' leases had run out before they were deleted; they will come back as repeats"],
		k.Outbox, k.ReceivedIDs, k.Deliveries, k.Parked)
	t.Logf("%s: kept by a run killed before it logged them: %d", form, k.Outbox-totals["kept"])
}
