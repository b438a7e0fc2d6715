package sqlite_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

// TestHousekeepingUsesIndexes: each housekeeping statement reads its rows from an index
// or by rowid, never by scanning a table (docs/design/store.md shows these plans; go test -v
// prints them).
func TestHousekeepingUsesIndexes(t *testing.T) {
	db := newDatabase(t).(*database)
	s := db.Open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	raw := db.raw(t)
	stmts := sqlite.HousekeepingSQL()
	names := make([]string, 0, len(stmts))
	for n := range stmts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		q := stmts[name]
		args := []any{int64(1), 1000}
		if strings.Contains(q, "json_each(?1)") {
			args = []any{"[1,2,3]"}
		}
		plan := explainPlan(t, raw, q, args...)
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", name, text)
		for _, line := range plan {
			// A SCAN of a jadpo table without an index reads it whole; json_each's
			// list of ids is the batch itself.
			scan := strings.HasPrefix(line, "SCAN ") && !strings.HasPrefix(line, "SCAN json_each") && line != "SCAN g"
			if scan || strings.Contains(line, "FOR ORDER BY") {
				t.Errorf("%s scans a table or sorts its rows:\n%s", name, text)
			}
		}
	}
}

// TestHousekeepingRunsStayBounded: recording a run deletes the oldest runs beyond the
// newest store.HousekeepingRunsKept, at most 100 a run.
func TestHousekeepingRunsStayBounded(t *testing.T) {
	db := newDatabase(t).(*database)
	s := db.Open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Exec(t, `
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 1050)
INSERT INTO jadpo_housekeeping_runs (at, received_ids, parked_messages, deliveries, outbox, more) SELECT 1, 1, 0, 0, 0, 0 FROM g;
INSERT INTO jadpo_received_events VALUES ('queue q', 'old', 1);`)
	if h, err := s.Housekeep(ctx, store.Housekeeping{}); err != nil || h.ReceivedIDs != 1 {
		t.Fatalf("Housekeep = %+v, %v", h, err)
	}
	var n int64
	if err := db.raw(t).QueryRowContext(ctx, `SELECT count(*) FROM jadpo_housekeeping_runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != store.HousekeepingRunsKept {
		t.Fatalf("%d runs kept, want %d", n, store.HousekeepingRunsKept)
	}
}
