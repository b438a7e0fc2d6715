package sqlite

import (
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

const (
	tReceived   = sqlcommon.TableReceived
	tOutbox     = sqlcommon.TableOutbox
	tDeliveries = sqlcommon.TableDeliveries
	tParked     = sqlcommon.TableParked
	tMigrations = sqlcommon.TableMigrations
	tAttempts   = sqlcommon.TableAttempts
	tRuns       = sqlcommon.TableRuns
	// tClock holds the store's clock: the latest time it gave (mark_us, in microseconds).
	tClock = "jadpo_clock"
)

// statement is a statement of the store and the connection pool it runs on.
type statement struct {
	sqlcommon.Statement
	// read: runs on the readers; else on the one writer.
	read bool
}

func writer(name string, sql string, tables ...string) statement {
	return statement{Statement: sqlcommon.Statement{Name: name, Tables: tables, SQL: sql}}
}

func reader(name string, sql string, tables ...string) statement {
	return statement{Statement: sqlcommon.Statement{Name: name, Tables: tables, SQL: sql}, read: true}
}

// Lists of ids and states are passed as one JSON array, read with json_each.

var (
	// The store's time: the machine's clock (?1), never before the latest time the store
	// gave (the mark), which it becomes.
	stmtClock = writer("read the clock", `UPDATE jadpo_clock SET mark_us = max(mark_us, ?1) WHERE id = 1
RETURNING mark_us`, tClock)

	stmtRecordReceived = writer("record received id", `INSERT INTO jadpo_received_events (source, received_id, received_at)
VALUES (?1, ?2, ?3)
ON CONFLICT (source, received_id) DO NOTHING`, tReceived)

	stmtWriteOutbox = writer("write outbox", `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, headers, settled_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
RETURNING id`, tOutbox)

	stmtWriteDeliveries = writer("write deliveries", `INSERT INTO jadpo_deliveries
    (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
SELECT ?1, value, 'pending', 0, ?2, 0, ?2, ?2 FROM json_each(?3)`, tDeliveries)

	stmtDeleteParked = writer("delete re-read parked message", `DELETE FROM jadpo_parked_messages WHERE id = ?1`, tParked)

	stmtPark = writer("park", `INSERT INTO jadpo_parked_messages
    (source, wire_type, event_name, reason, problems, body, body_sha256, state, created_at, updated_at, received_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'failed', ?8, ?8, ?9)
ON CONFLICT (source, body_sha256) DO NOTHING
RETURNING id`, tParked)

	// The row a body is parked as already, when Park added none.
	stmtParkedAs = writer("parked already", `SELECT id FROM jadpo_parked_messages WHERE source = ?1 AND body_sha256 = ?2`, tParked)

	// A re-read that found no id keeps the one read before.
	stmtParkAgain = writer("park again", `UPDATE jadpo_parked_messages
SET state = 'failed', wire_type = ?2, event_name = ?3, reason = ?4, problems = ?5, updated_at = ?6,
    received_id = COALESCE(?7, received_id)
WHERE id = ?1 AND state = 'pending'`, tParked)

	stmtRetriedParked = reader("retried parked messages", `SELECT id, source, wire_type, event_name, reason, problems, body, created_at, updated_at, received_id
FROM jadpo_parked_messages
WHERE state = 'pending'
ORDER BY updated_at, id
LIMIT ?1`, tParked)

	stmtClaim = writer("claim deliveries", `UPDATE jadpo_deliveries
SET state = 'running',
    attempts = attempts + CASE WHEN state = 'running' AND handler_started = 0 THEN 0 ELSE 1 END,
    handler_started = 0,
    lease_expires_at = ?2,
    next_attempt_at = ?2,
    fencing_token = fencing_token + 1,
    updated_at = ?1
WHERE id IN (
    SELECT id FROM jadpo_deliveries
    WHERE state IN ('pending', 'retry_wait', 'running') AND next_attempt_at <= ?1
      AND (state <> 'running' OR lease_expires_at < ?1)
    ORDER BY next_attempt_at, id
    LIMIT ?3
)
RETURNING id, fencing_token, attempts, max_attempts, lease_expires_at, subscriber, outbox_id`, tDeliveries)

	stmtClaimedEvents = writer("read claimed events", `SELECT id, source, received_id, event_name, event_json
FROM jadpo_outbox WHERE id IN (SELECT value FROM json_each(?1))`, tOutbox)

	// Settling to 'pending' is a released claim (store.SettleReleased): the attempt its
	// claim counted is uncounted and the last error kept. Settling to 'running' is a
	// started handler (store.SettleStarted): the claim goes on, its attempt counted.
	stmtSettle = writer("settle delivery", `UPDATE jadpo_deliveries
SET state = ?3,
    attempts = CASE WHEN ?3 = 'pending' THEN attempts - 1 ELSE attempts END,
    handler_started = 1,
    next_attempt_at = COALESCE(?4, next_attempt_at),
    last_error_code = CASE WHEN ?3 IN ('pending', 'running') THEN last_error_code ELSE ?5 END,
    last_error = CASE WHEN ?3 IN ('pending', 'running') THEN last_error ELSE ?7 END,
    lease_expires_at = CASE WHEN ?3 = 'running' THEN lease_expires_at END,
    settled_at = CASE WHEN ?3 IN ('succeeded', 'failed') THEN ?6 END,
    updated_at = ?6
WHERE id = ?1 AND fencing_token = ?2 AND state = 'running'`, tDeliveries)

	// The attempt a settlement settled (succeeded, retry_wait or failed), written after
	// stmtSettle in its transaction from the row it wrote: ?1 the delivery.
	stmtWriteAttempt = writer("write delivery attempt", `INSERT INTO jadpo_delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
SELECT id, attempts, updated_at, state, last_error_code, last_error FROM jadpo_deliveries WHERE id = ?1`, tAttempts, tDeliveries)

	// A delivery's attempts for Show: the newest ?2, newest first (Show turns them round).
	stmtShowAttempts = reader("show delivery attempts", `SELECT attempt, at, outcome, error_code, error FROM jadpo_delivery_attempts
WHERE delivery_id = ?1 ORDER BY id DESC LIMIT ?2`, tAttempts)
)

const deliveryColumns = `d.id, d.state, d.subscriber, d.attempts, d.max_attempts, d.next_attempt_at,
    d.last_error_code, d.created_at, d.updated_at, d.settled_at, d.dismissed_at,
    o.source, o.event_name, o.received_id, d.last_error`

const parkedColumns = `id, state, source, wire_type, event_name, reason, problems, body_sha256,
    created_at, updated_at, dismissed_at, received_id`

var (
	stmtListDeliveries = reader("list deliveries", `SELECT `+deliveryColumns+`, NULL, NULL
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.state IN (SELECT value FROM json_each(?1))
ORDER BY d.created_at, d.id
LIMIT ?2`, tDeliveries, tOutbox)

	stmtShowDelivery = reader("show delivery", `SELECT `+deliveryColumns+`, CASE WHEN ?2 THEN o.event_json END, o.headers
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.id = ?1`, tDeliveries, tOutbox)

	stmtListParked = reader("list parked messages", `SELECT `+parkedColumns+`, NULL
FROM jadpo_parked_messages
WHERE state IN (SELECT value FROM json_each(?1))
ORDER BY created_at, id
LIMIT ?2`, tParked)

	stmtShowParked = reader("show parked message", `SELECT `+parkedColumns+`, CASE WHEN ?2 THEN body END
FROM jadpo_parked_messages
WHERE id = ?1`, tParked)

	stmtStatesDeliveries = writer("lock deliveries", `SELECT id, state FROM jadpo_deliveries
WHERE id IN (SELECT value FROM json_each(?1))`, tDeliveries)

	stmtStatesParked = writer("lock parked messages", `SELECT id, state FROM jadpo_parked_messages
WHERE id IN (SELECT value FROM json_each(?1))`, tParked)

	stmtRetryDeliveries = writer("retry deliveries", `UPDATE jadpo_deliveries
SET state = 'pending', attempts = 0, next_attempt_at = ?2, lease_expires_at = NULL,
    settled_at = NULL, updated_at = ?2
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'failed'`, tDeliveries)

	stmtRetryParked = writer("retry parked messages", `UPDATE jadpo_parked_messages SET state = 'pending', updated_at = ?2
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'failed'`, tParked)

	stmtDismissDeliveries = writer("dismiss deliveries", `UPDATE jadpo_deliveries SET state = 'dismissed', dismissed_at = ?2, updated_at = ?2
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'failed'`, tDeliveries)

	stmtDismissParked = writer("dismiss parked messages", `UPDATE jadpo_parked_messages SET state = 'dismissed', dismissed_at = ?2, updated_at = ?2
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'failed'`, tParked)

	// Housekeeping: each statement deletes at most ?2 rows, read oldest first from its
	// partial index (docs/design/store.md shows each plan). SQLite has one writer at a time, so
	// no two housekeepers ever delete (or count) the same row.
	stmtForgetReceived = writer("housekeep received ids", `DELETE FROM jadpo_received_events WHERE rowid IN (
    SELECT rowid FROM jadpo_received_events WHERE received_at < ?1 ORDER BY received_at LIMIT ?2)`, tReceived)

	stmtForgetParked = writer("housekeep parked messages", `DELETE FROM jadpo_parked_messages WHERE id IN (
    SELECT id FROM jadpo_parked_messages INDEXED BY jadpo_parked_messages_dismissed
    WHERE state = 'dismissed' AND dismissed_at < ?1
    ORDER BY dismissed_at LIMIT ?2)`, tParked)

	stmtPickSucceeded = writer("pick succeeded deliveries", `SELECT id FROM jadpo_deliveries
WHERE state = 'succeeded' AND settled_at < ?1 ORDER BY settled_at LIMIT ?2`, tDeliveries)

	stmtPickDismissed = writer("pick dismissed deliveries", `SELECT id FROM jadpo_deliveries
WHERE state = 'dismissed' AND dismissed_at < ?1 ORDER BY dismissed_at LIMIT ?2`, tDeliveries)

	// The picked deliveries' outbox rows take the latest settled time among them.
	stmtSettleOutbox = writer("settle outbox", `UPDATE jadpo_outbox AS o
SET settled_at = max(ifnull(o.settled_at, 0), g.at)
FROM (SELECT outbox_id, max(max(ifnull(settled_at, 0), ifnull(dismissed_at, 0))) AS at FROM jadpo_deliveries
      WHERE id IN (SELECT value FROM json_each(?1)) GROUP BY outbox_id) AS g
WHERE o.id = g.outbox_id`, tOutbox, tDeliveries)

	stmtForgetDeliveries = writer("housekeep deliveries",
		`DELETE FROM jadpo_deliveries WHERE id IN (SELECT value FROM json_each(?1))`, tDeliveries)

	// The picked deliveries' attempts go with them, read from the index (delivery_id, id).
	stmtForgetAttempts = writer("housekeep delivery attempts",
		`DELETE FROM jadpo_delivery_attempts WHERE delivery_id IN (SELECT value FROM json_each(?1))`, tAttempts)

	stmtForgetOutbox = writer("housekeep outbox", `DELETE FROM jadpo_outbox WHERE id IN (
    SELECT o.id FROM jadpo_outbox AS o
    WHERE o.settled_at < ?1
      AND NOT EXISTS (SELECT 1 FROM jadpo_deliveries AS d WHERE d.outbox_id = o.id)
    ORDER BY o.settled_at LIMIT ?2)`, tOutbox, tDeliveries)

	// A housekeeping run's counts at the store's time ?1.
	stmtRecordRun = writer("record housekeeping run", `INSERT INTO jadpo_housekeeping_runs (at, received_ids, parked_messages, deliveries, outbox, more)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)`, tRuns)

	// The oldest runs beyond the newest ?1, at most 100. The one writer gives each row the
	// id after the newest, and only this deletes rows, oldest first: the ids are
	// contiguous, so the newest ?1 are those above max(id) - ?1.
	stmtForgetRuns = writer("housekeep housekeeping runs", `DELETE FROM jadpo_housekeeping_runs WHERE id IN (
    SELECT id FROM jadpo_housekeeping_runs
    WHERE id <= (SELECT max(id) FROM jadpo_housekeeping_runs) - ?1
    ORDER BY id LIMIT 100)`, tRuns)

	stmtHousekeepingRuns = reader("housekeeping runs", `SELECT at, received_ids, parked_messages, deliveries, outbox, more
FROM jadpo_housekeeping_runs ORDER BY id DESC LIMIT ?1`, tRuns)

	stmtCountReceived   = reader("count received ids", `SELECT count(*) FROM jadpo_received_events`, tReceived)
	stmtCountOutbox     = reader("count outbox", `SELECT count(*) FROM jadpo_outbox`, tOutbox)
	stmtCountAttempts   = reader("count delivery attempts", `SELECT count(*) FROM jadpo_delivery_attempts`, tAttempts)
	stmtCountRuns       = reader("count housekeeping runs", `SELECT count(*) FROM jadpo_housekeeping_runs`, tRuns)
	stmtCountDeliveries = reader("count deliveries", `SELECT subscriber, state, count(*) FROM jadpo_deliveries GROUP BY subscriber, state`, tDeliveries)
	stmtOldestPending   = reader("oldest pending delivery",
		`SELECT min(created_at) FROM jadpo_deliveries WHERE state IN ('pending', 'retry_wait', 'running')`, tDeliveries)
	stmtCountParked = reader("count parked messages",
		`SELECT reason, state, count(*) FROM jadpo_parked_messages GROUP BY reason, state`, tParked)

	stmtMigrationVersions = writer("migration versions",
		`SELECT version FROM jadpo_schema_migrations ORDER BY version`, tMigrations)
)

// statements are every statement the store runs after migrating; Migrate prepares each.
var statements = []statement{
	stmtClock, stmtRecordReceived, stmtWriteOutbox, stmtWriteDeliveries, stmtDeleteParked,
	stmtPark, stmtParkedAs, stmtParkAgain, stmtRetriedParked, stmtClaim, stmtClaimedEvents, stmtSettle, stmtWriteAttempt,
	stmtListDeliveries, stmtShowDelivery, stmtShowAttempts, stmtListParked, stmtShowParked,
	stmtStatesDeliveries, stmtStatesParked, stmtRetryDeliveries, stmtRetryParked,
	stmtDismissDeliveries, stmtDismissParked,
	stmtForgetReceived, stmtForgetParked, stmtPickSucceeded, stmtPickDismissed, stmtSettleOutbox,
	stmtForgetDeliveries, stmtForgetAttempts, stmtForgetOutbox, stmtRecordRun, stmtForgetRuns, stmtHousekeepingRuns,
	stmtCountReceived, stmtCountOutbox, stmtCountAttempts, stmtCountRuns, stmtCountDeliveries, stmtCountParked, stmtOldestPending,
	stmtMigrationVersions,
}

func commonStatements() []sqlcommon.Statement {
	out := make([]sqlcommon.Statement, len(statements))
	for i, s := range statements {
		out[i] = s.Statement
	}
	return out
}
