package sqlinbox

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/internal/jsonstring"
)

// Batch is one claim's rows. It is used by one goroutine: Finish or Abandon ends it, once.
type Batch struct {
	Rows    []Row
	Missing []string // claimed ids (as text) the fetch returned no row for: the caller parks and acks them
	// Unfetched is, for each id in Missing, the table's own row (the row statement: SELECT *, every
	// column of the table, by the same JSON rules), what the caller parks of it: each missing row
	// keeps its own columns, so none is lost and no two share a body. A row the table no longer
	// holds either (deleted by someone else since the claim) has a body of its id alone.
	Unfetched map[string]Row

	in     *Inbox
	order  []string             // claimed ids as text, in id order
	ids    map[string]any       // claimed id text → the value pgx returned, passed back as is
	tx     pgx.Tx               // RowLock: the claim's transaction, open until Finish or Abandon
	tokens map[string]time.Time // Lease: claimed id text → the locked_until this claim set
	conn   *pgxpool.Conn        // AdvisoryLock: the connection whose session holds the locks, until Finish or Abandon
	keys   map[string]string    // AdvisoryLock: claimed id text → its lock key's text (one lock acquisition per claimed id)
	ended  bool
}

// Row is one claimed row as the fetch returned it.
type Row struct {
	ID      string            // the id as text
	Body    []byte            // every column the fetch returned, as one JSON object (see the JSON rules)
	Headers map[string]string // the header columns' values as text; a NULL header is left out
}

// ErrEnded is returned by Finish on a batch already finished or abandoned.
var ErrEnded = errors.New("sqlinbox: the batch has already ended")

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Claim takes up to max unclaimed rows in id order (skipping rows other claims hold) and reads them.
// RowLock: BEGIN; SELECT id ... ORDER BY id LIMIT max FOR UPDATE SKIP LOCKED; UPDATE attempt = attempt + 1 for them (when Attempt is set); the fetch, in the same transaction; the transaction stays open until Finish or Abandon.
// Lease: one statement: UPDATE ... SET locked_until = now() + lease [, attempt = attempt + 1] WHERE id IN (SELECT id ... WHERE locked_until IS NULL OR locked_until <= now() ORDER BY id LIMIT max FOR UPDATE SKIP LOCKED) RETURNING id, locked_until; then the fetch.
// AdvisoryLock: on one connection held until Finish or Abandon: SELECT id, key ... ORDER BY id LIMIT 4×max (no row lock); pg_try_advisory_lock(namespace, hashtext(key)) for each candidate in id order, keeping the rows whose lock is taken, up to max; UPDATE attempt = attempt + 1 for them (when Attempt is set); the fetch once per row with that row's id alone. A kept row that is gone (finished by another process since the candidate select) is dropped and its lock released; one that still exists but the fetch did not return is in Missing.
// A claim that finds no row returns a Batch with no Rows (and, RowLock, its transaction already ended; AdvisoryLock, its connection already released).
// A Lease claim whose fetch fails leaves its rows to their lease; an AdvisoryLock claim that fails releases its locks.
func (in *Inbox) Claim(ctx context.Context, max int) (*Batch, error) {
	if max < 1 {
		return nil, in.errorf("claim: max is %d, it must be at least 1", max)
	}
	switch in.t.Form {
	case Lease:
		return in.claimLease(ctx, max)
	case AdvisoryLock:
		return in.claimAdvisory(ctx, max)
	}
	return in.claimRowLock(ctx, max)
}

