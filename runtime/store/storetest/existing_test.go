package storetest_test

// store.OpenExisting through both adapters; here because runtime/store's own tests link
// no adapter (TestOpenWithoutAdapter).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
	_ "github.com/jadpo/jadpo/runtime/store/postgres"
	_ "github.com/jadpo/jadpo/runtime/store/sqlite"
)

// OpenExisting never makes a store: a missing SQLite file stays missing, an empty file or
// database gains no table, and both are ErrNoStore; a migrated store opens and reads.
func TestOpenExistingSQLiteCreatesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexist.sqlite")
	if _, err := store.OpenExisting(ctx, "sqlite:"+missing); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("a missing file: %v, want ErrNoStore", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("OpenExisting of a missing file created %v", entries)
	}

	empty := filepath.Join(dir, "empty.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := store.OpenExisting(ctx, "sqlite:"+empty)
	if !errors.Is(err, store.ErrNoStore) || !strings.Contains(err.Error(), "never migrated") {
		t.Fatalf("an empty file: %v, want ErrNoStore (never migrated)", err)
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Errorf("OpenExisting wrote %d bytes into an empty file", fi.Size())
	}

	good := filepath.Join(dir, "good.sqlite")
	migrate(t, "sqlite:"+good)
	readsEmpty(t, "sqlite:"+good)
}

func TestOpenExistingPostgresCreatesNothing(t *testing.T) {
	ctx := context.Background()
	url := pgtest.FreshURL(t)
	_, err := store.OpenExisting(ctx, url)
	if !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("an empty database: %v, want ErrNoStore", err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'jadpo%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("OpenExisting created %d jadpo tables", n)
	}
	migrate(t, url)
	readsEmpty(t, url)
}

func migrate(t *testing.T, url string) {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func readsEmpty(t *testing.T, url string) {
	t.Helper()
	st, err := store.OpenExisting(context.Background(), url)
	if err != nil {
		t.Fatalf("a migrated store: %v", err)
	}
	defer st.Close()
	es, err := st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil || len(es) != 0 {
		t.Fatalf("List = %v, %v", es, err)
	}
	// Retry's refusal of an unknown id shows the store answers writes' statements too.
	var se *store.StateError
	if err := st.Retry(context.Background(), []store.ID{store.ParkedID(1)}); !errors.As(err, &se) {
		t.Fatalf("Retry of an unknown id: %v", err)
	}
}
