// Package store is the events' store of the runtime: the received ids, the outbox, the
// deliveries and the parked messages (docs/design/store.md).
//
// One interface, Store, has two adapters that pass the same conformance suite
// (runtime/store/storetest): PostgreSQL through pgx/v5 (runtime/store/postgres) and an
// embedded SQLite (runtime/store/sqlite). Open picks the adapter from the URL; an adapter
// registers itself when its package is linked in, so a program that opens stores imports
// the adapters it supports:
//
//	import (
//		_ "github.com/jadpo/jadpo/runtime/store/postgres"
//		_ "github.com/jadpo/jadpo/runtime/store/sqlite"
//	)
//
// The store keeps its own clock: every time it writes or compares (when a message was
// received, a lease's end, when a delivery is due, when it settled, the housekeeping's
// cut-offs) is the store's, never the calling process's. On PostgreSQL that is the
// database server's clock (now() in the statements); on SQLite, the machine's, held so
// that it never goes backwards (docs/design/store.md, "One clock: the store's"). Only a
// test sets the time (Store.SetClock). Times are kept to the microsecond, in UTC.
package store

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Store is the events' store. A Store is safe for concurrent use, and any number of
// processes may share one database.
//
// Call Migrate before anything else: it brings the schema up to date and checks every
// statement the store runs against it.
type Store interface {
	// Migrate applies the migrations this build knows and the database lacks, safely when
	// several processes start at once, then checks every statement against the schema: a
	// mismatch is a *SchemaError naming the table and the statement.
	Migrate(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
	// SetClock pins the store's time to what now returns, for tests: the conformance
	// suite and the runtime's tests move the store's clock with it. Nothing but a test
	// calls it; nil gives the store its own clock back.
	SetClock(now func() time.Time)

	// KeepBatch keeps received messages in one read-committed transaction, one savepoint
	// each, and reports per message whether it was kept, a repeat or refused. A transient
	// failure fails the whole call (IsTransient) and commits nothing.
	KeepBatch(ctx context.Context, keeps []Keep) ([]KeepResult, error)
	// Park keeps a message whole, once per (source, sha256 of the body). The id is the
	// parked row's: the one added, the one parked already with the same body, or the
	// retried one failed again (zero for ParkGone).
	Park(ctx context.Context, p Parked) (ParkResult, ID, error)
	// RetriedParked returns up to limit parked messages an operator retried (state
	// pending), oldest first. It claims nothing: see docs/design/store.md.
	RetriedParked(ctx context.Context, limit int) ([]ParkedMessage, error)

	// ClaimDeliveries claims up to limit due deliveries for lease: each is running, its
	// attempt counted and a new fencing token given. The lease runs on the store's clock
	// from the claim.
	ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]Claimed, error)
	// SettleDelivery settles a claimed delivery if it is still running under s.Token; it
	// reports false, changing nothing, when another claim took the delivery over.
	SettleDelivery(ctx context.Context, s Settlement) (bool, error)
	// SettleDeliveries settles many claimed deliveries in one transaction (one commit),
	// each under its own token: ok[i] is false, and that row unchanged, when another claim
	// took settlements[i]'s delivery over; a stale token changes no other row. An invalid
	// settlement, or any failure, fails the whole call and commits nothing.
	SettleDeliveries(ctx context.Context, settlements []Settlement) (ok []bool, err error)
	// SettleAndClaim settles as SettleDeliveries does, then claims up to limit due
	// deliveries for lease as ClaimDeliveries does, in the same transaction: one commit
	// serves a worker pool's finished deliveries and its next ones. limit 0 claims nothing.
	SettleAndClaim(ctx context.Context, settlements []Settlement, limit int, lease time.Duration) (ok []bool, claimed []Claimed, err error)

	// List lists failed deliveries and parked messages (and, by filter, pending and
	// dismissed ones), oldest first.
	List(ctx context.Context, f Filter) ([]Entry, error)
	// Show returns one entry whole; the body only when withBody. An unknown id is an error
	// wrapping ErrUnknownID.
	Show(ctx context.Context, id ID, withBody bool) (Entry, error)
	// Retry makes failed deliveries and parked messages pending again (a delivery with a
	// fresh attempt budget). Any id unknown or not failed refuses the whole call with a
	// *StateError, and nothing changes.
	Retry(ctx context.Context, ids []ID) error
	// Dismiss sets failed deliveries and parked messages aside (dismissed), under the same
	// rule as Retry.
	Dismiss(ctx context.Context, ids []ID) error

	// Housekeep deletes, in batches of at most o.Batch rows a statement, what the
	// retention no longer keeps, by the store's clock: received ids after 30 days (HousekeepAfter), succeeded
	// deliveries o.Succeeded after they succeeded, dismissed deliveries and parked
	// messages 30 days after their dismissal, and outbox rows o.Outbox after their last
	// delivery was settled (an outbox row stays while any delivery of it does). It stops
	// when every table is clean, after o.MaxBatches batches of a table, or at o.Deadline,
	// and reports how many rows went. Processes housekeeping at once skip each other's
	// rows: none waits for another, and no row is counted twice.
	Housekeep(ctx context.Context, o Housekeeping) (Housekept, error)
	// Stats counts the rows of the store, for tests and metrics.
	Stats(ctx context.Context) (Stats, error)
}

