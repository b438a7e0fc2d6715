package postgres_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/postgres"
	"github.com/jadpo/jadpo/runtime/store/storetest"
)

// TestHousekeepingUsesIndexes: on a store of 20,000 rows a table, analysed, each
// housekeeping statement reads its rows from an index, never by a sequential scan
// (docs/design/store.md shows these plans; go test -v prints them).
func TestHousekeepingUsesIndexes(t *testing.T) {
	db := newDatabase(t)
	s := db.open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Exec(t, `
INSERT INTO jadpo_received_events SELECT 'queue q', 'm' || g, now() - g * interval '1 minute' FROM generate_series(1, 20000) g;
INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, settled_at)
SELECT 'queue q', 'E', '{}', 'm' || g, now(), CASE WHEN g % 10 = 0 THEN now() END FROM generate_series(1, 20000) g;
INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, next_attempt_at, created_at, updated_at, settled_at, dismissed_at)
SELECT id, 's', CASE WHEN id % 10 = 1 THEN 'pending' WHEN id % 10 = 2 THEN 'dismissed' ELSE 'succeeded' END, now(), now(), now(),
    CASE WHEN id % 10 <> 1 THEN now() END, CASE WHEN id % 10 = 2 THEN now() END FROM jadpo_outbox;
INSERT INTO jadpo_parked_messages (source, reason, body, body_sha256, state, created_at, updated_at, dismissed_at)
SELECT 'queue q', 'unreadable', '\x00', 'h' || g, CASE WHEN g % 2 = 0 THEN 'dismissed' ELSE 'failed' END, now(), now(),
    CASE WHEN g % 2 = 0 THEN now() END FROM generate_series(1, 20000) g;
INSERT INTO jadpo_delivery_attempts (delivery_id, attempt, at, outcome) SELECT id, 1, now(), 'succeeded' FROM jadpo_deliveries;
INSERT INTO jadpo_housekeeping_runs (at, received_ids, parked_messages, deliveries, outbox, more)
SELECT now(), 1, 0, 0, 0, false FROM generate_series(1, 1000);
ANALYZE;`)
	conn := db.conn(t)
	stmts := postgres.HousekeepingSQL()
	names := make([]string, 0, len(stmts))
	for n := range stmts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		// The rows above are at the database's clock, now(); a cutoff 30 days
		// before it leaves few rows due, as housekeeping finds them each tick.
		rows, err := conn.Query(ctx, "EXPLAIN (COSTS OFF) "+stmts[name], (30 * 24 * time.Hour).Microseconds(), 1000, nil)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("EXPLAIN %s: %v", name, err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", name, text)
		if strings.Contains(text, "Seq Scan") || !strings.Contains(text, "Index") {
			t.Errorf("%s does not read by an index:\n%s", name, text)
		}
	}
}

// Outbox rows kept before migration 5 count as settled long ago: one without deliveries
// goes at the first housekeeping, one with a pending delivery stays.
func TestMigratedOutboxRowsAreHousekept(t *testing.T) {
	d := newDatabase(t)
	ctx := context.Background()
	conn := d.conn(t)
	if _, err := conn.Exec(ctx, postgres.SchemaSQLUpTo(2)); err != nil {
		t.Fatalf("applying the version 2 schema: %v", err)
	}
	at := testclock.Epoch()
	for _, k := range []struct {
		id   string
		subs []string
	}{{"none", nil}, {"pending", []string{"s1"}}} {
		if _, err := conn.Exec(ctx, keepV2, "queue q", k.id, at, "E", `{}`, k.subs); err != nil {
			t.Fatalf("keeping at version 2: %v", err)
		}
	}
	s := d.Open(t)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := storetest.Timed{Store: s}.Housekeep(ctx, at, store.Housekeeping{})
	if err != nil || h.Outbox != 1 || h.Total() != 1 {
		t.Fatalf("Housekeep = %+v, %v; want the old outbox row without deliveries", h, err)
	}
	var left string
	if err := conn.QueryRow(ctx, "SELECT string_agg(received_id, ',') FROM jadpo_outbox").Scan(&left); err != nil || left != "pending" {
		t.Fatalf("outbox left %q, %v", left, err)
	}
}

// TestHousekeepingRunsStayBounded: recording a run deletes the oldest runs beyond the
// newest store.HousekeepingRunsKept, at most 100 a run.
func TestHousekeepingRunsStayBounded(t *testing.T) {
	db := newDatabase(t)
	s := db.open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Exec(t, `
INSERT INTO jadpo_housekeeping_runs (at, received_ids, parked_messages, deliveries, outbox, more)
SELECT now() - interval '1 hour', 1, 0, 0, 0, false FROM generate_series(1, 1050);
INSERT INTO jadpo_received_events VALUES ('queue q', 'old', now() - interval '40 days');`)
	if h, err := s.Housekeep(ctx, store.Housekeeping{}); err != nil || h.ReceivedIDs != 1 {
		t.Fatalf("Housekeep = %+v, %v", h, err)
	}
	var n, newest int64
	if err := db.conn(t).QueryRow(ctx, `SELECT count(*), (SELECT received_ids FROM jadpo_housekeeping_runs ORDER BY id DESC LIMIT 1) FROM jadpo_housekeeping_runs`).Scan(&n, &newest); err != nil {
		t.Fatal(err)
	}
	if n != store.HousekeepingRunsKept || newest != 1 {
		t.Fatalf("%d runs kept (the newest deleted %d), want %d", n, newest, store.HousekeepingRunsKept)
	}
}
