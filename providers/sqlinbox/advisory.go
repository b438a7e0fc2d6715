package sqlinbox

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimAdvisory is the advisory lock form's claim (see Claim and the package doc).
func (in *Inbox) claimAdvisory(ctx context.Context, max int) (b *Batch, err error) {
	conn, err := in.pool.Acquire(ctx)
	if err != nil {
		return nil, in.errorf("claim: acquiring a connection: %w", err)
	}
	b = &Batch{in: in, ids: map[string]any{}, keys: map[string]string{}, conn: conn}
	unsure := false // a lock may have been taken that b does not record: only closing the session is sure to release it
	// The batch as made here: a failed return sets the result b to nil
	// before this runs (a claim whose context ended panicked on it).
	held := b
	defer func() {
		if err != nil {
			if unsure {
				held.discardConn()
			} else {
				held.releaseAdvisory(ctx)
			}
		}
	}()

	type candidate struct {
		id  string
		v   any
		key string
	}
	limit := int64(max) * candidatesPerRow
	if max > math.MaxInt64/candidatesPerRow {
		limit = math.MaxInt64
	}
	var cands []candidate
	rows, err := conn.Query(ctx, in.claim, in.claimArgs(limit)...)
	if err != nil {
		return nil, in.errorf("claim: %w", err)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return nil, in.errorf("claim: reading a candidate: %w", err)
		}
		id, err := in.idText(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		key, ok := vals[1].(string)
		if !ok {
			rows.Close()
			return nil, in.errorf("claim: the lock key of %s came back as %T, not text", id, vals[1])
		}
		cands = append(cands, candidate{id, vals[0], key})
	}
	if err := rows.Err(); err != nil {
		return nil, in.errorf("claim: %w", err)
	}
	if in.afterCandidates != nil {
		in.afterCandidates()
	}

	// Try the locks in id order, as many at a time as rows are still wanted (one round trip
	// when no candidate is held elsewhere), so no lock is taken beyond max.
	for i := 0; i < len(cands) && len(b.order) < max; {
		chunk := cands[i:min(i+max-len(b.order), len(cands))]
		i += len(chunk)
		pb := &pgx.Batch{}
		for _, c := range chunk {
			pb.Queue(in.lock, in.ns, c.key)
		}
		br := conn.SendBatch(ctx, pb)
		for _, c := range chunk {
			var taken bool
			if err := br.QueryRow().Scan(&taken); err != nil {
				_ = br.Close()
				unsure = true
				return nil, in.errorf("claim: lock `%s`: %w", in.lock, err)
			}
			if taken {
				b.order = append(b.order, c.id)
				b.ids[c.id] = c.v
				b.keys[c.id] = c.key
			}
		}
		if err := br.Close(); err != nil {
			unsure = true
			return nil, in.errorf("claim: lock `%s`: %w", in.lock, err)
		}
	}
	if len(b.order) == 0 {
		b.conn = nil
		conn.Release()
		b.ended = true
		return b, nil
	}

	// The attempt increment, then the fetch once per row with that row's id alone, sent as one
	// pipeline (one implicit transaction, committed at its end).
	pb := &pgx.Batch{}
	if in.attempt != "" {
		pb.Queue(in.attempt, b.typedIDs(b.order))
	}
	for _, id := range b.order {
		pb.Queue(in.fetch, typedSlice([]any{b.ids[id]}))
	}
	found := make(map[string]Row, len(b.order))
	br := conn.SendBatch(ctx, pb)
	if in.attempt != "" {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, in.errorf("claim: incrementing %q: %w", in.t.Attempt, err)
		}
	}
	for range b.order {
		rows, err := br.Query()
		if err != nil {
			rows.Close()
			_ = br.Close()
			return nil, in.errorf("fetch `%s`: %w", in.fetch, err)
		}
		if err := b.collect(rows, found); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	if err := br.Close(); err != nil {
		return nil, in.errorf("fetch `%s`: %w", in.fetch, err)
	}

	// A claimed id the fetch did not return: Missing if its row is there, dropped if it is gone.
	var absent []string
	for _, id := range b.order {
		if _, ok := found[id]; !ok {
			absent = append(absent, id)
		}
	}
	gone := map[string]bool{}
	if len(absent) > 0 {
		pb := &pgx.Batch{}
		for _, id := range absent {
			pb.Queue(in.exists, b.ids[id])
		}
		br := conn.SendBatch(ctx, pb)
		for _, id := range absent {
			var one int32
			switch err := br.QueryRow().Scan(&one); {
			case errors.Is(err, pgx.ErrNoRows):
				gone[id] = true
			case err != nil:
				_ = br.Close()
				return nil, in.errorf("claim: exists `%s`: %w", in.exists, err)
			}
		}
		if err := br.Close(); err != nil {
			return nil, in.errorf("claim: exists `%s`: %w", in.exists, err)
		}
	}
	if len(gone) > 0 {
		var keys []string
		kept := b.order[:0]
		for _, id := range b.order {
			if gone[id] {
				keys = append(keys, b.keys[id])
				delete(b.ids, id)
				delete(b.keys, id)
			} else {
				kept = append(kept, id)
			}
		}
		b.order = kept
		if released, err := in.unlockKeys(ctx, b, keys); err != nil || released != len(keys) {
			// The batch no longer records these locks: ending the session is the sure release.
			unsure = true
			if err == nil {
				err = errors.New("a lock was not held")
			}
			return nil, in.errorf("claim: unlock `%s` of gone rows: %w", in.unlock, err)
		}
		if len(b.order) == 0 {
			b.conn = nil
			conn.Release()
			b.ended = true
			return b, nil
		}
	}
	b.Rows = make([]Row, 0, len(b.order))
	for _, id := range b.order {
		if row, ok := found[id]; ok {
			b.Rows = append(b.Rows, row)
		} else {
			b.Missing = append(b.Missing, id)
		}
	}
	if err := b.readUnfetched(ctx, conn); err != nil {
		return nil, err
	}
	return b, nil
}

