// Package postgres is the events' store on PostgreSQL, through pgx/v5 and a pgxpool
// (docs/design/store.md). Transactions are READ COMMITTED; the claim of deliveries is one
// UPDATE over rows picked FOR UPDATE SKIP LOCKED.
//
// Importing the package registers it with store.Open for postgres:// and postgresql://
// URLs.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

func init() {
	open := func(ctx context.Context, url string) (store.Store, error) { return Open(ctx, url) }
	store.Register("postgres", open)
	store.Register("postgresql", open)
	existing := func(ctx context.Context, url string) (store.Store, error) { return OpenExisting(ctx, url) }
	store.RegisterExisting("postgres", existing)
	store.RegisterExisting("postgresql", existing)
}

// migrationLockKey is the key of the advisory lock Migrate holds in its transaction
// ("jadpo" in ASCII). It is one lock per database, whatever the schema.
const migrationLockKey int64 = 0x6a6164706f

// Store is the events' store on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	// pinned is a test's clock (SetClock); nil: the database's.
	pinned atomic.Pointer[func() time.Time]
}

// SetClock pins the store's time for a test (store.Store.SetClock): the statements get
// now()'s time as a parameter instead. nil gives the database's clock back.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		s.pinned.Store(nil)
		return
	}
	s.pinned.Store(&now)
}

// clock is the statements' clock parameter: NULL (the database's now()) unless a test
// pinned the time.
func (s *Store) clock() *time.Time {
	p := s.pinned.Load()
	if p == nil {
		return nil
	}
	t := sqlcommon.Micro((*p)())
	return &t
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL, with pgx's pool settings such as
// pool_max_conns) and checks that it answers. Call Migrate next.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors hold the URL with its password redacted.
		return nil, &store.Error{Op: "open", Class: store.ClassOther, Err: err}
	}
	return New(ctx, cfg)
}

