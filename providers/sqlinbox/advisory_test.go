package sqlinbox

import (
	"errors"
	"reflect"
	"testing"
)

// claimElsewhere claims from another goroutine (so on another connection) while the caller's batches hold theirs.
func claimElsewhere(t *testing.T, in *Inbox, max int) *Batch {
	t.Helper()
	var b *Batch
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, err = in.Claim(bg, max)
	}()
	<-done
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	t.Cleanup(func() { b.Abandon(bg) })
	return b
}

// TestAdvisoryLockKey: with LockKey tenant, a claim holding tenant a's rows (and one of b's)
// keeps every row of those tenants from a concurrent claim; Finish frees them, each lock
// released as many times as it was taken.
func TestAdvisoryLockKey(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	exec(t, pool, `INSERT INTO order_jobs(name, tenant, order_id) VALUES
		('packing', 'a', 1), ('packing', 'a', 2), ('packing', 'b', 3), ('packing', 'b', 4), ('packing', 'c', 5)`)
	tb := seedTable(AdvisoryLock)
	tb.LockKey = []string{"tenant"}
	in := open(t, pool, tb)
	b1 := claim(t, in, 3) // a twice (reentrant), b once
	if got := ids(b1); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Fatalf("first claim: %v, want [1 2 3]", got)
	}
	if n := heldLocks(t, pool, in); n != 2 {
		t.Errorf("%d keys held, want 2 (a and b)", n)
	}
	b2 := claimElsewhere(t, in, 10)
	if got := ids(b2); !reflect.DeepEqual(got, []string{"5"}) { // row 4 is b's: held by the first claim
		t.Fatalf("concurrent claim: %v, want [5]", got)
	}
	b3 := claimElsewhere(t, in, 10)
	if len(b3.Rows) != 0 || len(b3.Missing) != 0 || b3.conn != nil {
		t.Fatalf("third claim: %v %v, want nothing and no connection held", ids(b3), b3.Missing)
	}
	if n, err := b3.Finish(bg, nil); err != nil || n != 0 {
		t.Errorf("Finish of an empty claim = %d, %v", n, err)
	}
	if n, err := b1.Finish(bg, []string{"1"}); err != nil || n != 1 {
		t.Fatalf("Finish = %d, %v; want 1", n, err)
	}
	if n := heldLocks(t, pool, in); n != 1 { // c, by b2; a was taken twice and released twice
		t.Errorf("%d keys held after Finish, want 1", n)
	}
	b4 := claimElsewhere(t, in, 10)
	if got := ids(b4); !reflect.DeepEqual(got, []string{"2", "3", "4"}) {
		t.Fatalf("claim after Finish: %v, want [2 3 4]", got)
	}
	b4.Abandon(bg)
	b2.Abandon(bg)
	if n := heldLocks(t, pool, in); n != 0 {
		t.Errorf("%d keys held after every batch ended, want 0", n)
	}
}

// TestAdvisoryAbandonReleases: Abandon releases the locks at once (the attempt increment,
// committed by the claim, stays); Finish after it is ErrEnded.
func TestAdvisoryAbandonReleases(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 3)
	in := open(t, pool, seedTable(AdvisoryLock))
	b := claim(t, in, 10)
	if n := heldLocks(t, pool, in); n != 3 {
		t.Errorf("%d locks held, want 3", n)
	}
	b.Abandon(bg)
	b.Abandon(bg)
	if _, err := b.Finish(bg, ids(b)); !errors.Is(err, ErrEnded) {
		t.Errorf("Finish after Abandon: %v, want ErrEnded", err)
	}
	if n := heldLocks(t, pool, in); n != 0 {
		t.Errorf("%d locks held after Abandon", n)
	}
	b = claimElsewhere(t, in, 10)
	if got := ids(b); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Fatalf("after Abandon: %v", got)
	}
	if got := string(b.Rows[0].Body); got != `{"job_id":1,"name":"packing","attempt":3,"tenant":"acme","trace":null,"order_id":1,"note":null}` {
		t.Errorf("body after an abandoned claim: %s", got)
	}
	b.Abandon(bg)
}

