// Package sqlite is the events' store on an embedded SQLite database (modernc.org/sqlite,
// pure Go, no cgo), the default store (docs/design/store.md).
//
// The database is in WAL mode with synchronous=FULL. Every write goes through one
// connection whose transactions are BEGIN IMMEDIATE, so writers in this process queue for
// that connection and writers in other processes wait for the write lock (busy_timeout)
// instead of failing half-way; reads use a small pool of query_only connections.
//
// Importing the package registers it with store.Open for sqlite:PATH URLs.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, url string) (store.Store, error) { return Open(ctx, url) })
	store.RegisterExisting("sqlite", func(ctx context.Context, url string) (store.Store, error) { return OpenExisting(ctx, url) })
}

// Options tune a store. The zero value is the default.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write lock before it
	// fails transiently (SQLITE_BUSY); default 5 s.
	BusyTimeout time.Duration
	// Readers is the number of read connections; default 4.
	Readers int
	// Clock is the machine's clock, time.Now by default: tests set it to move the
	// machine's time, backwards too. The store's time is this clock held so that it
	// never goes backwards (docs/design/store.md, "One clock: the store's").
	Clock func() time.Time
}

// Store is the events' store on SQLite.
type Store struct {
	path string
	w    *sql.DB // one connection; BEGIN IMMEDIATE
	r    *sql.DB // query_only connections

	mu       sync.Mutex
	prepared map[string]*sql.Stmt // by statement name

	machine func() time.Time                 // Options.Clock
	pinned  atomic.Pointer[func() time.Time] // a test's clock (SetClock); nil: the store's own
}

// SetClock pins the store's time for a test (store.Store.SetClock): the pinned time is
// the store's exactly, the high-water mark neither applied nor moved. nil gives the
// store its own clock back.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		s.pinned.Store(nil)
		return
	}
	s.pinned.Store(&now)
}

// now is the store's time for the write transaction tx, in microseconds: the machine's
// clock, never before the latest time the store gave (jadpo_clock's mark), which it
// becomes. Call it in a write transaction, which holds the database's write lock, so
// that every process's transactions read the machine's clock in the order they commit:
// the mark holds the time only when the machine's clock went back.
func (s *Store) now(ctx context.Context, tx *sql.Tx) (int64, error) {
	if p := s.pinned.Load(); p != nil {
		return micros((*p)()), nil
	}
	st, err := s.stmt(ctx, stmtClock)
	if err != nil {
		return 0, err
	}
	var at int64
	err = tx.StmtContext(ctx, st).QueryRowContext(ctx, micros(s.machine())).Scan(&at)
	return at, err
}

var _ store.Store = (*Store)(nil)

// Open opens the store of a sqlite:PATH URL (sqlite://PATH is the same path) with the
// default options. Call Migrate next.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	path, err := PathOf(rawURL)
	if err != nil {
		return nil, err
	}
	return OpenPath(ctx, path, Options{})
}

// PathOf returns the file path of a sqlite: URL.
func PathOf(rawURL string) (string, error) {
	if len(rawURL) < len("sqlite:") || !strings.EqualFold(rawURL[:len("sqlite:")], "sqlite:") {
		return "", fmt.Errorf("store: %q is not a sqlite:PATH URL", rawURL)
	}
	rest := strings.TrimPrefix(rawURL[len("sqlite:"):], "//")
	switch {
	case rest == "":
		return "", fmt.Errorf("store: sqlite URL %q has no path", rawURL)
	case strings.ContainsAny(rest, "?#"):
		return "", fmt.Errorf("store: sqlite URL %q: the path may not hold ? or #", rawURL)
	case rest == ":memory:" || strings.HasPrefix(rest, "file:"):
		return "", fmt.Errorf("store: sqlite URL %q: the store needs a file path", rawURL)
	}
	return rest, nil
}

// OpenExisting opens the store of a sqlite:PATH URL without creating or migrating
// anything (store.OpenExisting): a missing file, or one without jadpo's tables, is an error
// wrapping store.ErrNoStore.
func OpenExisting(ctx context.Context, rawURL string) (*Store, error) {
	path, err := PathOf(rawURL)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: the file does not exist", store.ErrNoStore, path)
	}
	s, err := openPath(ctx, path, Options{}, false)
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
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jadpo_schema_migrations'").Scan(&n); err != nil {
		return wrap("open "+s.path, err)
	}
	if n == 0 {
		return fmt.Errorf("%w at %s: the file has no jadpo tables (it was never migrated)", store.ErrNoStore, s.path)
	}
	rows, err := s.r.QueryContext(ctx, stmtMigrationVersions.SQL)
	if err != nil {
		return wrap("open "+s.path, err)
	}
	var applied []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return wrap("open "+s.path, err)
		}
		applied = append(applied, v)
	}
	if err := rows.Close(); err != nil {
		return wrap("open "+s.path, err)
	}
	if err := sqlcommon.Behind(migrations, applied); err != nil {
		return err
	}
	return s.check(ctx)
}