// OpenExisting connects to the database at url without migrating it (store.OpenExisting):
// a database without jadpo's tables (in its search_path) is an error wrapping
// store.ErrNoStore, and nothing is created.
func OpenExisting(ctx context.Context, url string) (*Store, error) {
	s, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := s.verify(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// verify checks, changing nothing, that the database holds jadpo's tables at this build's
// schema version, then checks every statement as Migrate does.
func (s *Store) verify(ctx context.Context) error {
	var there bool
	if err := s.pool.QueryRow(ctx, "SELECT to_regclass('jadpo_schema_migrations') IS NOT NULL").Scan(&there); err != nil {
		return wrap("open", err)
	}
	if !there {
		return fmt.Errorf("%w: the database has no jadpo tables (it was never migrated)", store.ErrNoStore)
	}
	rows, err := s.pool.Query(ctx, stmtMigrationVersions.SQL)
	if err != nil {
		return wrap("open", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return wrap("open", err)
	}
	if err := sqlcommon.Behind(migrations, applied); err != nil {
		return err
	}
	return s.check(ctx)
}

// New connects a pool made from cfg (tests set cfg.ConnConfig.RuntimeParams, such as
// search_path) and checks that the database answers.
func New(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("open", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, wrap("connect", err)
	}
	return &Store{pool: pool}, nil
}

// Pool is the store's pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the store's pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func readCommitted() pgx.TxOptions { return pgx.TxOptions{IsoLevel: pgx.ReadCommitted} }

// rollback ends tx, even when ctx is done; its error is not the caller's news.
func rollback(ctx context.Context, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = tx.Rollback(ctx)
}

// Migrate applies the missing migrations in one transaction that holds an advisory lock,
// so that processes starting together apply them once, then checks every statement.
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.pool.BeginTx(ctx, readCommitted())
	if err != nil {
		return wrap("migrate", err)
	}
	defer rollback(ctx, tx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
		return wrap("migrate", err)
	}
	if _, err := tx.Exec(ctx, migrationsTable); err != nil {
		return wrap("migrate", err)
	}
	rows, err := tx.Query(ctx, stmtMigrationVersions.SQL)
	if err != nil {
		return wrap("migrate", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return wrap("migrate", err)
	}
	pending, err := sqlcommon.Pending(migrations, applied)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return wrap(fmt.Sprintf("migrate to version %d (%s)", m.Version, m.Name), err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO jadpo_schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return wrap("migrate", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return wrap("migrate", err)
	}
	return s.check(ctx)
}

// check compares the tables' columns with what the statements use, then prepares and plans
// every statement (EXPLAIN EXECUTE with NULL parameters: nothing runs) so that any other
// mismatch, such as an ON CONFLICT without its unique index, fails now, naming the
// statement.
func (s *Store) check(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return wrap("check schema", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT t.name, a.attname
FROM unnest($1::text[]) AS t (name)
JOIN pg_attribute AS a ON a.attrelid = to_regclass(t.name)
WHERE a.attnum > 0 AND NOT a.attisdropped`, sqlcommon.TableOrder)
	if err != nil {
		return wrap("check schema", err)
	}
	have := map[string][]string{}
	var table, column string
	_, err = pgx.ForEachRow(rows, []any{&table, &column}, func() error {
		have[table] = append(have[table], column)
		return nil
	})
	if err != nil {
		return wrap("check schema", err)
	}
	if err := sqlcommon.CheckColumns(have, statements); err != nil {
		return err
	}
	for i, st := range statements {
		if err := checkStatement(ctx, conn.Conn(), fmt.Sprintf("jadpo_check_%d", i), st); err != nil {
			if class, _ := classify(err); class == store.ClassTransient {
				return wrap("check schema", err)
			}
			return sqlcommon.SchemaMismatch(st, err)
		}
	}
	return nil
}

func checkStatement(ctx context.Context, conn *pgx.Conn, name string, st sqlcommon.Statement) error {
	sd, err := conn.Prepare(ctx, name, st.SQL)
	if err != nil {
		return err
	}
	defer conn.Deallocate(ctx, name)
	nulls := strings.TrimSuffix(strings.Repeat("NULL, ", len(sd.ParamOIDs)), ", ")
	explain := "EXPLAIN EXECUTE " + name
	if nulls != "" {
		explain += " (" + nulls + ")"
	}
	_, err = conn.Exec(ctx, explain)
	return err
}

// KeepBatch keeps the messages in one READ COMMITTED transaction, in one round trip:
// BEGIN, one statement for the whole batch (stmtKeepBatch), COMMIT. When the server refuses
// that statement as it would every time, nothing was written, and the batch is kept again
// one statement and savepoint a message (keepEach), so that only the messages it refuses
// are refused.
func (s *Store) KeepBatch(ctx context.Context, keeps []store.Keep) ([]store.KeepResult, error) {
	results := make([]store.KeepResult, len(keeps))
	if len(keeps) == 0 {
		return results, nil
	}
	now := s.clock()
	err := s.keepAll(ctx, now, keeps, results)
	if err == nil {
		return results, nil
	}
	if class, _ := classify(err); class != store.ClassRefused {
		return nil, wrap("keep", err)
	}
	clear(results)
	return s.keepEach(ctx, now, keeps, results)
}

// keepAll keeps the batch with stmtKeepBatch, BEGIN and COMMIT pipelined with it on one
// connection. A message whose (source, id) came earlier in the batch is a repeat, as the
// second of two stmtKeep statements would find it; its re-read parked row is deleted all
// the same.
func (s *Store) keepAll(ctx context.Context, now *time.Time, keeps []store.Keep, results []store.KeepResult) error {
	n := len(keeps)
	idx, subCounts := make([]int32, 0, n), make([]int32, 0, n)
	sources, ids, events, jsons := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	headers := make([]*string, 0, n)
	subIdx, subNames := make([]int32, 0, n), make([]string, 0, n)
	retried := []int64{}
	type key struct{ source, id string }
	first := make(map[key]bool, n)
	for i, k := range keeps {
		results[i] = store.KeepResult{Outcome: store.Repeat}
		if k.RetriedParkedID != 0 {
			retried = append(retried, k.RetriedParkedID)
		}
		if first[key{k.Source, k.ReceivedID}] {
			continue
		}
		first[key{k.Source, k.ReceivedID}] = true
		subs := sqlcommon.Subscribers(k.Subscribers)
		idx, sources, ids, events = append(idx, int32(i)), append(sources, k.Source), append(ids, k.ReceivedID), append(events, k.EventName)
		jsons, headers, subCounts = append(jsons, string(k.EventJSON)), append(headers, headersParam(k.Headers)), append(subCounts, int32(len(subs)))
		for _, sub := range subs {
			subIdx, subNames = append(subIdx, int32(i)), append(subNames, sub)
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// A refused statement leaves the transaction open and aborted: end it, so that the
		// connection goes back to the pool.
		if pc := conn.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = conn.Exec(rctx, "ROLLBACK")
			cancel()
		}
		conn.Release()
	}()
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue(stmtKeepBatch.SQL, idx, sources, ids, events, jsons, headers, subCounts, subIdx, subNames, now, retried)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	err = readKeepAll(br, results)
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	return err
}

// readKeepAll reads keepAll's BEGIN, statement and COMMIT, marking each message returned
// kept.
func readKeepAll(br pgx.BatchResults, results []store.KeepResult) error {
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var i int32
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&i, &id}, func() error {
		results[i] = store.KeepResult{Outcome: store.Kept, OutboxID: id}
		return nil
	})
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("the keep's transaction ended with %s, not COMMIT", tag)
	}
	return nil
}

// keepEach keeps the messages in one READ COMMITTED transaction, each message a savepoint
// and one statement (stmtKeep); all of them are pipelined in one round trip. A statement
// the server refuses as it would every time rolls back to its savepoint, and the rest are
// sent again after it.
func (s *Store) keepEach(ctx context.Context, now *time.Time, keeps []store.Keep, results []store.KeepResult) ([]store.KeepResult, error) {
	tx, err := s.pool.BeginTx(ctx, readCommitted())
	if err != nil {
		return nil, wrap("keep", err)
	}
	defer rollback(ctx, tx)

	for start := 0; start < len(keeps); {
		b := &pgx.Batch{}
		for _, k := range keeps[start:] {
			b.Queue("SAVEPOINT jadpo_keep")
			b.Queue(stmtKeep.SQL, k.Source, k.ReceivedID, now, k.EventName, string(k.EventJSON),
				sqlcommon.Subscribers(k.Subscribers), k.RetriedParkedID, headersParam(k.Headers))
			b.Queue("RELEASE SAVEPOINT jadpo_keep")
		}
		br := tx.SendBatch(ctx, b)
		failed, keepErr, err := readKeeps(br, keeps[start:], results[start:])
		if closeErr := br.Close(); err == nil && keepErr == nil && closeErr != nil {
			err = closeErr
		}
		if err != nil {
			return nil, wrap("keep", err)
		}
		if keepErr == nil {
			break
		}
		i := start + failed
		results[i] = store.KeepResult{Outcome: store.Refused, Err: wrap("keep", keepErr)}
		// The transaction is aborted until the savepoint is rolled back; the statements
		// after the refused one were skipped, and go again in the next round.
		if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT jadpo_keep; RELEASE SAVEPOINT jadpo_keep"); err != nil {
			return nil, wrap("keep", err)
		}
		start = i + 1
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, wrap("keep", err)
	}
	return results, nil
}

// readKeeps reads one round of KeepBatch. It returns the index of the message whose keep
// statement the server refused and why (refusal), or a failure of the whole batch (err).
func readKeeps(br pgx.BatchResults, keeps []store.Keep, results []store.KeepResult) (refusedAt int, refusal, err error) {
	for i := range keeps {
		if _, err := br.Exec(); err != nil {
			return 0, nil, err
		}
		var id int64
		switch err := br.QueryRow().Scan(&id); {
		case err == nil:
			results[i] = store.KeepResult{Outcome: store.Kept, OutboxID: id}
		case errors.Is(err, pgx.ErrNoRows):
			results[i] = store.KeepResult{Outcome: store.Repeat}
		default:
			if class, _ := classify(err); class == store.ClassRefused {
				return i, err, nil
			}
			return 0, nil, err
		}
		if _, err := br.Exec(); err != nil {
			return 0, nil, err
		}
	}
	return 0, nil, nil
}

// headersParam is the headers column's value: the JSON object, or NULL for none.
func headersParam(h map[string]string) *string {
	if s, ok := sqlcommon.HeadersJSON(h); ok {
		return &s
	}
	return nil
}

// Park writes the parked row once per (source, body), or sets a re-read parked row back
// to failed.
func (s *Store) Park(ctx context.Context, p store.Parked) (store.ParkResult, store.ID, error) {
	if err := sqlcommon.CheckParked(p); err != nil {
		return 0, store.ID{}, err
	}
	now := s.clock()
	problems := sqlcommon.ProblemsJSON(p.Problems)
	wire, event, recv := nullText(p.WireType), nullText(p.EventName), nullText(p.ReceivedID)
	if p.RetriedParkedID != 0 {
		tag, err := s.pool.Exec(ctx, stmtParkAgain.SQL, p.RetriedParkedID, wire, event, string(p.Reason), problems, now, recv)
		if err != nil {
			return 0, store.ID{}, wrap("park", err)
		}
		if tag.RowsAffected() == 0 {
			return store.ParkGone, store.ID{}, nil
		}
		return store.ParkFailedAgain, store.ParkedID(p.RetriedParkedID), nil
	}
	body := p.Body
	if body == nil {
		body = []byte{}
	}
	source, sum := sqlcommon.StorableText(p.Source), sqlcommon.BodySHA256(p.Body)
	var id int64
	err := s.pool.QueryRow(ctx, stmtPark.SQL, source, wire, event, string(p.Reason),
		problems, body, sum, now, recv).Scan(&id)
	switch {
	case err == nil:
		return store.ParkAdded, store.ParkedID(id), nil
	case errors.Is(err, pgx.ErrNoRows):
		// Parked already: name that row (gone only if housekeeping deleted it since).
		err = s.pool.QueryRow(ctx, stmtParkedAs.SQL, source, sum).Scan(&id)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return 0, store.ID{}, wrap("park", err)
		}
		if err != nil {
			return store.ParkAlready, store.ID{}, nil
		}
		return store.ParkAlready, store.ParkedID(id), nil
	}
	return 0, store.ID{}, wrap("park", err)
}

// nullText is NULL for "", else s made storable.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	t := sqlcommon.StorableText(s)
	return &t
}

// RetriedParked lists the parked messages operators retried, oldest retry first.
func (s *Store) RetriedParked(ctx context.Context, limit int) ([]store.ParkedMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, stmtRetriedParked.SQL, limit)
	if err != nil {
		return nil, wrap("retried parked messages", err)
	}
	var out []store.ParkedMessage
	var m store.ParkedMessage
	var wire, event, recv *string
	var reason string
	var problems []byte
	_, err = pgx.ForEachRow(rows, []any{&m.ID, &m.Source, &wire, &event, &reason, &problems, &m.Body, &m.CreatedAt, &m.UpdatedAt, &recv}, func() error {
		ps, err := sqlcommon.ParseProblems(problems)
		if err != nil {
			return err
		}
		out = append(out, store.ParkedMessage{
			ID: m.ID, Source: m.Source, ReceivedID: deref(recv), WireType: deref(wire), EventName: deref(event), Reason: store.Reason(reason),
			Problems: ps, Body: m.Body, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC(),
		})
		m.Body = nil
		return nil
	})
	if err != nil {
		return nil, wrap("retried parked messages", err)
	}
	return out, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func utc(p *time.Time) time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.UTC()
}

// ClaimDeliveries claims due deliveries, and running ones whose lease expired, in one
// statement.
func (s *Store) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]store.Claimed, error) {
	if err := sqlcommon.CheckLease(lease); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, stmtClaim.SQL, s.clock(), lease.Microseconds(), limit)
	if err != nil {
		return nil, wrap("claim deliveries", err)
	}
	out, err := scanClaimed(rows)
	if err != nil {
		return nil, wrap("claim deliveries", err)
	}
	return out, nil
}

// scanClaimed reads the claim statement's rows, sorted by id.
func scanClaimed(rows pgx.Rows) ([]store.Claimed, error) {
	var out []store.Claimed
	var c store.Claimed
	var maxAttempts *int32
	var event string
	_, err := pgx.ForEachRow(rows, []any{&c.ID, &c.Token, &c.Attempt, &maxAttempts, &c.LeaseExpiresAt, &c.Subscriber,
		&c.OutboxID, &c.Source, &c.ReceivedID, &c.EventName, &event}, func() error {
		c.MaxAttempts = int(deref(maxAttempts))
		c.LeaseExpiresAt = c.LeaseExpiresAt.UTC()
		c.EventJSON = []byte(event)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SettleDelivery settles a delivery if it is still running under the settlement's token.
func (s *Store) SettleDelivery(ctx context.Context, st store.Settlement) (bool, error) {
	if err := sqlcommon.CheckSettlement(st); err != nil {
		return false, err
	}
	tag, err := s.pool.Exec(ctx, stmtSettle.SQL, settleArgs(st, s.clock())...)
	if err != nil {
		return false, wrap("settle delivery", err)
	}
	return tag.RowsAffected() == 1, nil
}

// settleArgs are stmtSettle's arguments for a settlement written with the clock
// parameter now.
func settleArgs(st store.Settlement, now *time.Time) []any {
	var after *int64
	if us, ok := sqlcommon.RetryAfterMicros(st); ok {
		after = &us
	}
	return []any{st.ID, st.Token, string(st.Outcome.State()), after, nullText(st.ErrorCode), now, nullText(sqlcommon.ErrorText(st))}
}

// SettleDeliveries settles many deliveries in one transaction, each under its own token.
func (s *Store) SettleDeliveries(ctx context.Context, sts []store.Settlement) ([]bool, error) {
	ok, _, err := s.SettleAndClaim(ctx, sts, 0, 0)
	return ok, err
}

// SettleAndClaim settles and claims in one batch, which PostgreSQL runs as one implicit
// transaction: one round trip, one commit, and a failing statement rolls back every one.
func (s *Store) SettleAndClaim(ctx context.Context, sts []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	ok := make([]bool, len(sts))
	if err := sqlcommon.CheckSettleAndClaim(sts, limit, lease); err != nil {
		return nil, nil, err
	}
	if len(sts) == 0 && limit <= 0 {
		return ok, nil, nil
	}
	now := s.clock()
	b := &pgx.Batch{}
	// The handlers' starts first, in one statement; then each settlement.
	var startIDs, startTokens []int64
	for _, st := range sts {
		if st.Outcome == store.SettleStarted {
			startIDs, startTokens = append(startIDs, st.ID), append(startTokens, st.Token)
		}
	}
	if len(startIDs) > 0 {
		b.Queue(stmtStarted.SQL, startIDs, startTokens)
	}
	for _, st := range sts {
		if st.Outcome != store.SettleStarted {
			b.Queue(stmtSettle.SQL, settleArgs(st, now)...)
		}
	}
	if limit > 0 {
		b.Queue(stmtClaim.SQL, now, lease.Microseconds(), limit)
	}
	br := s.pool.SendBatch(ctx, b)
	fail := func(err error) ([]bool, []store.Claimed, error) {
		br.Close()
		return nil, nil, wrap("settle deliveries", err)
	}
	if len(startIDs) > 0 {
		rows, err := br.Query()
		if err != nil {
			return fail(err)
		}
		type claim struct{ id, token int64 }
		took := make(map[claim]bool, len(startIDs))
		var c claim
		if _, err := pgx.ForEachRow(rows, []any{&c.id, &c.token}, func() error { took[c] = true; return nil }); err != nil {
			return fail(err)
		}
		for i, st := range sts {
			if st.Outcome == store.SettleStarted {
				ok[i] = took[claim{st.ID, st.Token}]
			}
		}
	}
	for i, st := range sts {
		if st.Outcome == store.SettleStarted {
			continue
		}
		tag, err := br.Exec()
		if err != nil {
			return fail(err)
		}
		ok[i] = tag.RowsAffected() == 1
	}
	var claimed []store.Claimed
	if limit > 0 {
		rows, err := br.Query()
		if err != nil {
			return fail(err)
		}
		if claimed, err = scanClaimed(rows); err != nil {
			return fail(err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, nil, wrap("settle deliveries", err)
	}
	return ok, claimed, nil
}

// List lists deliveries and parked messages in the filter's state, oldest first.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Entry, error) {
	dStates, pStates, err := sqlcommon.ListStates(f)
	if err != nil {
		return nil, err
	}
	var limit *int
	if f.Limit > 0 {
		limit = &f.Limit
	}
	rows, err := s.pool.Query(ctx, stmtListDeliveries.SQL, dStates, limit)
	if err != nil {
		return nil, wrap("list", err)
	}
	deliveries, err := collectDeliveries(rows)
	if err != nil {
		return nil, wrap("list", err)
	}
	rows, err = s.pool.Query(ctx, stmtListParked.SQL, pStates, limit)
	if err != nil {
		return nil, wrap("list", err)
	}
	parked, err := collectParked(rows)
	if err != nil {
		return nil, wrap("list", err)
	}
	return sqlcommon.MergeEntries(deliveries, parked, f.Limit), nil
}

// Show returns one delivery or parked message.
func (s *Store) Show(ctx context.Context, id store.ID, withBody bool) (store.Entry, error) {
	var entries []store.Entry
	var err error
	switch id.Kind {
	case store.KindDelivery:
		var rows pgx.Rows
		if rows, err = s.pool.Query(ctx, stmtShowDelivery.SQL, id.N, withBody); err == nil {
			entries, err = collectDeliveries(rows)
		}
	case store.KindParked:
		var rows pgx.Rows
		if rows, err = s.pool.Query(ctx, stmtShowParked.SQL, id.N, withBody); err == nil {
			entries, err = collectParked(rows)
		}
	}
	if err != nil {
		return store.Entry{}, wrap("show "+id.String(), err)
	}
	if len(entries) == 0 {
		return store.Entry{}, fmt.Errorf("store: show %s: %w", id, store.ErrUnknownID)
	}
	e := entries[0]
	if id.Kind == store.KindDelivery {
		if e.AttemptLog, err = s.attempts(ctx, id.N); err != nil {
			return store.Entry{}, wrap("show "+id.String(), err)
		}
	}
	return e, nil
}

// attempts reads a delivery's newest attempts, oldest first.
func (s *Store) attempts(ctx context.Context, id int64) ([]store.Attempt, error) {
	rows, err := s.pool.Query(ctx, stmtShowAttempts.SQL, id, store.MaxShownAttempts)
	if err != nil {
		return nil, err
	}
	out := []store.Attempt{}
	var a store.Attempt
	var outcome string
	var code, text *string
	_, err = pgx.ForEachRow(rows, []any{&a.N, &a.At, &outcome, &code, &text}, func() error {
		out = append(out, store.Attempt{N: a.N, At: a.At.UTC(), Outcome: store.DeliveryState(outcome), Code: deref(code), Error: deref(text)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

func collectDeliveries(rows pgx.Rows) ([]store.Entry, error) {
	var out []store.Entry
	var (
		id                                      int64
		state, subscriber, source, event, recID string
		attempts                                int32
		maxAttempts                             *int32
		next, created, updated                  time.Time
		code, body, headers, lastErr            *string
		settled, dismissed                      *time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &state, &subscriber, &attempts, &maxAttempts, &next, &code, &created,
		&updated, &settled, &dismissed, &source, &event, &recID, &lastErr, &body, &headers}, func() error {
		hs, err := sqlcommon.ParseHeaders(deref(headers), headers != nil)
		if err != nil {
			return err
		}
		e := store.Entry{
			ID: store.DeliveryID(id), State: sqlcommon.ListStateOfDelivery(state), RowState: state,
			Source: source, Subscriber: subscriber, EventName: event, ReceivedID: recID, Code: deref(code), Error: deref(lastErr),
			Attempts: int(attempts), MaxAttempts: int(deref(maxAttempts)),
			CreatedAt: created.UTC(), UpdatedAt: updated.UTC(), SettledAt: utc(settled), DismissedAt: utc(dismissed),
			Headers: hs,
		}
		switch state {
		case "pending", "retry_wait":
			e.NextAttemptAt = next.UTC()
		case "running":
			e.LeaseUntil = next.UTC() // a claim sets next_attempt_at to its lease's end
		}
		if body != nil {
			e.Body = []byte(*body)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

func collectParked(rows pgx.Rows) ([]store.Entry, error) {
	var out []store.Entry
	var (
		id                         int64
		state, source, reason, sha string
		wire, event, recv          *string
		problems, body             []byte
		created, updated           time.Time
		dismissed                  *time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &state, &source, &wire, &event, &reason, &problems, &sha, &created,
		&updated, &dismissed, &recv, &body}, func() error {
		ps, err := sqlcommon.ParseProblems(problems)
		if err != nil {
			return err
		}
		out = append(out, store.Entry{
			ID: store.ParkedID(id), State: store.ListState(state), RowState: state, Source: source,
			WireType: deref(wire), EventName: deref(event), ReceivedID: deref(recv), Code: reason, Problems: ps, BodySHA256: sha,
			CreatedAt: created.UTC(), UpdatedAt: updated.UTC(), DismissedAt: utc(dismissed), Body: body,
		})
		body = nil
		return nil
	})
	return out, err
}

// Retry makes failed deliveries and parked messages pending, all or none.
func (s *Store) Retry(ctx context.Context, ids []store.ID) error {
	return s.transition(ctx, "retry", ids, stmtRetryDeliveries, stmtRetryParked)
}

// Dismiss sets failed deliveries and parked messages aside, all or none.
func (s *Store) Dismiss(ctx context.Context, ids []store.ID) error {
	return s.transition(ctx, "dismiss", ids, stmtDismissDeliveries, stmtDismissParked)
}

// transition moves ids from failed with the two statements, in one transaction that first
// locks the rows and reads their states: any id unknown or not failed refuses the call.
func (s *Store) transition(ctx context.Context, op string, ids []store.ID, onDeliveries, onParked sqlcommon.Statement) error {
	deliveries, parked, bad := sqlcommon.SplitIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	now := s.clock()
	tx, err := s.pool.BeginTx(ctx, readCommitted())
	if err != nil {
		return wrap(op, err)
	}
	defer rollback(ctx, tx)
	states := map[store.ID]string{}
	for _, q := range []struct {
		st   sqlcommon.Statement
		ids  []int64
		kind store.Kind
	}{{stmtLockDeliveries, deliveries, store.KindDelivery}, {stmtLockParked, parked, store.KindParked}} {
		if len(q.ids) == 0 {
			continue
		}
		rows, err := tx.Query(ctx, q.st.SQL, q.ids)
		if err != nil {
			return wrap(op, err)
		}
		var id int64
		var state string
		if _, err := pgx.ForEachRow(rows, []any{&id, &state}, func() error {
			states[store.ID{Kind: q.kind, N: id}] = state
			return nil
		}); err != nil {
			return wrap(op, err)
		}
	}
	_ = bad // ids of no kind have no state: refused as unknown
	if refused := sqlcommon.Refusals(ids, states, "failed"); len(refused) > 0 {
		return &store.StateError{Op: op, Refused: refused}
	}
	if len(deliveries) > 0 {
		if _, err := tx.Exec(ctx, onDeliveries.SQL, deliveries, now); err != nil {
			return wrap(op, err)
		}
	}
	if len(parked) > 0 {
		if _, err := tx.Exec(ctx, onParked.SQL, parked, now); err != nil {
			return wrap(op, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return wrap(op, err)
	}
	return nil
}

// Housekeep deletes what the retention no longer keeps, in bounded batches
// (store.Store.Housekeep). Each batch is one statement, its own transaction.
func (s *Store) Housekeep(ctx context.Context, o store.Housekeeping) (store.Housekept, error) {
	o = o.WithDefaults()
	var h store.Housekept
	// Each statement's cut-off is the database's clock less the retention (a pinned
	// clock's time when a test pinned one), read as the statement runs.
	step := func(st sqlcommon.Statement, keep time.Duration, n *int64, counted bool) store.HousekeepStep {
		return store.HousekeepStep{Table: st.Tables[0], N: n, Run: func(ctx context.Context, batch int) (int64, error) {
			if counted {
				var c int64
				err := s.pool.QueryRow(ctx, st.SQL, keep.Microseconds(), batch, s.clock()).Scan(&c)
				return c, err
			}
			tag, err := s.pool.Exec(ctx, st.SQL, keep.Microseconds(), batch, s.clock())
			return tag.RowsAffected(), err
		}}
	}
	// Deliveries before the outbox, so that an outbox row goes in the same call as its
	// last delivery.
	err := store.RunHousekeeping(ctx, o, &h, []store.HousekeepStep{
		step(stmtForgetReceived, store.HousekeepAfter, &h.ReceivedIDs, false),
		step(stmtForgetParked, store.HousekeepAfter, &h.ParkedMessages, false),
		step(stmtForgetSucceeded, o.Succeeded, &h.Deliveries, true),
		step(stmtForgetDismissed, store.HousekeepAfter, &h.Deliveries, true),
		step(stmtForgetOutbox, o.Outbox, &h.Outbox, false),
	})
	// What went is recorded, even before an error.
	if h.Total() > 0 {
		if _, rerr := s.pool.Exec(ctx, stmtRecordRun.SQL, s.clock(), h.ReceivedIDs, h.ParkedMessages, h.Deliveries, h.Outbox,
			h.Busy, store.HousekeepingRunsKept-1); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return h, wrap("housekeep", err)
	}
	return h, nil
}

// HousekeepingRuns returns the newest recorded housekeeping runs, newest first.
func (s *Store) HousekeepingRuns(ctx context.Context, limit int) ([]store.HousekeepingRun, error) {
	rows, err := s.pool.Query(ctx, stmtHousekeepingRuns.SQL, limit)
	if err != nil {
		return nil, wrap("housekeeping runs", err)
	}
	var out []store.HousekeepingRun
	var r store.HousekeepingRun
	_, err = pgx.ForEachRow(rows, []any{&r.At, &r.ReceivedIDs, &r.ParkedMessages, &r.Deliveries, &r.Outbox, &r.More}, func() error {
		r.At = r.At.UTC()
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, wrap("housekeeping runs", err)
	}
	return out, nil
}

// Stats counts the rows of each table.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{Deliveries: map[store.DeliveryState]int64{}, Parked: map[store.ParkedKey]int64{},
		BySubscriber: map[store.SubscriberKey]int64{}}
	if err := s.pool.QueryRow(ctx, stmtCountReceived.SQL).Scan(&st.ReceivedIDs); err != nil {
		return st, wrap("stats", err)
	}
	if err := s.pool.QueryRow(ctx, stmtCountOutbox.SQL).Scan(&st.Outbox); err != nil {
		return st, wrap("stats", err)
	}
	rows, err := s.pool.Query(ctx, stmtCountDeliveries.SQL)
	if err != nil {
		return st, wrap("stats", err)
	}
	var state, reason, sub string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&sub, &state, &n}, func() error {
		st.Deliveries[store.DeliveryState(state)] += n
		st.BySubscriber[store.SubscriberKey{Subscriber: sub, State: store.DeliveryState(state)}] = n
		return nil
	}); err != nil {
		return st, wrap("stats", err)
	}
	rows, err = s.pool.Query(ctx, stmtCountParked.SQL)
	if err != nil {
		return st, wrap("stats", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&reason, &state, &n}, func() error {
		st.Parked[store.ParkedKey{Reason: store.Reason(reason), State: store.ParkedState(state)}] = n
		return nil
	}); err != nil {
		return st, wrap("stats", err)
	}
	var oldest *time.Time
	if err := s.pool.QueryRow(ctx, stmtOldestPending.SQL).Scan(&oldest); err != nil {
		return st, wrap("stats", err)
	}
	if oldest != nil {
		st.OldestPending = oldest.UTC()
	}
	var attempts, runs int64
	if err := s.pool.QueryRow(ctx, stmtCountAttempts.SQL).Scan(&attempts); err != nil {
		return st, wrap("stats", err)
	}
	if err := s.pool.QueryRow(ctx, stmtCountRuns.SQL).Scan(&runs); err != nil {
		return st, wrap("stats", err)
	}
	var sizes [6]int64
	if err := s.pool.QueryRow(ctx, stmtTableSizes.SQL).Scan(&sizes[0], &sizes[1], &sizes[2], &sizes[3], &sizes[4], &sizes[5]); err != nil {
		return st, wrap("stats", err)
	}
	st.Tables = []store.TableStats{{Name: tReceived, Rows: st.ReceivedIDs, Bytes: sizes[0]}, {Name: tOutbox, Rows: st.Outbox, Bytes: sizes[1]},
		{Name: tDeliveries, Rows: st.DeliveriesTotal(), Bytes: sizes[2]}, {Name: tParked, Rows: st.ParkedTotal(), Bytes: sizes[3]},
		{Name: tAttempts, Rows: attempts, Bytes: sizes[4]}, {Name: tRuns, Rows: runs, Bytes: sizes[5]}}
	return st, nil
}
