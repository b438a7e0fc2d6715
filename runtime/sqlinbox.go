package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/sqlinbox"
	"github.com/jadpo/jadpo/runtime/reading"
)

// sqlInboxWire is the sql_inbox driver (providers.md §6): a queue that is a
// table of the connection's database. It claims up to ten rows a batch (by
// row lock, lease or advisory lock: providers/sqlinbox),
// hands each row's columns to the runner as a JSON body (its header columns
// travel with the kept event), and at the end of the batch deletes the rows
// settled; the others are claimed again later (row_lock: at once; lease:
// when the lease runs out). A claimed id the fetch found no row for is
// parked `unreadable` (problem `:row`) and deleted, never dropped silently.
type sqlInboxWire struct {
	r     *Runtime
	queue string
	pool  *pgxpool.Pool
	inbox *sqlinbox.Inbox
	// claimColumns are the columns a claim writes: left out of a parked copy.
	claimColumns []string
}

// newSQLInboxWire opens the connection's database and prepares the inbox's
// statements, so a table or column the database lacks stops the start.
func newSQLInboxWire(r *Runtime, queue string, conn *connection) (*sqlInboxWire, error) {
	t, err := sqlInboxTable(conn.settings)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(conn.databaseURL)
	if err != nil {
		// pgx's message may quote the URL: say only what is wrong.
		return nil, fmt.Errorf("connection %s: the credential's url is not a PostgreSQL URL", conn.name)
	}
	cfg.MaxConns = MaxBatchesInFlight + 2 // a row_lock claim holds a connection until its batch is settled
	if r.dial != nil {
		// Every connection goes through the runtime's dialer, unresolved, so
		// that no name is looked up off the machine either.
		cfg.ConnConfig.DialFunc = r.dial
		cfg.ConnConfig.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connection %s: cannot open the inbox database: %w", conn.name, err)
	}
	inbox, err := sqlinbox.Open(ctx, pool, t)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connection %s: %w", conn.name, err)
	}
	w := &sqlInboxWire{r: r, queue: queue, pool: pool, inbox: inbox}
	for _, c := range []string{t.Attempt, t.LockedUntil} {
		if c != "" {
			w.claimColumns = append(w.claimColumns, c)
		}
	}
	return w, nil
}

// sqlInboxTable reads the table's description from the connection's settings.
func sqlInboxTable(settings map[string]any) (sqlinbox.Table, error) {
	str := func(name string) string { s, _ := settings[name].(string); return s }
	list := func(name string) []string {
		var out []string
		for _, part := range strings.Split(str(name), ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out
	}
	t := sqlinbox.Table{
		Schema: str("schema"), Name: str("table"), ID: str("id"), Group: str("group"), Attempt: str("attempt"),
		LockedUntil: str("locked_until"), Headers: list("headers"), Columns: list("columns"), Fetch: str("fetch"),
		LockKey: list("lock_key"),
	}
	switch claim := str("claim"); claim {
	case "", "row_lock":
		t.Form = sqlinbox.RowLock
	case "lease":
		t.Form = sqlinbox.Lease
	case "advisory_lock":
		t.Form = sqlinbox.AdvisoryLock
	default:
		return t, fmt.Errorf("the SQL inbox's %q claim form is not one of row_lock, lease and advisory_lock", claim)
	}
	if s := str("lease"); s != "" {
		d, err := ir.ParseDuration(s)
		if err != nil {
			return t, fmt.Errorf("setting lease: %w", err)
		}
		if d <= 0 {
			// sqlinbox reads a zero Lease as its default: refuse it here, where
			// it is what the user wrote.
			return t, fmt.Errorf("setting lease: %q holds no row: write a lease longer than 0, such as `30s`", s)
		}
		t.Lease = d
	}
	return t, nil
}

func (w *sqlInboxWire) fetch(ctx context.Context) ([]*message, int, error) {
	b, err := w.inbox.Claim(ctx, MaxBatch)
	if err != nil {
		return nil, 0, err
	}
	state := &sqlInboxBatch{batch: b}
	msgs := make([]*message, 0, len(b.Rows)+len(b.Missing))
	for _, row := range b.Rows {
		msgs = append(msgs, &message{body: string(row.Body), handle: row.ID, headers: row.Headers, batch: state})
	}
	for _, id := range b.Missing {
		w.r.log.Warn("a claimed row was not found by the fetch; it is parked", "queue", w.queue, "message_id", id)
		msgs = append(msgs, &message{handle: id, batch: state, preset: &reading.Outcome{
			Park: true, Reason: reading.Unreadable, ID: id, Problems: []reading.Problem{{Field: "", Rule: "row"}},
		}})
	}
	if len(msgs) == 0 {
		b.Abandon(ctx) // nothing claimed: end the claim's transaction
	}
	return msgs, len(msgs), nil
}

// sqlInboxBatch is one claim, shared by its messages.
type sqlInboxBatch struct {
	batch *sqlinbox.Batch
}

func (w *sqlInboxWire) finish(ctx context.Context, msgs []*message) int {
	if len(msgs) == 0 {
		return 0
	}
	state, _ := msgs[0].batch.(*sqlInboxBatch)
	if state == nil {
		return 0
	}
	var ack []string
	for _, m := range msgs {
		if m.settled {
			ack = append(ack, m.handle)
		}
	}
	deleted, err := state.batch.Finish(ctx, ack)
	if err != nil {
		// The rows stay (row_lock: the claim rolled back); claimed again,
		// the kept ones are repeats.
		w.r.log.Warn("deleting settled rows failed; they will be claimed again, the kept ones as repeats", "queue", w.queue, "rows", len(ack), "error", err)
		return 0
	}
	if deleted < len(ack) {
		w.r.log.Warn("some rows' leases had run out before they were deleted; they will come back as repeats",
			"queue", w.queue, "deleted", deleted, "settled", len(ack))
	}
	return deleted
}

func (w *sqlInboxWire) close() { w.pool.Close() }

// parkedBody is a row's body without the columns each claim changes
// (attempt, locked_until), keys sorted: the same for every claim of a row.
// Parking keeps it, so that a row parked and then claimed again before its
// delete (a crash, or a lease that ran out) is "parked already", not parked
// twice. Nil when the body is not a JSON object: then the body itself is kept.
func (w *sqlInboxWire) parkedBody(m *message) []byte {
	var cols map[string]json.RawMessage
	d := json.NewDecoder(strings.NewReader(m.body))
	d.UseNumber()
	if err := d.Decode(&cols); err != nil {
		return nil
	}
	for _, c := range w.claimColumns {
		delete(cols, c)
	}
	out, err := json.Marshal(cols)
	if err != nil {
		return nil
	}
	return out
}

// SQLInboxTable is the inbox table a sql_inbox connection's settings
// describe, with cfg's values: jadpo dev creates it when it is missing.
func SQLInboxTable(c *ir.Connection, cfg *Config) (sqlinbox.Table, error) {
	settings := map[string]any{}
	for k, v := range c.Settings {
		val, err := cfg.value(v)
		if err != nil {
			return sqlinbox.Table{}, fmt.Errorf("connection %s: %w", c.Name, err)
		}
		settings[k] = val
	}
	return sqlInboxTable(settings)
}
