package sqlinbox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

var bg = context.Background()

// TestStatementsSeed pins the SQL built for the seed's table in both forms.
func TestStatementsSeed(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	want := map[Form]map[string]string{
		RowLock: {
			"claim":   `SELECT "job_id" FROM "order_jobs" ORDER BY "job_id" LIMIT $1 FOR UPDATE SKIP LOCKED`,
			"attempt": `UPDATE "order_jobs" SET "attempt" = "attempt" + 1 WHERE "job_id" = ANY($1)`,
			"fetch":   `SELECT "job_id", "name", "attempt", "tenant", "trace", "order_id", "note" FROM "order_jobs" WHERE "job_id" = ANY($1) ORDER BY "job_id"`,
			"delete":  `DELETE FROM "order_jobs" WHERE "job_id" = ANY($1)`,
			"row":     `SELECT * FROM "order_jobs" WHERE "job_id" = ANY($1)`,
		},
		Lease: {
			"claim": `WITH claimed AS (UPDATE "order_jobs" SET "locked_until" = now() + interval '30 seconds', "attempt" = "attempt" + 1` +
				` WHERE "job_id" IN (SELECT "job_id" FROM "order_jobs" WHERE "locked_until" IS NULL OR "locked_until" <= now() ORDER BY "job_id" LIMIT $1 FOR UPDATE SKIP LOCKED)` +
				` RETURNING "job_id", "locked_until") SELECT "job_id", "locked_until" FROM claimed ORDER BY "job_id"`,
			"fetch":  `SELECT "job_id", "name", "attempt", "locked_until", "tenant", "trace", "order_id", "note" FROM "order_jobs" WHERE "job_id" = ANY($1) ORDER BY "job_id"`,
			"delete": `DELETE FROM "order_jobs" WHERE "job_id" = ANY($1) AND "locked_until" = $2`,
			"row":    `SELECT * FROM "order_jobs" WHERE "job_id" = ANY($1)`,
		},
		AdvisoryLock: {
			"claim":   `SELECT "job_id", json_build_array("job_id")::text FROM "order_jobs" ORDER BY "job_id" LIMIT $1`,
			"lock":    `SELECT pg_try_advisory_lock($1, hashtext($2))`,
			"unlock":  `SELECT pg_advisory_unlock($1, hashtext(k)) FROM unnest($2::text[]) AS k`,
			"attempt": `UPDATE "order_jobs" SET "attempt" = "attempt" + 1 WHERE "job_id" = ANY($1)`,
			"fetch":   `SELECT "job_id", "name", "attempt", "tenant", "trace", "order_id", "note" FROM "order_jobs" WHERE "job_id" = ANY($1) ORDER BY "job_id"`,
			"exists":  `SELECT 1 FROM "order_jobs" WHERE "job_id" = $1`,
			"delete":  `DELETE FROM "order_jobs" WHERE "job_id" = ANY($1)`,
			"row":     `SELECT * FROM "order_jobs" WHERE "job_id" = ANY($1)`,
		},
	}
	for form, w := range want {
		got := open(t, pool, seedTable(form)).Statements()
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s statements:\n got %#v\nwant %#v", form, got, w)
		}
		for k, v := range got {
			t.Logf("%s %s: %s", form, k, v)
		}
	}
	keyed := seedTable(AdvisoryLock)
	keyed.LockKey = []string{"tenant", "order_id"}
	got := open(t, pool, keyed).Statements()
	if w := `SELECT "job_id", json_build_array("tenant", "order_id")::text FROM "order_jobs" ORDER BY "job_id" LIMIT $1`; got["claim"] != w {
		t.Errorf("keyed claim\n got %s\nwant %s", got["claim"], w)
	}
	t.Logf("advisory_lock with LockKey claim: %s", got["claim"])
	tb := seedTable(Lease)
	tb.Schema = "public"
	tb.Lease = 200 * time.Millisecond
	in, err := Open(bg, pool, tb)
	if err == nil {
		t.Fatalf("public.order_jobs should not exist: %v", in.Statements())
	}
	if !strings.Contains(err.Error(), `table "public.order_jobs": preparing the claim statement `+"`WITH claimed AS (UPDATE \"public\".\"order_jobs\"") {
		t.Errorf("the schema is not in the SQL: %v", err)
	}
}