// unlockKeys runs the unlock statement on the batch's connection for keys (once per key listed)
// and returns how many locks were released. It runs even when ctx is done.
func (in *Inbox) unlockKeys(ctx context.Context, b *Batch, keys []string) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rows, err := b.conn.Query(ctx, in.unlock, in.ns, keys)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var ok bool
		if err := rows.Scan(&ok); err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, rows.Err()
}

// releaseAdvisory unlocks every lock the batch holds (one unlock per claimed id) and gives the
// connection back; if the unlock fails or finds a lock not held, it closes the connection
// instead, which ends the session and so every lock it holds.
func (b *Batch) releaseAdvisory(ctx context.Context) {
	if b.conn == nil {
		return
	}
	keys := make([]string, len(b.order))
	for i, id := range b.order {
		keys[i] = b.keys[id]
	}
	if n, err := b.in.unlockKeys(ctx, b, keys); err != nil || n != len(keys) {
		b.discardConn()
		return
	}
	b.conn.Release()
	b.conn = nil
}

// discardConn takes the batch's connection out of the pool and closes it: its session ends and
// PostgreSQL releases its advisory locks.
func (b *Batch) discardConn() {
	if b.conn == nil {
		return
	}
	c := b.conn.Hijack()
	b.conn = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// finishAdvisory deletes the acked rows on the held connection, then releases the locks and the
// connection, whatever the delete did.
func (b *Batch) finishAdvisory(ctx context.Context, acked []string) (int, error) {
	in := b.in
	var n int64
	var derr error
	if len(acked) > 0 {
		tag, err := b.conn.Exec(ctx, in.delete, b.typedIDs(acked))
		if err != nil {
			derr = in.errorf("finish: delete: %w", err)
		} else {
			n = tag.RowsAffected()
		}
	}
	b.releaseAdvisory(ctx)
	if derr != nil {
		return 0, derr
	}
	return int(n), nil
}
