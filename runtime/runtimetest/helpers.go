package runtimetest

// Helpers for the seed, config and CLI tests: a world restarted with its
// SQS fake built otherwise, raw reads of the store's tables, the environment of a child
// process, and a store that fails as a test asks.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

// FakeOptions restart an Env's world with its SQS fake built otherwise.
type FakeOptions struct {
	// ManualClock drives the fake's visibility timeouts with a clock of
	// its own, set at the time UseFake is called, that the test moves
	// (UseFake returns it); otherwise the fake reads the system clock.
	ManualClock bool
	// Attributes are given to CreateQueue, by app queue name
	// ("warehouse_queue"); a value may name another queue's ARN as
	// {arn:NAME} (for a RedrivePolicy).
	Attributes map[string]map[string]string
	// Extra are further queues created first (dead-letter queues).
	Extra []string
	// Record keeps each request's operation and JSON input (Requests).
	Record bool
}

// Request is one call the fake received, when FakeOptions.Record is set.
type Request struct {
	Operation string
	Input     map[string]any
}

type requestLog struct {
	mu   sync.Mutex
	reqs []Request
}

// UseFake restarts the Env's world with its SQS fake built with o: the
// app's queues made again, and the Env's config pointed at them (Environ
// is the new world's). Call it before Config or Runtime. It returns the
// fake's manual clock, nil without FakeOptions.ManualClock.
func (e *Env) UseFake(o FakeOptions) *testclock.Manual {
	e.T.Helper()
	opts := e.opts
	opts.SQS.Clock, opts.SQS.OnRequest = nil, nil
	var clock *testclock.Manual
	if o.ManualClock {
		clock = testclock.NewManual(time.Now())
		opts.SQS.Clock = clock
	}
	e.requests = nil
	if o.Record {
		log := &requestLog{}
		e.requests = log
		opts.SQS.OnRequest = func(op string, body []byte) {
			var in map[string]any
			_ = json.Unmarshal(body, &in)
			log.mu.Lock()
			log.reqs = append(log.reqs, Request{Operation: op, Input: in})
			log.mu.Unlock()
		}
	}
	opts.QueueAttributes, opts.DeadLetterQueues = o.Attributes, o.Extra
	e.start(opts)
	return clock
}

// Requests returns the calls the fake received since UseFake with Record.
func (e *Env) Requests() []Request {
	if e.requests == nil {
		e.T.Fatal("Requests needs UseFake(FakeOptions{Record: true})")
	}
	log := e.requests
	log.mu.Lock()
	defer log.mu.Unlock()
	return append([]Request(nil), log.reqs...)
}

// SetEnv sets (or adds) one of the app's config entries in Environ.
func (e *Env) SetEnv(key, value string) {
	for i, kv := range e.Environ {
		if strings.HasPrefix(kv, key+"=") {
			e.Environ[i] = key + "=" + value
			return
		}
	}
	e.Environ = append(e.Environ, key+"="+value)
}

// RuntimeFor builds a runtime of another plan (one PlanWith made) over st,
// with the Env's config.
func (e *Env) RuntimeFor(p *ir.Program, st store.Store, opts runtime.Options) *runtime.Runtime {
	e.T.Helper()
	cfg, err := runtime.LoadConfig(p, e.Environ, filepath.Join(e.T.TempDir(), ".env.local"))
	if err != nil {
		e.T.Fatal(err)
	}
	opts.Plan, opts.Store, opts.Config = p, st, cfg
	rt, err := runtime.New(opts)
	if err != nil {
		e.T.Fatal(err)
	}
	return rt
}

