package sqlite_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store/sqlite"

	"github.com/jadpo/jadpo/runtime/store/storetest"
)

func TestBrowserConformance(t *testing.T) {
	storetest.RunBrowser(t, storetest.Harness{NewDatabase: newDatabase})
}

// TestConsoleUsesIndexes: each console statement reads by the primary key or an index,
// never a table scan, and a list is in key order with no sort (go test -v prints the plans).
func TestConsoleUsesIndexes(t *testing.T) {
	db := newDatabase(t).(*database)
	s := db.Open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	raw := db.raw(t)
	for name, q := range sqlite.ConsoleSQL() {
		args := make([]any, 0, 9)
		for i := 0; i < 9; i++ {
			args = append(args, int64(1))
		}
		if strings.HasPrefix(name, "activity") {
			args = args[:2]
		} else if strings.Contains(name, "deliveries") {
			args = args[:7]
		}
		plan := explainPlan(t, raw, q, args...)
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", name, text)
		if strings.Contains(text, "SCAN jadpo_") || strings.Contains(text, "SCAN d") || strings.Contains(text, "SCAN o") {
			t.Errorf("%s scans a table:\n%s", name, text)
		}
		if strings.HasPrefix(name, "browse") && strings.Contains(text, "ORDER BY") {
			t.Errorf("%s sorts:\n%s", name, text)
		}
		if strings.Contains(name, "message id") && !strings.Contains(text, "jadpo_parked_messages_received_id") {
			t.Errorf("%s does not read the message id's index:\n%s", name, text)
		}
	}
}

// explainPlan is the lines of SQLite's EXPLAIN QUERY PLAN of q.
func explainPlan(t *testing.T, raw *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := raw.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
