package runtime_test

// The sql_inbox driver (docs/guide/receiving.md, "A SQL inbox") on every store adapter: examples/jobs
// receives the seed's order_jobs table, in a PostgreSQL schema of the test's
// own.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/sqlinbox"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// The seed's tables: the inbox and the orders a custom fetch joins.
const jobsSchema = `
CREATE TABLE order_jobs (job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT NOT NULL DEFAULT 0,
  tenant TEXT, trace TEXT NULL, order_id BIGINT, note TEXT NULL, locked_until TIMESTAMPTZ NULL);
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT, total BIGINT);`

// sqlWorld is the seed tests' world with the jobs app on an inbox table.
type sqlWorld struct {
	*world
	inbox    *pgx.Conn
	inboxURL string
}

// jobsPlan checks examples/jobs with its app.jadpo edited.
func jobsPlan(t *testing.T, edits ...checktest.Edit) *ir.Program {
	t.Helper()
	for i := range edits {
		edits[i].File = "app.jadpo"
	}
	return checktest.Plan(t, checktest.Example(t, "jobs", edits...))
}

func newSQLWorld(t *testing.T, kind string, edits ...checktest.Edit) *sqlWorld {
	t.Helper()
	w := newWorld(t, kind, nil)
	url := pgtest.FreshURL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(context.Background(), jobsSchema); err != nil {
		t.Fatal(err)
	}
	w.env.SetEnv("JOBS_DATABASE_URL", url)
	w.rt = w.runtime(jobsPlan(t, edits...), runtime.Options{})
	t.Cleanup(w.rt.Close)
	return &sqlWorld{world: w, inbox: conn, inboxURL: url}
}

// insert writes a job row: name, tenant, trace (none when ""), order id, note (none when "").
func (w *sqlWorld) insert(name, tenant, trace string, orderID int64, note string) {
	w.t.Helper()
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	if _, err := w.inbox.Exec(context.Background(), `INSERT INTO order_jobs (name, tenant, trace, order_id, note) VALUES ($1, $2, $3, $4, $5)`,
		name, tenant, nullable(trace), orderID, nullable(note)); err != nil {
		w.t.Fatal(err)
	}
}

