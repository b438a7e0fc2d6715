package runtimetest

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/sqsfake"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// WorldOptions change what NewWith sets up.
type WorldOptions struct {
	// QueueAttributes are given to CreateQueue for each of the app's queues:
	// {"VisibilityTimeout": "2"} makes a message received by a process that
	// then died come back after two seconds.
	QueueAttributes map[string]string
}

// NewWith builds the warehouse example's world as New does, with the
// queues created with opts.QueueAttributes.
func NewWith(t testing.TB, storeKind string, plan *ir.Program, opts WorldOptions) *Env {
	t.Helper()
	e := &Env{T: t, Plan: plan, QueueURLs: map[string]string{}}
	e.Fake = sqsfake.New(sqsfake.Options{Credentials: map[string]string{"AKIDTEST": Canary}})
	e.FakeSrv = httptest.NewServer(e.Fake)
	t.Cleanup(e.FakeSrv.Close)
	e.Target = newTarget(t)
	for _, q := range []string{"warehouse", "returns"} {
		u, err := e.Fake.CreateQueue(q, opts.QueueAttributes)
		if err != nil {
			t.Fatal(err)
		}
		e.QueueURLs[q+"_queue"] = u
	}
	e.Environ = []string{
		"AWS_ACCESS_KEY_ID=AKIDTEST",
		"AWS_SECRET_ACCESS_KEY=" + Canary,
		"SQS_HOST=" + e.FakeSrv.URL,
		"WAREHOUSE_QUEUE_URL=" + e.QueueURLs["warehouse_queue"],
		"RETURNS_QUEUE_URL=" + e.QueueURLs["returns_queue"],
		"PACKING_TOKEN=" + Canary + "-token",
		"PACKING_HOST=" + e.Target.URL,
	}
	e.StoreURL = freshStore(t, storeKind)
	return e
}

// freshStore is the URL of a store of the test's own: SQLite in a temporary
// folder, or a fresh PostgreSQL schema.
func freshStore(t testing.TB, storeKind string) string {
	t.Helper()
	switch storeKind {
	case "sqlite":
		return "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	case "postgres":
		return pgtest.FreshURL(t)
	}
	t.Fatalf("unknown store %q", storeKind)
	return ""
}

// QueueEmpty reports whether every queue of the fake holds nothing, visible,
// in flight or delayed.
func (e *Env) QueueEmpty() bool {
	for _, q := range []string{"warehouse", "returns"} {
		st, ok := e.Fake.Stats(q)
		if !ok || st.Visible+st.InFlight+st.Delayed != 0 {
			return false
		}
	}
	return true
}

// QueueDepth is the number of messages on the app's queues, visible, in
// flight or delayed.
func (e *Env) QueueDepth() int {
	n := 0
	for _, q := range []string{"warehouse", "returns"} {
		st, _ := e.Fake.Stats(q)
		n += st.Visible + st.InFlight + st.Delayed
	}
	return n
}
