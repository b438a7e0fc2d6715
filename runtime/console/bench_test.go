package console_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/console"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
	"github.com/jadpo/jadpo/runtime/store/postgres"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

// BenchmarkConsolePages serves the console's heaviest list and one delivery's page from a
// store of 1,000 and of 1,000,000 parked messages and deliveries (each delivery with its
// outbox row), on SQLite and PostgreSQL: the server's time a page, from the request to the
// last byte of HTML (httptest.ResponseRecorder, no network). Beside each page, "store" is
// the store call the page makes alone, the raw loop the page's rendering adds to. The rows
// are written by one INSERT ... SELECT a table (a recursive CTE on SQLite, generate_series on
// PostgreSQL), only when this benchmark runs (-bench), never under go test alone.
func BenchmarkConsolePages(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million rows")
	}
	for _, adapter := range []string{"sqlite", "postgres"} {
		for _, rows := range []int{1000, 1000000} {
			b.Run(fmt.Sprintf("%s/rows=%d", adapter, rows), func(b *testing.B) {
				st := seededStore(b, adapter, rows)
				h, err := console.New(console.Options{Store: st, Token: token})
				if err != nil {
					b.Fatal(err)
				}
				cookie := benchLogin(b, h)
				br := st.(store.Browser)
				mid := int64(rows / 2)
				pages := []struct{ name, path string }{
					{"overview", "/live"}, // after the first, the figures of the last reading
					{"parked-list", "/parked"},
					{"parked-list-filtered", "/parked?reason=unreadable&state=failed"},
					{"parked-list-middle-page", fmt.Sprintf("/parked?before=%d", mid)},
					{"parked-message", fmt.Sprintf("/parked/p%d", mid)},
					// No index on the message id: the search reads every row newer than its match.
					{"parked-search-oldest-message-id", "/parked?message_id=m-1"},
					{"deliveries-list", "/deliveries?state=failed"},
					{"delivery", fmt.Sprintf("/deliveries/d%d", mid)},
				}
				for _, p := range pages {
					b.Run(p.name, func(b *testing.B) {
						req := httptest.NewRequest("GET", p.path, nil)
						req.AddCookie(cookie)
						for b.Loop() {
							rec := httptest.NewRecorder()
							h.ServeHTTP(rec, req)
							if rec.Code != http.StatusOK {
								b.Fatalf("%s: %d %s", p.path, rec.Code, rec.Body.String())
							}
						}
					})
				}
				ctx := context.Background()
				b.Run("parked-list/store", func(b *testing.B) {
					for b.Loop() {
						if es, err := br.BrowseParked(ctx, store.ParkedQuery{Limit: store.PageLimit + 1}); err != nil || len(es) != store.PageLimit+1 {
							b.Fatal(len(es), err)
						}
					}
				})
				// What the overview reads when its figures are stale: the table counts
				// (as jadpo store stats) and the two windows' activity.
				b.Run("overview/store", func(b *testing.B) {
					for b.Loop() {
						if _, err := st.Stats(ctx); err != nil {
							b.Fatal(err)
						}
						for _, step := range []time.Duration{5 * time.Minute, time.Hour} {
							if _, err := br.Activity(ctx, time.Now().Add(-24*step), step); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
				b.Run("delivery/store", func(b *testing.B) {
					for b.Loop() {
						if _, err := st.Show(ctx, store.DeliveryID(mid), true); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

func benchLogin(b *testing.B, h http.Handler) *http.Cookie {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/login?token="+token, nil))
	for _, c := range rec.Result().Cookies() {
		if c.Name == "jadpo_console" {
			return c
		}
	}
	b.Fatalf("no session cookie: %d %s", rec.Code, rec.Body.String())
	return nil
}

// The seed: n parked messages (reasons in turn, one in 50 dismissed), n outbox rows and n
// deliveries (one in 3 failed, the rest succeeded), a second apart.
const (
	seedParkedSQLite = `INSERT INTO jadpo_parked_messages
    (source, wire_type, event_name, reason, problems, body, body_sha256, state, created_at, updated_at, received_id)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
SELECT 'queue q' || (i % 4), 'order.x', CASE WHEN i % 3 = 1 THEN 'OrderShipped' END,
    CASE i % 3 WHEN 0 THEN 'unlisted_type' WHEN 1 THEN 'unreadable' ELSE 'too_large' END,
    CASE WHEN i % 3 = 1 THEN '[{"field":"order_id","rule":"min_length"}]' ELSE '[]' END,
    CAST('{"order_id":"","n":' || i || ',"lines":[1,2,3]}' AS BLOB), printf('%064d', i),
    CASE WHEN i % 50 = 0 THEN 'dismissed' ELSE 'failed' END, ?2 + i * 1000000, ?2 + i * 1000000, 'm-' || i
FROM n`
	seedOutboxSQLite = `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, settled_at)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
SELECT 'queue q' || (i % 4), 'OrderShipped', '{"order_id":"o-' || i || '","carrier":"dhl"}', 'm-' || i, ?2 + i * 1000000, NULL FROM n`
	seedDeliveriesSQLite = `INSERT INTO jadpo_deliveries
    (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, last_error_code, created_at, updated_at, settled_at)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
SELECT i, CASE WHEN i % 2 = 0 THEN 'pack_order' ELSE 'notify' END, CASE WHEN i % 3 = 0 THEN 'failed' ELSE 'succeeded' END,
    CASE WHEN i % 3 = 0 THEN 5 ELSE 1 END, ?2 + i * 1000000, 1, CASE WHEN i % 3 = 0 THEN 'http.503' END,
    ?2 + i * 1000000, ?2 + i * 1000000, ?2 + i * 1000000
FROM n`

	seedParkedPostgres = `INSERT INTO jadpo_parked_messages
    (source, wire_type, event_name, reason, problems, body, body_sha256, state, created_at, updated_at, received_id)
SELECT 'queue q' || (i % 4), 'order.x', CASE WHEN i % 3 = 1 THEN 'OrderShipped' END,
    CASE i % 3 WHEN 0 THEN 'unlisted_type' WHEN 1 THEN 'unreadable' ELSE 'too_large' END,
    CASE WHEN i % 3 = 1 THEN '[{"field":"order_id","rule":"min_length"}]' ELSE '[]' END::jsonb,
    convert_to('{"order_id":"","n":' || i || ',"lines":[1,2,3]}', 'UTF8'), lpad(i::text, 64, '0'),
    CASE WHEN i % 50 = 0 THEN 'dismissed' ELSE 'failed' END, $2::timestamptz + i * interval '1 second', $2::timestamptz + i * interval '1 second', 'm-' || i
FROM generate_series(1, $1::int) AS i`
	seedOutboxPostgres = `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, settled_at)
SELECT 'queue q' || (i % 4), 'OrderShipped', ('{"order_id":"o-' || i || '","carrier":"dhl"}')::json, 'm-' || i, $2::timestamptz + i * interval '1 second', NULL
FROM generate_series(1, $1::int) AS i`
	seedDeliveriesPostgres = `INSERT INTO jadpo_deliveries
    (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, last_error_code, created_at, updated_at, settled_at)
SELECT i, CASE WHEN i % 2 = 0 THEN 'pack_order' ELSE 'notify' END, CASE WHEN i % 3 = 0 THEN 'failed' ELSE 'succeeded' END,
    CASE WHEN i % 3 = 0 THEN 5 ELSE 1 END, $2::timestamptz + i * interval '1 second', 1, CASE WHEN i % 3 = 0 THEN 'http.503' END,
    $2::timestamptz + i * interval '1 second', $2::timestamptz + i * interval '1 second', $2::timestamptz + i * interval '1 second'
FROM generate_series(1, $1::int) AS i`
)

func seededStore(b *testing.B, adapter string, n int) store.Store {
	ctx := context.Background()
	start := time.Now()
	base := t0.Add(-time.Duration(n) * time.Second)
	var st store.Store
	switch adapter {
	case "sqlite":
		path := filepath.Join(b.TempDir(), "bench.sqlite")
		s, err := sqlite.OpenPath(ctx, path, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{seedParkedSQLite, seedOutboxSQLite, seedDeliveriesSQLite, "ANALYZE"} {
			args := []any{n, base.UnixMicro()}
			if q == "ANALYZE" {
				args = nil
			}
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				b.Fatalf("%s: %v", strings.Fields(q)[2], err)
			}
		}
		db.Close()
		st = s
	case "postgres":
		pgtest.Require(b)
		s, err := postgres.Open(ctx, pgtest.FreshURL(b))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{seedParkedPostgres, seedOutboxPostgres, seedDeliveriesPostgres} {
			if _, err := s.Pool().Exec(ctx, q, n, base); err != nil {
				b.Fatalf("%s: %v", strings.Fields(q)[2], err)
			}
		}
		for _, t := range []string{"jadpo_parked_messages", "jadpo_outbox", "jadpo_deliveries"} {
			if _, err := s.Pool().Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
				b.Fatal(err)
			}
		}
		st = s
	}
	b.Cleanup(func() { st.Close() })
	b.Logf("seeded %d rows a table on %s in %s", n, adapter, time.Since(start).Round(time.Millisecond))
	return st
}
