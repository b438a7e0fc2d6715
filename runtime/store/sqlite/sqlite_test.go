package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
	"github.com/jadpo/jadpo/runtime/store/storetest"
)

// testBusyTimeout is the stores' busy timeout in tests: how long FailTransiently's write
// lock makes a write wait before it fails.
const testBusyTimeout = 300 * time.Millisecond

type database struct {
	path string
}

func newDatabase(t *testing.T) storetest.Database {
	return &database{path: filepath.Join(t.TempDir(), "jadpo.db")}
}

func (d *database) Open(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.OpenPath(context.Background(), d.path, sqlite.Options{BusyTimeout: testBusyTimeout})
	if err != nil {
		t.Fatalf("open %s: %v", d.path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (d *database) raw(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", d.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func (d *database) Exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := d.raw(t).Exec(sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (d *database) Count(t *testing.T, table string) (n int64) {
	t.Helper()
	if err := d.raw(t).QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// FailTransiently holds the write lock from another connection while call runs: the
// store's BEGIN IMMEDIATE waits out its busy timeout and fails with SQLITE_BUSY.
func (d *database) FailTransiently(t *testing.T, s store.Store, call func() error) error {
	t.Helper()
	ctx := context.Background()
	conn, err := d.raw(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("BEGIN IMMEDIATE: %v", err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	return call()
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{NewDatabase: newDatabase})
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"sqlite:" + filepath.Join(dir, "a.db"), "sqlite://" + filepath.Join(dir, "b.db")} {
		s, err := store.Open(context.Background(), u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		s.Close()
	}
	for _, u := range []string{"sqlite:", "sqlite::memory:", "sqlite:x.db?mode=ro"} {
		if _, err := store.Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
	_, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "missing", "dir", "x.db"))
	if err == nil || !store.IsTransient(err) {
		t.Errorf("Open in a missing directory = %v, want a transient error (cannot open)", err)
	}
}

func TestPathOf(t *testing.T) {
	for in, want := range map[string]string{
		"sqlite:jadpo.db":          "jadpo.db",
		"sqlite:./data/jadpo.db":   "./data/jadpo.db",
		"sqlite:///var/lib/x.db":   "/var/lib/x.db",
		"sqlite:/var/lib/jadpo.db": "/var/lib/jadpo.db",
	} {
		if got, err := sqlite.PathOf(in); err != nil || got != want {
			t.Errorf("PathOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Two stores on one file, as two processes: a writer in one waits for the other's write
// lock instead of failing, within the busy timeout.
func TestWritersSerializeAcrossStores(t *testing.T) {
	db := newDatabase(t).(*database)
	a, b := db.Open(t), db.Open(t)
	ctx := context.Background()
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for i, s := range []store.Store{a, b} {
		go func() {
			for j := range 20 {
				k := store.Keep{Source: "queue q", ReceivedID: strings.Repeat("x", i+1) + string(rune('a'+j)),
					EventName: "E", EventJSON: []byte(`{}`), Subscribers: []string{"s"}}
				if _, err := s.KeepBatch(ctx, []store.Keep{k}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("KeepBatch: %v", err)
		}
	}
	st, err := a.Stats(ctx)
	if err != nil || st.ReceivedIDs != 40 {
		t.Fatalf("Stats = %+v, %v; want 40 received ids", st, err)
	}
}

func TestSchemaSQLAppliedByHand(t *testing.T) {
	db := newDatabase(t).(*database)
	db.Exec(t, sqlite.SchemaSQL())
	s := db.Open(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate over the schema applied by hand: %v", err)
	}
	for _, table := range []string{"jadpo_received_events", "jadpo_outbox", "jadpo_deliveries", "jadpo_parked_messages", "jadpo_schema_migrations"} {
		if !strings.Contains(sqlite.SchemaSQL(), "CREATE TABLE "+table) && !strings.Contains(sqlite.SchemaSQL(), "CREATE TABLE IF NOT EXISTS "+table) {
			t.Errorf("SchemaSQL does not create %s", table)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	db := newDatabase(t).(*database)
	s := db.Open(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Exec(t, "INSERT INTO jadpo_schema_migrations (version, name) VALUES (99, 'from the future')")
	err := db.Open(t).Migrate(context.Background())
	var se *store.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("Migrate of a newer schema = %v, want an error naming version 99", err)
	}
}

// A database at version 2 holding a kept message (written as a build at version 2 wrote
// it) is migrated to version 3: the message's delivery shows no headers, and messages kept
// now keep theirs.
func TestMigrateFromVersion2KeepsRows(t *testing.T) {
	db := newDatabase(t).(*database)
	ctx := context.Background()
	db.Exec(t, sqlite.SchemaSQLUpTo(2))
	at := testclock.Epoch()
	raw := db.raw(t)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO jadpo_received_events (source, received_id, received_at) VALUES (?1, ?2, ?3)`,
			[]any{"queue q", "old", at.UnixMicro()}},
		{`INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)`,
			[]any{"queue q", "E", `{"id":"old"}`, "old", at.UnixMicro()}},
		{`INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
SELECT (SELECT max(id) FROM jadpo_outbox), value, 'pending', 0, ?1, 0, ?1, ?1 FROM json_each(?2)`,
			[]any{at.UnixMicro(), `["s1","s2"]`}},
		{`INSERT INTO jadpo_parked_messages (source, reason, body, body_sha256, state, created_at, updated_at)
VALUES ('queue q', 'unreadable', X'7b7d', 'sha', 'failed', ?1, ?1)`, []any{at.UnixMicro()}},
	} {
		if _, err := raw.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("keeping at version 2: %v", err)
		}
	}
	s := db.Open(t)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate from version 2: %v", err)
	}
	var versions string
	if err := raw.QueryRowContext(ctx, "SELECT group_concat(version, ',') FROM (SELECT version FROM jadpo_schema_migrations ORDER BY version)").Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != "1,2,3,4,5,6,7,8,9,10,11" {
		t.Fatalf("versions = %s, want 1,2,3,4,5,6,7,8,9,10,11", versions)
	}
	if parked, err := s.List(ctx, store.Filter{State: store.ListFailed}); err != nil || len(parked) != 1 || parked[0].ReceivedID != "" {
		t.Fatalf("List failed = %+v, %v; want the old parked message, without a message id", parked, err)
	}
	var nulls int
	if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM jadpo_outbox WHERE headers IS NULL").Scan(&nulls); err != nil || nulls != 1 {
		t.Fatalf("outbox rows with NULL headers = %d, %v; want the old row", nulls, err)
	}
	entries, err := s.List(ctx, store.Filter{State: store.ListPending})
	if err != nil || len(entries) != 2 {
		t.Fatalf("List = %+v, %v; want the old message's 2 deliveries", entries, err)
	}
	for _, e := range entries {
		got, err := s.Show(ctx, e.ID, true)
		if err != nil || got.Headers != nil || got.ReceivedID != "old" || string(got.Body) != `{"id":"old"}` {
			t.Fatalf("Show %s = %+v, %v; want the old delivery without headers", e.ID, got, err)
		}
	}
	// The old message is a repeat; a new one keeps its headers.
	res, err := storetest.Timed{Store: s}.KeepBatch(ctx, at, []store.Keep{
		{Source: "queue q", ReceivedID: "old", EventName: "E", EventJSON: []byte(`{}`), Subscribers: []string{"s1"}, Headers: map[string]string{"h": "v"}},
		{Source: "queue q", ReceivedID: "new", EventName: "E", EventJSON: []byte(`{}`), Subscribers: []string{"s1"}, Headers: map[string]string{"h": "v"}},
	})
	if err != nil || res[0].Outcome != store.Repeat || res[1].Outcome != store.Kept {
		t.Fatalf("KeepBatch after migrating = %+v, %v", res, err)
	}
	var id int64
	if err := raw.QueryRowContext(ctx, "SELECT id FROM jadpo_deliveries WHERE outbox_id = ?1", res[1].OutboxID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Show(ctx, store.DeliveryID(id), false); err != nil || got.Headers["h"] != "v" || len(got.Headers) != 1 {
		t.Fatalf("Show d%d = %+v, %v; want headers h=v", id, got, err)
	}
}
