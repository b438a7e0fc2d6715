package sqlite

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

// The console's statements (store.Browser). Every list walks the primary key downwards
// from the cursor (id < ?1 ORDER BY id DESC LIMIT n): a page reads its n rows and the rows
// the filter passes over, never an offset's worth. A filter left empty is '' (or the
// widest time range), so each statement is one prepared text.

const parkedWhere = `(?2 = '' OR source = ?2)
  AND (?3 = '' OR reason = ?3)
  AND (?4 = '' OR state = ?4)
  AND (?5 = '' OR coalesce(event_name, wire_type) = ?5)
  AND (?6 = '' OR received_id = ?6)
  AND created_at >= ?7 AND created_at < ?8`

const deliveriesWhere = `(?2 = '' OR d.subscriber = ?2)
  AND (?3 = '' OR d.state = ?3)
  AND (?4 = '' OR o.event_name = ?4)
  AND d.created_at >= ?5 AND d.created_at < ?6`

var (
	stmtBrowseParked = reader("browse parked messages", `SELECT `+parkedColumns+`, NULL
FROM jadpo_parked_messages
WHERE id < ?1 AND `+parkedWhere+`
ORDER BY id DESC
LIMIT ?9`, tParked)

	// A search by message id reads jadpo_parked_messages_received_id: the rows of that id
	// only, however many others the table holds.
	stmtBrowseParkedByID = reader("browse parked messages by message id", `SELECT `+parkedColumns+`, NULL
FROM jadpo_parked_messages
WHERE received_id = ?6 AND id < ?1 AND `+parkedWhere+`
ORDER BY id DESC
LIMIT ?9`, tParked)

	stmtCountParkedByID = reader("count parked messages of a message id", `SELECT count(*)
FROM jadpo_parked_messages
WHERE received_id = ?6 AND ?1 = ?1 AND `+parkedWhere, tParked)

	stmtCountParkedQuery = reader("count parked messages matching", `SELECT count(*)
FROM jadpo_parked_messages
WHERE ?1 = ?1 AND `+parkedWhere, tParked)

	stmtBrowseDeliveries = reader("browse deliveries", `SELECT `+deliveryColumns+`, NULL, NULL
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.id < ?1 AND `+deliveriesWhere+`
ORDER BY d.id DESC
LIMIT ?7`, tDeliveries, tOutbox)

	stmtCountDeliveriesQuery = reader("count deliveries matching", `SELECT count(*)
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE ?1 = ?1 AND `+deliveriesWhere, tDeliveries, tOutbox)

	// Through jadpo_received_events_received_at.
	stmtActivityReceived = reader("activity: received ids", `SELECT source, (received_at - ?1) / ?2 AS b, count(*)
FROM jadpo_received_events
WHERE received_at >= ?1
GROUP BY source, b`, tReceived)

	// Through jadpo_parked_messages_state (state, created_at), one range a state.
	stmtActivityParked = reader("activity: parked messages", `SELECT source, (created_at - ?1) / ?2 AS b, count(*)
FROM jadpo_parked_messages
WHERE state IN ('failed', 'pending', 'dismissed') AND created_at >= ?1
GROUP BY source, b`, tParked)
)

func init() {
	statements = append(statements, stmtBrowseParked, stmtBrowseParkedByID, stmtCountParkedQuery, stmtCountParkedByID, stmtBrowseDeliveries,
		stmtCountDeliveriesQuery, stmtActivityReceived, stmtActivityParked)
}

var _ store.Browser = (*Store)(nil)

func timeRange(from, to time.Time) (int64, int64) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = micros(from)
	}
	if !to.IsZero() {
		hi = micros(to)
	}
	return lo, hi
}

func parkedArgs(q store.ParkedQuery) []any {
	lo, hi := timeRange(q.From, q.To)
	return []any{sqlcommon.Cursor(q.Before), q.Source, string(q.Reason), string(q.State), q.Event, q.ReceivedID, lo, hi}
}

func deliveryArgs(q store.DeliveryQuery) []any {
	lo, hi := timeRange(q.From, q.To)
	return []any{sqlcommon.Cursor(q.Before), q.Subscriber, string(q.State), q.Event, lo, hi}
}

// BrowseParked lists parked messages newest first, from the cursor.
func (s *Store) BrowseParked(ctx context.Context, q store.ParkedQuery) ([]store.Entry, error) {
	st := stmtBrowseParked
	if q.ReceivedID != "" {
		st = stmtBrowseParkedByID
	}
	es, err := s.queryEntries(ctx, st, scanParked, append(parkedArgs(q), q.QueryLimit())...)
	return es, wrap("browse parked messages", err)
}

// BrowseDeliveries lists deliveries newest first, from the cursor.
func (s *Store) BrowseDeliveries(ctx context.Context, q store.DeliveryQuery) ([]store.Entry, error) {
	es, err := s.queryEntries(ctx, stmtBrowseDeliveries, scanDelivery, append(deliveryArgs(q), q.QueryLimit())...)
	return es, wrap("browse deliveries", err)
}

// CountParked counts the parked messages q matches.
func (s *Store) CountParked(ctx context.Context, q store.ParkedQuery) (int64, error) {
	if q.ReceivedID != "" {
		return s.count(ctx, stmtCountParkedByID, parkedArgs(q))
	}
	return s.count(ctx, stmtCountParkedQuery, parkedArgs(q))
}

// CountDeliveries counts the deliveries q matches.
func (s *Store) CountDeliveries(ctx context.Context, q store.DeliveryQuery) (int64, error) {
	return s.count(ctx, stmtCountDeliveriesQuery, deliveryArgs(q))
}

func (s *Store) count(ctx context.Context, st statement, args []any) (int64, error) {
	p, err := s.stmt(ctx, st)
	if err != nil {
		return 0, wrap(st.Name, err)
	}
	var n int64
	return n, wrap(st.Name, p.QueryRowContext(ctx, args...).Scan(&n))
}

// Activity counts received ids and parked messages per source and bucket.
func (s *Store) Activity(ctx context.Context, since time.Time, step time.Duration) ([]store.ActivityCount, error) {
	if step < time.Microsecond {
		step = time.Microsecond
	}
	var counts sqlcommon.ActivityCounts
	for _, q := range []struct {
		st     statement
		parked bool
	}{{stmtActivityReceived, false}, {stmtActivityParked, true}} {
		err := s.eachRow(ctx, q.st, func(rows *sql.Rows) error {
			var source string
			var b int
			var n int64
			if err := rows.Scan(&source, &b, &n); err != nil {
				return err
			}
			counts.Add(source, b, n, q.parked)
			return nil
		}, micros(since), step.Microseconds())
		if err != nil {
			return nil, wrap("activity", err)
		}
	}
	return counts.Counts(), nil
}