// TestDefaultFetchBody: the body holds exactly the id, group, attempt, headers and own
// columns; a NULL header is left out; each claim increments the attempt.
func TestDefaultFetchBody(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	exec(t, pool, `INSERT INTO order_jobs(name, tenant, trace, order_id, note) VALUES
		('packing', 'acme', NULL, 7, NULL), ('receipts', 'globex', 'tr-9', 9, 'fragile "box" <&>')`)
	in := open(t, pool, seedTable(RowLock))
	b := claim(t, in, 10)
	wantBodies := []string{
		`{"job_id":1,"name":"packing","attempt":2,"tenant":"acme","trace":null,"order_id":7,"note":null}`,
		`{"job_id":2,"name":"receipts","attempt":2,"tenant":"globex","trace":"tr-9","order_id":9,"note":"fragile \"box\" <&>"}`,
	}
	wantHeaders := []map[string]string{
		{"tenant": "acme", "order_id": "7"},
		{"tenant": "globex", "trace": "tr-9", "order_id": "9"},
	}
	if len(b.Rows) != 2 || len(b.Missing) != 0 {
		t.Fatalf("rows %d, missing %v", len(b.Rows), b.Missing)
	}
	for i, r := range b.Rows {
		if r.ID != fmt.Sprint(i+1) || string(r.Body) != wantBodies[i] || !reflect.DeepEqual(r.Headers, wantHeaders[i]) {
			t.Errorf("row %d: id %q body %s headers %v\nwant body %s headers %v", i, r.ID, r.Body, r.Headers, wantBodies[i], wantHeaders[i])
		}
	}
	if n, err := b.Finish(bg, nil); err != nil || n != 0 {
		t.Fatalf("Finish(nil) = %d, %v", n, err)
	}
	b = claim(t, in, 10)
	if !strings.Contains(string(b.Rows[0].Body), `"attempt":3`) {
		t.Errorf("second claim: %s, want attempt 3", b.Rows[0].Body)
	}
	if n, err := b.Finish(bg, ids(b)); err != nil || n != 2 {
		t.Fatalf("Finish(all) = %d, %v", n, err)
	}

	// The lease form's default fetch adds locked_until, and increments the attempt too.
	addJobs(t, pool, 1)
	lt := seedTable(Lease)
	lt.Lease = 200 * time.Millisecond
	lin := open(t, pool, lt)
	for attempt := 2; attempt <= 3; attempt++ {
		b = claim(t, lin, 10)
		if len(b.Rows) != 1 {
			t.Fatalf("lease claim %d: %d rows", attempt, len(b.Rows))
		}
		body := string(b.Rows[0].Body)
		if !strings.Contains(body, fmt.Sprintf(`"attempt":%d,"locked_until":"20`, attempt)) || !strings.HasSuffix(body, `"tenant":"acme","trace":null,"order_id":1,"note":null}`) {
			t.Errorf("lease body %s", body)
		}
		b.Abandon(bg)
		time.Sleep(250 * time.Millisecond)
	}
}

