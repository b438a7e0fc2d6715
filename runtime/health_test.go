package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// statsStore is a store whose Stats and Housekeep fail while down is set.
type statsStore struct {
	store.Store
	down atomic.Bool
}

var errKilled = errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")

func (s *statsStore) Stats(ctx context.Context) (store.Stats, error) {
	if s.down.Load() {
		return store.Stats{}, errKilled
	}
	return s.Store.Stats(ctx)
}

func (s *statsStore) Housekeep(ctx context.Context, o store.Housekeeping) (store.Housekept, error) {
	if s.down.Load() {
		return store.Housekept{}, errKilled
	}
	return s.Store.Housekeep(ctx, o)
}

// Issue 11, point 12: /healthz (Runtime.Healthy) said unhealthy at the first
// failed call after a killed backend, though the pool recovers by itself.
// It now says so only once the store has failed, with no answer between,
// for runtime.UnhealthyAfter (a tick's longest interval). On the runtime's
// injected clock.
func TestHealthyOnlyWhenTheStoreFailsLongerThanATick(t *testing.T) {
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := &statsStore{Store: env.Store()}
	clock := testclock.NewManual(testclock.Epoch())
	rt := env.Runtime(st, runtime.Options{Now: clock.Now})
	ctx := context.Background()
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	st.down.Store(true) // a killed backend: the next call fails
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("unhealthy at the first failure: %v", err)
	}
	st.down.Store(false) // the pool has replaced the connection
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("after recovering: %v", err)
	}
	// An outage: failing probes and a failing tick's housekeeping.
	st.down.Store(true)
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("unhealthy at the outage's start: %v", err)
	}
	clock.Advance(runtime.UnhealthyAfter - time.Second)
	if _, err := rt.Tick(ctx); err == nil {
		t.Fatal("a tick with a failing store reported no error")
	}
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("unhealthy before UnhealthyAfter: %v", err)
	}
	clock.Advance(time.Second)
	err := rt.Healthy(ctx)
	if err == nil || !errors.Is(err, errKilled) {
		t.Fatalf("healthy after the store failed for %s: %v", runtime.UnhealthyAfter, err)
	}
	// One answer ends the outage.
	st.down.Store(false)
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	st.down.Store(true)
	if err := rt.Healthy(ctx); err != nil {
		t.Fatalf("a new failure counts from its own start: %v", err)
	}
}