// Query runs a SELECT on the test's database directly and returns each row's
// columns as text (NULL as "<nil>"). It is for checking what a table holds;
// keep to SQL both PostgreSQL and SQLite read alike.
func (e *Env) Query(query string, args ...any) [][]string {
	e.T.Helper()
	ctx := context.Background()
	var out [][]string
	if strings.HasPrefix(e.StoreURL, "sqlite:") {
		path, err := sqlite.PathOf(e.StoreURL)
		if err != nil {
			e.T.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			e.T.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			e.T.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				e.T.Fatal(err)
			}
			out = append(out, texts(vals))
		}
		if err := rows.Err(); err != nil {
			e.T.Fatal(err)
		}
		return out
	}
	conn, err := pgx.Connect(ctx, e.StoreURL)
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		e.T.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			e.T.Fatal(err)
		}
		out = append(out, texts(vals))
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

func texts(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			out[i] = "<nil>"
		case []byte:
			out[i] = string(x)
		case string:
			out[i] = x
		default:
			out[i] = fmt.Sprint(x)
		}
	}
	return out
}

// DotEnv renders the Env's config as the lines of a .env.local file.
func (e *Env) DotEnv() string {
	var b strings.Builder
	for _, kv := range e.Environ {
		b.WriteString(kv)
		b.WriteByte('\n')
	}
	return b.String()
}

// errInjected is the failure a FlakyStore injects.
var errInjected = errors.New("connection lost (injected by the test)")

// FlakyStore is a store whose KeepBatch and Park fail, transiently, while
// the test says so.
type FlakyStore struct {
	store.Store
	mu                   sync.Mutex
	failKeeps, failParks int // calls left to fail; -1 fails every call
	keepCalls, parkCalls int
	// BeforeKeep, when set, runs at the start of each KeepBatch.
	BeforeKeep func(keeps []store.Keep)
	// AfterKeep, when set, runs after each KeepBatch returned.
	AfterKeep func(keeps []store.Keep, results []store.KeepResult, err error)
}

// NewFlakyStore wraps st.
func NewFlakyStore(st store.Store) *FlakyStore { return &FlakyStore{Store: st} }

// FailKeeps makes the next n KeepBatch calls fail transiently (-1: all).
func (f *FlakyStore) FailKeeps(n int) { f.mu.Lock(); f.failKeeps = n; f.mu.Unlock() }

// FailParks makes the next n Park calls fail transiently (-1: all).
func (f *FlakyStore) FailParks(n int) { f.mu.Lock(); f.failParks = n; f.mu.Unlock() }

// Calls returns how many KeepBatch and Park calls were made.
func (f *FlakyStore) Calls() (keeps, parks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keepCalls, f.parkCalls
}

func transient(op string) error {
	return &store.Error{Op: op, Class: store.ClassTransient, Err: errInjected}
}

func take(n *int) bool {
	switch {
	case *n < 0:
		return true
	case *n > 0:
		*n--
		return true
	}
	return false
}

// KeepBatch fails transiently when told to, else keeps.
func (f *FlakyStore) KeepBatch(ctx context.Context, keeps []store.Keep) ([]store.KeepResult, error) {
	f.mu.Lock()
	f.keepCalls++
	fail := take(&f.failKeeps)
	f.mu.Unlock()
	if f.BeforeKeep != nil {
		f.BeforeKeep(keeps)
	}
	var res []store.KeepResult
	var err error
	if fail {
		err = transient("keep")
	} else {
		res, err = f.Store.KeepBatch(ctx, keeps)
	}
	if f.AfterKeep != nil {
		f.AfterKeep(keeps, res, err)
	}
	return res, err
}

// Park fails transiently when told to, else parks.
func (f *FlakyStore) Park(ctx context.Context, p store.Parked) (store.ParkResult, store.ID, error) {
	f.mu.Lock()
	f.parkCalls++
	fail := take(&f.failParks)
	f.mu.Unlock()
	if fail {
		return 0, store.ID{}, transient("park")
	}
	return f.Store.Park(ctx, p)
}

// ChildEnviron is this process's environment without DATABASE_URL (a
// child's store is its --database) and without the keys config sets, with
// config (an Env's Environ) added: the environment of a `jadpo` child
// process run in a test's world.
func ChildEnviron(config []string) []string {
	drop := map[string]bool{"DATABASE_URL": true}
	for _, kv := range config {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, config...)
}
