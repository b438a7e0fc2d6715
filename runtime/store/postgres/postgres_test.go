package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/postgres"
	"github.com/jadpo/jadpo/runtime/store/storetest"
)

const defaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

func testURL() string {
	if u := os.Getenv("JADPO_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return defaultURL
}

var (
	adminOnce sync.Once
	admin     *pgxpool.Pool
	adminErr  error
)

// adminPool is the tests' own pool on the test database, or a skip (a failure with
// JADPO_REQUIRE_POSTGRES=1) when PostgreSQL is not reachable.
func adminPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cfg, err := pgxpool.ParseConfig(testURL())
		if err != nil {
			adminErr = err
			return
		}
		cfg.MaxConns = 4
		admin, adminErr = pgxpool.NewWithConfig(ctx, cfg)
		if adminErr == nil {
			if adminErr = admin.Ping(ctx); adminErr != nil {
				admin.Close()
			}
		}
	})
	if adminErr != nil {
		msg := fmt.Sprintf("PostgreSQL is not reachable at %s (set JADPO_TEST_DATABASE_URL): %v", store.RedactURL(testURL()), adminErr)
		if os.Getenv("JADPO_REQUIRE_POSTGRES") == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg + "; JADPO_REQUIRE_POSTGRES=1 makes this a failure")
	}
	return admin
}

// database is a fresh schema, jadpo_t_<random>, dropped when the test ends.
type database struct {
	schema string
	admin  *pgxpool.Pool
	opened atomic.Int64
	apps   sync.Map // store.Store -> application_name
}

func newDatabase(tb testing.TB) *database {
	tb.Helper()
	pool := adminPool(tb)
	var b [6]byte
	rand.Read(b[:])
	d := &database{schema: "jadpo_t_" + hex.EncodeToString(b[:]), admin: pool}
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+d.schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+d.schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", d.schema, err)
		}
	})
	return d
}

func (d *database) config(tb testing.TB) (*pgxpool.Config, string) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(testURL())
	if err != nil {
		tb.Fatal(err)
	}
	app := fmt.Sprintf("%s_%d", d.schema, d.opened.Add(1))
	cfg.ConnConfig.RuntimeParams["search_path"] = d.schema
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	cfg.MaxConns = 4
	return cfg, app
}

