package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

// openOn opens and migrates the store at path on the machine clock now.
func openOn(t *testing.T, path string, now func() time.Time) *sqlite.Store {
	t.Helper()
	s, err := sqlite.OpenPath(context.Background(), path, sqlite.Options{Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func keepOne(t *testing.T, s store.Store, id string) {
	t.Helper()
	res, err := s.KeepBatch(context.Background(), []store.Keep{{Source: "queue q", ReceivedID: id, EventName: "E",
		EventJSON: []byte(`{}`), Subscribers: []string{"s"}}})
	if err != nil || res[0].Outcome != store.Kept {
		t.Fatalf("keep %s: %+v, %v", id, res, err)
	}
}

// On SQLite the store's clock is the machine's, held so that it never goes
// backwards: when the machine's clock goes back 31 days, what the store
// writes is not dated earlier than what it wrote before, so that once the
// clock is put right no lease looks over early and no received id is old
// enough to forget. The mark is kept in the database: another process, or
// the store opened again, holds to it too.
func TestClockGoingBackwardsMovesNothingBackwards(t *testing.T) {
	ctx := context.Background()
	t0 := testclock.Epoch()
	machine := testclock.NewManual(t0)
	path := filepath.Join(t.TempDir(), "jadpo.db")
	s := openOn(t, path, machine.Now)
	keepOne(t, s, "m-0")
	first, err := s.ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(first) != 1 || !first[0].LeaseExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("claim at t0: %+v, %v", first, err)
	}

	machine.Set(t0.Add(-31 * 24 * time.Hour))
	other := openOn(t, path, machine.Now) // another process, on the same machine
	keepOne(t, other, "m-1")
	got, err := other.ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(got) != 1 || got[0].ReceivedID != "m-1" || got[0].LeaseExpiresAt.Before(t0.Add(time.Minute)) {
		t.Fatalf("claim with the clock 31 days back: %+v, %v; want m-1's delivery alone, its lease from t0 on", got, err)
	}
	es, err := s.List(ctx, store.Filter{State: store.ListAll})
	if err != nil || len(es) != 2 {
		t.Fatalf("list: %+v, %v", es, err)
	}
	for _, e := range es {
		if e.CreatedAt.Before(t0) {
			t.Fatalf("%s written at %v, before the store's t0", e.ID, e.CreatedAt)
		}
	}

	// The clock put right: housekeeping forgets neither id; both leases run.
	machine.Set(t0.Add(time.Second))
	if h, err := s.Housekeep(ctx, store.Housekeeping{}); err != nil || h.ReceivedIDs != 0 {
		t.Fatalf("housekeeping after the clock was put right: %+v, %v", h, err)
	}
	if again, err := s.ClaimDeliveries(ctx, 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("claimed %+v, %v while both leases run", again, err)
	}
	res, err := s.KeepBatch(ctx, []store.Keep{{Source: "queue q", ReceivedID: "m-1", EventName: "E", EventJSON: []byte(`{}`), Subscribers: []string{"s"}}})
	if err != nil || res[0].Outcome != store.Repeat {
		t.Fatalf("m-1 again: %+v, %v; want a repeat", res, err)
	}
	// Leases end on the store's clock: a minute on, both are taken over.
	machine.Set(t0.Add(time.Minute + 2*time.Second))
	if over, err := s.ClaimDeliveries(ctx, 10, time.Minute); err != nil || len(over) != 2 {
		t.Fatalf("claimed %+v, %v after both leases ended; want both", over, err)
	}
}
