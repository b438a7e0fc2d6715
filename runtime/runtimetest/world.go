package runtimetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime/standin"
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
	world := standin.Options{Environ: []string{"PACKING_TOKEN=" + Canary + "-token"}}
	if opts.QueueAttributes != nil {
		world.QueueAttributes = map[string]map[string]string{}
		for _, c := range plan.Connections {
			world.QueueAttributes[c.Name] = opts.QueueAttributes
		}
	}
	return newEnv(t, storeKind, plan, world)
}

// newEnv starts a test's world of stand-ins for plan with opts and gives it
// a store of storeKind.
func newEnv(t testing.TB, storeKind string, plan *ir.Program, opts standin.Options) *Env {
	t.Helper()
	e := &Env{T: t, Plan: plan, Target: &Target{}}
	t.Cleanup(func() {
		if e.World != nil {
			e.World.Close()
		}
	})
	e.start(opts)
	e.StoreURL = freshStore(t, storeKind)
	return e
}

// start (re)starts the Env's world with opts and what every test's world
// has: an SQS fake that takes the key id AKIDTEST with Canary as its
// secret, and the app's services answered by the Target. The app keeps its
// plan (the world's copy differs only where it names a host, credential or
// queue literally, and the example plans write them all as config).
func (e *Env) start(opts standin.Options) {
	e.T.Helper()
	if e.World != nil {
		e.World.Close()
		e.World = nil
	}
	opts.SQS.Credentials = map[string]string{"AKIDTEST": Canary}
	opts.Services = e.Target
	w, err := standin.Start(context.Background(), e.Plan, opts)
	if err != nil {
		e.T.Fatal(err)
	}
	e.World, e.Fake, e.Environ, e.opts = w, w.SQS.Fake, w.Environ, opts
	e.Target.URL = w.ServicesURL
	e.QueueURLs = map[string]string{}
	for _, q := range w.Queues() {
		if u, ok := w.SQSQueue(q); ok {
			e.QueueURLs[q] = u
		}
	}
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

// QueueEmpty reports whether every queue of the app on the SQS fake holds
// nothing, visible, in flight or delayed.
func (e *Env) QueueEmpty() bool {
	for q := range e.QueueURLs {
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
	for q := range e.QueueURLs {
		st, _ := e.Fake.Stats(q)
		n += st.Visible + st.InFlight + st.Delayed
	}
	return n
}