// TestBodyJSONTypes: every JSON rule of the package doc, in the body and in the headers.
func TestBodyJSONTypes(t *testing.T) {
	pool, _ := testDB(t)
	exec(t, pool, `CREATE TYPE mood AS ENUM ('calm', 'busy');
	CREATE TABLE typed(id bigserial PRIMARY KEY, i2 smallint, i4 int, i8 bigint, num numeric, nan numeric, f4 real, f8 double precision,
		finf double precision, t text, vc varchar(10), ch char(3), b bool, tstz timestamptz, tstz0 timestamptz, ts timestamp, d date,
		u uuid, j json, jb jsonb, by bytea, ia int[], ta text[], m2 int[][], da date[], n text, iv interval, e mood)`)
	exec(t, pool, `INSERT INTO typed(i2, i4, i8, num, nan, f4, f8, finf, t, vc, ch, b, tstz, tstz0, ts, d, u, j, jb, by, ia, ta, m2, da, n, iv, e) VALUES
		(-3, 2147483647, 9007199254740993, 12345678901234567890.000100, 'NaN', 1.5, 0.1, '-Infinity', 'he said "hi" <&> é', 'v', 'ab', true,
		 '2024-03-01 12:00:00.123+02', '2024-03-01 12:00:00+02', '2024-03-01 12:00:00.25', '2024-02-29',
		 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"a": 1, "b":[1, 2.50]}', '{"big": 12345678901234567890}', '\x0102ff',
		 '{1,NULL,3}', '{a,"b c"}', '{{1,2},{3,4}}', '{2024-01-02}', NULL, '1 day 02:00:00', 'busy')`)
	cols := []string{"i2", "i4", "num", "nan", "f4", "f8", "finf", "t", "vc", "ch", "tstz0", "ts", "j", "jb", "by", "ia", "ta", "m2", "da", "iv", "e"}
	for _, form := range []Form{RowLock, Lease, AdvisoryLock} {
		tb := Table{Name: "typed", ID: "id", Headers: []string{"i8", "b", "tstz", "d", "u", "n"}, Columns: cols, Form: form}
		if form == Lease {
			exec(t, pool, `ALTER TABLE typed ADD COLUMN lu timestamptz`)
			tb.LockedUntil = "lu"
			tb.Fetch = `SELECT id, i8, b, tstz, d, u, n, ` + strings.Join(cols, ", ") + ` FROM typed WHERE id = ANY($1)`
		}
		in := open(t, pool, tb)
		b := claim(t, in, 1)
		want := `{"id":1,"i8":9007199254740993,"b":true,"tstz":"2024-03-01T10:00:00.123Z","d":"2024-02-29","u":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","n":null,` +
			`"i2":-3,"i4":2147483647,"num":12345678901234567890.000100,"nan":"NaN","f4":1.5,"f8":0.1,"finf":"-Infinity",` +
			`"t":"he said \"hi\" <&> é","vc":"v","ch":"ab ","tstz0":"2024-03-01T10:00:00Z","ts":"2024-03-01T12:00:00.25Z",` +
			`"j":{"a":1,"b":[1,2.50]},"jb":{"big":12345678901234567890},"by":"AQL/","ia":[1,null,3],"ta":["a","b c"],"m2":[[1,2],[3,4]],` +
			`"da":["2024-01-02"],"iv":"1 day 02:00:00","e":"busy"}`
		if len(b.Rows) != 1 || string(b.Rows[0].Body) != want {
			t.Fatalf("%s body\n got %s\nwant %s", form, b.Rows[0].Body, want)
		}
		wantH := map[string]string{"i8": "9007199254740993", "b": "true", "tstz": "2024-03-01T10:00:00.123Z", "d": "2024-02-29", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}
		if !reflect.DeepEqual(b.Rows[0].Headers, wantH) {
			t.Errorf("%s headers %v, want %v", form, b.Rows[0].Headers, wantH)
		}
		b.Abandon(bg)
	}
}

// TestClaimInIDOrderSkipsLocked: 10 of 25 in id order; claims made while it is held get the next ones.
func TestClaimInIDOrderSkipsLocked(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 25)
		in := open(t, pool, seedTable(form))
		b1 := claim(t, in, 10)
		var b2 *Batch
		var err error
		done := make(chan struct{})
		go func() { // a concurrent claim, on another connection, while b1 holds its rows
			defer close(done)
			b2, err = in.Claim(bg, 10)
		}()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		b3 := claim(t, in, 10)
		b4 := claim(t, in, 10)
		seq := func(from, to int) []string {
			var s []string
			for i := from; i <= to; i++ {
				s = append(s, fmt.Sprint(i))
			}
			return s
		}
		for i, c := range []struct {
			b    *Batch
			want []string
		}{{b1, seq(1, 10)}, {b2, seq(11, 20)}, {b3, seq(21, 25)}, {b4, nil}} {
			if got := ids(c.b); !reflect.DeepEqual(got, append([]string{}, c.want...)) {
				t.Errorf("claim %d: %v, want %v", i+1, got, c.want)
			}
		}
		total := 0
		for _, b := range []*Batch{b1, b2, b3, b4} {
			n, err := b.Finish(bg, ids(b))
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		if total != 25 || count(t, pool, `SELECT count(*) FROM order_jobs`) != 0 {
			t.Errorf("deleted %d of 25", total)
		}
	})
}