// rows lists the inbox's job ids and attempts.
func (w *sqlWorld) rows() []string {
	w.t.Helper()
	rs, err := w.inbox.Query(context.Background(), `SELECT job_id::text || ':' || attempt::text FROM order_jobs ORDER BY job_id`)
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func TestSQLInboxDriver(t *testing.T) {
	cases := []struct {
		name  string
		edits []checktest.Edit
		run   func(t *testing.T, w *sqlWorld)
	}{
		{"kept_and_parked_rows_are_deleted_their_headers_kept", nil, func(t *testing.T, w *sqlWorld) {
			w.insert("packing", "acme", "tr-1", 7, "fragile")
			w.insert("receipts", "acme", "", 8, "")
			w.insert("refund", "acme", "", 9, "") // a kind the queue does not list: not claimed
			w.insert("packing", "", "", 10, "")   // tenant: min_length
			wantReport(t, w.tick(), "received 3 kept 2 repeats 0 parked 1 left 0 acked 3")
			wantRows(t, "outbox", w.outbox(),
				row("queue order_jobs", "PackingRequested", "1", `{"note":"fragile","order_id":7,"tenant":"acme"}`),
				row("queue order_jobs", "ReceiptRequested", "2", `{"order_id":8,"tenant":"acme"}`))
			wantRows(t, "headers", w.env.Query(`SELECT received_id, headers FROM jadpo_outbox ORDER BY id`),
				row("1", `{"order_id":"7","tenant":"acme","trace":"tr-1"}`),
				row("2", `{"order_id":"8","tenant":"acme"}`))
			var codes []string
			for _, e := range w.parked("failed") {
				codes = append(codes, e.Label()+" "+e.Code)
			}
			if got := strings.Join(codes, "; "); got != "queue order_jobs · PackingRequested unreadable" {
				t.Fatalf("parked: %s", got)
			}
			if got := strings.Join(w.rows(), ","); got != "3:0" {
				t.Fatalf("rows left in the inbox: %s, want the refund, unclaimed", got)
			}
		}},
		// Issue 24: a parked row retried and still unreadable is one
		// message: counted once (parked again), never as received or
		// parked by the queue, so nothing waits to be acknowledged.
		{"a_retried_parked_row_still_unreadable_is_counted_once", nil, func(t *testing.T, w *sqlWorld) {
			w.insert("packing", "", "", 10, "") // tenant: min_length
			wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 1 left 0 acked 1")
			ps := w.parked("failed")
			if len(ps) != 1 {
				t.Fatalf("parked %+v", ps)
			}
			if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID}); err != nil {
				t.Fatal(err)
			}
			rep := w.tick()
			wantReport(t, rep, "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
			if rep.RetriedParked != 1 || rep.RetriedKept != 0 || rep.Unacknowledged() != 0 {
				t.Fatalf("after the retry %+v (unacknowledged %d)", rep, rep.Unacknowledged())
			}
			if again := w.parked("failed"); len(again) != 1 || again[0].ID != ps[0].ID {
				t.Fatalf("parked again %+v", again)
			}
		}},
		{"ten_a_claim_and_again_while_full", nil, func(t *testing.T, w *sqlWorld) {
			for i := range 25 {
				w.insert("packing", "acme", "", int64(100+i), "")
			}
			wantReport(t, w.tick(), "received 25 kept 25 repeats 0 parked 0 left 0 acked 25")
		}},
		{"a_row_the_store_cannot_take_stays_and_is_claimed_again", nil, func(t *testing.T, w *sqlWorld) {
			w.insert("packing", "acme", "", 7, "")
			w.st.FailKeeps(1)
			wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 0 left 1 acked 0")
			if got := w.rows(); strings.Join(got, ",") != "1:1" {
				t.Fatalf("the row should stay, claimed once: %v", got)
			}
			wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
			if got := w.rows(); len(got) != 0 {
				t.Fatalf("rows left: %v", got)
			}
		}},
		{"a_claimed_id_without_a_row_is_parked_and_deleted", []checktest.Edit{{Old: `columns: "note"`, New: `columns: "note"
        fetch: "SELECT j.job_id, j.name, j.attempt, j.tenant, j.trace, j.order_id, o.customer AS note FROM order_jobs j JOIN orders o ON o.id = j.order_id WHERE j.job_id = ANY($1)"`}},
			func(t *testing.T, w *sqlWorld) {
				if _, err := w.inbox.Exec(context.Background(), `INSERT INTO orders VALUES (7, 'Ada', 100)`); err != nil {
					t.Fatal(err)
				}
				w.insert("packing", "acme", "", 7, "")
				w.insert("packing", "acme", "tr-8", 8, "gift") // no order 8: the join finds nothing
				w.insert("receipts", "globex", "", 9, "")      // nor order 9
				wantReport(t, w.tick(), "received 3 kept 1 repeats 0 parked 2 left 0 acked 3")
				wantRows(t, "outbox", w.outbox(), row("queue order_jobs", "PackingRequested", "1", `{"note":"Ada","order_id":7,"tenant":"acme"}`))
				// Each is parked on its own, its body the table's own row (the
				// claim's attempt left out, as for every parked row), labelled by
				// its kind: none is lost, none is "parked already" under another.
				ps := w.parked("failed")
				var got []string
				for _, p := range ps {
					full := w.show(p.ID)
					got = append(got, p.Label()+" "+p.Code+" "+problemsText(full.Problems)+" "+string(full.Body))
				}
				slices.Sort(got)
				want := []string{
					`queue order_jobs · PackingRequested unreadable :row {"job_id":2,"locked_until":null,"name":"packing","note":"gift","order_id":8,"tenant":"acme","trace":"tr-8"}`,
					`queue order_jobs · ReceiptRequested unreadable :row {"job_id":3,"locked_until":null,"name":"receipts","note":null,"order_id":9,"tenant":"globex","trace":null}`,
				}
				if !slices.Equal(got, want) {
					t.Fatalf("parked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if got := w.rows(); len(got) != 0 {
					t.Fatalf("rows left: %v", got)
				}
				// Retried, each is read from its parked row, headers and all.
				ids := []store.ID{ps[0].ID, ps[1].ID}
				if err := w.raw.Retry(w.ctx, ids); err != nil {
					t.Fatal(err)
				}
				rep := w.tick()
				if rep.RetriedKept != 2 || len(w.parked("all")) != 0 {
					t.Fatalf("after the retry %+v, parked %+v", rep, w.parked("all"))
				}
				wantRows(t, "headers", w.env.Query(`SELECT received_id, headers FROM jadpo_outbox ORDER BY received_id`),
					row("1", `{"order_id":"7","tenant":"acme"}`),
					row("2", `{"order_id":"8","tenant":"acme","trace":"tr-8"}`),
					row("3", `{"order_id":"9","tenant":"globex"}`))
			}},
		// A row parked on its first read, retried and kept with a build
		// that reads it, keeps the headers its first read gave it. (Without
		// group, so the queue claims the refund, a kind it does not list.)
		{"a_retried_parked_row_is_kept_with_its_headers", []checktest.Edit{claimEveryRow}, func(t *testing.T, w *sqlWorld) {
			w.insert("refund", "acme", "tr-1", 7, "") // a kind the queue does not list
			wantReport(t, w.tick(), "received 1 kept 0 repeats 0 parked 1 left 0 acked 1")
			ps := w.parked("failed")
			if len(ps) != 1 || ps[0].Code != "unlisted_type" {
				t.Fatalf("parked %+v", ps)
			}
			if err := w.raw.Retry(w.ctx, []store.ID{ps[0].ID}); err != nil {
				t.Fatal(err)
			}
			rt := w.runtime(jobsPlan(t, claimEveryRow, checktest.Edit{Old: `wire_name: "receipts"`, New: `wire_name: "refund"`}), runtime.Options{})
			t.Cleanup(rt.Close)
			if rep := w.tickWith(rt); rep.RetriedKept != 1 {
				t.Fatalf("after the retry %+v", rep)
			}
			wantRows(t, "headers", w.env.Query(`SELECT received_id, event_name, headers FROM jadpo_outbox ORDER BY id`),
				row("1", "ReceiptRequested", `{"order_id":"7","tenant":"acme","trace":"tr-1"}`))
		}},
		{"the_lease_form", []checktest.Edit{{Old: `columns: "note"`, New: `columns: "note"
        claim: lease
        locked_until: "locked_until"
        lease: 1m`}}, func(t *testing.T, w *sqlWorld) {
			w.insert("packing", "acme", "", 7, "")
			w.insert("packing", "acme", "", 8, "")
			w.st.FailKeeps(1)
			wantReport(t, w.tick(), "received 2 kept 0 repeats 0 parked 0 left 2 acked 0")
			// Leased for a minute: not claimed again yet.
			wantReport(t, w.tick(), "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
			if _, err := w.inbox.Exec(context.Background(), `UPDATE order_jobs SET locked_until = now() - interval '1 second'`); err != nil {
				t.Fatal(err)
			}
			wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
			if got := w.rows(); len(got) != 0 {
				t.Fatalf("rows left: %v", got)
			}
		}},
		{"the_advisory_lock_form_one_process_per_key", []checktest.Edit{{Old: `columns: "note"`, New: `columns: "note"
        claim: advisory_lock
        lock_key: "tenant"`}}, func(t *testing.T, w *sqlWorld) {
			w.insert("packing", "acme", "", 7, "")
			w.insert("packing", "globex", "", 8, "")
			w.insert("receipts", "acme", "", 9, "")
			// Another process holds tenant acme's key (it claimed job 1):
			// this one takes globex's job only.
			pool, err := pgxpool.New(context.Background(), w.inboxURL)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			other, err := sqlinbox.Open(context.Background(), pool, sqlinbox.Table{Name: "order_jobs", ID: "job_id",
				Form: sqlinbox.AdvisoryLock, LockKey: []string{"tenant"}})
			if err != nil {
				t.Fatal(err)
			}
			held, err := other.Claim(context.Background(), 1)
			if err != nil || len(held.Rows) != 1 || held.Rows[0].ID != "1" {
				t.Fatalf("the other process's claim: %+v %v", held, err)
			}
			wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
			wantRows(t, "outbox", w.env.Query(`SELECT received_id FROM jadpo_outbox`), row("2"))
			held.Abandon(context.Background())
			wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
			if got := w.rows(); len(got) != 0 {
				t.Fatalf("rows left: %v", got)
			}
		}},
	}
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, newSQLWorld(t, kind, c.edits...)) })
			}
		})
	}
}

// A column the table lacks stops the start, naming the table and the statement.
func TestSQLInboxMissingColumnStopsTheStart(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	url := pgtest.FreshURL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE TABLE order_jobs (job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT NOT NULL DEFAULT 0, tenant TEXT, trace TEXT, order_id BIGINT)`); err != nil {
		t.Fatal(err)
	}
	env.SetEnv("JOBS_DATABASE_URL", url)
	cfg, err := runtime.LoadConfig(jobsPlan(t), env.Environ, filepath.Join(t.TempDir(), ".env.local"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = runtime.New(runtime.Options{Plan: jobsPlan(t), Store: env.Store(), Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "order_jobs") || !strings.Contains(err.Error(), "note") {
		t.Fatalf("start with a missing column: %v", err)
	}
	if strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("the error holds the database URL: %v", err)
	}
}
