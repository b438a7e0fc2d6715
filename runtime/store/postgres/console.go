package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

// The console's statements (store.Browser). Every list walks the primary key downwards
// from the cursor (id < $1 ORDER BY id DESC LIMIT n): a page reads its n rows and the rows
// the filter passes over, never an offset's worth. An empty filter is '' or a NULL time.

const parkedWhere = `($2::text = '' OR source = $2)
  AND ($3::text = '' OR reason = $3)
  AND ($4::text = '' OR state = $4)
  AND ($5::text = '' OR coalesce(event_name, wire_type) = $5)
  AND ($6::text = '' OR received_id = $6)
  AND ($7::timestamptz IS NULL OR created_at >= $7)
  AND ($8::timestamptz IS NULL OR created_at < $8)`

const deliveriesWhere = `($2::text = '' OR d.subscriber = $2)
  AND ($3::text = '' OR d.state = $3)
  AND ($4::text = '' OR o.event_name = $4)
  AND ($5::timestamptz IS NULL OR d.created_at >= $5)
  AND ($6::timestamptz IS NULL OR d.created_at < $6)`

var (
	stmtBrowseParked = sqlcommon.Statement{Name: "browse parked messages", Tables: []string{tParked},
		SQL: `SELECT ` + parkedColumns + `, NULL::bytea
FROM jadpo_parked_messages
WHERE id < $1::bigint AND ` + parkedWhere + `
ORDER BY id DESC
LIMIT $9`}

	// A search by message id reads jadpo_parked_messages_received_id (received_id, id): the
	// rows of that id only, however many others the table holds.
	stmtBrowseParkedByID = sqlcommon.Statement{Name: "browse parked messages by message id", Tables: []string{tParked},
		SQL: `SELECT ` + parkedColumns + `, NULL::bytea
FROM jadpo_parked_messages
WHERE received_id = $6 AND id < $1::bigint AND ` + parkedWhere + `
ORDER BY received_id DESC, id DESC
LIMIT $9`}

	stmtCountParkedByID = sqlcommon.Statement{Name: "count parked messages of a message id", Tables: []string{tParked},
		SQL: `SELECT count(*)
FROM jadpo_parked_messages
WHERE received_id = $6 AND $1::bigint IS NOT NULL AND ` + parkedWhere}

	stmtCountParkedQuery = sqlcommon.Statement{Name: "count parked messages matching", Tables: []string{tParked},
		SQL: `SELECT count(*)
FROM jadpo_parked_messages
WHERE $1::bigint IS NOT NULL AND ` + parkedWhere}

	stmtBrowseDeliveries = sqlcommon.Statement{Name: "browse deliveries", Tables: []string{tDeliveries, tOutbox},
		SQL: `SELECT ` + deliveryColumns + `, NULL::text, NULL::text
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.id < $1::bigint AND ` + deliveriesWhere + `
ORDER BY d.id DESC
LIMIT $7`}

	stmtCountDeliveriesQuery = sqlcommon.Statement{Name: "count deliveries matching", Tables: []string{tDeliveries, tOutbox},
		SQL: `SELECT count(*)
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE $1::bigint IS NOT NULL AND ` + deliveriesWhere}

	// Through jadpo_received_events_received_at; $2 is the step in microseconds.
	stmtActivityReceived = sqlcommon.Statement{Name: "activity: received ids", Tables: []string{tReceived},
		SQL: `SELECT source, floor(extract(epoch FROM received_at - $1::timestamptz) * 1000000 / $2::bigint)::bigint AS b, count(*)
FROM jadpo_received_events
WHERE received_at >= $1
GROUP BY 1, 2`}

	// Through jadpo_parked_messages_state (state, created_at), one range a state.
	stmtActivityParked = sqlcommon.Statement{Name: "activity: parked messages", Tables: []string{tParked},
		SQL: `SELECT source, floor(extract(epoch FROM created_at - $1::timestamptz) * 1000000 / $2::bigint)::bigint AS b, count(*)
FROM jadpo_parked_messages
WHERE state IN ('failed', 'pending', 'dismissed') AND created_at >= $1
GROUP BY 1, 2`}
)

func init() {
	statements = append(statements, stmtBrowseParked, stmtBrowseParkedByID, stmtCountParkedQuery, stmtCountParkedByID, stmtBrowseDeliveries,
		stmtCountDeliveriesQuery, stmtActivityReceived, stmtActivityParked)
}

var _ store.Browser = (*Store)(nil)

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := sqlcommon.Micro(t)
	return &u
}

func parkedArgs(q store.ParkedQuery) []any {
	return []any{sqlcommon.Cursor(q.Before), q.Source, string(q.Reason), string(q.State), q.Event, q.ReceivedID, optTime(q.From), optTime(q.To)}
}

func deliveryArgs(q store.DeliveryQuery) []any {
	return []any{sqlcommon.Cursor(q.Before), q.Subscriber, string(q.State), q.Event, optTime(q.From), optTime(q.To)}
}

// BrowseParked lists parked messages newest first, from the cursor.
func (s *Store) BrowseParked(ctx context.Context, q store.ParkedQuery) ([]store.Entry, error) {
	st := stmtBrowseParked
	if q.ReceivedID != "" {
		st = stmtBrowseParkedByID
	}
	rows, err := s.pool.Query(ctx, st.SQL, append(parkedArgs(q), q.QueryLimit())...)
	if err != nil {
		return nil, wrap("browse parked messages", err)
	}
	es, err := collectParked(rows)
	return es, wrap("browse parked messages", err)
}

// BrowseDeliveries lists deliveries newest first, from the cursor.
func (s *Store) BrowseDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Entry, error) {
	rows, err := s.pool.Query(ctx, stmtBrowseDeliveries.SQL, append(deliveryArgs(q), q.QueryLimit())...)
	if err != nil {
		return nil, wrap("browse deliveries", err)
	}
	es, err := collectDeliveries(rows)
	return es, wrap("browse deliveries", err)
}

// CountParked counts the parked messages q matches.
func (s *Store) CountParked(ctx context.Context, q store.ParkedQuery) (int64, error) {
	var n int64
	st := stmtCountParkedQuery
	if q.ReceivedID != "" {
		st = stmtCountParkedByID
	}
	err := s.pool.QueryRow(ctx, st.SQL, parkedArgs(q)...).Scan(&n)
	return n, wrap("count parked messages", err)
}

// CountDeliveries counts the deliveries q matches.
func (s *Store) CountDeliveries(ctx context.Context, q store.DeliveryQuery) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, stmtCountDeliveriesQuery.SQL, deliveryArgs(q)...).Scan(&n)
	return n, wrap("count deliveries", err)
}

// Activity counts received ids and parked messages per source and bucket.
func (s *Store) Activity(ctx context.Context, since time.Time, step time.Duration) ([]store.ActivityCount, error) {
	if step < time.Microsecond {
		step = time.Microsecond
	}
	var counts sqlcommon.ActivityCounts
	for _, q := range []struct {
		st     sqlcommon.Statement
		parked bool
	}{{stmtActivityReceived, false}, {stmtActivityParked, true}} {
		rows, err := s.pool.Query(ctx, q.st.SQL, sqlcommon.Micro(since), step.Microseconds())
		if err != nil {
			return nil, wrap("activity", err)
		}
		var source string
		var b int
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&source, &b, &n}, func() error {
			counts.Add(source, b, n, q.parked)
			return nil
		}); err != nil {
			return nil, wrap("activity", err)
		}
	}
	return counts.Counts(), nil
}
