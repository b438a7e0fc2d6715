package runtimetest

// The Cloudflare Queues counterparts of this package's SQS helpers: a world
// running a copy of examples/returns against a cfqueuesfake server on
// 127.0.0.1 and a fresh store, `jadpo run` of that copy as a child process,
// and a seeded workload of return requests for it (a *Workload, so that
// VerifyExactlyOnce checks it as it checks the warehouse's).

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/cfqueuesfake"
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
	Root   string // the repository root
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
	e := &CFEnv{T: t, Root: RepoRoot(t)}
	var edits []Edit
	if opts.VisibilityTimeoutMs > 0 {
		edits = append(edits, Edit{File: "app.jadpo", Old: "visibility_timeout_ms: 60000",
			New: fmt.Sprintf("visibility_timeout_ms: %d", opts.VisibilityTimeoutMs)})
	}
	e.AppDir = CopyExampleOf(t, "returns", filepath.Join(t.TempDir(), "returns"), edits...)
	res := check.Check(project.Load(e.AppDir))
	if res.Diags.HasErrors() {
		t.Fatalf("the copy of examples/returns does not check: %v", res.Diags)
	}
	e.Plan = res.Program

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
	return startProc(e.T, bin, args, childEnviron(e.Environ), logPath)
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

// ReturnRequested is a valid return_requested body with the given id.
func ReturnRequested(id string) string {
	return fmt.Sprintf(`{"return_id":%q,"type":"return_requested","order_id":"o-%s","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`, id, id)
}

// NewReturnsWorkload makes n messages for examples/returns' returns_queue
// from seed: mostly distinct ReturnRequested, about 2% repeats of an
// earlier valid body, about 2% that must be parked (not JSON, an unlisted
// type, an order_id its event refuses), each of those distinct.
func NewReturnsWorkload(seed uint64, n int) *Workload {
	rng := rand.New(rand.NewPCG(seed, seed^0x636c6f7564666c72))
	w := &Workload{Msgs: make([]Msg, 0, n)}
	var valid []int
	for i := 0; i < n; i++ {
		r := rng.IntN(100)
		var m Msg
		switch {
		case r < 2 && len(valid) > 0:
			m = w.Msgs[valid[rng.IntN(len(valid))]]
			m.Repeat = true
		case r < 4:
			m = Msg{Queue: "returns_queue", Park: true}
			switch i % 3 {
			case 0:
				m.Body = fmt.Sprintf(`not json %d`, i)
			case 1:
				m.Body = fmt.Sprintf(`{"return_id":"u-%d","type":"return_lost","order_id":"o-u-%d"}`, i, i)
			default:
				m.Body = fmt.Sprintf(`{"return_id":"b-%d","type":"return_requested","order_id":"o","customer_email":"b%d@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`, i, i)
			}
		default:
			id := fmt.Sprintf("r-%d", i)
			m = Msg{Queue: "returns_queue", ID: id, Event: "ReturnRequested",
				Body: fmt.Sprintf(`{"return_id":%q,"type":"return_requested","order_id":"o-%s","customer_email":"c%d@example.com","items":{"SKU-%d":%d},"requested_at":"2026-11-30T10:00:00Z"}`,
					id, id, i, i%97, 1+i%5)}
		}
		m.Source = "queue " + m.Queue
		if !m.Park && !m.Repeat {
			valid = append(valid, len(w.Msgs))
		}
		w.Msgs = append(w.Msgs, m)
	}
	return w
}

// SendCF puts messages [from, to) of w on the returns queue at once.
func (w *Workload) SendCF(e *CFEnv, from, to int) {
	e.T.Helper()
	for _, m := range w.Msgs[from:to] {
		e.Send(m.Body)
	}
}

// FlowCF sends messages [from, to) of w to the returns queue from a
// goroutine of its own, in steps of ten, message i at
// start + over*(i-from)/(to-from), as Flow does for the SQS fake. It stops
// when the test ends.
func (w *Workload) FlowCF(e *CFEnv, from, to int, over time.Duration) *Flow {
	return StartFlow(e.T, from, to, over, func(i, j int) error {
		for _, m := range w.Msgs[i:j] {
			if _, err := e.Fake.Send(CFAccount, CFReturnsQueue, m.Body); err != nil {
				return fmt.Errorf("sending to the Cloudflare fake: %w", err)
			}
		}
		return nil
	})
}
