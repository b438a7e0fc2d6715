package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// The classes of real SQLite errors.
func TestClassify(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (a TEXT NOT NULL CHECK (a <> ''), b INTEGER UNIQUE) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql  string
		args []any
		want store.Class
		code string
	}{
		{"INSERT INTO t (a) VALUES ('')", nil, store.ClassRefused, "SQLITE_CONSTRAINT_CHECK"},
		{"INSERT INTO t (a) VALUES (NULL)", nil, store.ClassRefused, "SQLITE_CONSTRAINT_NOTNULL"},
		{"INSERT INTO t (a, b) VALUES ('x', ?)", []any{[]byte("blob")}, store.ClassRefused, "SQLITE_CONSTRAINT_DATATYPE"},
		{"SELECT nope FROM t", nil, store.ClassOther, "SQLITE_ERROR"},
	} {
		_, err := db.Exec(c.sql, c.args...)
		class, code := classify(err)
		if class != c.want || code != c.code {
			t.Errorf("%s: %v -> %v %s, want %v %s", c.sql, err, class, code, c.want, c.code)
		}
	}
	if class, _ := classify(context.Canceled); class != store.ClassTransient {
		t.Errorf("context.Canceled is %v", class)
	}
	if class, _ := classify(errors.New("x")); class != store.ClassOther {
		t.Errorf("a plain error is %v", class)
	}
}

// Another connection holding the write lock past the busy timeout is SQLITE_BUSY: transient.
func TestBusyIsTransient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := OpenPath(context.Background(), path, Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err = s.ClaimDeliveries(context.Background(), 10, time.Second)
	var se *store.Error
	if !store.IsTransient(err) || !errors.As(err, &se) || !strings.HasPrefix(se.Code, "SQLITE_BUSY") {
		t.Fatalf("a claim under another's write lock = %v, want transient SQLITE_BUSY", err)
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
}