// TestConcurrentClaimsEachRowOnce: 4 goroutines claim and finish 500 rows: no row is claimed
// twice, each is deleted exactly once.
func TestConcurrentClaimsEachRowOnce(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 500)
		in := open(t, pool, seedTable(form))
		var mu sync.Mutex
		seen := map[string]int{}
		deleted := 0
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					b, err := in.Claim(bg, 10)
					if err != nil {
						errs <- err
						return
					}
					if len(b.Rows) == 0 {
						return
					}
					mu.Lock()
					for _, r := range b.Rows {
						seen[r.ID]++
					}
					mu.Unlock()
					n, err := b.Finish(bg, ids(b))
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					deleted += n
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("row %s claimed %d times", id, n)
			}
		}
		if len(seen) != 500 || deleted != 500 {
			t.Errorf("claimed %d distinct rows, deleted %d; want 500, 500", len(seen), deleted)
		}
		if n := count(t, pool, `SELECT count(*) FROM order_jobs`); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
}

// TestFinishDeletesOnlyAcked: only acked ids (of this claim) go; RowLock frees the others at
// once with their attempt kept, Lease only when the lease has run out.
func TestFinishDeletesOnlyAcked(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 5)
		tb := seedTable(form)
		tb.Lease = 200 * time.Millisecond
		in := open(t, pool, tb)
		b := claim(t, in, 5)
		n, err := b.Finish(bg, []string{"1", "3", "3", "999"})
		if err != nil || n != 2 {
			t.Fatalf("Finish = %d, %v; want 2", n, err)
		}
		if _, err := b.Finish(bg, nil); !errors.Is(err, ErrEnded) {
			t.Errorf("second Finish: %v, want ErrEnded", err)
		}
		if got := count(t, pool, `SELECT count(*) FROM order_jobs WHERE job_id IN (2, 4, 5)`); got != 3 {
			t.Errorf("%d of the unacked rows left, want 3", got)
		}
		b = claim(t, in, 10)
		if form == Lease {
			if len(b.Rows) != 0 {
				t.Fatalf("leased rows claimed again before the lease ran out: %v", ids(b))
			}
			time.Sleep(250 * time.Millisecond)
			b = claim(t, in, 10)
		}
		if got := ids(b); !reflect.DeepEqual(got, []string{"2", "4", "5"}) {
			t.Fatalf("claim after Finish: %v, want [2 4 5]", got)
		}
		if !strings.Contains(string(b.Rows[0].Body), `"attempt":3`) {
			t.Errorf("the first claim's attempt increment was lost: %s", b.Rows[0].Body)
		}
		b.Abandon(bg)
	})
}

// TestRowLockAbandonReleases: Abandon rolls back: the rows are free at once (and the claim's
// attempt increment is rolled back with it).
func TestRowLockAbandonReleases(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 3)
	in := open(t, pool, seedTable(RowLock))
	b := claim(t, in, 10)
	b.Abandon(bg)
	b.Abandon(bg) // a second Abandon is harmless
	if _, err := b.Finish(bg, ids(b)); !errors.Is(err, ErrEnded) {
		t.Errorf("Finish after Abandon: %v, want ErrEnded", err)
	}
	b = claim(t, in, 10)
	if got := ids(b); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Fatalf("after Abandon: %v", got)
	}
	if !strings.Contains(string(b.Rows[0].Body), `"attempt":2`) {
		t.Errorf("attempt after an abandoned claim: %s", b.Rows[0].Body)
	}
	b.Abandon(bg)
}

