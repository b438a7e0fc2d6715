package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
				if _, err := s.KeepBatch(ctx, time.Now(), []store.Keep{k}); err != nil {
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
