package sqlinbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

const defaultTestURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testDB gives a pool whose search_path is a fresh schema of the test's own, dropped at cleanup.
// Without a reachable server the test is skipped, unless JADPO_REQUIRE_POSTGRES=1.
func testDB(tb testing.TB) (*pgxpool.Pool, string) {
	tb.Helper()
	url := os.Getenv("JADPO_TEST_DATABASE_URL")
	if url == "" {
		url = defaultTestURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unreachable := func(err error) {
		if os.Getenv("JADPO_REQUIRE_POSTGRES") == "1" {
			tb.Fatalf("PostgreSQL is required (JADPO_REQUIRE_POSTGRES=1) but unreachable through JADPO_TEST_DATABASE_URL: %v", err)
		}
		tb.Skipf("PostgreSQL unreachable (set JADPO_TEST_DATABASE_URL; JADPO_REQUIRE_POSTGRES=1 makes this fail): %v", err)
	}
	admin, err := pgxpool.New(ctx, url)
	if err != nil {
		unreachable(err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		unreachable(err)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	schema := "sqlinbox_t_" + hex.EncodeToString(r[:])
	if _, err := admin.Exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		admin.Close()
		tb.Fatalf("create schema: %v", err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	return pool, schema
}

func exec(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

const seedDDL = `
CREATE TABLE order_jobs(job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT DEFAULT 1, tenant TEXT, trace TEXT NULL, order_id BIGINT, note TEXT NULL);
CREATE TABLE orders(id BIGINT PRIMARY KEY, customer TEXT, total BIGINT);`

// seedTable is the seed's OrderJob description; lease adds the lease form's column.
func seedTable(form Form) Table {
	t := Table{
		Name:    "order_jobs",
		ID:      "job_id",
		Group:   "name",
		Attempt: "attempt",
		Headers: []string{"tenant", "trace", "order_id"},
		Columns: []string{"note"},
		Form:    form,
	}
	if form == Lease {
		t.LockedUntil = "locked_until"
	}
	return t
}

// seed creates the seed's tables (with locked_until, which the row lock form leaves alone) and n jobs.
func seed(tb testing.TB, pool *pgxpool.Pool, n int) {
	tb.Helper()
	exec(tb, pool, seedDDL)
	exec(tb, pool, `ALTER TABLE order_jobs ADD COLUMN locked_until timestamptz NULL`)
	addJobs(tb, pool, n)
}

func addJobs(tb testing.TB, pool *pgxpool.Pool, n int) {
	tb.Helper()
	exec(tb, pool, `INSERT INTO order_jobs(name, tenant, trace, order_id, note)
		SELECT 'packing', 'acme', CASE WHEN g % 2 = 0 THEN 'tr-' || g END, g, NULL FROM generate_series(1, $1::int) g`, n)
}

func count(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return n
}

func open(tb testing.TB, pool *pgxpool.Pool, t Table) *Inbox {
	tb.Helper()
	in, err := Open(context.Background(), pool, t)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return in
}

func claim(tb testing.TB, in *Inbox, max int) *Batch {
	tb.Helper()
	b, err := in.Claim(context.Background(), max)
	if err != nil {
		tb.Fatalf("Claim: %v", err)
	}
	if _, ok := tb.(*testing.T); ok {
		// A test that fails while a batch holds a connection would hang in the pool's Close:
		// end it first (cleanups run last-registered first; a no-op on an ended batch).
		tb.Cleanup(func() { b.Abandon(context.Background()) })
	}
	return b
}

func ids(b *Batch) []string {
	out := make([]string, 0, len(b.Rows))
	for _, r := range b.Rows {
		out = append(out, r.ID)
	}
	return out
}

func forms(t *testing.T, f func(t *testing.T, form Form)) {
	for _, form := range []Form{RowLock, Lease, AdvisoryLock} {
		t.Run(string(form), func(t *testing.T) { f(t, form) })
	}
}

// heldLocks counts the advisory locks of in's namespace that some session holds (a key taken
// several times by one session counts once).
func heldLocks(tb testing.TB, pool *pgxpool.Pool, in *Inbox) int {
	tb.Helper()
	return count(tb, pool, `SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::int8 = $1`, int64(uint32(in.ns)))
}