// TestRowLockLostConnectionReleases: when the claim's backend dies, its rows are free again and
// Finish reports the failure instead of deleting.
func TestRowLockLostConnectionReleases(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 3)
	in := open(t, pool, seedTable(RowLock))
	b := claim(t, in, 10)
	pid := b.tx.Conn().PgConn().PID()
	var ok bool
	if err := pool.QueryRow(bg, `SELECT pg_terminate_backend($1, 5000)`, int(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend: %v, %v", ok, err)
	}
	b2 := claim(t, in, 10)
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
}

// TestLeaseFencing: a Finish after the lease ran out and another claim took the row deletes
// nothing of it; the new claim's Finish does.
func TestLeaseFencing(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 2)
	tb := seedTable(Lease)
	tb.Lease = 200 * time.Millisecond
	in := open(t, pool, tb)
	a := claim(t, in, 10)
	time.Sleep(300 * time.Millisecond)
	b := claim(t, in, 1)
	if got := ids(b); !reflect.DeepEqual(got, []string{"1"}) {
		t.Fatalf("second claim: %v", got)
	}
	n, err := a.Finish(bg, ids(a))
	if err != nil || n != 1 { // row 2 is still a's (expired but unclaimed), row 1 is b's
		t.Fatalf("stale Finish = %d, %v; want 1 (row 2 only)", n, err)
	}
	if got := count(t, pool, `SELECT count(*) FROM order_jobs WHERE job_id = 1`); got != 1 {
		t.Fatalf("the stale Finish deleted the row another claim holds")
	}
	if n, err := b.Finish(bg, ids(b)); err != nil || n != 1 {
		t.Fatalf("Finish = %d, %v; want 1", n, err)
	}
}

const orderMail = `SELECT j.job_id, j.name, j.attempt, j.tenant, j.trace, j.order_id, o.customer, o.total FROM order_jobs j JOIN orders o ON o.id = j.order_id WHERE j.job_id = ANY($1)`

// TestUnfetchedGoneRow: a Missing id whose row the table no longer holds either (here a fetch
// that deletes it, as another process could) is parked with its id alone, still a body of its
// own; the advisory lock form, which checks, drops it from the batch instead.
func TestUnfetchedGoneRow(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 2)
		exec(t, pool, `INSERT INTO orders VALUES (1, 'ann', 1250)`)
		tb := seedTable(form)
		tb.Columns = nil
		tb.Fetch = `WITH gone AS (DELETE FROM order_jobs WHERE job_id = ANY($1) AND order_id = 2 RETURNING job_id) ` + orderMail
		in := open(t, pool, tb)
		b := claim(t, in, 10)
		defer b.Abandon(bg)
		if form == AdvisoryLock {
			if len(b.Missing) != 0 || len(b.Unfetched) != 0 {
				t.Fatalf("missing %v unfetched %v; want the gone row dropped", b.Missing, b.Unfetched)
			}
			return
		}
		if !reflect.DeepEqual(b.Missing, []string{"2"}) || string(b.Unfetched["2"].Body) != `{"job_id":2}` {
			t.Fatalf("missing %v, 2's body %s; want [2] and {\"job_id\":2}", b.Missing, b.Unfetched["2"].Body)
		}
	})
}

