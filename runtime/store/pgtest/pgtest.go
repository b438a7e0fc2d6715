// Package pgtest gives tests a fresh PostgreSQL schema of their own on the
// server named by JADPO_TEST_DATABASE_URL (default: the local test database).
// A test skips with a clear message when the server is unreachable, and fails
// instead when JADPO_REQUIRE_POSTGRES=1, so CI never passes by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the local test server.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// ServerURL is the test server's URL.
func ServerURL() string {
	if u := os.Getenv("JADPO_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Require skips or fails the test when the server does not answer.
func Require(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err == nil {
		conn.Close(ctx)
		return
	}
	msg := "PostgreSQL is not reachable (set JADPO_TEST_DATABASE_URL): " + err.Error()
	if os.Getenv("JADPO_REQUIRE_POSTGRES") == "1" {
		tb.Fatal(msg)
	}
	tb.Skip(msg + "; JADPO_REQUIRE_POSTGRES=1 makes this a failure")
}

// FreshURL creates a schema for this test alone and returns a URL whose
// connections use it; the schema is dropped when the test ends.
func FreshURL(tb testing.TB) string {
	tb.Helper()
	Require(tb)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "jadpo_t_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), ServerURL())
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	return WithSearchPath(ServerURL(), schema)
}

// WithSearchPath points a URL's connections at a schema.
func WithSearchPath(raw, schema string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RequireDurable fails a benchmark unless the server at url syncs its
// commits (fsync on, synchronous_commit not off), so that its figures are a
// durable store's.
func RequireDurable(tb testing.TB, url string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var fsync, commit string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil {
		tb.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&commit); err != nil {
		tb.Fatal(err)
	}
	if fsync != "on" || commit == "off" {
		tb.Fatalf("the server has fsync %s, synchronous_commit %s: the figures would not be a durable store's", fsync, commit)
	}
}