// OpenPath opens (creating it if need be) the database file at path.
func OpenPath(ctx context.Context, path string, opts Options) (*Store, error) {
	return openPath(ctx, path, opts, true)
}

// openPath opens the file at path; without create, a missing file is an error and the
// file's journal mode is left as it is (a store's is WAL already), so a file that is not a
// store is not changed.
func openPath(ctx context.Context, path string, opts Options, create bool) (*Store, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Readers <= 0 {
		opts.Readers = 4
	}
	w, err := sql.Open("sqlite", dsn(path, opts, true, create))
	if err != nil {
		return nil, wrap("open", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, wrap("open "+path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, opts, false, create))
	if err != nil {
		w.Close()
		return nil, wrap("open", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, wrap("open "+path, err)
	}
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Store{path: path, w: w, r: r, prepared: map[string]*sql.Stmt{}, machine: clock}, nil
}

func dsn(path string, opts Options, write, create bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	if create {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	if write {
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	if !create {
		// A file: URI, so that SQLite reads mode=rw: open the file, never create it.
		q.Set("mode", "rw")
		return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path) + "?" + q.Encode()
	}
	return path + "?" + q.Encode()
}

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the connections.
func (s *Store) Close() error {
	s.mu.Lock()
	for _, st := range s.prepared {
		st.Close()
	}
	s.prepared = map[string]*sql.Stmt{}
	s.mu.Unlock()
	return errors.Join(s.r.Close(), s.w.Close())
}

// stmt returns st prepared on its pool, preparing it the first time (Migrate prepares
// them all).
func (s *Store) stmt(ctx context.Context, st statement) (*sql.Stmt, error) {
	s.mu.Lock()
	p := s.prepared[st.Name]
	s.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := s.prepare(ctx, st)
	if err != nil {
		return nil, err
	}
	return s.keepPrepared(st, p), nil
}

func (s *Store) prepare(ctx context.Context, st statement) (*sql.Stmt, error) {
	db := s.w
	if st.read {
		db = s.r
	}
	return db.PrepareContext(ctx, st.SQL)
}

// keepPrepared caches p as st, unless another is cached already: then p is closed and the
// cached one returned.
func (s *Store) keepPrepared(st statement, p *sql.Stmt) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.prepared[st.Name]; q != nil {
		p.Close()
		return q
	}
	s.prepared[st.Name] = p
	return p
}

// stmts returns sts prepared, in order. A transaction on the writer calls it before it
// begins: the writer's one connection is the transaction's until it ends, so preparing a
// writer statement inside it would wait for itself.
func (s *Store) stmts(ctx context.Context, sts ...statement) ([]*sql.Stmt, error) {
	out := make([]*sql.Stmt, len(sts))
	for i, st := range sts {
		p, err := s.stmt(ctx, st)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func micros(t time.Time) int64 { return sqlcommon.Micro(t).UnixMicro() }

func fromMicros(n int64) time.Time { return time.UnixMicro(n).UTC() }

func fromNullMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromMicros(n.Int64)
}

// jsonList encodes a list as the JSON array json_each reads.
func jsonList[T any](xs []T) string {
	if xs == nil {
		xs = []T{}
	}
	b, err := json.Marshal(xs)
	if err != nil { // ints and strings always encode
		panic(err)
	}
	return string(b)
}

// Migrate applies the missing migrations in one BEGIN IMMEDIATE transaction, so that
// processes starting together apply them once, then checks every statement.
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("migrate", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, migrationsTable); err != nil {
		return wrap("migrate", err)
	}
	rows, err := tx.QueryContext(ctx, stmtMigrationVersions.SQL)
	if err != nil {
		return wrap("migrate", err)
	}
	var applied []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return wrap("migrate", err)
		}
		applied = append(applied, v)
	}
	if err := rows.Close(); err != nil {
		return wrap("migrate", err)
	}
	pending, err := sqlcommon.Pending(migrations, applied)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return wrap(fmt.Sprintf("migrate to version %d (%s)", m.Version, m.Name), err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO jadpo_schema_migrations (version, name) VALUES (?1, ?2)", m.Version, m.Name); err != nil {
			return wrap("migrate", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("migrate", err)
	}
	return s.check(ctx)
}

// check compares the tables' columns with what the statements use, then prepares every
// statement so that any other mismatch fails now, naming the statement.
func (s *Store) check(ctx context.Context) error {
	have := map[string][]string{}
	for _, table := range sqlcommon.TableOrder {
		rows, err := s.w.QueryContext(ctx, "SELECT name FROM pragma_table_info(?1)", table)
		if err != nil {
			return wrap("check schema", err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return wrap("check schema", err)
			}
			have[table] = append(have[table], name)
		}
		if err := rows.Close(); err != nil {
			return wrap("check schema", err)
		}
	}
	if err := sqlcommon.CheckColumns(have, commonStatements()); err != nil {
		return err
	}
	for _, st := range statements {
		p, err := s.prepare(ctx, st)
		if err != nil {
			if class, _ := classify(err); class == store.ClassTransient {
				return wrap("check schema", err)
			}
			return sqlcommon.SchemaMismatch(st.Statement, err)
		}
		s.keepPrepared(st, p)
	}
	return nil
}

// KeepBatch keeps the messages in one transaction, a savepoint each.
func (s *Store) KeepBatch(ctx context.Context, keeps []store.Keep) ([]store.KeepResult, error) {
	results := make([]store.KeepResult, len(keeps))
	if len(keeps) == 0 {
		return results, nil
	}
	ps, err := s.stmts(ctx, stmtRecordReceived, stmtWriteOutbox, stmtWriteDeliveries, stmtDeleteParked)
	if err != nil {
		return nil, wrap("keep", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("keep", err)
	}
	defer tx.Rollback()
	at, err := s.now(ctx, tx)
	if err != nil {
		return nil, wrap("keep", err)
	}
	k := keepStmts{
		record:     tx.StmtContext(ctx, ps[0]),
		outbox:     tx.StmtContext(ctx, ps[1]),
		deliveries: tx.StmtContext(ctx, ps[2]),
		unpark:     tx.StmtContext(ctx, ps[3]),
	}
	for i, m := range keeps {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT jadpo_keep"); err != nil {
			return nil, wrap("keep", err)
		}
		res, err := k.keep(ctx, at, m)
		if err != nil {
			if class, _ := classify(err); class != store.ClassRefused {
				return nil, wrap("keep", err)
			}
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO jadpo_keep"); err != nil {
				return nil, wrap("keep", err)
			}
			res = store.KeepResult{Outcome: store.Refused, Err: wrap("keep", err)}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE jadpo_keep"); err != nil {
			return nil, wrap("keep", err)
		}
		results[i] = res
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("keep", err)
	}
	return results, nil
}