// TestCustomFetchJoin: the seed's OrderMail; a job whose order is missing is in Missing, and
// acking it deletes it.
func TestCustomFetchJoin(t *testing.T) {
	forms(t, func(t *testing.T, form Form) {
		pool, _ := testDB(t)
		seed(t, pool, 3)
		exec(t, pool, `INSERT INTO orders VALUES (1, 'ann', 1250), (3, 'bob', 99)`)
		tb := seedTable(form)
		tb.Columns = nil
		tb.Fetch = orderMail
		in := open(t, pool, tb)
		b := claim(t, in, 10)
		if got := ids(b); !reflect.DeepEqual(got, []string{"1", "3"}) || !reflect.DeepEqual(b.Missing, []string{"2"}) {
			t.Fatalf("rows %v missing %v; want [1 3] and [2]", got, b.Missing)
		}
		want := `{"job_id":1,"name":"packing","attempt":2,"tenant":"acme","trace":null,"order_id":1,"customer":"ann","total":1250}`
		if string(b.Rows[0].Body) != want {
			t.Errorf("body %s\nwant %s", b.Rows[0].Body, want)
		}
		if h := b.Rows[1].Headers; !reflect.DeepEqual(h, map[string]string{"tenant": "acme", "order_id": "3"}) {
			t.Errorf("headers %v", h)
		}
		// The missing job's own row, every column of the table, for the caller to park.
		lu := `"locked_until":null}`
		if form == Lease {
			lu = `"locked_until":"`
		}
		own := b.Unfetched["2"]
		if prefix := `{"job_id":2,"name":"packing","attempt":2,"tenant":"acme","trace":"tr-2","order_id":2,"note":null,` + lu; len(b.Unfetched) != 1 ||
			!strings.HasPrefix(string(own.Body), prefix) || !reflect.DeepEqual(own.Headers, map[string]string{"tenant": "acme", "trace": "tr-2", "order_id": "2"}) {
			t.Errorf("unfetched %d rows, 2: %s %v\nwant a body starting %s", len(b.Unfetched), own.Body, own.Headers, prefix)
		}
		n, err := b.Finish(bg, append(ids(b), b.Missing...))
		if err != nil || n != 3 {
			t.Fatalf("Finish = %d, %v; want 3", n, err)
		}
		if got := count(t, pool, `SELECT count(*) FROM order_jobs`); got != 0 {
			t.Errorf("%d rows left", got)
		}
	})
}

