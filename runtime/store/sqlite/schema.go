package sqlite

import (
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

// Times are INTEGER microseconds since the Unix epoch, UTC. Tables are STRICT, and CHECK
// constraints refuse what PostgreSQL's types refuse, so that both adapters refuse the same
// messages: a NUL character in text (PostgreSQL: 22021), event JSON that is not JSON
// (PostgreSQL's json type: 22P02), an empty id.

const migrationsTable = `
CREATE TABLE IF NOT EXISTS jadpo_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER))
) STRICT;`

// text is the CHECK of a text column that must hold something and no NUL character.
func text(col string) string {
	return fmt.Sprintf("CHECK (%[1]s <> '' AND instr(CAST(%[1]s AS BLOB), X'00') = 0)", col)
}

var migrations = []sqlcommon.Migration{{
	Version: 1,
	Name:    "received events, outbox, deliveries, parked messages",
	SQL: strings.NewReplacer(
		"{source}", text("source"),
		"{received_id}", text("received_id"),
		"{event_name}", text("event_name"),
		"{subscriber}", text("subscriber"),
	).Replace(`
CREATE TABLE jadpo_received_events (
    source      TEXT    NOT NULL {source},
    received_id TEXT    NOT NULL {received_id},
    received_at INTEGER NOT NULL,
    PRIMARY KEY (source, received_id)
) STRICT;
CREATE INDEX jadpo_received_events_received_at ON jadpo_received_events (received_at);

CREATE TABLE jadpo_outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    source      TEXT    NOT NULL {source},
    event_name  TEXT    NOT NULL {event_name},
    event_json  TEXT    NOT NULL CHECK (json_valid(event_json)),
    received_id TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE jadpo_deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    outbox_id        INTEGER NOT NULL REFERENCES jadpo_outbox (id),
    subscriber       TEXT    NOT NULL {subscriber},
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'retry_wait', 'succeeded', 'failed', 'dismissed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER CHECK (max_attempts > 0),
    next_attempt_at  INTEGER NOT NULL,
    lease_expires_at INTEGER,
    fencing_token    INTEGER NOT NULL DEFAULT 0,
    last_error_code  TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    settled_at       INTEGER,
    dismissed_at     INTEGER,
    UNIQUE (outbox_id, subscriber)
) STRICT;
-- The claim's one index: a running delivery's next_attempt_at is its lease's end.
CREATE INDEX jadpo_deliveries_due ON jadpo_deliveries (next_attempt_at, id)
    WHERE state IN ('pending', 'retry_wait', 'running');
CREATE INDEX jadpo_deliveries_parked ON jadpo_deliveries (state, created_at)
    WHERE state IN ('failed', 'dismissed');

CREATE TABLE jadpo_parked_messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    source       TEXT    NOT NULL {source},
    wire_type    TEXT,
    event_name   TEXT,
    reason       TEXT    NOT NULL CHECK (reason IN ('unlisted_type', 'unreadable', 'too_large')),
    problems     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(problems)),
    body         BLOB    NOT NULL,
    body_sha256  TEXT    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('failed', 'pending', 'dismissed')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    dismissed_at INTEGER,
    UNIQUE (source, body_sha256)
) STRICT;
CREATE INDEX jadpo_parked_messages_state ON jadpo_parked_messages (state, created_at);
`),
}, {
	Version: 2,
	Name:    "an event whose text holds a NUL character is refused",
	// As PostgreSQL refuses it: the escaped NUL in the canonical JSON. (A
	// text holding a backslash followed by u0000 is refused too; it is
	// parked, never lost.)
	SQL: `
CREATE TRIGGER jadpo_outbox_event_text BEFORE INSERT ON jadpo_outbox
WHEN instr(NEW.event_json, '\u0000') > 0
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: an event text holds a NUL character');
END;
`,
}, {
	Version: 3,
	Name:    "header values kept with the outbox row",
	// As on PostgreSQL: a JSON object of strings, NULL when none; rows kept
	// before stay NULL. Without a CHECK, SQLite adds the column without reading
	// the table's rows.
	SQL: `
ALTER TABLE jadpo_outbox ADD COLUMN headers TEXT;
`,
}, {
	Version: 4,
	Name:    "the message id kept with a parked message",
	// The producer's id when one was read before parking, NULL when none;
	// rows parked before stay NULL.
	SQL: `
ALTER TABLE jadpo_parked_messages ADD COLUMN received_id TEXT;
`,
}, {
	Version: 5,
	Name:    "retention: the outbox settled time, an index per housekeeping statement",
	// As on PostgreSQL; rows kept before count as settled at the Unix epoch
	// (a constant default: the table's rows are not read), and every new row
	// is written with its settled_at, NULL while it has deliveries.
	SQL: `
ALTER TABLE jadpo_outbox ADD COLUMN settled_at INTEGER DEFAULT 0;
CREATE INDEX jadpo_outbox_settled ON jadpo_outbox (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX jadpo_deliveries_succeeded ON jadpo_deliveries (settled_at) WHERE state = 'succeeded';
CREATE INDEX jadpo_deliveries_dismissed ON jadpo_deliveries (dismissed_at) WHERE state = 'dismissed';
CREATE INDEX jadpo_parked_messages_dismissed ON jadpo_parked_messages (dismissed_at) WHERE state = 'dismissed';
`,
}, {
	Version: 6,
	Name:    "the text of the last error of a delivery",
	// As on PostgreSQL: the text of the last attempt's error beside its code
	// (`jadpo deliveries show`), NULL when none; rows settled before stay NULL.
	SQL: `
ALTER TABLE jadpo_deliveries ADD COLUMN last_error TEXT;
`,
}, {
	Version: 7,
	Name:    "parked messages found by message id (the console)",
	// As on PostgreSQL; an SQLite index holds the rowid (id) already.
	SQL: `
CREATE INDEX jadpo_parked_messages_received_id ON jadpo_parked_messages (received_id) WHERE received_id IS NOT NULL;
`,
}, {
	Version: 8,
	Name:    "the clock: the latest time the store gave",
	// One row: the high-water mark of the store's clock (docs/design/store.md, "One
	// clock: the store's"). It starts at 0: the first write takes the machine's time.
	SQL: `
CREATE TABLE jadpo_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    mark_us INTEGER NOT NULL
) STRICT;
INSERT INTO jadpo_clock (id, mark_us) VALUES (1, 0);
`,
}, {
	Version: 9,
	Name:    "a claim whose handler never started is not an attempt",
	// As on PostgreSQL: 0 from a claim until the handler's start is written.
	SQL: `
ALTER TABLE jadpo_deliveries ADD COLUMN handler_started INTEGER NOT NULL DEFAULT 1 CHECK (handler_started IN (0, 1));
`,
}, {
	Version: 10,
	Name:    "the attempts of a delivery",
	// As on PostgreSQL: one row per settled attempt, written in the transaction that
	// settles it, deleted with its delivery in housekeeping's transaction (no foreign
	// key, as on PostgreSQL). The index answers Show's read and housekeeping's delete.
	SQL: `
CREATE TABLE jadpo_delivery_attempts (
    id          INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('succeeded', 'retry_wait', 'failed')),
    error_code  TEXT,
    error       TEXT
) STRICT;
CREATE INDEX jadpo_delivery_attempts_delivery ON jadpo_delivery_attempts (delivery_id, id);
`,
}, {
	Version: 11,
	Name:    "what each housekeeping run deleted",
	// As on PostgreSQL: one row per Housekeep call that deleted something.
	SQL: `
CREATE TABLE jadpo_housekeeping_runs (
    id              INTEGER PRIMARY KEY,
    at              INTEGER NOT NULL,
    received_ids    INTEGER NOT NULL,
    parked_messages INTEGER NOT NULL,
    deliveries      INTEGER NOT NULL,
    outbox          INTEGER NOT NULL,
    more            INTEGER NOT NULL CHECK (more IN (0, 1))
) STRICT;
`,
}}

// SchemaSQL is the store's whole SQLite schema as one SQL text, written by jadpo build to
// build/sql/sqlite.sql. Applied by hand, it leaves a database the store accepts as
// migrated.
func SchemaSQL() string {
	return schemaSQL(migrations)
}

// schemaSQL renders the schema of the given migrations (tests render an older build's).
func schemaSQL(ms []sqlcommon.Migration) string {
	return sqlcommon.RenderSchema("SQLite", migrationsTable, ms, func(m sqlcommon.Migration) string {
		return fmt.Sprintf("INSERT OR IGNORE INTO jadpo_schema_migrations (version, name) VALUES (%d, '%s');", m.Version, m.Name)
	})
}