type keepStmts struct {
	record, outbox, deliveries, unpark *sql.Stmt
}

// keep writes one message; an error leaves its savepoint to be rolled back.
func (k keepStmts) keep(ctx context.Context, at int64, m store.Keep) (store.KeepResult, error) {
	res, err := k.record.ExecContext(ctx, m.Source, m.ReceivedID, at)
	if err != nil {
		return store.KeepResult{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return store.KeepResult{}, err
	}
	out := store.KeepResult{Outcome: store.Repeat}
	if n == 1 {
		var id int64
		var headers sql.NullString
		headers.String, headers.Valid = sqlcommon.HeadersJSON(m.Headers)
		subs := sqlcommon.Subscribers(m.Subscribers)
		var settled sql.NullInt64 // a row with no subscriber is settled when written
		settled.Int64, settled.Valid = at, len(subs) == 0
		if err := k.outbox.QueryRowContext(ctx, m.Source, m.EventName, string(m.EventJSON), m.ReceivedID, at, headers, settled).Scan(&id); err != nil {
			return store.KeepResult{}, err
		}
		if _, err := k.deliveries.ExecContext(ctx, id, at, jsonList(subs)); err != nil {
			return store.KeepResult{}, err
		}
		out = store.KeepResult{Outcome: store.Kept, OutboxID: id}
	}
	if m.RetriedParkedID != 0 {
		if _, err := k.unpark.ExecContext(ctx, m.RetriedParkedID); err != nil {
			return store.KeepResult{}, err
		}
	}
	return out, nil
}

// Park writes the parked row once per (source, body), or sets a re-read parked row back
// to failed.
func (s *Store) Park(ctx context.Context, p store.Parked) (store.ParkResult, store.ID, error) {
	if err := sqlcommon.CheckParked(p); err != nil {
		return 0, store.ID{}, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, store.ID{}, wrap("park", err)
	}
	defer tx.Rollback()
	at, err := s.now(ctx, tx)
	if err != nil {
		return 0, store.ID{}, wrap("park", err)
	}
	r, id, err := s.park(ctx, tx, at, p)
	if err != nil {
		return 0, store.ID{}, err
	}
	if err := tx.Commit(); err != nil {
		return 0, store.ID{}, wrap("park", err)
	}
	return r, id, nil
}

func (s *Store) park(ctx context.Context, tx *sql.Tx, at int64, p store.Parked) (store.ParkResult, store.ID, error) {
	problems := string(sqlcommon.ProblemsJSON(p.Problems))
	wire, event, recv := nullText(p.WireType), nullText(p.EventName), nullText(p.ReceivedID)
	if p.RetriedParkedID != 0 {
		st, err := s.stmt(ctx, stmtParkAgain)
		if err != nil {
			return 0, store.ID{}, wrap("park", err)
		}
		res, err := tx.StmtContext(ctx, st).ExecContext(ctx, p.RetriedParkedID, wire, event, string(p.Reason), problems, at, recv)
		if err != nil {
			return 0, store.ID{}, wrap("park", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return store.ParkGone, store.ID{}, wrap("park", err)
		}
		return store.ParkFailedAgain, store.ParkedID(p.RetriedParkedID), nil
	}
	body := p.Body
	if body == nil {
		body = []byte{}
	}
	st, err := s.stmt(ctx, stmtPark)
	if err != nil {
		return 0, store.ID{}, wrap("park", err)
	}
	source, sum := sqlcommon.StorableText(p.Source), sqlcommon.BodySHA256(p.Body)
	var id int64
	err = tx.StmtContext(ctx, st).QueryRowContext(ctx, source, wire, event, string(p.Reason), problems, body, sum, at, recv).Scan(&id)
	switch {
	case err == nil:
		return store.ParkAdded, store.ParkedID(id), nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, store.ID{}, wrap("park", err)
	}
	// Parked already: name that row (gone only if housekeeping deleted it since).
	as, err := s.stmt(ctx, stmtParkedAs)
	if err != nil {
		return 0, store.ID{}, wrap("park", err)
	}
	switch err := tx.StmtContext(ctx, as).QueryRowContext(ctx, source, sum).Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
		return store.ParkAlready, store.ID{}, nil
	case err != nil:
		return 0, store.ID{}, wrap("park", err)
	}
	return store.ParkAlready, store.ParkedID(id), nil
}

func nullText(s string) sql.NullString {
	if s == "" {
		return sql.NullString{}
	}
	return sql.NullString{String: sqlcommon.StorableText(s), Valid: true}
}

// RetriedParked lists the parked messages operators retried, oldest retry first.
func (s *Store) RetriedParked(ctx context.Context, limit int) ([]store.ParkedMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	st, err := s.stmt(ctx, stmtRetriedParked)
	if err != nil {
		return nil, wrap("retried parked messages", err)
	}
	rows, err := st.QueryContext(ctx, limit)
	if err != nil {
		return nil, wrap("retried parked messages", err)
	}
	defer rows.Close()
	var out []store.ParkedMessage
	for rows.Next() {
		var m store.ParkedMessage
		var wire, event, recv sql.NullString
		var reason, problems string
		var created, updated int64
		if err := rows.Scan(&m.ID, &m.Source, &wire, &event, &reason, &problems, &m.Body, &created, &updated, &recv); err != nil {
			return nil, wrap("retried parked messages", err)
		}
		if m.Problems, err = sqlcommon.ParseProblems([]byte(problems)); err != nil {
			return nil, wrap("retried parked messages", err)
		}
		m.WireType, m.EventName, m.Reason, m.ReceivedID = wire.String, event.String, store.Reason(reason), recv.String
		m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("retried parked messages", err)
	}
	return out, nil
}

// ClaimDeliveries claims due deliveries, and running ones whose lease expired, in one
// BEGIN IMMEDIATE transaction.
func (s *Store) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]store.Claimed, error) {
	if err := sqlcommon.CheckLease(lease); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	_, out, err := s.SettleAndClaim(ctx, nil, limit, lease)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claim claims up to limit deliveries in tx.
func (s *Store) claim(ctx context.Context, tx *sql.Tx, at int64, limit int, lease time.Duration) ([]store.Claimed, error) {
	ps, err := s.stmts(ctx, stmtClaim, stmtClaimedEvents)
	if err != nil {
		return nil, err
	}
	rows, err := tx.StmtContext(ctx, ps[0]).QueryContext(ctx, at, at+lease.Microseconds(), limit)
	if err != nil {
		return nil, err
	}
	var out []store.Claimed
	var outboxIDs []int64
	for rows.Next() {
		var c store.Claimed
		var maxAttempts sql.NullInt64
		var leaseEnd int64
		if err := rows.Scan(&c.ID, &c.Token, &c.Attempt, &maxAttempts, &leaseEnd, &c.Subscriber, &c.OutboxID); err != nil {
			rows.Close()
			return nil, err
		}
		c.MaxAttempts, c.LeaseExpiresAt = int(maxAttempts.Int64), fromMicros(leaseEnd)
		out = append(out, c)
		outboxIDs = append(outboxIDs, c.OutboxID)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	type event struct{ source, receivedID, name, json string }
	byID := map[int64]event{}
	rows, err = tx.StmtContext(ctx, ps[1]).QueryContext(ctx, jsonList(outboxIDs))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var e event
		if err := rows.Scan(&id, &e.source, &e.receivedID, &e.name, &e.json); err != nil {
			rows.Close()
			return nil, err
		}
		byID[id] = e
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for i := range out {
		e := byID[out[i].OutboxID]
		out[i].Source, out[i].ReceivedID, out[i].EventName, out[i].EventJSON = e.source, e.receivedID, e.name, []byte(e.json)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SettleDelivery settles a delivery if it is still running under the settlement's token.
func (s *Store) SettleDelivery(ctx context.Context, st store.Settlement) (bool, error) {
	if err := sqlcommon.CheckSettlement(st); err != nil {
		return false, err
	}
	ok, _, err := s.settleAndClaim(ctx, "settle delivery", []store.Settlement{st}, 0, 0)
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// settleArgs are stmtSettle's arguments for a settlement written at the store's time at.
func settleArgs(st store.Settlement, at int64) []any {
	var next sql.NullInt64
	if us, ok := sqlcommon.RetryAfterMicros(st); ok {
		next = sql.NullInt64{Int64: at + us, Valid: true}
	}
	return []any{st.ID, st.Token, string(st.Outcome.State()), next, nullText(st.ErrorCode), at, nullText(sqlcommon.ErrorText(st))}
}

// SettleDeliveries settles many deliveries in one transaction (one fsync), each under its
// own token.
func (s *Store) SettleDeliveries(ctx context.Context, sts []store.Settlement) ([]bool, error) {
	ok, _, err := s.SettleAndClaim(ctx, sts, 0, 0)
	return ok, err
}

// SettleAndClaim settles, then claims, in one transaction.
func (s *Store) SettleAndClaim(ctx context.Context, sts []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	if err := sqlcommon.CheckSettleAndClaim(sts, limit, lease); err != nil {
		return nil, nil, err
	}
	if len(sts) == 0 && limit <= 0 {
		return make([]bool, len(sts)), nil, nil
	}
	what := "settle deliveries"
	if len(sts) == 0 {
		what = "claim deliveries"
	}
	return s.settleAndClaim(ctx, what, sts, limit, lease)
}

func (s *Store) settleAndClaim(ctx context.Context, what string, sts []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	ok := make([]bool, len(sts))
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, wrap(what, err)
	}
	defer tx.Rollback()
	now, err := s.now(ctx, tx)
	if err != nil {
		return nil, nil, wrap(what, err)
	}
	if len(sts) > 0 {
		p, err := s.stmt(ctx, stmtSettle)
		if err != nil {
			return nil, nil, wrap(what, err)
		}
		pa, err := s.stmt(ctx, stmtWriteAttempt)
		if err != nil {
			return nil, nil, wrap(what, err)
		}
		settle, attempt := tx.StmtContext(ctx, p), tx.StmtContext(ctx, pa)
		for i, st := range sts {
			res, err := settle.ExecContext(ctx, settleArgs(st, now)...)
			if err != nil {
				return nil, nil, wrap(what, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return nil, nil, wrap(what, err)
			}
			ok[i] = n == 1
			if ok[i] && st.Outcome != store.SettleReleased && st.Outcome != store.SettleStarted {
				if _, err := attempt.ExecContext(ctx, st.ID); err != nil {
					return nil, nil, wrap(what, err)
				}
			}
		}
	}
	var claimed []store.Claimed
	if limit > 0 {
		if claimed, err = s.claim(ctx, tx, now, limit, lease); err != nil {
			return nil, nil, wrap(what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, wrap(what, err)
	}
	return ok, claimed, nil
}

// List lists deliveries and parked messages in the filter's state, oldest first.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Entry, error) {
	dStates, pStates, err := sqlcommon.ListStates(f)
	if err != nil {
		return nil, err
	}
	limit := -1
	if f.Limit > 0 {
		limit = f.Limit
	}
	deliveries, err := s.queryEntries(ctx, stmtListDeliveries, scanDelivery, jsonList(dStates), limit)
	if err != nil {
		return nil, wrap("list", err)
	}
	parked, err := s.queryEntries(ctx, stmtListParked, scanParked, jsonList(pStates), limit)
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
		entries, err = s.queryEntries(ctx, stmtShowDelivery, scanDelivery, id.N, withBody)
	case store.KindParked:
		entries, err = s.queryEntries(ctx, stmtShowParked, scanParked, id.N, withBody)
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
	p, err := s.stmt(ctx, stmtShowAttempts)
	if err != nil {
		return nil, err
	}
	rows, err := p.QueryContext(ctx, id, store.MaxShownAttempts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Attempt{}
	for rows.Next() {
		var n int
		var at int64
		var outcome string
		var code, text sql.NullString
		if err := rows.Scan(&n, &at, &outcome, &code, &text); err != nil {
			return nil, err
		}
		out = append(out, store.Attempt{N: n, At: fromMicros(at), Outcome: store.DeliveryState(outcome), Code: code.String, Error: text.String})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

func (s *Store) queryEntries(ctx context.Context, st statement, scan func(*sql.Rows) (store.Entry, error), args ...any) ([]store.Entry, error) {
	p, err := s.stmt(ctx, st)
	if err != nil {
		return nil, err
	}
	rows, err := p.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Entry
	for rows.Next() {
		e, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanDelivery(rows *sql.Rows) (store.Entry, error) {
	var (
		id, next, created, updated             int64
		state, subscriber, source, event, recv string
		attempts                               int
		maxAttempts, settled, dismissed        sql.NullInt64
		code, body, headers, lastErr           sql.NullString
	)
	if err := rows.Scan(&id, &state, &subscriber, &attempts, &maxAttempts, &next, &code, &created, &updated,
		&settled, &dismissed, &source, &event, &recv, &lastErr, &body, &headers); err != nil {
		return store.Entry{}, err
	}
	hs, err := sqlcommon.ParseHeaders(headers.String, headers.Valid)
	if err != nil {
		return store.Entry{}, err
	}
	e := store.Entry{
		ID: store.DeliveryID(id), State: sqlcommon.ListStateOfDelivery(state), RowState: state,
		Source: source, Subscriber: subscriber, EventName: event, ReceivedID: recv, Code: code.String, Error: lastErr.String,
		Attempts: attempts, MaxAttempts: int(maxAttempts.Int64),
		CreatedAt: fromMicros(created), UpdatedAt: fromMicros(updated),
		SettledAt: fromNullMicros(settled), DismissedAt: fromNullMicros(dismissed),
		Headers: hs,
	}
	switch state {
	case "pending", "retry_wait":
		e.NextAttemptAt = fromMicros(next)
	case "running":
		e.LeaseUntil = fromMicros(next) // a claim sets next_attempt_at to its lease's end
	}
	if body.Valid {
		e.Body = []byte(body.String)
	}
	return e, nil
}

func scanParked(rows *sql.Rows) (store.Entry, error) {
	var (
		id, created, updated            int64
		state, source, reason, problems string
		sha                             string
		wire, event, recv               sql.NullString
		dismissed                       sql.NullInt64
		body                            []byte
	)
	if err := rows.Scan(&id, &state, &source, &wire, &event, &reason, &problems, &sha, &created, &updated,
		&dismissed, &recv, &body); err != nil {
		return store.Entry{}, err
	}
	ps, err := sqlcommon.ParseProblems([]byte(problems))
	if err != nil {
		return store.Entry{}, err
	}
	return store.Entry{
		ID: store.ParkedID(id), State: store.ListState(state), RowState: state, Source: source,
		WireType: wire.String, EventName: event.String, ReceivedID: recv.String, Code: reason, Problems: ps, BodySHA256: sha,
		CreatedAt: fromMicros(created), UpdatedAt: fromMicros(updated), DismissedAt: fromNullMicros(dismissed),
		Body: body,
	}, nil
}

// Retry makes failed deliveries and parked messages pending, all or none.
func (s *Store) Retry(ctx context.Context, ids []store.ID) error {
	return s.transition(ctx, "retry", ids, stmtRetryDeliveries, stmtRetryParked)
}

// Dismiss sets failed deliveries and parked messages aside, all or none.
func (s *Store) Dismiss(ctx context.Context, ids []store.ID) error {
	return s.transition(ctx, "dismiss", ids, stmtDismissDeliveries, stmtDismissParked)
}

// transition moves ids from failed with the two statements, in one BEGIN IMMEDIATE
// transaction that first reads their states: any id unknown or not failed refuses the call.
func (s *Store) transition(ctx context.Context, op string, ids []store.ID, onDeliveries, onParked statement) error {
	if len(ids) == 0 {
		return nil
	}
	deliveries, parked, _ := sqlcommon.SplitIDs(ids)
	ps, err := s.stmts(ctx, stmtStatesDeliveries, stmtStatesParked, onDeliveries, onParked)
	if err != nil {
		return wrap(op, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap(op, err)
	}
	defer tx.Rollback()
	states := map[store.ID]string{}
	for _, q := range []struct {
		st   *sql.Stmt
		ids  []int64
		kind store.Kind
	}{{ps[0], deliveries, store.KindDelivery}, {ps[1], parked, store.KindParked}} {
		if len(q.ids) == 0 {
			continue
		}
		rows, err := tx.StmtContext(ctx, q.st).QueryContext(ctx, jsonList(q.ids))
		if err != nil {
			return wrap(op, err)
		}
		for rows.Next() {
			var id int64
			var state string
			if err := rows.Scan(&id, &state); err != nil {
				rows.Close()
				return wrap(op, err)
			}
			states[store.ID{Kind: q.kind, N: id}] = state
		}
		if err := rows.Close(); err != nil {
			return wrap(op, err)
		}
	}
	if refused := sqlcommon.Refusals(ids, states, "failed"); len(refused) > 0 {
		return &store.StateError{Op: op, Refused: refused}
	}
	at, err := s.now(ctx, tx)
	if err != nil {
		return wrap(op, err)
	}
	for _, q := range []struct {
		st  *sql.Stmt
		ids []int64
	}{{ps[2], deliveries}, {ps[3], parked}} {
		if len(q.ids) == 0 {
			continue
		}
		if _, err := tx.StmtContext(ctx, q.st).ExecContext(ctx, jsonList(q.ids), at); err != nil {
			return wrap(op, err)
		}
	}
	return wrap(op, tx.Commit())
}

// Housekeep deletes what the retention no longer keeps, in bounded batches
// (store.Store.Housekeep). Each batch is its own short write transaction.
func (s *Store) Housekeep(ctx context.Context, o store.Housekeeping) (store.Housekept, error) {
	o = o.WithDefaults()
	var h store.Housekept
	// Each batch's cut-off is the store's time less the retention, read in the batch's
	// transaction.
	plain := func(st statement, keep time.Duration, n *int64) store.HousekeepStep {
		return store.HousekeepStep{Table: st.Tables[0], N: n, Run: func(ctx context.Context, batch int) (int64, error) {
			p, err := s.stmt(ctx, st)
			if err != nil {
				return 0, err
			}
			tx, err := s.w.BeginTx(ctx, nil)
			if err != nil {
				return 0, err
			}
			defer tx.Rollback()
			at, err := s.now(ctx, tx)
			if err != nil {
				return 0, err
			}
			res, err := tx.StmtContext(ctx, p).ExecContext(ctx, at-keep.Microseconds(), batch)
			if err != nil {
				return 0, err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return 0, err
			}
			return n, tx.Commit()
		}}
	}
	deliveries := func(pick statement, keep time.Duration) store.HousekeepStep {
		return store.HousekeepStep{Table: tDeliveries, N: &h.Deliveries, Run: func(ctx context.Context, batch int) (int64, error) {
			return s.forgetDeliveries(ctx, pick, keep, batch)
		}}
	}
	err := store.RunHousekeeping(ctx, o, &h, []store.HousekeepStep{
		plain(stmtForgetReceived, store.HousekeepAfter, &h.ReceivedIDs),
		plain(stmtForgetParked, store.HousekeepAfter, &h.ParkedMessages),
		deliveries(stmtPickSucceeded, o.Succeeded),
		deliveries(stmtPickDismissed, store.HousekeepAfter),
		plain(stmtForgetOutbox, o.Outbox, &h.Outbox),
	})
	// What went is recorded, even before an error.
	if h.Total() > 0 {
		if rerr := s.recordRun(ctx, h); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return h, wrap("housekeep", err)
	}
	return h, nil
}

// recordRun writes what one Housekeep call deleted and deletes the oldest runs beyond
// store.HousekeepingRunsKept, in one transaction.
func (s *Store) recordRun(ctx context.Context, h store.Housekept) error {
	ps, err := s.stmts(ctx, stmtRecordRun, stmtForgetRuns)
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	at, err := s.now(ctx, tx)
	if err != nil {
		return err
	}
	more := 0
	if h.Busy {
		more = 1
	}
	if _, err := tx.StmtContext(ctx, ps[0]).ExecContext(ctx, at, h.ReceivedIDs, h.ParkedMessages, h.Deliveries, h.Outbox, more); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, ps[1]).ExecContext(ctx, store.HousekeepingRunsKept); err != nil {
		return err
	}
	return tx.Commit()
}

// HousekeepingRuns returns the newest recorded housekeeping runs, newest first.
func (s *Store) HousekeepingRuns(ctx context.Context, limit int) ([]store.HousekeepingRun, error) {
	var out []store.HousekeepingRun
	err := s.eachRow(ctx, stmtHousekeepingRuns, func(rows *sql.Rows) error {
		var r store.HousekeepingRun
		var at int64
		var more int
		if err := rows.Scan(&at, &r.ReceivedIDs, &r.ParkedMessages, &r.Deliveries, &r.Outbox, &more); err != nil {
			return err
		}
		r.At, r.More = fromMicros(at), more == 1
		out = append(out, r)
		return nil
	}, limit)
	if err != nil {
		return nil, wrap("housekeeping runs", err)
	}
	return out, nil
}

// forgetDeliveries deletes one batch of settled deliveries and their attempts, raising
// their outbox rows' settled_at first, in one transaction.
func (s *Store) forgetDeliveries(ctx context.Context, pick statement, keep time.Duration, batch int) (int64, error) {
	ps, err := s.stmts(ctx, pick, stmtSettleOutbox, stmtForgetDeliveries, stmtForgetAttempts)
	if err != nil {
		return 0, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	at, err := s.now(ctx, tx)
	if err != nil {
		return 0, err
	}
	rows, err := tx.StmtContext(ctx, ps[0]).QueryContext(ctx, at-keep.Microseconds(), batch)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	list := jsonList(ids)
	if _, err := tx.StmtContext(ctx, ps[1]).ExecContext(ctx, list); err != nil {
		return 0, err
	}
	if _, err := tx.StmtContext(ctx, ps[3]).ExecContext(ctx, list); err != nil {
		return 0, err
	}
	res, err := tx.StmtContext(ctx, ps[2]).ExecContext(ctx, list)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// Stats counts the rows of each table.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{Deliveries: map[store.DeliveryState]int64{}, Parked: map[store.ParkedKey]int64{},
		BySubscriber: map[store.SubscriberKey]int64{}}
	var attempts, runs int64
	for _, q := range []struct {
		st statement
		n  *int64
	}{{stmtCountReceived, &st.ReceivedIDs}, {stmtCountOutbox, &st.Outbox}, {stmtCountAttempts, &attempts}, {stmtCountRuns, &runs}} {
		p, err := s.stmt(ctx, q.st)
		if err != nil {
			return st, wrap("stats", err)
		}
		if err := p.QueryRowContext(ctx).Scan(q.n); err != nil {
			return st, wrap("stats", err)
		}
	}
	if err := s.eachRow(ctx, stmtCountDeliveries, func(rows *sql.Rows) error {
		var sub, state string
		var n int64
		if err := rows.Scan(&sub, &state, &n); err != nil {
			return err
		}
		st.Deliveries[store.DeliveryState(state)] += n
		st.BySubscriber[store.SubscriberKey{Subscriber: sub, State: store.DeliveryState(state)}] = n
		return nil
	}); err != nil {
		return st, wrap("stats", err)
	}
	if err := s.eachRow(ctx, stmtCountParked, func(rows *sql.Rows) error {
		var reason, state string
		var n int64
		if err := rows.Scan(&reason, &state, &n); err != nil {
			return err
		}
		st.Parked[store.ParkedKey{Reason: store.Reason(reason), State: store.ParkedState(state)}] = n
		return nil
	}); err != nil {
		return st, wrap("stats", err)
	}
	p, err := s.stmt(ctx, stmtOldestPending)
	if err != nil {
		return st, wrap("stats", err)
	}
	var oldest sql.NullInt64
	if err := p.QueryRowContext(ctx).Scan(&oldest); err != nil {
		return st, wrap("stats", err)
	}
	if oldest.Valid {
		st.OldestPending = time.UnixMicro(oldest.Int64).UTC()
	}
	st.Tables = []store.TableStats{{Name: tReceived, Rows: st.ReceivedIDs, Bytes: -1}, {Name: tOutbox, Rows: st.Outbox, Bytes: -1},
		{Name: tDeliveries, Rows: st.DeliveriesTotal(), Bytes: -1}, {Name: tParked, Rows: st.ParkedTotal(), Bytes: -1},
		{Name: tAttempts, Rows: attempts, Bytes: -1}, {Name: tRuns, Rows: runs, Bytes: -1}}
	return st, nil
}

func (s *Store) eachRow(ctx context.Context, st statement, fn func(*sql.Rows) error, args ...any) error {
	p, err := s.stmt(ctx, st)
	if err != nil {
		return err
	}
	rows, err := p.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