// TestOpenFails: each mistake stops Open with the table named, and the statement's SQL and
// PostgreSQL's message when the database refused it.
func TestOpenFails(t *testing.T) {
	pool, _ := testDB(t)
	seed(t, pool, 0)
	mod := func(form Form, f func(*Table)) Table { tb := seedTable(form); f(&tb); return tb }
	cases := []struct {
		name string
		t    Table
		want []string
	}{
		{"missing column", mod(RowLock, func(t *Table) { t.Columns = []string{"note", "nope"} }),
			[]string{`"order_jobs"`, `fetch statement`, `SELECT "job_id", "name"`, `column "nope" does not exist`, "42703"}},
		{"missing header column", mod(Lease, func(t *Table) { t.Headers = []string{"tenant", "region"} }),
			[]string{`"order_jobs"`, `fetch statement`, `column "region" does not exist`}},
		{"missing attempt column", mod(RowLock, func(t *Table) { t.Attempt = "tries" }),
			[]string{`"order_jobs"`, `attempt statement`, `UPDATE "order_jobs" SET "tries"`, `column "tries" does not exist`}},
		{"missing locked_until column", mod(Lease, func(t *Table) { t.LockedUntil = "leased_until" }),
			[]string{`"order_jobs"`, `claim statement`, `"leased_until"`, `does not exist`}},
		{"missing table", mod(RowLock, func(t *Table) { t.Name = "order_jobz" }),
			[]string{`"order_jobz"`, `claim statement`, `SELECT "job_id" FROM "order_jobz"`, `relation "order_jobz" does not exist`}},
		{"bad identifier", mod(RowLock, func(t *Table) { t.Headers = []string{"tenant", `trace"; DROP TABLE orders; --`} }),
			[]string{`"order_jobs"`, "setting headers:", "not a plain SQL identifier"}},
		{"bad table name", mod(RowLock, func(t *Table) { t.Name = "order-jobs" }),
			[]string{`"order-jobs"`, "setting table:", "not a plain SQL identifier"}},
		{"identifier too long", mod(RowLock, func(t *Table) { t.Columns = []string{strings.Repeat("n", 64)} }),
			[]string{`"order_jobs"`, "setting columns:", "at most 63 bytes"}},
		{"column named twice", mod(RowLock, func(t *Table) { t.Columns = []string{"tenant"} }),
			[]string{`"order_jobs"`, `column "tenant" is named by both setting headers and setting columns`}},
		{"lease without locked_until", mod(Lease, func(t *Table) { t.LockedUntil = "" }),
			[]string{`"order_jobs"`, "claim: lease needs the setting locked_until"}},
		{"locked_until without lease", mod(RowLock, func(t *Table) { t.LockedUntil = "locked_until" }),
			[]string{`"order_jobs"`, `setting locked_until is only for claim: lease`}},
		{"unknown form", mod(RowLock, func(t *Table) { t.Form = "skip_locked" }),
			[]string{`"order_jobs"`, `setting claim: "skip_locked" is not one of row_lock, lease and advisory_lock`}},
		{"lock key outside the advisory lock form", mod(RowLock, func(t *Table) { t.LockKey = []string{"tenant"} }),
			[]string{`"order_jobs"`, `setting lock_key is only for claim: advisory_lock (claim is row_lock)`}},
		{"lock key in the lease form", mod(Lease, func(t *Table) { t.LockKey = []string{"tenant"} }),
			[]string{`"order_jobs"`, `setting lock_key is only for claim: advisory_lock (claim is lease)`}},
		{"locked_until with the advisory lock form", mod(AdvisoryLock, func(t *Table) { t.LockedUntil = "locked_until" }),
			[]string{`"order_jobs"`, `setting locked_until is only for claim: lease (claim is advisory_lock)`}},
		{"bad lock key name", mod(AdvisoryLock, func(t *Table) { t.LockKey = []string{"tenant", "a b"} }),
			[]string{`"order_jobs"`, `setting lock_key: "a b" is not a plain SQL identifier`}},
		{"lock key named twice", mod(AdvisoryLock, func(t *Table) { t.LockKey = []string{"tenant", "tenant"} }),
			[]string{`"order_jobs"`, `setting lock_key names column "tenant" twice`}},
		{"missing lock key column", mod(AdvisoryLock, func(t *Table) { t.LockKey = []string{"region"} }),
			[]string{`"order_jobs"`, `claim statement`, `SELECT "job_id", json_build_array("region")::text FROM "order_jobs"`, `column "region" does not exist`}},
		{"advisory lock missing table", mod(AdvisoryLock, func(t *Table) { t.Name = "order_jobz" }),
			[]string{`"order_jobz"`, `claim statement`, `relation "order_jobz" does not exist`}},
		{"custom fetch without the id", mod(RowLock, func(t *Table) {
			t.Fetch = `SELECT name, tenant FROM order_jobs WHERE job_id = ANY($1)`
		}), []string{`"order_jobs"`, "fetch statement `SELECT name, tenant FROM order_jobs WHERE job_id = ANY($1)`", `does not return the id column "job_id"`}},
		{"custom fetch without the group", mod(RowLock, func(t *Table) {
			t.Fetch = `SELECT job_id, attempt, tenant, trace, order_id FROM order_jobs WHERE job_id = ANY($1)`
		}), []string{`"order_jobs"`, "fetch statement `SELECT job_id, attempt, tenant, trace, order_id FROM", `does not return the group column "name"`}},
		{"custom fetch without the attempt", mod(Lease, func(t *Table) {
			t.Fetch = `SELECT job_id, name, tenant, trace, order_id FROM order_jobs WHERE job_id = ANY($1)`
		}), []string{`"order_jobs"`, "fetch statement `SELECT job_id, name, tenant, trace, order_id FROM", `does not return the attempt column "attempt"`}},
		{"custom fetch without a header", mod(AdvisoryLock, func(t *Table) {
			t.Fetch = `SELECT job_id, name, attempt, tenant, order_id FROM order_jobs WHERE job_id = ANY($1)`
		}), []string{`"order_jobs"`, "fetch statement `SELECT job_id, name, attempt, tenant, order_id FROM", `does not return the header column "trace"`}},
		{"custom fetch with a bad column", mod(RowLock, func(t *Table) {
			t.Fetch = `SELECT job_id, customer FROM order_jobs WHERE job_id = ANY($1)`
		}), []string{`"order_jobs"`, "fetch statement `SELECT job_id, customer FROM", `column "customer" does not exist`}},
		{"custom fetch without $1", mod(RowLock, func(t *Table) {
			t.Fetch = `SELECT job_id FROM order_jobs`
		}), []string{`"order_jobs"`, `fetch statement`, `exactly one parameter`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := Open(bg, pool, c.t)
			if err == nil {
				t.Fatalf("Open succeeded: %v", in.Statements())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// TestUUIDID: a uuid id claims, matches, reads and deletes (ids passed back as uuids).
func TestUUIDID(t *testing.T) {
	pool, _ := testDB(t)
	exec(t, pool, `CREATE TABLE ujobs(id uuid PRIMARY KEY DEFAULT gen_random_uuid(), kind text, locked_until timestamptz);
		INSERT INTO ujobs(kind) SELECT 'k' || g FROM generate_series(1, 5) g`)
	idIdentity(t, pool, "ujobs", `SELECT id::text FROM ujobs ORDER BY id`)
}

// TestTextID: a text id claims, matches, reads and deletes.
func TestTextID(t *testing.T) {
	pool, _ := testDB(t)
	exec(t, pool, `CREATE SEQUENCE tj_seq; CREATE TABLE tjobs(id text PRIMARY KEY DEFAULT 'job-' || lpad(nextval('tj_seq')::text, 4, '0'), kind text, locked_until timestamptz);
		INSERT INTO tjobs(kind) SELECT 'k' || g FROM generate_series(1, 5) g`)
	idIdentity(t, pool, "tjobs", `SELECT id FROM tjobs ORDER BY id`)
}

func idIdentity(t *testing.T, pool *pgxpool.Pool, table, list string) {
	t.Helper()
	var all []string
	rows, err := pool.Query(bg, list)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for _, form := range []Form{RowLock, Lease, AdvisoryLock} {
		tb := Table{Name: table, ID: "id", Group: "kind", Form: form}
		if form == Lease {
			tb.LockedUntil = "locked_until"
		}
		in := open(t, pool, tb)
		b := claim(t, in, 2)
		if got := ids(b); !reflect.DeepEqual(got, all[:2]) || len(b.Missing) != 0 {
			t.Fatalf("%s: claimed %v missing %v, want %v", form, got, b.Missing, all[:2])
		}
		if !strings.HasPrefix(string(b.Rows[0].Body), `{"id":"`+all[0]+`","kind":"k`) {
			t.Errorf("%s: body %s", form, b.Rows[0].Body)
		}
		if n, err := b.Finish(bg, []string{all[1]}); err != nil || n != 1 {
			t.Fatalf("%s: Finish = %d, %v", form, n, err)
		}
		all = append(all[:1], all[2:]...)
		if form == Lease {
			exec(t, pool, `UPDATE `+table+` SET locked_until = NULL`) // end the lease on the unacked row
		}
	}
	if got := count(t, pool, `SELECT count(*) FROM `+table); got != 2 {
		t.Errorf("%d rows left, want 2", got)
	}
}

// TestOpenErrorsKeepThePasswordOut: neither a refused connection nor a refused statement
// carries the pool URL's password.
func TestOpenErrorsKeepThePasswordOut(t *testing.T) {
	pool, schema := testDB(t) // skips without a server, like the rest
	seed(t, pool, 0)
	cfg := pool.Config().ConnConfig
	for _, url := range []string{
		fmt.Sprintf("postgres://%s:s3cret-pw@%s:%d/%s?sslmode=disable&search_path=%s", cfg.User, cfg.Host, cfg.Port, cfg.Database, schema),
		"postgres://postgres:s3cret-pw@127.0.0.1:1/test?sslmode=disable&connect_timeout=2",
	} {
		p, err := pgxpool.New(bg, url)
		if err != nil {
			t.Fatal(err)
		}
		tb := seedTable(RowLock)
		tb.Name = "no_such_jobs" // the first refuses the statement, the second cannot connect
		_, err = Open(bg, p, tb)
		p.Close()
		if err == nil || !strings.Contains(err.Error(), `table "no_such_jobs"`) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error %v", err)
		}
		t.Log(err)
	}
}