// HousekeepAfter is how long received ids are remembered and dismissed deliveries and
// parked messages are kept before Housekeep deletes them.
const HousekeepAfter = 30 * 24 * time.Hour

// The retention defaults (docs/design/store.md, "Housekeeping"). A succeeded delivery is kept a
// day, as River keeps completed jobs: long enough to answer "did it go out yesterday?",
// short enough that the store holds about one day of traffic. An outbox row is kept a day
// after its last delivery settled, so by default an event goes with its last delivery;
// its received id stays 30 days for the repeat check.
const (
	DefaultKeepSucceeded = 24 * time.Hour
	DefaultKeepOutbox    = 24 * time.Hour
	// DefaultHousekeepBatch bounds the rows one housekeeping statement deletes, and so
	// the locks it holds and the WAL it writes in one transaction.
	DefaultHousekeepBatch = 1000
	// DefaultHousekeepBatches bounds the batches of one table in one Housekeep call.
	DefaultHousekeepBatches = 10
)

// Housekeeping says what Housekeep keeps and how much it does in one call. Zero fields
// take the defaults.
type Housekeeping struct {
	// Succeeded is how long a succeeded delivery is kept after it succeeded.
	Succeeded time.Duration
	// Outbox is how long an outbox row is kept once every delivery of it is settled
	// (succeeded and deleted, or dismissed and deleted); a row written with no
	// subscriber is settled when written.
	Outbox time.Duration
	// Batch is the most rows one statement deletes; MaxBatches the most statements per
	// table in one call.
	Batch, MaxBatches int
	// Deadline, when set, stops Housekeep starting another statement after it (wall
	// clock): housekeeping takes what is left of the tick's budget, never more.
	Deadline time.Time
	// OnBatch, when set, is told each statement's table and rows deleted (tests count
	// them; metrics could).
	OnBatch func(table string, n int64)
}

// WithDefaults returns o with every zero field set to its default.
func (o Housekeeping) WithDefaults() Housekeeping {
	if o.Succeeded <= 0 {
		o.Succeeded = DefaultKeepSucceeded
	}
	if o.Outbox <= 0 {
		o.Outbox = DefaultKeepOutbox
	}
	if o.Batch <= 0 {
		o.Batch = DefaultHousekeepBatch
	}
	if o.MaxBatches <= 0 {
		o.MaxBatches = DefaultHousekeepBatches
	}
	return o
}

// HousekeepStep is one table's batch: run deletes at most batch rows and says how many
// went.
type HousekeepStep struct {
	Table string
	N     *int64
	Run   func(ctx context.Context, batch int) (int64, error)
}

// RunHousekeeping runs the steps in turn, each until a short batch, MaxBatches batches
// or the deadline, for both adapters. Busy reports a table that may have more to delete.
func RunHousekeeping(ctx context.Context, o Housekeeping, h *Housekept, steps []HousekeepStep) error {
	for _, st := range steps {
		for i := 0; ; i++ {
			// One batch per table even past the deadline, so that a tick spent on
			// receiving still makes headway.
			if i == o.MaxBatches || (i > 0 && !o.Deadline.IsZero() && !time.Now().Before(o.Deadline)) {
				h.Busy = true
				break
			}
			n, err := st.Run(ctx, o.Batch)
			if err != nil {
				return err
			}
			*st.N += n
			h.Statements++
			if o.OnBatch != nil {
				o.OnBatch(st.Table, n)
			}
			if n < int64(o.Batch) {
				break
			}
		}
	}
	return nil
}

// Opener opens a store from a URL of its scheme. The store is connected but not migrated.
type Opener func(ctx context.Context, url string) (Store, error)