func (in *Inbox) claimRowLock(ctx context.Context, max int) (b *Batch, err error) {
	tx, err := in.pool.Begin(ctx)
	if err != nil {
		return nil, in.errorf("claim: begin: %w", err)
	}
	defer func() {
		if err != nil {
			rollback(ctx, tx)
		}
	}()
	b = &Batch{in: in, ids: map[string]any{}}
	rows, err := tx.Query(ctx, in.claim, in.claimArgs(max)...)
	if err != nil {
		return nil, in.errorf("claim: %w", err)
	}
	if err := b.claimed(rows, nil); err != nil {
		return nil, err
	}
	if len(b.order) == 0 {
		// Nothing to hold: end the transaction now so no connection stays taken.
		if err := tx.Commit(ctx); err != nil {
			return nil, in.errorf("claim: commit of an empty claim: %w", err)
		}
		b.ended = true
		return b, nil
	}
	typed := b.typedIDs(b.order)
	if in.attempt != "" {
		if _, err := tx.Exec(ctx, in.attempt, typed); err != nil {
			return nil, in.errorf("claim: incrementing %q: %w", in.t.Attempt, err)
		}
	}
	if err := b.read(ctx, tx, typed); err != nil {
		return nil, err
	}
	b.tx = tx
	return b, nil
}