// TestAdvisoryLostConnectionReleases: when the claim's backend dies, its locks die with its
// session: the rows are claimed again, and Finish reports the failure instead of deleting.
func TestAdvisoryLostConnectionReleases(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 3)
	in := open(t, pool, seedTable(AdvisoryLock))
	b := claim(t, in, 10)
	pid := b.conn.Conn().PgConn().PID()
	var ok bool
	if err := pool.QueryRow(bg, `SELECT pg_terminate_backend($1, 5000)`, int(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend: %v, %v", ok, err)
	}
	b2 := claimElsewhere(t, in, 10)
	if got := ids(b2); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Fatalf("after the claim's backend died: %v", got)
	}
	b2.Abandon(bg)
	if n, err := b.Finish(bg, ids(b)); err == nil || n != 0 {
		t.Errorf("Finish on a dead connection = %d, %v; want an error", n, err)
	}
	if got := count(t, pool, `SELECT count(*) FROM order_jobs`); got != 3 {
		t.Errorf("%d rows left, want 3", got)
	}
	b3 := claim(t, in, 10) // the pool lost the dead connection, not its use
	if n, err := b3.Finish(bg, ids(b3)); err != nil || n != 3 {
		t.Fatalf("Finish = %d, %v; want 3", n, err)
	}
	if n := heldLocks(t, pool, in); n != 0 {
		t.Errorf("%d locks held", n)
	}
}

// TestAdvisoryGoneRowDropped: a row another process finished between the candidate select and
// the lock is dropped silently (not Missing) and its lock released.
func TestAdvisoryGoneRowDropped(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 4)
	in := open(t, pool, seedTable(AdvisoryLock))
	in.afterCandidates = func() { exec(t, pool, `DELETE FROM order_jobs WHERE job_id IN (2, 3)`) }
	b := claim(t, in, 10)
	in.afterCandidates = nil
	if got := ids(b); !reflect.DeepEqual(got, []string{"1", "4"}) || len(b.Missing) != 0 {
		t.Fatalf("rows %v missing %v; want [1 4] and none", got, b.Missing)
	}
	if n := heldLocks(t, pool, in); n != 2 {
		t.Errorf("%d locks held, want 2 (the gone rows' released)", n)
	}
	if n, err := b.Finish(bg, []string{"1", "2", "4"}); err != nil || n != 2 { // 2 is not the batch's: ignored
		t.Fatalf("Finish = %d, %v; want 2", n, err)
	}

	// Every candidate gone: an empty batch, nothing held.
	addJobs(t, pool, 2)
	in.afterCandidates = func() { exec(t, pool, `DELETE FROM order_jobs`) }
	b = claim(t, in, 10)
	in.afterCandidates = nil
	if len(b.Rows) != 0 || len(b.Missing) != 0 || b.conn != nil {
		t.Fatalf("rows %v missing %v", ids(b), b.Missing)
	}
	if n := heldLocks(t, pool, in); n != 0 {
		t.Errorf("%d locks held", n)
	}
}

// TestAdvisoryNamespaces: two inboxes over same-named tables in two schemas hold their locks
// apart, so one's claim does not block the other's.
func TestAdvisoryNamespaces(t *testing.T) {
	pool, schema := testDB(t)
	seed(t, pool, 2)
	exec(t, pool, `CREATE SCHEMA `+schema+`_other; CREATE TABLE `+schema+`_other.order_jobs (LIKE order_jobs INCLUDING ALL)`)
	t.Cleanup(func() { exec(t, pool, `DROP SCHEMA `+schema+`_other CASCADE`) })
	exec(t, pool, `INSERT INTO `+schema+`_other.order_jobs SELECT * FROM order_jobs`)
	in := open(t, pool, seedTable(AdvisoryLock))
	ot := seedTable(AdvisoryLock)
	ot.Schema = schema + "_other"
	other := open(t, pool, ot)
	if in.ns == other.ns {
		t.Fatalf("both namespaces are %d", in.ns)
	}
	b1 := claim(t, in, 10)
	b2 := claimElsewhere(t, other, 10)
	if !reflect.DeepEqual(ids(b1), []string{"1", "2"}) || !reflect.DeepEqual(ids(b2), []string{"1", "2"}) {
		t.Fatalf("claims %v and %v, want [1 2] each", ids(b1), ids(b2))
	}
	b1.Abandon(bg)
	b2.Abandon(bg)
}