var (
	adaptersMu sync.RWMutex
	adapters   = map[string]Opener{}
	existing   = map[string]Opener{} // OpenExisting's, by scheme
	// adapterPackages names the package to import for each known scheme, for the error
	// when it is not linked in.
	adapterPackages = map[string]string{
		"postgres":   "github.com/jadpo/jadpo/runtime/store/postgres",
		"postgresql": "github.com/jadpo/jadpo/runtime/store/postgres",
		"sqlite":     "github.com/jadpo/jadpo/runtime/store/sqlite",
	}
)

// Register makes Open use open for URLs of scheme ("postgres", "sqlite"). The adapters call
// it from their init functions.
func Register(scheme string, open Opener) {
	adaptersMu.Lock()
	defer adaptersMu.Unlock()
	adapters[scheme] = open
}

// RegisterExisting makes OpenExisting use open for URLs of scheme: open connects to a store
// that is there already, creating and migrating nothing.
func RegisterExisting(scheme string, open Opener) {
	adaptersMu.Lock()
	defer adaptersMu.Unlock()
	existing[scheme] = open
}

// OpenExisting opens the store at rawURL for a command that only reads it, or changes rows
// but must not make a store (jadpo deliveries): it creates no file, table or row. A
// missing SQLite file, or a database without jadpo's tables, is an error wrapping
// ErrNoStore; a store whose schema this build would still migrate is an error saying so.
// The store returned needs no Migrate.
func OpenExisting(ctx context.Context, rawURL string) (Store, error) {
	return openWith(ctx, rawURL, existing)
}

// Open opens the store at rawURL: postgres://... or postgresql://... for PostgreSQL,
// sqlite:PATH for SQLite. The store is connected (an unreachable database is a transient
// *Error) but not migrated. No error of Open holds the URL's password.
func Open(ctx context.Context, rawURL string) (Store, error) {
	return openWith(ctx, rawURL, adapters)
}

func openWith(ctx context.Context, rawURL string, openers map[string]Opener) (Store, error) {
	scheme, _, ok := strings.Cut(rawURL, ":")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("store: %q is not a database URL (postgres://..., sqlite:PATH)", RedactURL(rawURL))
	}
	scheme = strings.ToLower(scheme)
	adaptersMu.RLock()
	open := openers[scheme]
	adaptersMu.RUnlock()
	if open == nil {
		if pkg, known := adapterPackages[scheme]; known {
			return nil, fmt.Errorf("store: no adapter for %s: URLs is linked into this program (import _ %q)", scheme, pkg)
		}
		return nil, fmt.Errorf("store: unsupported database URL scheme %q (postgres://..., sqlite:PATH)", scheme)
	}
	s, err := open(ctx, rawURL)
	if err != nil {
		return nil, redactError(err, rawURL)
	}
	return s, nil
}

// RedactURL returns rawURL with its password, if any, replaced by "xxxxx", both in the
// user info and in a password query parameter. Text that does not parse as a URL is
// returned as "(unparsable database URL)" when it might hold a secret.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || u.Scheme == "":
		// No URL, or a keyword/value DSN ("host=db password=..."): nothing
		// here can say which part is the password.
		if strings.ContainsAny(rawURL, "@=") {
			return "(unparsable database URL)"
		}
		return rawURL
	case strings.ContainsAny(u.Opaque, "@="):
		// "postgres:user:pw@db": user info without the //.
		return "(unparsable database URL)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for k := range q {
			if isSecretParam(k) {
				q[k] = []string{"xxxxx"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

func isSecretParam(k string) bool {
	k = strings.ToLower(k)
	return k == "password" || k == "sslpassword" || strings.Contains(k, "secret")
}

// urlSecrets returns the secrets rawURL holds, longest first.
func urlSecrets(rawURL string) []string {
	var out []string
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	if u.User != nil {
		if p, has := u.User.Password(); has && p != "" {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	for k, vs := range u.Query() {
		if isSecretParam(k) {
			for _, v := range vs {
				if v != "" {
					out = append(out, v, url.QueryEscape(v))
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redactError hides rawURL's secrets from err's text, keeping err reachable for errors.As
// and errors.Is (and so for IsTransient).
func redactError(err error, rawURL string) error {
	secrets := urlSecrets(rawURL)
	if len(secrets) == 0 {
		return err
	}
	return &redactedError{err: err, secrets: secrets}
}

type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
