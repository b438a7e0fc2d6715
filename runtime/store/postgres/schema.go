package postgres

import (
	"fmt"

	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

// migrationsTable creates the table of applied migrations.
const migrationsTable = `
CREATE TABLE IF NOT EXISTS jadpo_schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);`

// migrations are the schema's versions, in order. A released migration is never edited:
// a change is a new one.
var migrations = []sqlcommon.Migration{{
	Version: 1,
	Name:    "received events, outbox, deliveries, parked messages",
	SQL: `
CREATE TABLE jadpo_received_events (
    source      text        NOT NULL CHECK (source <> ''),
    received_id text        NOT NULL CHECK (received_id <> ''),
    received_at timestamptz NOT NULL,
    PRIMARY KEY (source, received_id)
);
CREATE INDEX jadpo_received_events_received_at ON jadpo_received_events (received_at);

-- event_json is json, not jsonb: the canonical bytes are kept as written.
CREATE TABLE jadpo_outbox (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source      text        NOT NULL CHECK (source <> ''),
    event_name  text        NOT NULL CHECK (event_name <> ''),
    event_json  json        NOT NULL,
    received_id text        NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE jadpo_deliveries (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    outbox_id        bigint      NOT NULL REFERENCES jadpo_outbox (id),
    subscriber       text        NOT NULL CHECK (subscriber <> ''),
    state            text        NOT NULL CHECK (state IN ('pending', 'running', 'retry_wait', 'succeeded', 'failed', 'dismissed')),
    attempts         integer     NOT NULL DEFAULT 0,
    max_attempts     integer     CHECK (max_attempts > 0),
    next_attempt_at  timestamptz NOT NULL,
    lease_expires_at timestamptz,
    fencing_token    bigint      NOT NULL DEFAULT 0,
    last_error_code  text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    settled_at       timestamptz,
    dismissed_at     timestamptz,
    UNIQUE (outbox_id, subscriber)
);
-- The claim's one index: a running delivery's next_attempt_at is its lease's end.
CREATE INDEX jadpo_deliveries_due ON jadpo_deliveries (next_attempt_at, id)
    WHERE state IN ('pending', 'retry_wait', 'running');
CREATE INDEX jadpo_deliveries_parked ON jadpo_deliveries (state, created_at)
    WHERE state IN ('failed', 'dismissed');

CREATE TABLE jadpo_parked_messages (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source       text        NOT NULL CHECK (source <> ''),
    wire_type    text,
    event_name   text,
    reason       text        NOT NULL CHECK (reason IN ('unlisted_type', 'unreadable', 'too_large')),
    problems     jsonb       NOT NULL DEFAULT '[]',
    body         bytea       NOT NULL,
    body_sha256  text        NOT NULL,
    state        text        NOT NULL CHECK (state IN ('failed', 'pending', 'dismissed')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    dismissed_at timestamptz,
    UNIQUE (source, body_sha256)
);
CREATE INDEX jadpo_parked_messages_state ON jadpo_parked_messages (state, created_at);
`,
}, {
	Version: 2,
	Name:    "an event whose text holds a NUL character is refused",
	// PostgreSQL's text cannot hold U+0000, and json keeps the escape as
	// written; the cast to jsonb refuses it (22P05), so the message is
	// parked unreadable instead of being handed to subscribers that cannot
	// store it either.
	SQL: `
ALTER TABLE jadpo_outbox ADD CONSTRAINT jadpo_outbox_event_text CHECK (event_json::jsonb IS NOT NULL);
`,
}, {
	Version: 3,
	Name:    "header values kept with the outbox row",
	// A JSON object of strings (a SQL inbox's header columns), NULL when the
	// message has none; rows kept before stay NULL. A nullable column without a
	// default or a CHECK is added without rewriting or scanning the table.
	SQL: `
ALTER TABLE jadpo_outbox ADD COLUMN headers text;
`,
}, {
	Version: 4,
	Name:    "the message id kept with a parked message",
	// The producer's id when one was read before parking, NULL when none;
	// rows parked before stay NULL. Nullable without a default: no rewrite.
	SQL: `
ALTER TABLE jadpo_parked_messages ADD COLUMN received_id text;
`,
}, {
	Version: 5,
	Name:    "retention: the outbox settled time, an index per housekeeping statement",
	// settled_at is when the last delivery of the row was settled: written at
	// keep for a row with no subscriber, raised by housekeeping as it deletes
	// the row's deliveries. Rows kept before count as settled long ago
	// (-infinity, a constant default: added without rewriting the table), so
	// they go once no delivery references them. Each housekeeping statement
	// reads its rows oldest first from one partial index.
	SQL: `
ALTER TABLE jadpo_outbox ADD COLUMN settled_at timestamptz DEFAULT '-infinity';
ALTER TABLE jadpo_outbox ALTER COLUMN settled_at DROP DEFAULT;
CREATE INDEX jadpo_outbox_settled ON jadpo_outbox (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX jadpo_deliveries_succeeded ON jadpo_deliveries (settled_at) WHERE state = 'succeeded';
CREATE INDEX jadpo_deliveries_dismissed ON jadpo_deliveries (dismissed_at) WHERE state = 'dismissed';
CREATE INDEX jadpo_parked_messages_dismissed ON jadpo_parked_messages (dismissed_at) WHERE state = 'dismissed';
`,
}, {
	Version: 6,
	Name:    "the text of the last error of a delivery",
	// The text of the last attempt's error beside its code (`jadpo deliveries
	// show`), NULL when none; rows settled before stay NULL. Nullable without
	// a default: no rewrite.
	SQL: `
ALTER TABLE jadpo_deliveries ADD COLUMN last_error text;
`,
}, {
	Version: 7,
	Name:    "parked messages found by message id (the console)",
	// jadpo console finds a parked message by the producer's id; newest first, so the
	// id is in the index too. Rows parked without an id are left out.
	SQL: `
CREATE INDEX jadpo_parked_messages_received_id ON jadpo_parked_messages (received_id, id) WHERE received_id IS NOT NULL;
`,
}, {
	Version: 8,
	Name:    "a claim whose handler never started is not an attempt",
	// false from a claim until the engine writes that the delivery's handler
	// started (store.SettleStarted); a lease that ends on a claim whose handler
	// never started uncounts its attempt. Rows claimed before count as started,
	// as they did. A constant default: added without rewriting the table.
	SQL: `
ALTER TABLE jadpo_deliveries ADD COLUMN handler_started boolean NOT NULL DEFAULT true;
`,
}, {
	Version: 9,
	Name:    "the attempts of a delivery",
	// One row per settled attempt (succeeded, retry_wait, failed), written by the
	// statement that settles it; a released claim or a handler's start writes none.
	// Deleted with its delivery by the housekeeping statement that deletes it (so in
	// its bounded batches). No foreign key: its check would be a trigger on every
	// settlement, and only the store writes the table. The primary key (delivery_id, id)
	// is the one index: it answers Show's read and housekeeping's delete. Deliveries
	// settled before have no rows.
	SQL: `
CREATE TABLE jadpo_delivery_attempts (
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    delivery_id bigint      NOT NULL,
    attempt     integer     NOT NULL,
    at          timestamptz NOT NULL,
    outcome     text        NOT NULL CHECK (outcome IN ('succeeded', 'retry_wait', 'failed')),
    error_code  text,
    error       text,
    PRIMARY KEY (delivery_id, id)
);
`,
}, {
	Version: 10,
	Name:    "what each housekeeping run deleted",
	// One row per Housekeep call that deleted something, written at its end; the
	// newest store.HousekeepingRunsKept are kept (writing one deletes at most 100
	// older). The console's overview reads the newest.
	SQL: `
CREATE TABLE jadpo_housekeeping_runs (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              timestamptz NOT NULL,
    received_ids    bigint      NOT NULL,
    parked_messages bigint      NOT NULL,
    deliveries      bigint      NOT NULL,
    outbox          bigint      NOT NULL,
    more            boolean     NOT NULL
);
`,
}}

// SchemaSQL is the store's whole PostgreSQL schema as one SQL text, written by jadpo build
// to build/sql/postgres.sql. Applied by hand, it leaves a database the store accepts as
// migrated.
func SchemaSQL() string {
	return schemaSQL(migrations)
}

// schemaSQL renders the schema of the given migrations (tests render an older build's).
func schemaSQL(ms []sqlcommon.Migration) string {
	return sqlcommon.RenderSchema("PostgreSQL", migrationsTable, ms, func(m sqlcommon.Migration) string {
		return fmt.Sprintf("INSERT INTO jadpo_schema_migrations (version, name) VALUES (%d, '%s') ON CONFLICT (version) DO NOTHING;", m.Version, m.Name)
	})
}