func (d *database) open(tb testing.TB) *postgres.Store {
	tb.Helper()
	cfg, app := d.config(tb)
	s, err := postgres.New(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	d.apps.Store(store.Store(s), app)
	tb.Cleanup(func() { s.Close() })
	return s
}

func (d *database) Open(t *testing.T) store.Store { return d.open(t) }

func (d *database) conn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	cfg, _ := d.config(tb)
	c, err := pgx.ConnectConfig(context.Background(), cfg.ConnConfig)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func (d *database) Exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := d.conn(t).Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (d *database) Count(t *testing.T, table string) (n int64) {
	t.Helper()
	if err := d.conn(t).QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// FailTransiently holds the blocked received id in another connection's open transaction,
// waits until the store's statement waits for it, then terminates the store's backend.
func (d *database) FailTransiently(t *testing.T, s store.Store, call func() error) error {
	t.Helper()
	app, ok := d.apps.Load(s)
	if !ok {
		t.Fatal("FailTransiently: the store was not opened by this database")
	}
	ctx := context.Background()
	blocker := d.conn(t)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO jadpo_received_events (source, received_id, received_at) VALUES ($1, $2, now())",
		storetest.BlockedSource, storetest.BlockedID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pid int32
		err := d.admin.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
WHERE application_name = $1 AND wait_event_type = 'Lock' LIMIT 1`, app).Scan(&pid)
		if err == nil {
			if _, err := d.admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
				t.Fatal(err)
			}
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the call ended before it waited on the held id: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the store's statement never waited on the held id")
		}
		time.Sleep(5 * time.Millisecond) // polling pg_stat_activity for the wait
	}
	return <-done
}

func TestConformance(t *testing.T) {
	adminPool(t)
	storetest.Run(t, storetest.Harness{NewDatabase: func(t *testing.T) storetest.Database { return newDatabase(t) }})
}

func TestOpenUnreachableIsTransientAndRedacted(t *testing.T) {
	const secret = "s3cr3t-pw"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := store.Open(ctx, "postgres://jadpo:"+secret+"@127.0.0.1:1/jadpo?sslmode=disable&connect_timeout=5")
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if !store.IsTransient(err) {
		t.Errorf("Open of a closed port: %v (class %v), want transient", err, store.ClassOf(err))
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error holds the password: %v", err)
	}
	_, err = store.Open(ctx, "postgres://jadpo:"+secret+"@127.0.0.1:notaport/jadpo")
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Open of a bad URL = %v, want an error without the password", err)
	}
}

func TestOpenURL(t *testing.T) {
	adminPool(t)
	s, err := store.Open(context.Background(), testURL())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, ok := s.(*postgres.Store); !ok {
		t.Fatalf("Open gave a %T", s)
	}
}

func TestSchemaSQLAppliedByHand(t *testing.T) {
	d := newDatabase(t)
	if _, err := d.conn(t).Exec(context.Background(), postgres.SchemaSQL()); err != nil {
		t.Fatalf("applying SchemaSQL: %v", err)
	}
	if err := d.Open(t).Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate over the schema applied by hand: %v", err)
	}
}

// A mismatch the column check cannot see is found by preparing the statements: without its
// unique constraint, the parked table cannot take park's ON CONFLICT.
func TestSchemaMismatchFoundByPrepare(t *testing.T) {
	d := newDatabase(t)
	if err := d.Open(t).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.Exec(t, "ALTER TABLE jadpo_parked_messages DROP CONSTRAINT jadpo_parked_messages_source_body_sha256_key")
	err := d.Open(t).Migrate(context.Background())
	var se *store.SchemaError
	if !errors.As(err, &se) || se.Statement != "park" || !strings.Contains(err.Error(), "jadpo_parked_messages") {
		t.Fatalf("Migrate = %v, want a schema error naming statement park and jadpo_parked_messages", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	d := newDatabase(t)
	if err := d.Open(t).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.Exec(t, "INSERT INTO jadpo_schema_migrations (version, name) VALUES (99, 'from the future')")
	if err := d.Open(t).Migrate(context.Background()); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("Migrate of a newer schema = %v, want an error naming version 99", err)
	}
}

func incompressible(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// The refusals keep the SQLSTATE the server gave.
func TestRefusalCodes(t *testing.T) {
	d := newDatabase(t)
	s := d.open(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	keep := func(id string, event []byte) store.Keep {
		return store.Keep{Source: "queue q", ReceivedID: id, EventName: "E", EventJSON: event, Subscribers: []string{"s"}}
	}
	res, err := s.KeepBatch(context.Background(), []store.Keep{
		keep("a", []byte("{\"x\":\"\x00\"}")),
		keep("b", []byte(`{"x":`)),
		keep("", []byte(`{}`)),
		keep(incompressible(8000), []byte(`{}`)), // too long for the primary key's index
		keep("e", []byte(`{"x":"\u0000"}`)),      // an escaped NUL: PostgreSQL's text cannot hold it
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"22021", "22P02", "23514", "54000", "22P05"} {
		var se *store.Error
		if res[i].Outcome != store.Refused || !errors.As(res[i].Err, &se) || se.Code != want {
			t.Errorf("message %d: %v %v, want refused with SQLSTATE %s", i, res[i].Outcome, res[i].Err, want)
		}
	}
}

// keepV2 is the keep statement of a build at schema version 2, before the outbox had
// headers.
const keepV2 = `WITH r AS (
    INSERT INTO jadpo_received_events (source, received_id, received_at)
    VALUES ($1, $2, $3)
    ON CONFLICT (source, received_id) DO NOTHING
    RETURNING 1
), o AS (
    INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at)
    SELECT $1, $4, $5, $2, $3 FROM r
    RETURNING id
)
INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
SELECT o.id, s.subscriber, 'pending', 0, $3, 0, $3, $3
FROM o CROSS JOIN unnest($6::text[]) AS s (subscriber)`

// A database at version 2 holding a kept message is migrated to version 3: the message's
// delivery shows no headers, and messages kept now keep theirs.
func TestMigrateFromVersion2KeepsRows(t *testing.T) {
	d := newDatabase(t)
	ctx := context.Background()
	conn := d.conn(t)
	if _, err := conn.Exec(ctx, postgres.SchemaSQLUpTo(2)); err != nil {
		t.Fatalf("applying the version 2 schema: %v", err)
	}
	at := testclock.Epoch()
	if _, err := conn.Exec(ctx, keepV2, "queue q", "old", at, "E", `{"id":"old"}`, []string{"s1", "s2"}); err != nil {
		t.Fatalf("keeping at version 2: %v", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO jadpo_parked_messages (source, reason, body, body_sha256, state, created_at, updated_at)
VALUES ('queue q', 'unreadable', '{}', 'sha', 'failed', $1, $1)`, at); err != nil {
		t.Fatalf("parking at version 2: %v", err)
	}
	s := d.Open(t)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate from version 2: %v", err)
	}
	var versions []int32
	if err := conn.QueryRow(ctx, "SELECT array_agg(version ORDER BY version) FROM jadpo_schema_migrations").Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(versions) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("versions = %v, want [1 2 3 4 5 6 7 8 9 10]", versions)
	}
	if parked, err := s.List(ctx, store.Filter{State: store.ListFailed}); err != nil || len(parked) != 1 || parked[0].ReceivedID != "" {
		t.Fatalf("List failed = %+v, %v; want the old parked message, without a message id", parked, err)
	}
	var nulls int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM jadpo_outbox WHERE headers IS NULL").Scan(&nulls); err != nil || nulls != 1 {
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
	if err := conn.QueryRow(ctx, "SELECT id FROM jadpo_deliveries WHERE outbox_id = $1", res[1].OutboxID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Show(ctx, store.DeliveryID(id), false); err != nil || got.Headers["h"] != "v" || len(got.Headers) != 1 {
		t.Fatalf("Show d%d = %+v, %v; want headers h=v", id, got, err)
	}
}
