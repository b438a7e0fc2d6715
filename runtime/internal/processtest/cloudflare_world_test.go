package processtest

// The Cloudflare Queues counterpart of the SQS world (runtimetest.Env): a
// copy of examples/returns run against a cfqueuesfake server on 127.0.0.1
// and a fresh store, `jadpo run` of that copy as a child process, and the
// sending of a returns workload (workload.NewReturns, which
// workload.VerifyExactlyOnce checks as it checks the warehouse's) to it.

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// The fake's account and queues of a CFEnv.
const (
	CFAccount         = "acc-crash"
	CFReturnsQueue    = "returns-queue-id"
	CFReturnsDeadMail = "returns-dlq-id"
)

// CFOptions change what NewCF sets up.
type CFOptions struct {
	// VisibilityTimeoutMs replaces the app's visibility_timeout_ms (60000)
	// in the copy of examples/returns; 0 keeps it. 2000 makes the messages
	// leased to a process that then died come back after two seconds.
	VisibilityTimeoutMs int
	// MaxRetries is the returns queue's redelivery limit (cfqueuesfake's
	// QueueOptions.MaxRetries: 0 means Cloudflare's 3). Messages over the
	// limit go to the dead-letter queue CFReturnsDeadMail.
	MaxRetries int
}

// CFEnv is one test's Cloudflare world: examples/returns copied into a
// temporary folder, a Cloudflare Queues fake serving on 127.0.0.1 with the
// app's returns queue (and a dead-letter queue for it) and a fresh store.
type CFEnv struct {
	T      testing.TB
	AppDir string // the copy of examples/returns
	Plan   *ir.Program
	// Fake serves the fake on 127.0.0.1 with its system clock, so that
	// leases run out in real time.
	Fake     *cfqueuesfake.Server
	Environ  []string // the app's config as environment entries
	StoreURL string
}

// NewCF builds the returns example's Cloudflare world on the given store
// ("sqlite" or "postgres").
func NewCF(t testing.TB, storeKind string, opts CFOptions) *CFEnv {
	t.Helper()
	e := &CFEnv{T: t}
	var edits []checktest.Edit
	if opts.VisibilityTimeoutMs > 0 {
		edits = append(edits, checktest.Edit{File: "app.jadpo", Old: "visibility_timeout_ms: 60000",
			New: fmt.Sprintf("visibility_timeout_ms: %d", opts.VisibilityTimeoutMs)})
	}
	e.AppDir = checktest.CopyExample(t, "returns", filepath.Join(t.TempDir(), "returns"), edits...)
	e.Plan = checktest.PlanDir(t, e.AppDir)

	srv, err := cfqueuesfake.Start("127.0.0.1:0", cfqueuesfake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e.Fake = srv
	if err := srv.CreateQueue(CFAccount, CFReturnsDeadMail, cfqueuesfake.QueueOptions{MaxRetries: -1}); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateQueue(CFAccount, CFReturnsQueue, cfqueuesfake.QueueOptions{
		MaxRetries: opts.MaxRetries, DeadLetterQueue: CFReturnsDeadMail}); err != nil {
		t.Fatal(err)
	}
	e.Environ = []string{
		"CF_HOST=" + srv.URL,
		"CF_API_TOKEN=" + cfqueuesfake.DefaultToken,
		"CF_ACCOUNT_ID=" + CFAccount,
		"CF_RETURNS_QUEUE_ID=" + CFReturnsQueue,
		"REFUNDS_TOKEN=refunds-token", // examples/returns' subscriber; its service is not run here
	}
	switch storeKind {
	case "sqlite":
		e.StoreURL = "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	case "postgres":
		e.StoreURL = pgtest.FreshURL(t)
	default:
		t.Fatalf("unknown store %q", storeKind)
	}
	return e
}

// StartRun starts `bin run <AppDir> --database <StoreURL> --log-format
// json` and extra args, with the world's config in its environment and its
// output appended to logPath. The process is killed when the test ends if
// it is still running.
func (e *CFEnv) StartRun(bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", e.AppDir, "--database", e.StoreURL, "--log-format", "json"}, extra...)
	return startProc(e.T, bin, args, runtimetest.ChildEnviron(e.Environ), logPath)
}

// Send puts a body on the returns queue.
func (e *CFEnv) Send(body string) {
	e.T.Helper()
	if _, err := e.Fake.Send(CFAccount, CFReturnsQueue, body); err != nil {
		e.T.Fatal(err)
	}
}

// QueueStats counts the returns queue's messages.
func (e *CFEnv) QueueStats() cfqueuesfake.QueueStats {
	s, ok := e.Fake.Stats(CFAccount, CFReturnsQueue)
	if !ok {
		e.T.Fatal("the fake has no returns queue")
	}
	return s
}

// QueueDepth is the number of messages on the returns queue: visible,
// leased (in flight) or handed back with a delay.
func (e *CFEnv) QueueDepth() int {
	s := e.QueueStats()
	return s.Visible + s.InFlight + s.Delayed
}

// QueueEmpty reports whether the returns queue holds nothing, visible,
// leased or delayed.
func (e *CFEnv) QueueEmpty() bool { return e.QueueDepth() == 0 }

// DeadLettered lists the bodies the redelivery limit moved to the returns
// queue's dead-letter queue.
func (e *CFEnv) DeadLettered() []string {
	var out []string
	for _, m := range e.Fake.Messages(CFAccount, CFReturnsDeadMail) {
		out = append(out, m.Body)
	}
	return out
}

// Attempts maps each message on the returns queue to its deliveries so far.
func (e *CFEnv) Attempts() map[string]int {
	out := map[string]int{}
	for _, m := range e.Fake.Messages(CFAccount, CFReturnsQueue) {
		out[m.ID] = m.Attempts
	}
	return out
}

// LeasedSince counts the messages on the returns queue delivered again
// since before (from Attempts) and not visible: leased by a pull made since.
func (e *CFEnv) LeasedSince(before map[string]int) int {
	n := 0
	for _, m := range e.Fake.Messages(CFAccount, CFReturnsQueue) {
		if !m.Visible && m.Attempts > before[m.ID] {
			n++
		}
	}
	return n
}

// sendCF puts messages [from, to) of w on the returns queue at once.
func sendCF(w *workload.Workload, e *CFEnv, from, to int) {
	e.T.Helper()
	for _, m := range w.Msgs[from:to] {
		e.Send(m.Body)
	}
}

// flowCF sends messages [from, to) of w to the returns queue from a
// goroutine of its own, in steps of ten, message i at
// start + over*(i-from)/(to-from), as Flow does for the SQS fake. It stops
// when the test ends.
func flowCF(w *workload.Workload, e *CFEnv, from, to int, over time.Duration) *workload.Flow {
	return workload.StartFlow(e.T, from, to, over, func(i, j int) error {
		for _, m := range w.Msgs[i:j] {
			if _, err := e.Fake.Send(CFAccount, CFReturnsQueue, m.Body); err != nil {
				return fmt.Errorf("sending to the Cloudflare fake: %w", err)
			}
		}
		return nil
	})
}
