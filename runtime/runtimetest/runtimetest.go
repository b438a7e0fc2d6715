// Package runtimetest runs an app's plan in a test's world: the world of
// local stand-ins `jadpo dev` runs (runtime/standin: an SQS fake with the
// app's queues, an email stand-in for each email connection, the config
// pointing at them), with what a test adds to it: credentials that are a
// Canary, a scripted target recording each call for the app's services, a
// fresh store (SQLite in a temporary folder, or a PostgreSQL schema of the
// test's own), and a store that fails when the test says so.
//
// It reads plans, never source: a test gets the plan from
// check/checktest (checktest.ExamplePlan(t, "warehouse")) and hands it to
// New. It is not internal because the CLI's tests (cmd/jadpo) run the same
// worlds as the runtime's, and Go's internal rule cannot give one package to
// both runtime/ and cmd/ without a top-level internal/ folder, which the
// repository does not have. What only the runtime's tests use lives in
// runtime/internal/... or beside those tests.
package runtimetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/standin"
	"github.com/jadpo/jadpo/runtime/store"
	_ "github.com/jadpo/jadpo/runtime/store/postgres" // postgres:// stores
	_ "github.com/jadpo/jadpo/runtime/store/sqlite"   // sqlite: stores
)

// Stores lists the adapters tests run on.
var Stores = []string{"sqlite", "postgres"}

// Env is one test's world.
type Env struct {
	T    testing.TB
	Plan *ir.Program
	// World is the world of stand-ins the app's config points at.
	World *standin.World
	// Fake is World's SQS fake; each of the app's SQS queues is a queue of
	// the fake by the app's queue name ("warehouse_queue").
	Fake     *sqsfake.Fake
	Target   *Target
	Environ  []string // the app's config as environment entries
	StoreURL string
	// QueueURLs are the fake's queue URLs by app queue name.
	QueueURLs map[string]string

	opts     standin.Options // what World was started with
	requests *requestLog     // with FakeOptions.Record
}

// Canary is a secret's value that must never be printed.
const Canary = "CANARY-s3cr3t-6f1d2e"

// New builds the warehouse example's world for plan (examples/warehouse's,
// or an edited copy's) on the given store ("sqlite" or "postgres").
func New(t testing.TB, storeKind string, plan *ir.Program) *Env {
	t.Helper()
	return NewWith(t, storeKind, plan, WorldOptions{})
}

// Store opens and migrates a store on the test's database.
func (e *Env) Store() store.Store {
	e.T.Helper()
	st, err := store.Open(context.Background(), e.StoreURL)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := st.Migrate(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { st.Close() })
	return st
}

// Config loads the app's config from the test's environment.
func (e *Env) Config() *runtime.Config {
	e.T.Helper()
	cfg, err := runtime.LoadConfig(e.Plan, e.Environ, filepath.Join(e.T.TempDir(), ".env.local"))
	if err != nil {
		e.T.Fatal(err)
	}
	return cfg
}

// Runtime builds a runtime over st with opts' other fields.
func (e *Env) Runtime(st store.Store, opts runtime.Options) *runtime.Runtime {
	e.T.Helper()
	opts.Plan, opts.Store, opts.Config = e.Plan, st, e.Config()
	rt, err := runtime.New(opts)
	if err != nil {
		e.T.Fatal(err)
	}
	return rt
}

// Send puts a body on one of the app's queues.
func (e *Env) Send(queue, body string) {
	e.T.Helper()
	if _, err := e.Fake.SendMessage(queue, body); err != nil {
		e.T.Fatal(err)
	}
}

// OrderShipped is a valid order_shipped body with the given id.
func OrderShipped(id string) string {
	return fmt.Sprintf(`{"id":%q,"type":"order_shipped","order_id":"o-%s","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":2}]}`, id, id)
}

// Target stands in for a subscriber's service: the world serves the app's
// json_http services with it (standin.Options.Services). It answers each
// call with the next scripted status (200 when the script is empty) and
// records every call.
type Target struct {
	// URL is where the app's services are pointed.
	URL    string
	mu     sync.Mutex
	script []int
	calls  []Call
	answer func(r *http.Request) (int, string)
	gone   bool
}

// Call is one request the target saw.
type Call struct {
	Method, Path, Auth string
	Body               map[string]any
	Raw                []byte // the body as sent
}

// ServeHTTP records the call and answers it.
func (tg *Target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tg.mu.Lock()
	gone := tg.gone
	tg.mu.Unlock()
	if gone {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	tg.mu.Lock()
	tg.calls = append(tg.calls, Call{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body, Raw: b})
	status := http.StatusOK
	if len(tg.script) > 0 {
		status, tg.script = tg.script[0], tg.script[1:]
	}
	answer := tg.answer
	tg.mu.Unlock()
	if answer != nil {
		s, text := answer(r)
		w.WriteHeader(s)
		io.WriteString(w, text)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status >= 300 {
		fmt.Fprintf(w, `{"error":{"code":"status_%d"}}`, status)
		return
	}
	io.WriteString(w, `{"job_id":"j-1","state":"queued"}`)
}

// Close makes the service gone: each call after it has its connection
// closed unanswered, and is not recorded.
func (tg *Target) Close() {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.gone = true
}

// Script sets the statuses of the next calls.
func (tg *Target) Script(statuses ...int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.script = append(tg.script, statuses...)
}

// Calls returns the calls so far.
func (tg *Target) Calls() []Call {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]Call(nil), tg.calls...)
}

// Answer makes the target answer every call with f's status and body (nil:
// the script again). The call is recorded before f runs, so f may block,
// for instance to hold a handler past its lease; f runs on the server's
// goroutine for the request and may be called concurrently.
func (tg *Target) Answer(f func(r *http.Request) (status int, body string)) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.answer = f
}
