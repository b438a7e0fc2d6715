package runtime

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// BenchmarkReceiveSQLInbox is BenchmarkReceive's runtime case for the
// sql_inbox driver: examples/jobs claiming the seed's order_jobs table (row
// lock form) in one PostgreSQL schema, keeping into another with fsync on.
// A batch is one claim transaction (begin, select, attempt update, fetch,
// delete, commit) and one KeepBatch; the jobs app has no subscriber, so a
// kept row writes a received id and an outbox row with its headers. One op
// is a batch of 10 rows.
func BenchmarkReceiveSQLInbox(b *testing.B) {
	pgtest.Require(b)
	ctx := context.Background()
	plan := checktest.ExamplePlan(b, "jobs")
	inboxURL := pgtest.FreshURL(b)
	conn, err := pgx.Connect(ctx, inboxURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE order_jobs (job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT NOT NULL DEFAULT 0,
		tenant TEXT, trace TEXT, order_id BIGINT, note TEXT)`); err != nil {
		b.Fatal(err)
	}
	cfg, err := LoadConfig(plan, []string{"JOBS_DATABASE_URL=" + inboxURL}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	timed := benchDurableStore(b)
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	want := b.N * 10
	benchReceiveLoop(ctx, b, r, want, nil, func(i int) error {
		_, err := conn.Exec(ctx, `INSERT INTO order_jobs (name, tenant, trace, order_id, note) VALUES ('packing', 'acme', 'tr', $1, 'fragile')`, int64(i+1))
		return err
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(timed.keep.Load())/1e6/float64(b.N), "keep-ms/op")
}
