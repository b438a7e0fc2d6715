package sqlinbox

import (
	"reflect"
	"strings"
	"testing"
)

// TestClaimByKind: the seed's two messages on one table, each read by its own inbox (OrderJob by
// the default fetch, OrderMail by a join), each claiming only the rows of its own group, while
// the other's claim is still open; a row of a group neither lists (or of none) stays in the table.
func TestClaimByKind(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 0)
		exec(t, pool, `INSERT INTO order_jobs(name, tenant, order_id) VALUES
			('packing', 'acme', 1), ('receipts', 'acme', 2), ('refund', 'acme', 3),
			('packing', 'acme', 4), ('receipts', 'acme', 5), (NULL, 'acme', 6)`)
		exec(t, pool, `INSERT INTO orders VALUES (2, 'ann', 1250), (5, 'bob', 99)`)
		packing := seedTable(form)
		packing.Kinds = []string{"packing"}
		receipts := seedTable(form)
		receipts.Columns = nil
		receipts.Fetch = orderMail
		receipts.Kinds = []string{"receipts"}
		pack, mail := open(t, pool, packing), open(t, pool, receipts)
		for _, in := range []*Inbox{pack, mail} {
			if c := in.Statements()["claim"]; !strings.Contains(c, `"name"::text = ANY($2::text[])`) {
				t.Errorf("the claim does not take its kinds: %s", c)
			}
		}
		pb := claim(t, pack, 10)
		mb := claim(t, mail, 10)
		if got := ids(pb); !reflect.DeepEqual(got, []string{"1", "4"}) || len(pb.Missing) != 0 {
			t.Errorf("packing claimed %v, missing %v; want [1 4]", got, pb.Missing)
		}
		if got := ids(mb); !reflect.DeepEqual(got, []string{"2", "5"}) || len(mb.Missing) != 0 {
			t.Errorf("receipts claimed %v, missing %v; want [2 5]", got, mb.Missing)
		}
		if len(mb.Rows) > 0 && !strings.Contains(string(mb.Rows[0].Body), `"customer":"ann"`) {
			t.Errorf("the join's row: %s", mb.Rows[0].Body)
		}
		for _, b := range []*Batch{pb, mb} {
			if _, err := b.Finish(bg, ids(b)); err != nil {
				t.Fatal(err)
			}
		}
		for _, in := range []*Inbox{pack, mail} {
			if b := claim(t, in, 10); len(b.Rows)+len(b.Missing) != 0 {
				t.Errorf("claimed again %v %v", ids(b), b.Missing)
			}
		}
		// The refund and the job without a kind wait for an inbox that lists them.
		if got := count(t, pool, `SELECT count(*)::int FROM order_jobs WHERE order_id IN (3, 6)`); got != 2 {
			t.Errorf("%d of the unlisted rows left, want 2", got)
		}
		if got := count(t, pool, `SELECT count(*)::int FROM order_jobs`); got != 2 {
			t.Errorf("%d rows left, want 2", got)
		}
	})
}

// TestStatementsByKind pins each form's claim with kinds; the other statements are those
// without (TestStatementsSeed).
func TestStatementsByKind(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	want := map[Form]string{
		RowLock: `SELECT "job_id" FROM "order_jobs" WHERE "name"::text = ANY($2::text[]) ORDER BY "job_id" LIMIT $1 FOR UPDATE SKIP LOCKED`,
		Lease: `WITH claimed AS (UPDATE "order_jobs" SET "locked_until" = now() + interval '30 seconds', "attempt" = "attempt" + 1` +
			` WHERE "job_id" IN (SELECT "job_id" FROM "order_jobs" WHERE ("locked_until" IS NULL OR "locked_until" <= now()) AND "name"::text = ANY($2::text[])` +
			` ORDER BY "job_id" LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING "job_id", "locked_until") SELECT "job_id", "locked_until" FROM claimed ORDER BY "job_id"`,
		AdvisoryLock: `SELECT "job_id", json_build_array("job_id")::text FROM "order_jobs" WHERE "name"::text = ANY($2::text[]) ORDER BY "job_id" LIMIT $1`,
	}
	for form, w := range want {
		plain := open(t, pool, seedTable(form)).Statements()
		tb := seedTable(form)
		tb.Kinds = []string{"packing"}
		got := open(t, pool, tb).Statements()
		if got["claim"] != w {
			t.Errorf("%s claim\n got %s\nwant %s", form, got["claim"], w)
		}
		delete(got, "claim")
		delete(plain, "claim")
		if !reflect.DeepEqual(got, plain) {
			t.Errorf("%s: kinds changed more than the claim: %v", form, got)
		}
	}
}

// TestClaimByKindNonTextGroup: the group is compared as text, so an enum column's kinds claim
// (and one the enum does not hold is no error: it matches no row).
func TestClaimByKindNonTextGroup(t *testing.T) {
	pool, _ := testDB(t)
	exec(t, pool, `CREATE TYPE kind AS ENUM ('packing', 'receipts');
		CREATE TABLE jobs(job_id BIGSERIAL PRIMARY KEY, name kind NOT NULL, note TEXT);
		INSERT INTO jobs(name) VALUES ('receipts'), ('packing'), ('receipts')`)
	forms(t, func(t *testing.T, form Form) {
		tb := Table{Name: "jobs", ID: "job_id", Group: "name", Form: form, Kinds: []string{"receipts", "refund"}}
		if form == Lease {
			exec(t, pool, `ALTER TABLE jobs ADD COLUMN IF NOT EXISTS locked_until timestamptz`)
			tb.LockedUntil = "locked_until"
		}
		b := claim(t, open(t, pool, tb), 10)
		if got := ids(b); !reflect.DeepEqual(got, []string{"1", "3"}) {
			t.Errorf("claimed %v, want [1 3]", got)
		}
		b.Abandon(bg)
		if form == Lease {
			exec(t, pool, `UPDATE jobs SET locked_until = NULL`)
		}
	})
}

// TestClaimByKindNeedsGroup: kinds without a group column are refused, not ignored.
func TestClaimByKindNeedsGroup(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	tb := seedTable(RowLock)
	tb.Group = ""
	tb.Kinds = []string{"packing"}
	if _, err := Open(bg, pool, tb); err == nil || !strings.Contains(err.Error(), "group") {
		t.Fatalf("Open = %v, want the group asked for", err)
	}
}
