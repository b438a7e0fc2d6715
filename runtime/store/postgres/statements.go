package postgres

import (
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

// The store's clock is the database's: every statement that writes or compares a time
// reads it from now() (the transaction's start, one time for all its statements), never
// from the process. A test may pin it (Store.SetClock): the statement's clock parameter,
// NULL otherwise, then holds the time. Durations (a lease, a retry's pause, a retention)
// are passed in microseconds and added in SQL.
const (
	tReceived   = sqlcommon.TableReceived
	tOutbox     = sqlcommon.TableOutbox
	tDeliveries = sqlcommon.TableDeliveries
	tParked     = sqlcommon.TableParked
	tMigrations = sqlcommon.TableMigrations
	tAttempts   = sqlcommon.TableAttempts
	tRuns       = sqlcommon.TableRuns
)

// One statement per message: the id recorded (a conflict keeps nothing more), the outbox
// row (with its headers, $8: a JSON object or NULL) and a pending delivery per subscriber written from it, and the re-read parked row
// deleted whether the message is kept or a repeat. Data-modifying CTEs always run to
// completion, and see each other's rows through RETURNING only.
var stmtKeep = sqlcommon.Statement{
	Name:   "keep",
	Tables: []string{tReceived, tOutbox, tDeliveries, tParked},
	SQL: `WITH r AS (
    INSERT INTO jadpo_received_events (source, received_id, received_at)
    VALUES ($1, $2, COALESCE($3::timestamptz, now()))
    ON CONFLICT (source, received_id) DO NOTHING
    RETURNING received_at
), o AS (
    INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, headers, settled_at)
    SELECT $1, $4, $5, $2, r.received_at, $8, CASE WHEN coalesce(cardinality($6::text[]), 0) = 0 THEN r.received_at END FROM r
    RETURNING id, created_at
), d AS (
    INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
    SELECT o.id, s.subscriber, 'pending', 0, o.created_at, 0, o.created_at, o.created_at
    FROM o CROSS JOIN unnest($6::text[]) AS s (subscriber)
), p AS (
    DELETE FROM jadpo_parked_messages WHERE id = $7
)
SELECT id FROM o`,
}

// The whole batch in one statement: what stmtKeep writes for each message, from arrays
// of one element per message ($1-$7; each (source, id) once), the subscribers flattened
// with the index of their message ($8, $9), the clock ($10), the re-read parked rows to
// delete ($11). The
// ids are recorded in the order of the indexes, as stmtKeep's statements would, so that
// batches kept at once wait for the ids they share in one order. It returns the index and
// outbox row of each message kept; a message not returned is a repeat. A message the server
// refuses fails the whole statement, and KeepBatch keeps that batch with stmtKeep instead.
var stmtKeepBatch = sqlcommon.Statement{
	Name:   "keep batch",
	Tables: []string{tReceived, tOutbox, tDeliveries, tParked},
	SQL: `WITH m AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
        AS m (idx, source, received_id, event_name, event_json, headers, subscribers)
), c AS (
    SELECT COALESCE($10::timestamptz, now()) AS now
), r AS (
    INSERT INTO jadpo_received_events (source, received_id, received_at)
    SELECT source, received_id, c.now FROM m CROSS JOIN c ORDER BY idx
    ON CONFLICT (source, received_id) DO NOTHING
    RETURNING source, received_id
), o AS (
    INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, headers, settled_at)
    SELECT m.source, m.event_name, m.event_json::json, m.received_id, c.now, m.headers,
        CASE WHEN m.subscribers = 0 THEN c.now END
    FROM m JOIN r ON r.source = m.source AND r.received_id = m.received_id CROSS JOIN c
    ORDER BY m.idx
    RETURNING id, source, received_id
), k AS (
    SELECT m.idx, o.id FROM o JOIN m ON m.source = o.source AND m.received_id = o.received_id
), d AS (
    INSERT INTO jadpo_deliveries (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
    SELECT k.id, s.subscriber, 'pending', 0, c.now, 0, c.now, c.now
    FROM unnest($8::int[], $9::text[]) WITH ORDINALITY AS s (idx, subscriber, n) JOIN k ON k.idx = s.idx CROSS JOIN c
    ORDER BY s.n
), p AS (
    DELETE FROM jadpo_parked_messages WHERE id = ANY($11::bigint[])
)
SELECT idx, id FROM k`,
}

var stmtPark = sqlcommon.Statement{
	Name:   "park",
	Tables: []string{tParked},
	SQL: `INSERT INTO jadpo_parked_messages
    (source, wire_type, event_name, reason, problems, body, body_sha256, state, created_at, updated_at, received_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, 'failed', COALESCE($8::timestamptz, now()), COALESCE($8::timestamptz, now()), $9)
ON CONFLICT (source, body_sha256) DO NOTHING
RETURNING id`,
}

// stmtParkedAs finds the row a body is parked as already, when Park added none.
var stmtParkedAs = sqlcommon.Statement{
	Name:   "parked already",
	Tables: []string{tParked},
	SQL:    `SELECT id FROM jadpo_parked_messages WHERE source = $1 AND body_sha256 = $2`,
}

var stmtParkAgain = sqlcommon.Statement{
	Name:   "park again",
	Tables: []string{tParked},
	SQL: `UPDATE jadpo_parked_messages
SET state = 'failed', wire_type = $2, event_name = $3, reason = $4, problems = $5, updated_at = COALESCE($6::timestamptz, now()),
    received_id = COALESCE($7, received_id)
WHERE id = $1 AND state = 'pending'`,
}

var stmtRetriedParked = sqlcommon.Statement{
	Name:   "retried parked messages",
	Tables: []string{tParked},
	SQL: `SELECT id, source, wire_type, event_name, reason, problems, body, created_at, updated_at, received_id
FROM jadpo_parked_messages
WHERE state = 'pending'
ORDER BY updated_at, id
LIMIT $1`,
}

// The claim: River's shape. The due rows are picked and locked, skipping rows another
// claim holds, and updated in the same statement (one short transaction). A claimed row's
// next_attempt_at becomes its lease's end, so that due rows and expired leases are read in
// order from one index, with no sort, however long the backlog. $1 is the clock, $2 the
// lease in microseconds, $3 the limit.
var stmtClaim = sqlcommon.Statement{
	Name:   "claim deliveries",
	Tables: []string{tDeliveries, tOutbox},
	SQL: `WITH c AS (
    SELECT COALESCE($1::timestamptz, now()) AS now
), due AS MATERIALIZED (
    SELECT id FROM jadpo_deliveries
    WHERE state IN ('pending', 'retry_wait', 'running') AND next_attempt_at <= (SELECT now FROM c)
      AND (state <> 'running' OR lease_expires_at < (SELECT now FROM c))
    ORDER BY next_attempt_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE jadpo_deliveries AS d
SET state = 'running',
    attempts = d.attempts + CASE WHEN d.state = 'running' AND NOT d.handler_started THEN 0 ELSE 1 END,
    handler_started = false,
    lease_expires_at = c.now + $2::bigint * interval '1 microsecond',
    next_attempt_at = c.now + $2::bigint * interval '1 microsecond',
    fencing_token = d.fencing_token + 1,
    updated_at = c.now
FROM c, due, jadpo_outbox AS o
WHERE d.id = due.id AND o.id = d.outbox_id
RETURNING d.id, d.fencing_token, d.attempts, d.max_attempts, d.lease_expires_at, d.subscriber,
    d.outbox_id, o.source, o.received_id, o.event_name, o.event_json`,
}

// Settling to 'pending' is a released claim (store.SettleReleased): the attempt its claim
// counted is uncounted and the last error kept. Settling to 'running' is a started handler
// (store.SettleStarted): the claim goes on, its attempt counted for good. $4 is the pause
// before the next attempt in microseconds (NULL: the row keeps its time), $6 the clock.
// The same statement writes the attempt's row (an attempt settled: succeeded, retry_wait
// or failed; neither a release nor a start is one), at the settlement's time; its tag
// counts the deliveries settled (the final SELECT's rows).
var stmtSettle = sqlcommon.Statement{
	Name:   "settle delivery",
	Tables: []string{tDeliveries, tAttempts},
	SQL: `WITH s AS (
UPDATE jadpo_deliveries
SET state = $3::text,
    attempts = CASE WHEN $3::text = 'pending' THEN attempts - 1 ELSE attempts END,
    handler_started = true,
    next_attempt_at = COALESCE(COALESCE($6::timestamptz, now()) + $4::bigint * interval '1 microsecond', next_attempt_at),
    last_error_code = CASE WHEN $3::text IN ('pending', 'running') THEN last_error_code ELSE $5::text END,
    last_error = CASE WHEN $3::text IN ('pending', 'running') THEN last_error ELSE $7::text END,
    lease_expires_at = CASE WHEN $3::text = 'running' THEN lease_expires_at END,
    settled_at = CASE WHEN $3::text IN ('succeeded', 'failed') THEN COALESCE($6::timestamptz, now()) END,
    updated_at = COALESCE($6::timestamptz, now())
WHERE id = $1 AND fencing_token = $2 AND state = 'running'
RETURNING id, attempts, state, updated_at, last_error_code, last_error
), a AS (
    INSERT INTO jadpo_delivery_attempts (delivery_id, attempt, at, outcome, error_code, error)
    SELECT id, attempts, updated_at, state, last_error_code, last_error FROM s
    WHERE state IN ('succeeded', 'retry_wait', 'failed')
)
SELECT id FROM s`,
}

// A delivery's attempts for Show: the newest $2, newest first (Show turns them round).
var stmtShowAttempts = sqlcommon.Statement{
	Name:   "show delivery attempts",
	Tables: []string{tAttempts},
	SQL: `SELECT attempt, at, outcome, error_code, error FROM jadpo_delivery_attempts
WHERE delivery_id = $1 ORDER BY id DESC LIMIT $2`,
}

// The handlers' starts of one write (store.SettleStarted) in one statement: each
// (id, token) pair whose claim still holds is marked started; the pairs returned are those.
var stmtStarted = sqlcommon.Statement{
	Name:   "write handlers' starts",
	Tables: []string{tDeliveries},
	SQL: `UPDATE jadpo_deliveries AS d SET handler_started = true
FROM unnest($1::bigint[], $2::bigint[]) AS s (id, token)
WHERE d.id = s.id AND d.fencing_token = s.token AND d.state = 'running'
RETURNING d.id, d.fencing_token`,
}

const deliveryColumns = `d.id, d.state, d.subscriber, d.attempts, d.max_attempts, d.next_attempt_at,
    d.last_error_code, d.created_at, d.updated_at, d.settled_at, d.dismissed_at,
    o.source, o.event_name, o.received_id, d.last_error`

var stmtListDeliveries = sqlcommon.Statement{
	Name:   "list deliveries",
	Tables: []string{tDeliveries, tOutbox},
	SQL: `SELECT ` + deliveryColumns + `, NULL::text, NULL::text
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.state = ANY($1::text[])
ORDER BY d.created_at, d.id
LIMIT $2`,
}

var stmtShowDelivery = sqlcommon.Statement{
	Name:   "show delivery",
	Tables: []string{tDeliveries, tOutbox},
	SQL: `SELECT ` + deliveryColumns + `, CASE WHEN $2::boolean THEN o.event_json::text END, o.headers
FROM jadpo_deliveries AS d JOIN jadpo_outbox AS o ON o.id = d.outbox_id
WHERE d.id = $1`,
}

const parkedColumns = `id, state, source, wire_type, event_name, reason, problems, body_sha256,
    created_at, updated_at, dismissed_at, received_id`

var stmtListParked = sqlcommon.Statement{
	Name:   "list parked messages",
	Tables: []string{tParked},
	SQL: `SELECT ` + parkedColumns + `, NULL::bytea
FROM jadpo_parked_messages
WHERE state = ANY($1::text[])
ORDER BY created_at, id
LIMIT $2`,
}

var stmtShowParked = sqlcommon.Statement{
	Name:   "show parked message",
	Tables: []string{tParked},
	SQL: `SELECT ` + parkedColumns + `, CASE WHEN $2::boolean THEN body END
FROM jadpo_parked_messages
WHERE id = $1`,
}

var stmtLockDeliveries = sqlcommon.Statement{
	Name:   "lock deliveries",
	Tables: []string{tDeliveries},
	SQL:    `SELECT id, state FROM jadpo_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
}

var stmtLockParked = sqlcommon.Statement{
	Name:   "lock parked messages",
	Tables: []string{tParked},
	SQL:    `SELECT id, state FROM jadpo_parked_messages WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
}

var stmtRetryDeliveries = sqlcommon.Statement{
	Name:   "retry deliveries",
	Tables: []string{tDeliveries},
	SQL: `UPDATE jadpo_deliveries
SET state = 'pending', attempts = 0, next_attempt_at = COALESCE($2::timestamptz, now()), lease_expires_at = NULL,
    settled_at = NULL, updated_at = COALESCE($2::timestamptz, now())
WHERE id = ANY($1::bigint[]) AND state = 'failed'`,
}

var stmtRetryParked = sqlcommon.Statement{
	Name:   "retry parked messages",
	Tables: []string{tParked},
	SQL: `UPDATE jadpo_parked_messages SET state = 'pending', updated_at = COALESCE($2::timestamptz, now())
WHERE id = ANY($1::bigint[]) AND state = 'failed'`,
}

var stmtDismissDeliveries = sqlcommon.Statement{
	Name:   "dismiss deliveries",
	Tables: []string{tDeliveries},
	SQL: `UPDATE jadpo_deliveries SET state = 'dismissed', dismissed_at = COALESCE($2::timestamptz, now()), updated_at = COALESCE($2::timestamptz, now())
WHERE id = ANY($1::bigint[]) AND state = 'failed'`,
}

var stmtDismissParked = sqlcommon.Statement{
	Name:   "dismiss parked messages",
	Tables: []string{tParked},
	SQL: `UPDATE jadpo_parked_messages SET state = 'dismissed', dismissed_at = COALESCE($2::timestamptz, now()), updated_at = COALESCE($2::timestamptz, now())
WHERE id = ANY($1::bigint[]) AND state = 'failed'`,
}

// Housekeeping: each statement deletes at most $2 rows older than the retention $1 (in
// microseconds, before the clock $3), read oldest first from its partial index and locked
// with SKIP LOCKED, so that processes housekeeping at once take disjoint rows and never
// wait for each other. The EXPLAIN of each is in docs/design/store.md.
// cutoff is a housekeeping statement's cut-off: the clock less the retention.
const cutoff = `COALESCE($3::timestamptz, now()) - $1::bigint * interval '1 microsecond'`

var stmtForgetReceived = sqlcommon.Statement{
	Name:   "housekeep received ids",
	Tables: []string{tReceived},
	SQL: `DELETE FROM jadpo_received_events WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM jadpo_received_events WHERE received_at < ` + cutoff + `
    ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
}

var stmtForgetParked = sqlcommon.Statement{
	Name:   "housekeep parked messages",
	Tables: []string{tParked},
	SQL: `DELETE FROM jadpo_parked_messages WHERE id = ANY(ARRAY(
    SELECT id FROM jadpo_parked_messages WHERE state = 'dismissed' AND dismissed_at < ` + cutoff + `
    ORDER BY dismissed_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
}

// forgetDeliveries deletes settled deliveries of one kind with their attempts and raises
// each outbox row's settled_at to the latest settled time of its deleted deliveries, in one
// statement.
func forgetDeliveries(name, state, at string) sqlcommon.Statement {
	return sqlcommon.Statement{
		Name:   name,
		Tables: []string{tDeliveries, tOutbox, tAttempts},
		SQL: `WITH gone AS (
    DELETE FROM jadpo_deliveries WHERE id = ANY(ARRAY(
        SELECT id FROM jadpo_deliveries WHERE state = '` + state + `' AND ` + at + ` < ` + cutoff + `
        ORDER BY ` + at + ` LIMIT $2 FOR UPDATE SKIP LOCKED))
    RETURNING id, outbox_id, ` + at + ` AS at
), attempts AS (
    DELETE FROM jadpo_delivery_attempts WHERE delivery_id = ANY(ARRAY(SELECT id FROM gone))
), settled AS (
    UPDATE jadpo_outbox AS o SET settled_at = GREATEST(o.settled_at, g.at)
    FROM (SELECT outbox_id, max(at) AS at FROM gone GROUP BY outbox_id) AS g
    WHERE o.id = g.outbox_id
)
SELECT count(*) FROM gone`,
	}
}

var (
	stmtForgetSucceeded = forgetDeliveries("housekeep succeeded deliveries", "succeeded", "settled_at")
	stmtForgetDismissed = forgetDeliveries("housekeep dismissed deliveries", "dismissed", "dismissed_at")
)

// An outbox row goes once settled long enough and no delivery references it (the
// deliveries' unique index on (outbox_id, subscriber) answers NOT EXISTS).
var stmtForgetOutbox = sqlcommon.Statement{
	Name:   "housekeep outbox",
	Tables: []string{tOutbox, tDeliveries},
	SQL: `DELETE FROM jadpo_outbox WHERE id = ANY(ARRAY(
    SELECT o.id FROM jadpo_outbox AS o
    WHERE o.settled_at < ` + cutoff + `
      AND NOT EXISTS (SELECT 1 FROM jadpo_deliveries AS d WHERE d.outbox_id = o.id)
    ORDER BY o.settled_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
}

// A housekeeping run's counts ($2-$6) at the clock $1, and the oldest runs beyond the newest
// $7 (those before this one) deleted, at most 100; rows another process deletes are skipped.
var stmtRecordRun = sqlcommon.Statement{
	Name:   "record housekeeping run",
	Tables: []string{tRuns},
	SQL: `WITH r AS (
    INSERT INTO jadpo_housekeeping_runs (at, received_ids, parked_messages, deliveries, outbox, more)
    VALUES (COALESCE($1::timestamptz, now()), $2, $3, $4, $5, $6)
), old AS (
    DELETE FROM jadpo_housekeeping_runs WHERE id = ANY(ARRAY(
        SELECT id FROM jadpo_housekeeping_runs
        WHERE id <= (SELECT id FROM jadpo_housekeeping_runs ORDER BY id DESC OFFSET $7 LIMIT 1)
        ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED))
)
SELECT 1`,
}

var stmtHousekeepingRuns = sqlcommon.Statement{
	Name:   "housekeeping runs",
	Tables: []string{tRuns},
	SQL: `SELECT at, received_ids, parked_messages, deliveries, outbox, more FROM jadpo_housekeeping_runs
ORDER BY id DESC LIMIT $1`,
}

var stmtCountReceived = sqlcommon.Statement{
	Name:   "count received ids",
	Tables: []string{tReceived},
	SQL:    `SELECT count(*) FROM jadpo_received_events`,
}

var stmtCountOutbox = sqlcommon.Statement{
	Name:   "count outbox",
	Tables: []string{tOutbox},
	SQL:    `SELECT count(*) FROM jadpo_outbox`,
}

var stmtCountDeliveries = sqlcommon.Statement{
	Name:   "count deliveries",
	Tables: []string{tDeliveries},
	SQL:    `SELECT subscriber, state, count(*) FROM jadpo_deliveries GROUP BY subscriber, state`,
}

// The oldest unsettled delivery, from the claim's partial index.
var stmtOldestPending = sqlcommon.Statement{
	Name:   "oldest pending delivery",
	Tables: []string{tDeliveries},
	SQL:    `SELECT min(created_at) FROM jadpo_deliveries WHERE state IN ('pending', 'retry_wait', 'running')`,
}

var stmtTableSizes = sqlcommon.Statement{
	Name:   "table sizes",
	Tables: []string{tReceived, tOutbox, tDeliveries, tParked, tAttempts, tRuns},
	SQL: `SELECT pg_total_relation_size('jadpo_received_events'), pg_total_relation_size('jadpo_outbox'),
    pg_total_relation_size('jadpo_deliveries'), pg_total_relation_size('jadpo_parked_messages'),
    pg_total_relation_size('jadpo_delivery_attempts'), pg_total_relation_size('jadpo_housekeeping_runs')`,
}

// The attempts and housekeeping runs tables are counted for the table
// sizes (`jadpo store stats`): attempts grow with every settlement and are
// trimmed by housekeeping, so an operator wants to see them.
var stmtCountAttempts = sqlcommon.Statement{
	Name:   "count delivery attempts",
	Tables: []string{tAttempts},
	SQL:    `SELECT count(*) FROM jadpo_delivery_attempts`,
}

var stmtCountRuns = sqlcommon.Statement{
	Name:   "count housekeeping runs",
	Tables: []string{tRuns},
	SQL:    `SELECT count(*) FROM jadpo_housekeeping_runs`,
}

var stmtCountParked = sqlcommon.Statement{
	Name:   "count parked messages",
	Tables: []string{tParked},
	SQL:    `SELECT reason, state, count(*) FROM jadpo_parked_messages GROUP BY reason, state`,
}

var stmtMigrationVersions = sqlcommon.Statement{
	Name:   "migration versions",
	Tables: []string{tMigrations},
	SQL:    `SELECT version FROM jadpo_schema_migrations ORDER BY version`,
}

// statements are every statement the store runs after migrating; Migrate checks each
// against the schema.
var statements = []sqlcommon.Statement{
	stmtKeep, stmtKeepBatch, stmtPark, stmtParkedAs, stmtParkAgain, stmtRetriedParked, stmtClaim, stmtSettle, stmtStarted,
	stmtListDeliveries, stmtShowDelivery, stmtShowAttempts, stmtListParked, stmtShowParked,
	stmtLockDeliveries, stmtLockParked, stmtRetryDeliveries, stmtRetryParked,
	stmtDismissDeliveries, stmtDismissParked,
	stmtForgetReceived, stmtForgetParked, stmtForgetSucceeded, stmtForgetDismissed, stmtForgetOutbox, stmtRecordRun, stmtHousekeepingRuns,
	stmtCountReceived, stmtCountOutbox, stmtCountDeliveries, stmtCountParked, stmtOldestPending, stmtTableSizes,
	stmtCountAttempts, stmtCountRuns,
	stmtMigrationVersions,
}

// ClaimSQL and SettleSQL are the delivery engine's claim and settle
// statements as the store runs them, for a baseline that must measure the
// same SQL (BenchmarkDeliver's raw loop) without a copy that could drift.
func ClaimSQL() string { return stmtClaim.SQL }

// SettleSQL: see ClaimSQL.
func SettleSQL() string { return stmtSettle.SQL }