func (in *Inbox) claimLease(ctx context.Context, max int) (*Batch, error) {
	b := &Batch{in: in, ids: map[string]any{}, tokens: map[string]time.Time{}}
	rows, err := in.pool.Query(ctx, in.claim, in.claimArgs(max)...)
	if err != nil {
		return nil, in.errorf("claim: %w", err)
	}
	// Each row's locked_until is its lease token, named by the delete.
	err = b.claimed(rows, func(vals []any) error {
		until, ok := vals[1].(time.Time)
		if !ok {
			return in.errorf("claim: %q came back as %T, not a timestamp", in.t.LockedUntil, vals[1])
		}
		b.tokens[b.order[len(b.order)-1]] = until
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(b.order) == 0 {
		b.ended = true
		return b, nil
	}
	if err := b.read(ctx, in.pool, b.typedIDs(b.order)); err != nil {
		return nil, err
	}
	return b, nil
}

// claimed reads a claim's rows: each row's id (first column) is recorded,
// then each (when not nil) reads what else the form's claim returns.
func (b *Batch) claimed(rows pgx.Rows, each func(vals []any) error) error {
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return b.in.errorf("claim: reading an id: %w", err)
		}
		if err := b.addID(rows, vals[0]); err != nil {
			return err
		}
		if each != nil {
			if err := each(vals); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return b.in.errorf("claim: %w", err)
	}
	return nil
}

// addID records the claim row's first column, keeping pgx's value for the fetch and the delete.
func (b *Batch) addID(rows pgx.Rows, v any) error {
	text, err := b.in.idText(rows)
	if err != nil {
		return err
	}
	b.order = append(b.order, text)
	b.ids[text] = v
	return nil
}

// idText is the claim row's first column, the id, as text.
func (in *Inbox) idText(rows pgx.Rows) (string, error) {
	fd := rows.FieldDescriptions()[0]
	js, err := encodeColumn(rows.Conn().TypeMap(), fd.DataTypeOID, fd.Format, rows.RawValues()[0])
	if err != nil {
		return "", in.errorf("claim: the id: %w", err)
	}
	text, ok := jsonText(js)
	if !ok {
		return "", in.errorf("claim: a NULL id")
	}
	return text, nil
}

// typedIDs gives the ids as a slice of the type pgx returned ([]int64, [][16]byte, []string...),
// so = ANY($1) compares with the id's own type and can use its index.
func (b *Batch) typedIDs(texts []string) any {
	vals := make([]any, len(texts))
	for i, t := range texts {
		vals[i] = b.ids[t]
	}
	return typedSlice(vals)
}

func typedSlice(vals []any) any {
	if len(vals) == 0 || vals[0] == nil {
		return vals
	}
	t := reflect.TypeOf(vals[0])
	s := reflect.MakeSlice(reflect.SliceOf(t), len(vals), len(vals))
	for i, v := range vals {
		if v == nil || reflect.TypeOf(v) != t {
			return vals
		}
		s.Index(i).Set(reflect.ValueOf(v))
	}
	return s.Interface()
}

// read runs the fetch and lays its rows out in claim order.
func (b *Batch) read(ctx context.Context, q querier, typed any) error {
	in := b.in
	rows, err := q.Query(ctx, in.fetch, typed)
	if err != nil {
		return in.errorf("fetch `%s`: %w", in.fetch, err)
	}
	found := make(map[string]Row, len(b.order))
	if err := b.collect(rows, found); err != nil {
		return err
	}
	b.Rows = make([]Row, 0, len(found))
	for _, id := range b.order {
		if row, ok := found[id]; ok {
			b.Rows = append(b.Rows, row)
		} else {
			b.Missing = append(b.Missing, id)
		}
	}
	return b.readUnfetched(ctx, q)
}

// readUnfetched reads the table's own row of each Missing id into Unfetched (q is the claim's:
// RowLock its transaction, AdvisoryLock its connection).
func (b *Batch) readUnfetched(ctx context.Context, q querier) error {
	if len(b.Missing) == 0 {
		return nil
	}
	in := b.in
	rows, err := q.Query(ctx, in.row, b.typedIDs(b.Missing))
	if err != nil {
		return in.errorf("claim: reading the rows the fetch did not return `%s`: %w", in.row, err)
	}
	defer rows.Close()
	idCol := columnIndex(rows, in.t.ID)
	if idCol < 0 {
		return in.errorf("claim: `%s` returned no column %q", in.row, in.t.ID)
	}
	b.Unfetched = make(map[string]Row, len(b.Missing))
	m := rows.Conn().TypeMap()
	for rows.Next() {
		row, err := in.encodeRow(m, rows.FieldDescriptions(), rows.RawValues(), idCol)
		if err != nil {
			return err
		}
		b.Unfetched[row.ID] = row
	}
	if err := rows.Err(); err != nil {
		return in.errorf("claim: reading the rows the fetch did not return `%s`: %w", in.row, err)
	}
	for _, id := range b.Missing {
		if _, ok := b.Unfetched[id]; !ok {
			b.Unfetched[id] = Row{ID: id, Body: idBody(in.t.ID, id, b.ids[id]), Headers: map[string]string{}}
		}
	}
	return nil
}

// columnIndex is the position of the column named name in rows' result, or -1.
func columnIndex(rows pgx.Rows, name string) int {
	for i, fd := range rows.FieldDescriptions() {
		if fd.Name == name {
			return i
		}
	}
	return -1
}

// idBody is the body of a claimed row gone from the table: its id alone, a number when the
// id column is an integer. It is still the row's own, unlike an empty body.
func idBody(col, text string, v any) []byte {
	body := jsonstring.Append([]byte{'{'}, col)
	body = append(body, ':')
	switch v.(type) {
	case int16, int32, int64:
		body = append(body, text...)
	default:
		body = jsonstring.Append(body, text)
	}
	return append(body, '}')
}

// collect reads one fetch's result into found (claimed ids only, the first row of each), and closes rows.
func (b *Batch) collect(rows pgx.Rows, found map[string]Row) error {
	in := b.in
	defer rows.Close()
	idCol := columnIndex(rows, in.t.ID)
	if idCol < 0 {
		return in.errorf("fetch `%s`: no column %q in its result", in.fetch, in.t.ID)
	}
	m := rows.Conn().TypeMap()
	for rows.Next() {
		row, err := in.encodeRow(m, rows.FieldDescriptions(), rows.RawValues(), idCol)
		if err != nil {
			return err
		}
		if _, claimed := b.ids[row.ID]; !claimed {
			continue // not ours: a custom fetch returned more than it was asked for
		}
		if _, dup := found[row.ID]; !dup {
			found[row.ID] = row
		}
	}
	if err := rows.Err(); err != nil {
		return in.errorf("fetch `%s`: %w", in.fetch, err)
	}
	return nil
}

// Finish deletes the claimed rows whose ids (as text, from Row.ID or Missing) are in ack, and releases the others:
// RowLock: DELETE in the claim's transaction, then COMMIT (the others are unlocked; their attempt increments stay).
// Lease: DELETE ... WHERE id = ANY(acked) AND locked_until = <this claim's value> (a row whose lease ran out and was claimed again is not deleted); the others are left to their lease.
// AdvisoryLock: DELETE ... WHERE id = ANY(acked) on the held connection (autocommit), then pg_advisory_unlock once per lock the claim took, and the connection goes back to the pool (closed instead if the unlock fails, which ends its session and so its locks).
// It returns how many rows were deleted. An error leaves every row to be claimed again (RowLock: rolled back; AdvisoryLock: the locks are released all the same).
// Ids in ack that this batch did not claim are ignored.
func (b *Batch) Finish(ctx context.Context, ack []string) (deleted int, err error) {
	if b.in == nil || (b.ended && len(b.order) == 0) {
		return 0, nil // an empty claim holds nothing
	}
	if b.ended {
		return 0, ErrEnded
	}
	b.ended = true
	in := b.in
	acked := make([]string, 0, len(ack))
	seen := make(map[string]bool, len(ack))
	for _, id := range ack {
		if _, ok := b.ids[id]; ok && !seen[id] {
			seen[id] = true
			acked = append(acked, id)
		}
	}
	switch in.t.Form {
	case Lease:
		return b.finishLease(ctx, acked)
	case AdvisoryLock:
		return b.finishAdvisory(ctx, acked)
	}
	var n int64
	if len(acked) > 0 {
		tag, err := b.tx.Exec(ctx, in.delete, b.typedIDs(acked))
		if err != nil {
			rollback(ctx, b.tx)
			return 0, in.errorf("finish: delete: %w", err)
		}
		n = tag.RowsAffected()
	}
	if err := b.tx.Commit(ctx); err != nil {
		return 0, in.errorf("finish: commit: %w", err)
	}
	return int(n), nil
}

func (b *Batch) finishLease(ctx context.Context, acked []string) (int, error) {
	in := b.in
	if len(acked) == 0 {
		return 0, nil
	}
	// One claim statement sets one now(), so there is one token; group anyway rather than assume it.
	type group struct {
		until time.Time
		ids   []string
	}
	var groups []*group
	for _, id := range acked {
		until := b.tokens[id]
		var g *group
		for _, x := range groups {
			if x.until.Equal(until) {
				g = x
				break
			}
		}
		if g == nil {
			g = &group{until: until}
			groups = append(groups, g)
		}
		g.ids = append(g.ids, id)
	}
	if len(groups) == 1 {
		tag, err := in.pool.Exec(ctx, in.delete, b.typedIDs(groups[0].ids), groups[0].until)
		if err != nil {
			return 0, in.errorf("finish: delete: %w", err)
		}
		return int(tag.RowsAffected()), nil
	}
	var n int64
	err := pgx.BeginFunc(ctx, in.pool, func(tx pgx.Tx) error {
		for _, g := range groups {
			tag, err := tx.Exec(ctx, in.delete, b.typedIDs(g.ids), g.until)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return 0, in.errorf("finish: delete: %w", err)
	}
	return int(n), nil
}

// Abandon ends the claim without deleting anything (RowLock: ROLLBACK; Lease: nothing, the lease runs out; AdvisoryLock: the locks are released and the connection goes back).
func (b *Batch) Abandon(ctx context.Context) {
	if b.ended {
		return
	}
	b.ended = true
	if b.tx != nil {
		rollback(ctx, b.tx)
	}
	if b.conn != nil {
		b.releaseAdvisory(ctx)
	}
}

// rollback ends tx even when ctx is done (a shutdown still releases the rows at once); if it
// fails, pgx closes the connection, which releases them as well.
func rollback(ctx context.Context, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = tx.Rollback(ctx)
}
