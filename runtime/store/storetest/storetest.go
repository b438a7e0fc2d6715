// Package storetest is the conformance suite of the events' store: every adapter runs
// exactly these tests (River's driver tests are the model). An adapter's test gives Run a
// Harness that makes fresh databases:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{NewDatabase: newTestDatabase})
//	}
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
)

// Harness is what an adapter gives the suite.
type Harness struct {
	// NewDatabase makes a fresh, empty database (or schema) private to t, and removes it
	// when t ends.
	NewDatabase func(t *testing.T) Database
}

// Database is one fresh database of a test.
type Database interface {
	// Open opens a new store on this database, as another process would: its own
	// connections, not yet migrated. The store is closed when t ends.
	Open(t *testing.T) store.Store
	// Exec runs sql on this database outside any store (to break its schema).
	Exec(t *testing.T, sql string)
	// Count counts the rows of a table of this database outside any store,
	// for what the store's own reads do not show (the attempts of a
	// delivery housekeeping deleted).
	Count(t *testing.T, table string) int64
	// FailTransiently runs call, which uses s to write the received id (BlockedSource,
	// BlockedID) among others, and makes the store fail it with a transient fault while it
	// runs; it returns call's error. PostgreSQL blocks the statement on that id, held by
	// another connection's open transaction, and terminates the store's backend; SQLite
	// holds the write lock in another connection until the store's busy timeout gives up.
	FailTransiently(t *testing.T, s store.Store, call func() error) error
}

// The received id that Database.FailTransiently holds.
const (
	BlockedSource = "queue blocked"
	BlockedID     = "blocker"
)

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"MigrateConcurrently", testMigrateConcurrently},
		{"SchemaMismatchMissingColumn", testSchemaMismatchMissingColumn},
		{"SchemaMismatchMissingTable", testSchemaMismatchMissingTable},
		{"KeepAndRepeat", testKeepAndRepeat},
		{"KeepRefusedRollsBackToSavepoint", testKeepRefusedRollsBackToSavepoint},
		{"KeepRefusedLastAndAll", testKeepRefusedLastAndAll},
		{"KeepDeletesRetriedParked", testKeepDeletesRetriedParked},
		{"KeepTransientFailureCommitsNothing", testKeepTransientFailureCommitsNothing},
		{"KeepHeadersShownWithDeliveries", testKeepHeadersShownWithDeliveries},
		{"KeepHeadersRoundTrip", testKeepHeadersRoundTrip},
		{"ParkOncePerSourceAndBody", testParkOncePerSourceAndBody},
		{"ParkRetriedFailsAgain", testParkRetriedFailsAgain},
		{"ParkKeepsTheMessageID", testParkKeepsTheMessageID},
		{"RetriedParkedOldestFirst", testRetriedParkedOldestFirst},
		{"ClaimAndSettle", testClaimAndSettle},
		{"ClaimLimitAndDue", testClaimLimitAndDue},
		{"LeaseExpiryTakeover", testLeaseExpiryTakeover},
		{"UnstartedClaimIsNotAnAttempt", testUnstartedClaimIsNotAnAttempt},
		{"SettleDeliveriesEachUnderItsToken", testSettleDeliveriesEachUnderItsToken},
		{"SettleAndClaimInOneTransaction", testSettleAndClaim},
		{"SettleManyAndClaim", testSettleManyAndClaim},
		{"ReleaseUncountsTheAttempt", testReleaseUncountsTheAttempt},
		{"ConcurrentClaims", testConcurrentClaims},
		{"RetryDismissStateMachine", testRetryDismissStateMachine},
		{"ListAndShow", testListAndShow},
		{"LastErrorTextAndSucceededListed", testLastErrorTextAndSucceededListed},
		{"AttemptsOfADelivery", testAttemptsOfADelivery},
		{"Housekeep", testHousekeep},
		{"HousekeepRetentionRules", testHousekeepRetentionRules},
		{"HousekeepBacklogInBatches", testHousekeepBacklogInBatches},
		{"HousekeepDeletesAttempts", testHousekeepDeletesAttempts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

// t0 is the suite's clock: every test passes times from it.
var t0 = testclock.Epoch()

const (
	srcWarehouse = "queue warehouse_queue"
	srcReturns   = "queue returns_queue"
	eventShipped = "OrderShipped"
)

func migrated(t *testing.T, db Database) Timed {
	t.Helper()
	s := db.Open(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return Timed{s}
}

func fresh(t *testing.T, h Harness) (Database, Timed) {
	t.Helper()
	db := h.NewDatabase(t)
	return db, migrated(t, db)
}

func keepOf(source, id string, subscribers ...string) store.Keep {
	return store.Keep{
		Source:      source,
		ReceivedID:  id,
		EventName:   eventShipped,
		EventJSON:   []byte(`{"order_id":"` + id + `","lines":[1,2]}`),
		Subscribers: subscribers,
	}
}

func keepBatch(t *testing.T, s Timed, now time.Time, keeps ...store.Keep) []store.KeepResult {
	t.Helper()
	res, err := s.KeepBatch(context.Background(), now, keeps)
	if err != nil {
		t.Fatalf("KeepBatch: %v", err)
	}
	if len(res) != len(keeps) {
		t.Fatalf("KeepBatch returned %d results for %d messages", len(res), len(keeps))
	}
	return res
}

func outcomes(res []store.KeepResult) []store.KeepOutcome {
	out := make([]store.KeepOutcome, len(res))
	for i, r := range res {
		out[i] = r.Outcome
	}
	return out
}

func wantOutcomes(t *testing.T, res []store.KeepResult, want ...store.KeepOutcome) {
	t.Helper()
	if got := outcomes(res); !slices.Equal(got, want) {
		t.Fatalf("outcomes = %v, want %v (results %+v)", got, want, res)
	}
}

func stats(t *testing.T, s Timed) store.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st
}

// counts is the part of Stats the tests compare.
type counts struct {
	Received, Outbox, Deliveries, Parked int64
}

func countsOf(st store.Stats) counts {
	return counts{st.ReceivedIDs, st.Outbox, st.DeliveriesTotal(), st.ParkedTotal()}
}

func wantCounts(t *testing.T, s Timed, want counts) {
	t.Helper()
	if got := countsOf(stats(t, s)); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
}

func park(t *testing.T, s Timed, now time.Time, p store.Parked) store.ParkResult {
	t.Helper()
	r, _ := parkAs(t, s, now, p)
	return r
}

// parkAs parks p and returns what Park did and the id it named.
func parkAs(t *testing.T, s Timed, now time.Time, p store.Parked) (store.ParkResult, store.ID) {
	t.Helper()
	r, id, err := s.Park(context.Background(), now, p)
	if err != nil {
		t.Fatalf("Park: %v", err)
	}
	return r, id
}

// parkID parks p, which must be new, and returns its operator ID (ids are the database's
// to choose: PostgreSQL's sequences skip numbers a conflict or a rollback used).
func parkID(t *testing.T, s Timed, now time.Time, p store.Parked) store.ID {
	t.Helper()
	r, id := parkAs(t, s, now, p)
	if r != store.ParkAdded {
		t.Fatalf("Park = %v, want added", r)
	}
	sum := sha256Hex(string(p.Body))
	for _, e := range list(t, s, store.Filter{State: store.ListAll}) {
		if e.ID.Kind == store.KindParked && e.BodySHA256 == sum && e.Source == p.Source {
			if e.ID != id {
				t.Fatalf("Park named %s, the parked message is listed as %s", id, e.ID)
			}
			return e.ID
		}
	}
	t.Fatalf("the parked message is not listed")
	return store.ID{}
}

func parkedOf(source, body string) store.Parked {
	return store.Parked{
		Source:   source,
		WireType: "order.shipped",
		Reason:   store.ReasonUnlistedType,
		Body:     []byte(body),
	}
}

func claim(t *testing.T, s Timed, now time.Time, limit int, lease time.Duration) []store.Claimed {
	t.Helper()
	c, err := s.ClaimDeliveries(context.Background(), now, limit, lease)
	if err != nil {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	return c
}

func settle(t *testing.T, s Timed, now time.Time, st store.Settlement) bool {
	t.Helper()
	ok, err := s.SettleDelivery(context.Background(), now, st)
	if err != nil {
		t.Fatalf("SettleDelivery: %v", err)
	}
	return ok
}

func list(t *testing.T, s Timed, f store.Filter) []store.Entry {
	t.Helper()
	es, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return es
}

func show(t *testing.T, s Timed, id store.ID, body bool) store.Entry {
	t.Helper()
	e, err := s.Show(context.Background(), id, body)
	if err != nil {
		t.Fatalf("Show %s: %v", id, err)
	}
	return e
}

func ids(es []store.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID.String()
	}
	return out
}

func wantIDs(t *testing.T, what string, es []store.Entry, want ...store.ID) {
	t.Helper()
	w := make([]string, len(want))
	for i, id := range want {
		w[i] = id.String()
	}
	if got := ids(es); !slices.Equal(got, w) {
		t.Fatalf("%s = %v, want %v", what, got, w)
	}
}

// failedDelivery keeps a message for one subscriber and fails its delivery; it returns the
// delivery's id.
func failedDelivery(t *testing.T, s Timed, now time.Time, receivedID, subscriber string) int64 {
	t.Helper()
	wantOutcomes(t, keepBatch(t, s, now, keepOf(srcWarehouse, receivedID, subscriber)), store.Kept)
	var target *store.Claimed
	for _, c := range claim(t, s, now, 100, time.Minute) {
		if c.ReceivedID == receivedID {
			target = &c
		} else if !settle(t, s, now, store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleRetryWait, RetryAfter: time.Hour}) {
			t.Fatalf("could not put d%d back", c.ID)
		}
	}
	if target == nil {
		t.Fatalf("the delivery of %s was not claimed", receivedID)
	}
	if !settle(t, s, now, store.Settlement{ID: target.ID, Token: target.Token, Outcome: store.SettleFailed, ErrorCode: "http.500"}) {
		t.Fatalf("could not fail d%d", target.ID)
	}
	return target.ID
}

func testMigrateIsIdempotent(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	wantCounts(t, s, counts{})
}

func testMigrateConcurrently(t *testing.T, h Harness) {
	db := h.NewDatabase(t)
	const n = 4
	stores := make([]Timed, n)
	for i := range stores {
		stores[i] = Timed{db.Open(t)}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-start
			errs[i] = s.Migrate(context.Background())
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate of store %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	// Every store works on the one schema.
	for i, s := range stores {
		wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, fmt.Sprint("m", i), "pack_order")), store.Kept)
	}
	wantCounts(t, stores[0], counts{Received: n, Outbox: n, Deliveries: n})
}

func testSchemaMismatchMissingColumn(t *testing.T, h Harness) {
	db, _ := fresh(t, h)
	db.Exec(t, "ALTER TABLE jadpo_deliveries DROP COLUMN fencing_token")
	err := db.Open(t).Migrate(context.Background())
	var se *store.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Migrate after dropping a column = %v, want a *store.SchemaError", err)
	}
	if se.Table != "jadpo_deliveries" || se.Column != "fencing_token" || se.Statement == "" || se.Statement == "(none)" {
		t.Fatalf("SchemaError = %+v, want table jadpo_deliveries, column fencing_token and a statement", se)
	}
	msg := err.Error()
	for _, want := range []string{"jadpo_deliveries", "fencing_token", se.Statement} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if store.IsTransient(err) || store.IsRefused(err) {
		t.Errorf("a schema mismatch is classified %v, want other", store.ClassOf(err))
	}
}

func testSchemaMismatchMissingTable(t *testing.T, h Harness) {
	db, _ := fresh(t, h)
	db.Exec(t, "DROP TABLE jadpo_parked_messages")
	err := db.Open(t).Migrate(context.Background())
	var se *store.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Migrate after dropping a table = %v, want a *store.SchemaError", err)
	}
	if se.Table != "jadpo_parked_messages" || !strings.Contains(err.Error(), "jadpo_parked_messages") || se.Statement == "" {
		t.Fatalf("SchemaError = %+v (%v), want table jadpo_parked_messages and a statement", se, err)
	}
}

func testKeepAndRepeat(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	res := keepBatch(t, s, t0,
		keepOf(srcWarehouse, "m1", "pack_order", "notify"),
		keepOf(srcWarehouse, "m2", "pack_order", "notify", "pack_order"), // a subscriber named twice
		keepOf(srcWarehouse, "m1", "pack_order"),                         // the same id in the batch
		keepOf(srcReturns, "m1", "pack_order"),                           // the same id from another source
	)
	wantOutcomes(t, res, store.Kept, store.Kept, store.Repeat, store.Kept)
	if res[0].OutboxID == 0 || res[1].OutboxID == 0 || res[0].OutboxID == res[1].OutboxID {
		t.Fatalf("outbox ids = %d, %d, want two distinct ids", res[0].OutboxID, res[1].OutboxID)
	}
	st := stats(t, s)
	if got := countsOf(st); got != (counts{Received: 3, Outbox: 3, Deliveries: 5}) {
		t.Fatalf("counts = %+v, want 3 received, 3 outbox, 5 deliveries", got)
	}
	if st.Deliveries[store.DeliveryPending] != 5 {
		t.Fatalf("deliveries by state = %v, want 5 pending", st.Deliveries)
	}
	// Redelivered later: repeats, nothing written.
	res = keepBatch(t, s, t0.Add(time.Minute), keepOf(srcWarehouse, "m1", "pack_order"), keepOf(srcWarehouse, "m2", "pack_order"))
	wantOutcomes(t, res, store.Repeat, store.Repeat)
	wantCounts(t, s, counts{Received: 3, Outbox: 3, Deliveries: 5})
	// An empty batch is nothing.
	if res, err := s.KeepBatch(context.Background(), t0, nil); err != nil || len(res) != 0 {
		t.Fatalf("KeepBatch(nil) = %v, %v", res, err)
	}
	// The pending deliveries are due at the keep's time, and carry the event byte for byte.
	if c := claim(t, s, t0.Add(-time.Microsecond), 10, time.Minute); len(c) != 0 {
		t.Fatalf("claimed %d deliveries before they were due", len(c))
	}
	c := claim(t, s, t0, 10, time.Minute)
	if len(c) != 5 {
		t.Fatalf("claimed %d deliveries, want 5", len(c))
	}
	for _, d := range c {
		want := keepOf(d.Source, d.ReceivedID).EventJSON
		if !bytes.Equal(d.EventJSON, want) || d.EventName != eventShipped {
			t.Errorf("d%d carries %s %q, want %s %q", d.ID, d.EventName, d.EventJSON, eventShipped, want)
		}
	}
}

// poisoned is a message the store refuses as it would every time: both adapters refuse a
// NUL character in text (PostgreSQL 22021; SQLite a CHECK constraint), event JSON that is
// not JSON (PostgreSQL's json type, 22P02; SQLite json_valid), an escaped NUL in event JSON
// (PostgreSQL's jsonb cast, 22P05; SQLite a trigger) and an empty id (a CHECK).
func poisoned(kind, id string) store.Keep {
	k := keepOf(srcWarehouse, id, "pack_order")
	switch kind {
	case "nul in event json":
		k.EventJSON = []byte("{\"card\":\"4111-secret\x00\"}")
	case "escaped nul in event json":
		k.EventJSON = []byte(`{"card":"4111-secret\u0000"}`)
	case "not json":
		k.EventJSON = []byte(`{"card":"4111-secret"`)
	case "nul in received id":
		k.ReceivedID = id + "\x00"
	case "empty received id":
		k.ReceivedID = ""
	default:
		panic(kind)
	}
	return k
}

func testKeepRefusedRollsBackToSavepoint(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	res := keepBatch(t, s, t0,
		keepOf(srcWarehouse, "ok1", "pack_order", "notify"),
		poisoned("nul in event json", "bad1"),
		keepOf(srcWarehouse, "ok2", "pack_order"),
		poisoned("not json", "bad2"),
		poisoned("nul in received id", "bad3"),
		poisoned("empty received id", "bad4"),
		keepOf(srcWarehouse, "ok3", "pack_order"),
		poisoned("escaped nul in event json", "bad5"),
	)
	wantOutcomes(t, res, store.Kept, store.Refused, store.Kept, store.Refused, store.Refused, store.Refused, store.Kept, store.Refused)
	for _, i := range []int{1, 3, 4, 5, 7} {
		err := res[i].Err
		if !store.IsRefused(err) {
			t.Errorf("message %d: Err = %v, want a refused store error", i, err)
			continue
		}
		if strings.Contains(err.Error(), "4111") {
			t.Errorf("message %d: the error holds a value of the event: %v", i, err)
		}
	}
	// Nothing of a refused message was written; everything of the others was.
	wantCounts(t, s, counts{Received: 3, Outbox: 3, Deliveries: 4})
	// The refused ids were not recorded: kept now with good JSON.
	res = keepBatch(t, s, t0, keepOf(srcWarehouse, "bad1", "pack_order"), keepOf(srcWarehouse, "bad2", "pack_order"))
	wantOutcomes(t, res, store.Kept, store.Kept)
}

func testKeepRefusedLastAndAll(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	res := keepBatch(t, s, t0, keepOf(srcWarehouse, "ok1", "pack_order"), poisoned("nul in event json", "bad1"))
	wantOutcomes(t, res, store.Kept, store.Refused)
	res = keepBatch(t, s, t0, poisoned("not json", "bad2"), poisoned("nul in event json", "bad3"))
	wantOutcomes(t, res, store.Refused, store.Refused)
	res = keepBatch(t, s, t0, poisoned("not json", "bad4"))
	wantOutcomes(t, res, store.Refused)
	wantCounts(t, s, counts{Received: 1, Outbox: 1, Deliveries: 1})
}

func testKeepDeletesRetriedParked(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	var parked []store.ID
	for _, body := range []string{`{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`} {
		parked = append(parked, parkID(t, s, t0, parkedOf(srcWarehouse, body)))
	}
	if err := s.Retry(ctx, t0, parked); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	retried, err := s.RetriedParked(ctx, 20)
	if err != nil || len(retried) != 3 {
		t.Fatalf("RetriedParked = %d messages, %v; want 3", len(retried), err)
	}
	// "a" was kept before (its row is a repeat now), "b" is kept, "c" is refused.
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "a", "pack_order")), store.Kept)
	ka := keepOf(srcWarehouse, "a", "pack_order")
	ka.RetriedParkedID = retried[0].ID
	kb := keepOf(srcWarehouse, "b", "pack_order")
	kb.RetriedParkedID = retried[1].ID
	kc := poisoned("not json", "c")
	kc.RetriedParkedID = retried[2].ID
	wantOutcomes(t, keepBatch(t, s, t0, ka, kb, kc), store.Repeat, store.Kept, store.Refused)
	left, err := s.RetriedParked(ctx, 20)
	if err != nil {
		t.Fatalf("RetriedParked: %v", err)
	}
	if len(left) != 1 || left[0].ID != retried[2].ID {
		t.Fatalf("parked rows left = %+v, want only the refused one (p%d)", left, retried[2].ID)
	}
	wantCounts(t, s, counts{Received: 2, Outbox: 2, Deliveries: 2, Parked: 1})
}

func testKeepTransientFailureCommitsNothing(t *testing.T, h Harness) {
	db, s := fresh(t, h)
	ctx := context.Background()
	p1 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"re-read"}`))
	if err := s.Retry(ctx, t0, []store.ID{p1}); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	k1 := keepOf(srcWarehouse, "t1", "pack_order")
	k1.RetriedParkedID = p1.N
	keeps := []store.Keep{k1, keepOf(srcWarehouse, "t2", "pack_order"), keepOf(BlockedSource, BlockedID, "pack_order")}
	err := db.FailTransiently(t, s.Store, func() error {
		res, err := s.KeepBatch(ctx, t0, keeps)
		if err == nil {
			return fmt.Errorf("KeepBatch succeeded (%v) under a transient fault", outcomes(res))
		}
		return err
	})
	if !store.IsTransient(err) {
		t.Fatalf("KeepBatch under a transient fault: %v (class %v), want a transient error", err, store.ClassOf(err))
	}
	// Nothing was committed: the parked row is still there, no id, no outbox row.
	wantCounts(t, s, counts{Parked: 1})
	// The store works again, and the messages are kept, not repeats.
	wantOutcomes(t, keepBatch(t, s, t0, keeps...), store.Kept, store.Kept, store.Kept)
	wantCounts(t, s, counts{Received: 3, Outbox: 3, Deliveries: 3})
}

// deliveriesOf returns the ids of the deliveries of the message (source, receivedID) that
// List shows (pending, failed or dismissed), in id order.
func deliveriesOf(t *testing.T, s Timed, source, receivedID string) []store.ID {
	t.Helper()
	var out []store.ID
	for _, e := range list(t, s, store.Filter{State: store.ListAll}) {
		if e.ID.Kind == store.KindDelivery && e.Source == source && e.ReceivedID == receivedID {
			out = append(out, e.ID)
		}
	}
	slices.SortFunc(out, func(a, b store.ID) int { return int(a.N - b.N) })
	return out
}

// wantHeaders checks that Show of each id, with and without the body, gives exactly want
// (nil: none).
func wantHeaders(t *testing.T, s Timed, want map[string]string, ids ...store.ID) {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("no ids to show")
	}
	for _, id := range ids {
		for _, body := range []bool{false, true} {
			got := show(t, s, id, body).Headers
			if want == nil && got != nil {
				t.Errorf("Show %s (body %v): headers %q, want nil", id, body, got)
			} else if !maps.Equal(got, want) {
				t.Errorf("Show %s (body %v): headers %q, want %q", id, body, got, want)
			}
		}
	}
}

func testKeepHeadersShownWithDeliveries(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	headers := map[string]string{"tenant": "acme", "priority": "high"}
	with := keepOf(srcWarehouse, "h1", "pack_order", "notify")
	with.Headers = headers
	without := keepOf(srcWarehouse, "h2", "pack_order")
	empty := keepOf(srcWarehouse, "h3", "pack_order")
	empty.Headers = map[string]string{}
	wantOutcomes(t, keepBatch(t, s, t0, with, without, empty), store.Kept, store.Kept, store.Kept)

	// Every delivery of the message shows exactly its headers; none is nil.
	d1 := deliveriesOf(t, s, srcWarehouse, "h1")
	if len(d1) != 2 {
		t.Fatalf("deliveries of h1 = %v, want 2", d1)
	}
	wantHeaders(t, s, headers, d1...)
	wantHeaders(t, s, nil, deliveriesOf(t, s, srcWarehouse, "h2")...)
	wantHeaders(t, s, nil, deliveriesOf(t, s, srcWarehouse, "h3")...)

	// A repeat keeps nothing: the first keep's headers stay, and a repeat's headers are
	// not added to a message that had none.
	again := keepOf(srcWarehouse, "h1", "pack_order", "notify")
	again.Headers = map[string]string{"tenant": "other"}
	late := keepOf(srcWarehouse, "h2", "pack_order")
	late.Headers = map[string]string{"tenant": "late"}
	wantOutcomes(t, keepBatch(t, s, t0.Add(time.Minute), again, late), store.Repeat, store.Repeat)
	wantCounts(t, s, counts{Received: 3, Outbox: 3, Deliveries: 4})
	wantHeaders(t, s, headers, d1...)
	wantHeaders(t, s, nil, deliveriesOf(t, s, srcWarehouse, "h2")...)

	// A refused message in the batch does not shift the headers of those after it (on
	// PostgreSQL, they are sent again after the refusal).
	k4 := keepOf(srcWarehouse, "h4", "pack_order")
	k4.Headers = map[string]string{"n": "4"}
	bad := poisoned("not json", "h5")
	bad.Headers = map[string]string{"n": "5"}
	k6 := keepOf(srcWarehouse, "h6", "pack_order")
	k6.Headers = map[string]string{"n": "6"}
	wantOutcomes(t, keepBatch(t, s, t0, k4, bad, k6), store.Kept, store.Refused, store.Kept)
	wantHeaders(t, s, k4.Headers, deliveriesOf(t, s, srcWarehouse, "h4")...)
	wantHeaders(t, s, k6.Headers, deliveriesOf(t, s, srcWarehouse, "h6")...)

	// The delivery's headers survive its claim, failure and retry; a parked message has
	// none.
	c := claim(t, s, t0, 100, time.Minute)
	for _, d := range c {
		settle(t, s, t0, store.Settlement{ID: d.ID, Token: d.Token, Outcome: store.SettleFailed, ErrorCode: "http.500"})
	}
	if err := s.Retry(context.Background(), t0, d1); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	wantHeaders(t, s, headers, d1...)
	wantHeaders(t, s, nil, parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"p"}`)))
}

func testKeepHeadersRoundTrip(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	headers := map[string]string{
		"query":       "a=b&c=d",
		"eq":          "=",
		"key=with=eq": "x==y",
		"ünïcode":     "値=✓ 🚚",
		"empty":       "",
		"quoted":      "say \"hi\"\\n\tback\\slash",
		"json":        `{"not":"parsed"}`,
		"nul":         "a\x00b",
		"  spaced  ":  "  kept as is  ",
	}
	k := keepOf(srcWarehouse, "u1", "pack_order")
	k.Headers = headers
	wantOutcomes(t, keepBatch(t, s, t0, k), store.Kept)
	wantHeaders(t, s, headers, deliveriesOf(t, s, srcWarehouse, "u1")...)
	// The caller's map is not the entry's.
	e := show(t, s, deliveriesOf(t, s, srcWarehouse, "u1")[0], false)
	e.Headers["eq"] = "changed"
	if headers["eq"] != "=" {
		t.Fatal("Show returned the caller's map")
	}
}

func testParkOncePerSourceAndBody(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	body := `{"id":"m1","type":"order.exploded"}`
	p := parkedOf(srcWarehouse, body)
	p.Reason = store.ReasonUnreadable
	p.Problems = []store.Problem{{Field: "order_id", Rule: "required"}, {Field: "lines[0].qty", Rule: "whole_number"}}
	first := parkID(t, s, t0, p)
	again := p
	again.Reason = store.ReasonTooLarge
	if r := park(t, s, t0.Add(time.Minute), again); r != store.ParkAlready {
		t.Fatalf("second Park of the same body = %v, want already parked", r)
	}
	if r := park(t, s, t0, parkedOf(srcReturns, body)); r != store.ParkAdded {
		t.Fatalf("Park from another source = %v, want added", r)
	}
	if r := park(t, s, t0, parkedOf(srcWarehouse, body+" ")); r != store.ParkAdded {
		t.Fatalf("Park of another body = %v, want added", r)
	}
	// Text the databases cannot hold is made storable; the body is kept byte for byte.
	odd := store.Parked{Source: srcWarehouse, WireType: "bad\x00type\xff", Reason: store.ReasonUnlistedType,
		Problems: []store.Problem{{Field: "x\x00", Rule: "y"}}, Body: []byte("\x00\xff{not json")}
	oddID := parkID(t, s, t0, odd)
	st := stats(t, s)
	if st.ParkedTotal() != 4 || st.Parked[store.ParkedKey{Reason: store.ReasonUnreadable, State: store.ParkedFailed}] != 1 {
		t.Fatalf("parked = %v, want 4, one unreadable", st.Parked)
	}
	e := show(t, s, first, true)
	if e.Code != string(store.ReasonUnreadable) || !slices.Equal(e.Problems, p.Problems) || string(e.Body) != body {
		t.Fatalf("%s = %+v, want the first park's reason, problems and body", first, e)
	}
	e = show(t, s, oddID, true)
	if !bytes.Equal(e.Body, odd.Body) || e.WireType != "bad\uFFFDtype\uFFFD" || e.Problems[0].Field != "x\uFFFD" {
		t.Fatalf("%s = wire type %q, problems %+v, body %q", oddID, e.WireType, e.Problems, e.Body)
	}
}

func testParkRetriedFailsAgain(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	p1 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"m1"}`))
	if err := s.Retry(ctx, t0.Add(time.Minute), []store.ID{p1}); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	retried, err := s.RetriedParked(ctx, 20)
	if err != nil || len(retried) != 1 {
		t.Fatalf("RetriedParked = %+v, %v", retried, err)
	}
	again := store.Parked{Source: srcWarehouse, WireType: "order.shipped", EventName: eventShipped,
		Reason: store.ReasonUnreadable, Problems: []store.Problem{{Field: "order_id", Rule: "required"}},
		Body: retried[0].Body, RetriedParkedID: retried[0].ID}
	if r := park(t, s, t0.Add(2*time.Minute), again); r != store.ParkFailedAgain {
		t.Fatalf("Park of the re-read message = %v, want failed again", r)
	}
	e := show(t, s, p1, false)
	if e.State != store.ListFailed || e.Code != "unreadable" || e.EventName != eventShipped ||
		!slices.Equal(e.Problems, again.Problems) || !e.UpdatedAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("p1 = %+v, want failed again as unreadable with the new problems", e)
	}
	wantCounts(t, s, counts{Parked: 1})
	// Another process re-read it too: the row is failed already, nothing changes.
	if r := park(t, s, t0.Add(3*time.Minute), again); r != store.ParkGone {
		t.Fatalf("second Park of the re-read message = %v, want gone", r)
	}
	if e := show(t, s, p1, false); !e.UpdatedAt.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("p1 changed: %+v", e)
	}
}

// A parked message keeps the id read from it (the producer's), so that an operator can tie
// it to the sender's record; Park names the row it added, or the one parked already.
func testParkKeepsTheMessageID(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	p := parkedOf(srcWarehouse, `{"id":"m-77","type":"order.exploded"}`)
	p.ReceivedID = "m-77"
	first := parkID(t, s, t0, p)
	if r, id := parkAs(t, s, t0.Add(time.Minute), p); r != store.ParkAlready || id != first {
		t.Fatalf("second Park = %v %s, want already parked as %s", r, id, first)
	}
	none := parkID(t, s, t0, parkedOf(srcWarehouse, `not json`))
	if e := show(t, s, first, false); e.ReceivedID != "m-77" {
		t.Fatalf("Show %s: message id %q, want m-77", first, e.ReceivedID)
	}
	if e := show(t, s, none, false); e.ReceivedID != "" {
		t.Fatalf("Show %s: message id %q, want none", none, e.ReceivedID)
	}
	byID := map[store.ID]string{}
	for _, e := range list(t, s, store.Filter{State: store.ListAll}) {
		byID[e.ID] = e.ReceivedID
	}
	if byID[first] != "m-77" || byID[none] != "" {
		t.Fatalf("List: message ids %v", byID)
	}
	if err := s.Retry(ctx, t0.Add(time.Minute), []store.ID{first, none}); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	retried, err := s.RetriedParked(ctx, 20)
	if err != nil || len(retried) != 2 {
		t.Fatalf("RetriedParked = %+v, %v", retried, err)
	}
	for _, m := range retried {
		want := map[int64]string{first.N: "m-77", none.N: ""}[m.ID]
		if m.ReceivedID != want {
			t.Fatalf("RetriedParked p%d: message id %q, want %q", m.ID, m.ReceivedID, want)
		}
		// Re-read with a plan that finds no id: the id read before stays; one found now is kept.
		again := store.Parked{Source: srcWarehouse, Reason: store.ReasonUnreadable, Body: m.Body, RetriedParkedID: m.ID}
		if m.ID == none.N {
			again.ReceivedID = "n-1"
		}
		if r, id := parkAs(t, s, t0.Add(2*time.Minute), again); r != store.ParkFailedAgain || id != store.ParkedID(m.ID) {
			t.Fatalf("Park of the re-read p%d = %v %s", m.ID, r, id)
		}
	}
	if a, b := show(t, s, first, false).ReceivedID, show(t, s, none, false).ReceivedID; a != "m-77" || b != "n-1" {
		t.Fatalf("after parking again: message ids %q and %q, want m-77 and n-1", a, b)
	}
}

func testRetriedParkedOldestFirst(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	var p []store.ID
	for i := range 4 {
		p = append(p, parkID(t, s, t0, parkedOf(srcWarehouse, fmt.Sprintf(`{"id":"m%d"}`, i))))
	}
	for i, id := range []store.ID{p[2], p[0], p[1]} { // retried in this order; p[3] stays failed
		if err := s.Retry(ctx, t0.Add(time.Duration(i+1)*time.Minute), []store.ID{id}); err != nil {
			t.Fatalf("Retry %s: %v", id, err)
		}
	}
	got, err := s.RetriedParked(ctx, 2)
	if err != nil {
		t.Fatalf("RetriedParked: %v", err)
	}
	if len(got) != 2 || got[0].ID != p[2].N || got[1].ID != p[0].N {
		t.Fatalf("RetriedParked(2) = %+v, want %s, %s", got, p[2], p[0])
	}
	if got[0].Source != srcWarehouse || string(got[0].Body) != `{"id":"m2"}` || got[0].Reason != store.ReasonUnlistedType || got[0].WireType != "order.shipped" {
		t.Fatalf("RetriedParked()[0] = %+v", got[0])
	}
	if all, err := s.RetriedParked(ctx, 20); err != nil || len(all) != 3 {
		t.Fatalf("RetriedParked(20) = %d, %v; want 3", len(all), err)
	}
	if none, err := s.RetriedParked(ctx, 0); err != nil || len(none) != 0 {
		t.Fatalf("RetriedParked(0) = %d, %v; want none", len(none), err)
	}
}

func testClaimAndSettle(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order", "notify")), store.Kept)
	lease := 30 * time.Second
	c := claim(t, s, t0, 10, lease)
	if len(c) != 2 {
		t.Fatalf("claimed %d, want 2", len(c))
	}
	for _, d := range c {
		if d.Attempt != 1 || d.Source != srcWarehouse || d.ReceivedID != "m1" || d.EventName != eventShipped ||
			!d.LeaseExpiresAt.Equal(t0.Add(lease)) || d.OutboxID == 0 || d.MaxAttempts != 0 {
			t.Fatalf("claimed %+v", d)
		}
	}
	if c[0].Subscriber == c[1].Subscriber {
		t.Fatalf("both claims are for %s", c[0].Subscriber)
	}
	// Held: not claimed again while the lease lasts.
	if again := claim(t, s, t0.Add(lease), 10, lease); len(again) != 0 {
		t.Fatalf("claimed %d running deliveries within their lease", len(again))
	}
	done, retry := c[0], c[1]
	if !settle(t, s, t0.Add(time.Second), store.Settlement{ID: done.ID, Token: done.Token, Outcome: store.SettleSucceeded}) {
		t.Fatal("settling a held delivery as succeeded changed nothing")
	}
	if settle(t, s, t0.Add(2*time.Second), store.Settlement{ID: done.ID, Token: done.Token, Outcome: store.SettleFailed}) {
		t.Fatal("a settled delivery was settled again")
	}
	next := t0.Add(time.Minute)
	if !settle(t, s, t0.Add(time.Second), store.Settlement{ID: retry.ID, Token: retry.Token, Outcome: store.SettleRetryWait, RetryAfter: next.Sub(t0.Add(time.Second)), ErrorCode: "http.429"}) {
		t.Fatal("settling a held delivery as retry_wait changed nothing")
	}
	if early := claim(t, s, next.Add(-time.Microsecond), 10, lease); len(early) != 0 {
		t.Fatalf("claimed %d deliveries before their next attempt", len(early))
	}
	second := claim(t, s, next, 10, lease)
	if len(second) != 1 || second[0].ID != retry.ID || second[0].Attempt != 2 || second[0].Token == retry.Token {
		t.Fatalf("second claim = %+v, want d%d attempt 2 with a new token", second, retry.ID)
	}
	if !settle(t, s, next, store.Settlement{ID: retry.ID, Token: second[0].Token, Outcome: store.SettleFailed, ErrorCode: "http.500"}) {
		t.Fatal("settling as failed changed nothing")
	}
	st := stats(t, s)
	if st.Deliveries[store.DeliverySucceeded] != 1 || st.Deliveries[store.DeliveryFailed] != 1 || st.DeliveriesTotal() != 2 {
		t.Fatalf("deliveries = %v, want one succeeded, one failed", st.Deliveries)
	}
	failed := list(t, s, store.Filter{})
	wantIDs(t, "failed", failed, store.DeliveryID(retry.ID))
	e := failed[0]
	if e.Code != "http.500" || e.Attempts != 2 || e.RowState != "failed" || !e.SettledAt.Equal(next) ||
		e.Label() != "subscriber "+retry.Subscriber+" · OrderShipped" {
		t.Fatalf("failed entry = %+v (label %q)", e, e.Label())
	}
	// A settlement that is not one is refused before the store is touched.
	if _, err := s.SettleDelivery(context.Background(), next, store.Settlement{ID: retry.ID, Token: second[0].Token, Outcome: store.SettleRetryWait, RetryAfter: -time.Second}); err == nil {
		t.Fatal("retry_wait with a negative delay was accepted")
	}
}

func testClaimLimitAndDue(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	for i := range 5 {
		wantOutcomes(t, keepBatch(t, s, t0.Add(time.Duration(i)*time.Second), keepOf(srcWarehouse, fmt.Sprint("m", i), "pack_order")), store.Kept)
	}
	now := t0.Add(time.Hour)
	var got []int
	for {
		c := claim(t, s, now, 2, time.Minute)
		if len(c) == 0 {
			break
		}
		if len(c) > 2 {
			t.Fatalf("claimed %d with a limit of 2", len(c))
		}
		got = append(got, len(c))
	}
	if !slices.Equal(got, []int{2, 2, 1}) {
		t.Fatalf("claims = %v, want 2, 2, 1", got)
	}
	if c, err := s.ClaimDeliveries(context.Background(), now, 0, time.Minute); err != nil || len(c) != 0 {
		t.Fatalf("ClaimDeliveries(limit 0) = %v, %v", c, err)
	}
	if _, err := s.ClaimDeliveries(context.Background(), now, 1, 0); err == nil {
		t.Fatal("a claim without a lease was accepted")
	}
}

// SettleDeliveries settles many deliveries in one transaction, each under
// its own token: a stale token changes its own row and no other, and an
// invalid settlement commits nothing.
func testSettleDeliveriesEachUnderItsToken(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order"), keepOf(srcWarehouse, "m2", "pack_order"),
		keepOf(srcWarehouse, "m3", "pack_order")), store.Kept, store.Kept, store.Kept)
	lease := 30 * time.Second
	first := claim(t, s, t0, 1, lease)
	if len(first) != 1 || !settle(t, s, t0, store.Settlement{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleStarted}) {
		t.Fatalf("claimed %+v, its start not written", first)
	}
	later := t0.Add(lease + time.Second)
	second := claim(t, s, later, 10, lease)
	if len(first) != 1 || len(second) != 3 {
		t.Fatalf("claimed %d then %d, want 1 then 3", len(first), len(second))
	}
	var taken store.Claimed
	var others []store.Claimed
	for _, c := range second {
		if c.ID == first[0].ID {
			taken = c
		} else {
			others = append(others, c)
		}
	}
	if taken.ID == 0 || taken.Token == first[0].Token || len(others) != 2 {
		t.Fatalf("second claim %+v does not take d%d over", second, first[0].ID)
	}
	next := later.Add(time.Minute)
	ok, err := s.SettleDeliveries(ctx, later, []store.Settlement{
		{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleFailed, ErrorCode: "late"},
		{ID: others[0].ID, Token: others[0].Token, Outcome: store.SettleSucceeded},
		{ID: others[1].ID, Token: others[1].Token, Outcome: store.SettleRetryWait, RetryAfter: next.Sub(later), ErrorCode: "http.429"},
	})
	if err != nil || len(ok) != 3 || ok[0] || !ok[1] || !ok[2] {
		t.Fatalf("SettleDeliveries = %v, %v; want [false true true]", ok, err)
	}
	if e := show(t, s, store.DeliveryID(taken.ID), false); e.RowState != "running" || e.Attempts != 2 || e.Code != "" {
		t.Fatalf("after the stale settlement: %+v, want running, attempt 2, no error code", e)
	}
	if e := show(t, s, store.DeliveryID(others[0].ID), false); e.RowState != "succeeded" || !e.SettledAt.Equal(later) {
		t.Fatalf("settled in the batch: %+v, want succeeded at %v", e, later)
	}
	if e := show(t, s, store.DeliveryID(others[1].ID), false); e.RowState != "retry_wait" || e.Code != "http.429" || !e.NextAttemptAt.Equal(next) {
		t.Fatalf("retried in the batch: %+v, want retry_wait, http.429, next %v", e, next)
	}
	// An invalid settlement fails the call: nothing is committed, not even the valid one.
	if _, err := s.SettleDeliveries(ctx, later, []store.Settlement{
		{ID: taken.ID, Token: taken.Token, Outcome: store.SettleSucceeded},
		{ID: others[1].ID, Token: others[1].Token, Outcome: store.SettleRetryWait, RetryAfter: -time.Second},
	}); err == nil {
		t.Fatal("a batch holding retry_wait with a negative delay was accepted")
	}
	if e := show(t, s, store.DeliveryID(taken.ID), false); e.RowState != "running" {
		t.Fatalf("after the refused batch: %s, want running", e.RowState)
	}
	if ok, err := s.SettleDeliveries(ctx, later, nil); err != nil || len(ok) != 0 {
		t.Fatalf("an empty batch: %v, %v", ok, err)
	}
	ok, err = s.SettleDeliveries(ctx, later, []store.Settlement{{ID: taken.ID, Token: taken.Token, Outcome: store.SettleSucceeded}})
	if err != nil || len(ok) != 1 || !ok[0] {
		t.Fatalf("the current token: %v, %v", ok, err)
	}
	if st := stats(t, s); st.Deliveries[store.DeliverySucceeded] != 2 || st.Deliveries[store.DeliveryRetryWait] != 1 {
		t.Fatalf("deliveries = %v, want 2 succeeded, 1 retry_wait", st.Deliveries)
	}
}

// Many settlements in one call, out of id order, one of them stale and one a delivery
// named twice: each is written under its own token (the stale one changes nothing, the
// second naming finds the delivery settled), and the claim sees them all.
func testSettleManyAndClaim(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order"), keepOf(srcWarehouse, "m2", "pack_order"),
		keepOf(srcWarehouse, "m3", "pack_order"), keepOf(srcWarehouse, "m4", "pack_order")), store.Kept, store.Kept, store.Kept, store.Kept)
	lease := 30 * time.Second
	held := claim(t, s, t0, 4, lease)
	if len(held) != 4 {
		t.Fatalf("claimed %d, want 4", len(held))
	}
	at := t0.Add(time.Second)
	ok, claimed, err := s.SettleAndClaim(ctx, at, []store.Settlement{
		{ID: held[2].ID, Token: held[2].Token, Outcome: store.SettleRetryWait, ErrorCode: "http.503"},
		{ID: held[0].ID, Token: held[0].Token - 1, Outcome: store.SettleSucceeded}, // stale
		{ID: held[1].ID, Token: held[1].Token, Outcome: store.SettleFailed, ErrorCode: "http.400"},
	}, 10, lease)
	if err != nil || len(ok) != 3 || !ok[0] || ok[1] || !ok[2] {
		t.Fatalf("SettleAndClaim = %v, %v; want [true false true]", ok, err)
	}
	if len(claimed) != 1 || claimed[0].ID != held[2].ID || claimed[0].Attempt != 2 {
		t.Fatalf("claimed %+v, want d%d again, attempt 2", claimed, held[2].ID)
	}
	if e := show(t, s, store.DeliveryID(held[0].ID), false); e.RowState != "running" {
		t.Fatalf("after the stale settlement: %s, want running", e.RowState)
	}
	if e := show(t, s, store.DeliveryID(held[1].ID), false); e.RowState != "failed" || e.Code != "http.400" {
		t.Fatalf("failed in the batch: %+v", e)
	}
	ok, _, err = s.SettleAndClaim(ctx, at, []store.Settlement{
		{ID: held[3].ID, Token: held[3].Token, Outcome: store.SettleSucceeded},
		{ID: held[3].ID, Token: held[3].Token, Outcome: store.SettleFailed, ErrorCode: "late"},
		{ID: held[0].ID, Token: held[0].Token, Outcome: store.SettleSucceeded},
	}, 0, 0)
	if err != nil || len(ok) != 3 || !ok[0] || ok[1] || !ok[2] {
		t.Fatalf("a delivery named twice: %v, %v; want [true false true]", ok, err)
	}
	if e := show(t, s, store.DeliveryID(held[3].ID), false); e.RowState != "succeeded" || e.Code != "" {
		t.Fatalf("named twice: %+v, want succeeded by the first", e)
	}
}

// A released claim (its handler never ran) is pending again and due at
// once, with the attempt its claim counted uncounted and its last error
// kept; under a stale token it changes nothing, and a claim in the same
// transaction takes it again with the same attempt number and a new token.
func testReleaseUncountsTheAttempt(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order")), store.Kept)
	lease := 30 * time.Second
	first := claim(t, s, t0, 1, lease)
	if len(first) != 1 || !settle(t, s, t0, store.Settlement{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleRetryWait, ErrorCode: "http.503"}) {
		t.Fatalf("claiming and retrying: %+v", first)
	}
	second := claim(t, s, t0.Add(time.Second), 1, lease)
	if len(second) != 1 || second[0].Attempt != 2 {
		t.Fatalf("second claim %+v, want attempt 2", second)
	}
	at := t0.Add(2 * time.Second)
	if settle(t, s, at, store.Settlement{ID: second[0].ID, Token: first[0].Token, Outcome: store.SettleReleased}) {
		t.Fatal("a release under a stale token changed the delivery")
	}
	if !settle(t, s, at, store.Settlement{ID: second[0].ID, Token: second[0].Token, Outcome: store.SettleReleased, ErrorCode: "ignored"}) {
		t.Fatal("releasing a held delivery changed nothing")
	}
	e := show(t, s, store.DeliveryID(second[0].ID), false)
	if e.RowState != "pending" || e.Attempts != 1 || e.Code != "http.503" || !e.NextAttemptAt.Equal(at) || !e.SettledAt.IsZero() {
		t.Fatalf("released: %+v, want pending, 1 attempt, http.503 kept, due at %v", e, at)
	}
	if settle(t, s, at, store.Settlement{ID: second[0].ID, Token: second[0].Token, Outcome: store.SettleSucceeded}) {
		t.Fatal("a released claim's token settled the delivery")
	}
	third := claim(t, s, at, 1, lease)
	if len(third) != 1 || third[0].Attempt != 2 || third[0].Token == second[0].Token {
		t.Fatalf("claim after the release %+v, want attempt 2 again with a new token", third)
	}
	ok, again, err := s.SettleAndClaim(ctx, at, []store.Settlement{{ID: third[0].ID, Token: third[0].Token, Outcome: store.SettleReleased}}, 1, lease)
	if err != nil || len(ok) != 1 || !ok[0] || len(again) != 1 || again[0].ID != third[0].ID || again[0].Attempt != 2 {
		t.Fatalf("release and claim in one transaction: %v %+v %v, want it claimed again as attempt 2", ok, again, err)
	}
}

// SettleAndClaim settles and then claims in one transaction: the claim
// sees the settlements (a retry due now is claimed again) and skips what
// is still held.
func testSettleAndClaim(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order"), keepOf(srcWarehouse, "m2", "pack_order"),
		keepOf(srcWarehouse, "m3", "pack_order")), store.Kept, store.Kept, store.Kept)
	lease := 30 * time.Second
	held := claim(t, s, t0, 2, lease)
	if len(held) != 2 {
		t.Fatalf("claimed %d, want 2", len(held))
	}
	at := t0.Add(time.Second)
	// held[0] succeeds, held[1] stays running; the third is due.
	ok, claimed, err := s.SettleAndClaim(ctx, at, []store.Settlement{{ID: held[0].ID, Token: held[0].Token, Outcome: store.SettleSucceeded}}, 10, lease)
	if err != nil || len(ok) != 1 || !ok[0] {
		t.Fatalf("SettleAndClaim = %v, %v", ok, err)
	}
	if len(claimed) != 1 || claimed[0].ID == held[0].ID || claimed[0].ID == held[1].ID || claimed[0].Attempt != 1 ||
		!claimed[0].LeaseExpiresAt.Equal(at.Add(lease)) || claimed[0].EventName != eventShipped || len(claimed[0].EventJSON) == 0 {
		t.Fatalf("claimed %+v, want the third delivery, attempt 1, with its event", claimed)
	}
	if e := show(t, s, store.DeliveryID(held[0].ID), false); e.RowState != "succeeded" {
		t.Fatalf("settled: %s", e.RowState)
	}
	// A retry due at once is claimed again by the same call, attempt 2.
	ok, claimed, err = s.SettleAndClaim(ctx, at, []store.Settlement{{ID: held[1].ID, Token: held[1].Token, Outcome: store.SettleRetryWait, ErrorCode: "http.503"}}, 10, lease)
	if err != nil || !ok[0] || len(claimed) != 1 || claimed[0].ID != held[1].ID || claimed[0].Attempt != 2 || claimed[0].Token == held[1].Token {
		t.Fatalf("settle a retry due now and claim: %v %+v %v", ok, claimed, err)
	}
	// Claiming only, and a lease that is not one.
	if _, c, err := s.SettleAndClaim(ctx, at, nil, 10, lease); err != nil || len(c) != 0 {
		t.Fatalf("nothing due: %+v %v", c, err)
	}
	if _, _, err := s.SettleAndClaim(ctx, at, nil, 10, 0); err == nil {
		t.Fatal("a claim without a lease was accepted")
	}
}

func testLeaseExpiryTakeover(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order")), store.Kept)
	lease := 30 * time.Second
	first := claim(t, s, t0, 10, lease)
	if len(first) != 1 {
		t.Fatalf("claimed %d, want 1", len(first))
	}
	if c := claim(t, s, t0.Add(lease), 10, lease); len(c) != 0 {
		t.Fatalf("claimed at the lease's end: %+v", c)
	}
	if !settle(t, s, t0, store.Settlement{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleStarted}) {
		t.Fatal("the handler's start was not written")
	}
	// The first worker crashed: its lease expires, another takes the delivery over.
	later := t0.Add(lease + time.Second)
	second := claim(t, s, later, 10, lease)
	if len(second) != 1 || second[0].ID != first[0].ID || second[0].Attempt != 2 || second[0].Token == first[0].Token {
		t.Fatalf("takeover = %+v, want d%d, attempt 2, a new token", second, first[0].ID)
	}
	// The late first worker settles: nothing changes.
	if settle(t, s, later, store.Settlement{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleFailed, ErrorCode: "late"}) {
		t.Fatal("a stale token settled the delivery")
	}
	e := show(t, s, store.DeliveryID(first[0].ID), false)
	if e.RowState != "running" || e.Attempts != 2 || e.Code != "" {
		t.Fatalf("after the stale settlement: %+v, want running, attempt 2, no error code", e)
	}
	if !settle(t, s, later, store.Settlement{ID: second[0].ID, Token: second[0].Token, Outcome: store.SettleSucceeded}) {
		t.Fatal("the current token did not settle the delivery")
	}
	if e := show(t, s, store.DeliveryID(first[0].ID), false); e.RowState != "succeeded" {
		t.Fatalf("state = %s, want succeeded", e.RowState)
	}
}

// A claim whose handler never started (its holder died before writing SettleStarted)
// is not an attempt: when its lease ends, the next claim has the same attempt number.
// SettleStarted keeps the claim (running, same token, same lease) and counts it for good;
// under a stale token it changes nothing.
func testUnstartedClaimIsNotAnAttempt(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m1", "pack_order")), store.Kept)
	lease := 30 * time.Second
	first := claim(t, s, t0, 10, lease)
	at := t0
	for i := range 3 {
		at = at.Add(lease + time.Second)
		again := claim(t, s, at, 10, lease)
		if len(again) != 1 || again[0].Attempt != 1 || again[0].Token == first[0].Token {
			t.Fatalf("claim %d after an unstarted lease ended: %+v, want attempt 1, a new token", i+2, again)
		}
		if settle(t, s, at, store.Settlement{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleStarted}) {
			t.Fatal("a stale token wrote a handler's start")
		}
		first = again
	}
	// Starts written together with other settlements, each under its own token.
	wantOutcomes(t, keepBatch(t, s, at, keepOf(srcWarehouse, "m2", "pack_order")), store.Kept)
	other := claim(t, s, at, 10, lease)
	if len(other) != 1 {
		t.Fatalf("claimed %+v, want m2's delivery", other)
	}
	ok, err := s.SettleDeliveries(context.Background(), at.Add(time.Second), []store.Settlement{
		{ID: first[0].ID, Token: first[0].Token - 1, Outcome: store.SettleStarted},
		{ID: other[0].ID, Token: other[0].Token, Outcome: store.SettleSucceeded},
		{ID: first[0].ID, Token: first[0].Token, Outcome: store.SettleStarted},
	})
	if err != nil || !slices.Equal(ok, []bool{false, true, true}) {
		t.Fatalf("SettleDeliveries with starts = %v, %v; want [false true true]", ok, err)
	}
	e := show(t, s, store.DeliveryID(first[0].ID), false)
	if e.RowState != "running" || e.Attempts != 1 {
		t.Fatalf("after the start: %+v, want running, attempt 1", e)
	}
	if c := claim(t, s, at.Add(lease-time.Microsecond), 10, lease); len(c) != 0 {
		t.Fatalf("the start changed the lease: claimed %+v before it ended", c)
	}
	taken := claim(t, s, at.Add(lease+time.Second), 10, lease)
	if len(taken) != 1 || taken[0].Attempt != 2 {
		t.Fatalf("after a started lease ended: %+v, want attempt 2", taken)
	}
	if !settle(t, s, at.Add(lease+time.Second), store.Settlement{ID: taken[0].ID, Token: taken[0].Token, Outcome: store.SettleSucceeded}) {
		t.Fatal("a claim whose start was never written did not settle")
	}
	if e := show(t, s, store.DeliveryID(taken[0].ID), false); e.RowState != "succeeded" || e.Attempts != 2 {
		t.Fatalf("settled: %+v", e)
	}
}

func testConcurrentClaims(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	const n = 60
	var keeps []store.Keep
	for i := range n / 2 {
		keeps = append(keeps, keepOf(srcWarehouse, fmt.Sprint("m", i), "pack_order", "notify"))
	}
	keepBatch(t, s, t0, keeps...)
	const workers = 8
	claimed := make([][]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for {
				c, err := s.ClaimDeliveries(context.Background(), t0, 3, time.Minute)
				if err != nil {
					errs[w] = err
					return
				}
				if len(c) == 0 {
					return
				}
				for _, d := range c {
					claimed[w] = append(claimed[w], d.ID)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	times := map[int64]int{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		for _, id := range claimed[w] {
			times[id]++
		}
	}
	if len(times) != n {
		t.Fatalf("%d deliveries claimed, want %d", len(times), n)
	}
	for id, k := range times {
		if k != 1 {
			t.Errorf("d%d claimed %d times", id, k)
		}
	}
	if st := stats(t, s); st.Deliveries[store.DeliveryRunning] != n {
		t.Fatalf("deliveries = %v, want %d running", st.Deliveries, n)
	}
}

func wantStateError(t *testing.T, err error, op string, want ...store.Refusal) {
	t.Helper()
	var se *store.StateError
	if !errors.As(err, &se) {
		t.Fatalf("%s = %v, want a *store.StateError", op, err)
	}
	if se.Op != op || !slices.Equal(se.Refused, want) {
		t.Fatalf("%s refused %+v (op %q), want %+v", op, se.Refused, se.Op, want)
	}
	for _, r := range want {
		if !strings.Contains(err.Error(), r.ID.String()) || !strings.Contains(err.Error(), r.State) {
			t.Fatalf("error %q does not name %s and %s", err, r.ID, r.State)
		}
	}
}

func testRetryDismissStateMachine(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	d1 := failedDelivery(t, s, t0, "m1", "pack_order")
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m2", "notify")), store.Kept)
	c := claim(t, s, t0, 10, time.Minute)
	if len(c) != 1 {
		t.Fatalf("claimed %d, want 1", len(c))
	}
	d2 := c[0].ID
	settle(t, s, t0, store.Settlement{ID: d2, Token: c[0].Token, Outcome: store.SettleSucceeded})
	p1 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"p"}`))
	before := list(t, s, store.Filter{State: store.ListAll})
	later := t0.Add(time.Hour)

	// Refusals change nothing at all.
	wantStateError(t, s.Retry(ctx, later, []store.ID{store.DeliveryID(d1), p1, store.DeliveryID(d2)}), "retry",
		store.Refusal{ID: store.DeliveryID(d2), State: "succeeded"})
	wantStateError(t, s.Retry(ctx, later, []store.ID{store.DeliveryID(d1), store.DeliveryID(999), store.ParkedID(999)}), "retry",
		store.Refusal{ID: store.DeliveryID(999), State: store.StateUnknown}, store.Refusal{ID: store.ParkedID(999), State: store.StateUnknown})
	wantStateError(t, s.Dismiss(ctx, later, []store.ID{p1, store.DeliveryID(d2), store.DeliveryID(d1)}), "dismiss",
		store.Refusal{ID: store.DeliveryID(d2), State: "succeeded"})
	if after := list(t, s, store.Filter{State: store.ListAll}); !slices.EqualFunc(before, after, sameEntry) {
		t.Fatalf("a refused call changed the listing:\nbefore %+v\nafter  %+v", before, after)
	}

	// Retry: the delivery is pending with a fresh budget, due now; the parked message pending.
	if err := s.Retry(ctx, later, []store.ID{store.DeliveryID(d1), p1, store.DeliveryID(d1)}); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	e := show(t, s, store.DeliveryID(d1), false)
	if e.State != store.ListPending || e.RowState != "pending" || e.Attempts != 0 || !e.NextAttemptAt.Equal(later) || !e.UpdatedAt.Equal(later) {
		t.Fatalf("retried d%d = %+v, want pending, 0 attempts, due %v", d1, e, later)
	}
	if e := show(t, s, p1, false); e.State != store.ListPending {
		t.Fatalf("retried p1 = %+v, want pending", e)
	}
	wantIDs(t, "pending", list(t, s, store.Filter{State: store.ListPending}), store.DeliveryID(d1), p1)
	wantIDs(t, "failed", list(t, s, store.Filter{}))
	// Pending is not failed: neither retried nor dismissed again.
	wantStateError(t, s.Retry(ctx, later, []store.ID{p1}), "retry", store.Refusal{ID: p1, State: "pending"})
	again := claim(t, s, later, 10, time.Minute)
	if len(again) != 1 || again[0].ID != d1 || again[0].Attempt != 1 {
		t.Fatalf("claim after retry = %+v, want d%d attempt 1", again, d1)
	}
	// A running delivery shows its lease's end, and no next attempt: a process holds it.
	if e := show(t, s, store.DeliveryID(d1), false); e.RowState != "running" || !e.LeaseUntil.Equal(again[0].LeaseExpiresAt) || !e.NextAttemptAt.IsZero() {
		t.Fatalf("claimed d%d = %+v, want running, its lease until %v", d1, e, again[0].LeaseExpiresAt)
	}
	wantStateError(t, s.Dismiss(ctx, later, []store.ID{store.DeliveryID(d1)}), "dismiss", store.Refusal{ID: store.DeliveryID(d1), State: "running"})

	// Dismiss: failed ones set aside.
	settle(t, s, later, store.Settlement{ID: d1, Token: again[0].Token, Outcome: store.SettleFailed, ErrorCode: "http.500"})
	park(t, s, later, store.Parked{Source: srcWarehouse, Reason: store.ReasonUnreadable, Body: []byte("not json"),
		RetriedParkedID: p1.N})
	if err := s.Dismiss(ctx, later, []store.ID{store.DeliveryID(d1), p1}); err != nil {
		t.Fatalf("Dismiss: %v", err)
	}
	dismissed := list(t, s, store.Filter{State: store.ListDismissed})
	wantIDs(t, "dismissed", dismissed, store.DeliveryID(d1), p1)
	for _, e := range dismissed {
		if e.State != store.ListDismissed || !e.DismissedAt.Equal(later) {
			t.Fatalf("dismissed entry %+v, want dismissed at %v", e, later)
		}
	}
	wantStateError(t, s.Retry(ctx, later, []store.ID{p1}), "retry", store.Refusal{ID: p1, State: "dismissed"})
	wantStateError(t, s.Dismiss(ctx, later, []store.ID{store.DeliveryID(d1)}), "dismiss", store.Refusal{ID: store.DeliveryID(d1), State: "dismissed"})
	if err := s.Retry(ctx, later, nil); err != nil {
		t.Fatalf("Retry of nothing: %v", err)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sameEntry compares what a listing shows.
func sameEntry(a, b store.Entry) bool {
	return a.ID == b.ID && a.State == b.State && a.RowState == b.RowState && a.Attempts == b.Attempts &&
		a.Code == b.Code && a.UpdatedAt.Equal(b.UpdatedAt) && a.NextAttemptAt.Equal(b.NextAttemptAt) &&
		a.DismissedAt.Equal(b.DismissedAt)
}

func testListAndShow(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	d1 := failedDelivery(t, s, t0, "m1", "pack_order")
	p1 := parkID(t, s, t0.Add(time.Second), store.Parked{Source: srcWarehouse, WireType: "order.shipped", EventName: eventShipped,
		Reason: store.ReasonUnreadable, Problems: []store.Problem{{Field: "order_id", Rule: "required"}}, Body: []byte(`{"type":"order.shipped"}`)})
	p2 := parkID(t, s, t0.Add(2*time.Second), store.Parked{Source: srcWarehouse, WireType: "order.lost", Reason: store.ReasonUnlistedType, Body: []byte(`{"type":"order.lost"}`)})
	p3 := parkID(t, s, t0.Add(3*time.Second), store.Parked{Source: srcReturns, Reason: store.ReasonUnreadable, Body: []byte(`not json`)})
	wantOutcomes(t, keepBatch(t, s, t0.Add(4*time.Second), keepOf(srcWarehouse, "m2", "notify")), store.Kept)

	failed := list(t, s, store.Filter{State: store.ListFailed})
	wantIDs(t, "failed", failed, store.DeliveryID(d1), p1, p2, p3)
	labels := []string{
		"subscriber pack_order · OrderShipped",
		"queue warehouse_queue · OrderShipped",
		"queue warehouse_queue · order.lost",
		"queue returns_queue · ?",
	}
	for i, e := range failed {
		if e.Label() != labels[i] {
			t.Errorf("label of %s = %q, want %q", e.ID, e.Label(), labels[i])
		}
		if e.Body != nil {
			t.Errorf("List gave the body of %s", e.ID)
		}
	}
	if failed[1].Code != "unreadable" || failed[2].Code != "unlisted_type" || failed[0].Code != "http.500" {
		t.Errorf("codes = %q, %q, %q", failed[0].Code, failed[1].Code, failed[2].Code)
	}
	wantIDs(t, "limited", list(t, s, store.Filter{State: store.ListFailed, Limit: 2}), store.DeliveryID(d1), p1)
	pending := list(t, s, store.Filter{State: store.ListPending})
	if len(pending) != 1 || pending[0].Subscriber != "notify" || pending[0].RowState != "pending" {
		t.Fatalf("pending = %+v, want the notify delivery", pending)
	}
	if all := list(t, s, store.Filter{State: store.ListAll}); len(all) != 5 {
		t.Fatalf("all = %v, want 5 entries", ids(all))
	}
	if _, err := s.List(ctx, store.Filter{State: "exploded"}); err == nil {
		t.Fatal("List with an unknown state succeeded")
	}

	e := show(t, s, p1, false)
	if e.Body != nil || e.Source != srcWarehouse || e.WireType != "order.shipped" || e.EventName != eventShipped ||
		!slices.Equal(e.Problems, []store.Problem{{Field: "order_id", Rule: "required"}}) || !e.CreatedAt.Equal(t0.Add(time.Second)) ||
		e.BodySHA256 != sha256Hex(`{"type":"order.shipped"}`) {
		t.Fatalf("Show p1 = %+v", e)
	}
	if e := show(t, s, p1, true); string(e.Body) != `{"type":"order.shipped"}` {
		t.Fatalf("Show p1 with body = %q", e.Body)
	}
	e = show(t, s, store.DeliveryID(d1), true)
	if string(e.Body) != string(keepOf(srcWarehouse, "m1").EventJSON) || e.ReceivedID != "m1" || e.Source != srcWarehouse ||
		e.Subscriber != "pack_order" || e.Attempts != 1 || e.Code != "http.500" {
		t.Fatalf("Show d%d with body = %+v", d1, e)
	}
	if e := show(t, s, store.DeliveryID(d1), false); e.Body != nil {
		t.Fatalf("Show without body gave %q", e.Body)
	}
	for _, id := range []store.ID{store.DeliveryID(999), store.ParkedID(999)} {
		if _, err := s.Show(ctx, id, false); !errors.Is(err, store.ErrUnknownID) || !strings.Contains(err.Error(), id.String()) {
			t.Fatalf("Show %s = %v, want ErrUnknownID naming it", id, err)
		}
	}
}

func testHousekeep(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	d1 := failedDelivery(t, s, t0, "old", "pack_order")
	d2 := failedDelivery(t, s, t0, "old-failed", "pack_order")
	p1 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"dismissed"}`))
	p2 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"failed"}`))
	if err := s.Dismiss(ctx, t0, []store.ID{store.DeliveryID(d1), p1}); err != nil {
		t.Fatalf("Dismiss: %v", err)
	}
	wantOutcomes(t, keepBatch(t, s, t0.Add(24*time.Hour), keepOf(srcWarehouse, "new", "pack_order")), store.Kept)
	newer := list(t, s, store.Filter{State: store.ListPending})
	if len(newer) != 1 {
		t.Fatalf("pending = %v, want the new message's delivery", ids(newer))
	}

	h0 := housekeep(t, s, t0.Add(store.HousekeepAfter), store.Housekeeping{})
	if h0.Total() != 0 {
		t.Fatalf("Housekeep at exactly 30 days deleted %+v", h0)
	}
	// The dismissed delivery's outbox row (settled when dismissed, 30 days ago) goes
	// with it.
	h1 := housekeep(t, s, t0.Add(store.HousekeepAfter+time.Microsecond), store.Housekeeping{})
	if deletedOf(h1) != (deleted{Received: 2, Parked: 1, Deliveries: 1, Outbox: 1}) {
		t.Fatalf("Housekeep after 30 days = %+v, want 2 received ids, 1 parked message, 1 delivery, 1 outbox row", h1)
	}
	wantIDs(t, "left", list(t, s, store.Filter{State: store.ListAll}), store.DeliveryID(d2), p2, newer[0].ID)
	// A forgotten id is kept again; a remembered one is a repeat.
	wantOutcomes(t, keepBatch(t, s, t0.Add(store.HousekeepAfter+time.Hour), keepOf(srcWarehouse, "old", "pack_order"), keepOf(srcWarehouse, "new", "pack_order")),
		store.Kept, store.Repeat)
	if h2 := housekeep(t, s, t0.Add(store.HousekeepAfter+time.Microsecond), store.Housekeeping{}); h2.Total() != 0 {
		t.Fatalf("second Housekeep = %+v; want nothing", h2)
	}
}

// deleted is the part of Housekept the tests compare.
type deleted struct{ Received, Parked, Deliveries, Outbox int64 }

func deletedOf(h store.Housekept) deleted {
	return deleted{h.ReceivedIDs, h.ParkedMessages, h.Deliveries, h.Outbox}
}

func housekeep(t *testing.T, s Timed, now time.Time, o store.Housekeeping) store.Housekept {
	t.Helper()
	h, err := s.Housekeep(context.Background(), now, o)
	if err != nil {
		t.Fatalf("Housekeep: %v", err)
	}
	return h
}

// testHousekeepDeletesAttempts: a delivery housekeeping deletes takes its
// attempts' rows with it (the store's reads cannot show rows left behind:
// the table is counted from outside).
func testHousekeepDeletesAttempts(t *testing.T, h Harness) {
	db, s := fresh(t, h)
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m", "pack_order")), store.Kept)
	cl := claim(t, s, t0, 1, time.Minute)
	if len(cl) != 1 || !settle(t, s, t0, store.Settlement{ID: cl[0].ID, Token: cl[0].Token, Outcome: store.SettleSucceeded}) {
		t.Fatalf("claim and settle: %+v", cl)
	}
	if n := db.Count(t, "jadpo_delivery_attempts"); n != 1 {
		t.Fatalf("%d attempts written, want 1", n)
	}
	if hk := housekeep(t, s, t0.Add(48*time.Hour), store.Housekeeping{}); hk.Deliveries != 1 {
		t.Fatalf("Housekeep = %+v, want the delivery", hk)
	}
	if n := db.Count(t, "jadpo_delivery_attempts"); n != 0 {
		t.Fatalf("%d attempts left after their delivery was deleted", n)
	}
}

// testHousekeepRetentionRules: what goes and what stays, with a 2-day retention of
// succeeded deliveries and 1 day of settled outbox rows.
func testHousekeepRetentionRules(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	o := store.Housekeeping{Succeeded: 48 * time.Hour, Outbox: 24 * time.Hour}
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "succ", "pack_order"), keepOf(srcWarehouse, "two", "pack_order", "notify")),
		store.Kept, store.Kept)
	cs := claim(t, s, t0, 100, time.Minute)
	if len(cs) != 3 {
		t.Fatalf("claimed %d, want 3", len(cs))
	}
	for _, c := range cs {
		st := store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleSucceeded}
		if c.ReceivedID == "two" && c.Subscriber == "notify" {
			st = store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleRetryWait, RetryAfter: 100 * 24 * time.Hour}
		}
		if !settle(t, s, t0, st) {
			t.Fatalf("could not settle d%d", c.ID)
		}
	}
	failedDelivery(t, s, t0, "failed", "pack_order")
	dism := failedDelivery(t, s, t0, "dismissed", "pack_order")
	if err := s.Dismiss(ctx, t0.Add(10*24*time.Hour), []store.ID{store.DeliveryID(dism)}); err != nil {
		t.Fatalf("Dismiss: %v", err)
	}
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "nosub"), keepOf(srcWarehouse, "pending", "pack_order")), store.Kept, store.Kept)
	p1 := parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"dismissed"}`))
	parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"failed"}`))
	if err := s.Dismiss(ctx, t0.Add(10*24*time.Hour), []store.ID{p1}); err != nil {
		t.Fatalf("Dismiss: %v", err)
	}
	wantCounts(t, s, counts{Received: 6, Outbox: 6, Deliveries: 6, Parked: 2})

	// A day on: only the outbox row of no subscriber, settled when written.
	if got := deletedOf(housekeep(t, s, t0.Add(24*time.Hour+time.Microsecond), o)); got != (deleted{Outbox: 1}) {
		t.Fatalf("after a day deleted %+v, want the outbox row without subscriber", got)
	}
	// Exactly two days: nothing more.
	if got := deletedOf(housekeep(t, s, t0.Add(48*time.Hour), o)); got != (deleted{}) {
		t.Fatalf("at exactly two days deleted %+v", got)
	}
	// Past two days: both succeeded deliveries; "succ"'s outbox row goes with its last
	// delivery, "two"'s stays while its retry_wait delivery does.
	if got := deletedOf(housekeep(t, s, t0.Add(48*time.Hour+time.Microsecond), o)); got != (deleted{Deliveries: 2, Outbox: 1}) {
		t.Fatalf("after two days deleted %+v, want 2 deliveries and 1 outbox row", got)
	}
	// 20 days on: failed, pending, retry_wait and a delivery dismissed 10 days ago stay,
	// and so do their outbox rows and every received id.
	if got := deletedOf(housekeep(t, s, t0.Add(20*24*time.Hour), o)); got != (deleted{}) {
		t.Fatalf("after 20 days deleted %+v", got)
	}
	wantCounts(t, s, counts{Received: 6, Outbox: 4, Deliveries: 4, Parked: 2})
	st := stats(t, s)
	if st.Deliveries[store.DeliveryRetryWait] != 1 || st.Deliveries[store.DeliveryPending] != 1 ||
		st.Deliveries[store.DeliveryFailed] != 1 || st.Deliveries[store.DeliveryDismissed] != 1 {
		t.Fatalf("deliveries left = %v", st.Deliveries)
	}
	if st.BySubscriber[store.SubscriberKey{Subscriber: "notify", State: store.DeliveryRetryWait}] != 1 ||
		st.BySubscriber[store.SubscriberKey{Subscriber: "pack_order", State: store.DeliveryPending}] != 1 || len(st.BySubscriber) != 4 {
		t.Fatalf("deliveries by subscriber = %v", st.BySubscriber)
	}
	if !st.OldestPending.Equal(t0) || len(st.Tables) != 6 || st.Tables[1].Name != "jadpo_outbox" || st.Tables[1].Rows != 4 {
		t.Fatalf("oldest pending %v, tables %+v", st.OldestPending, st.Tables)
	}
	// Every table the store writes is counted, the attempts and the
	// housekeeping runs too (housekeeping has run by now).
	if st.Tables[4].Name != "jadpo_delivery_attempts" || st.Tables[5].Name != "jadpo_housekeeping_runs" || st.Tables[5].Rows < 1 {
		t.Fatalf("tables %+v: want the attempts and the housekeeping runs counted", st.Tables)
	}
	// 40 days and a moment on: received ids after 30 days, the dismissed delivery and
	// parked message 30 days after dismissal, and the dismissed delivery's outbox row.
	if got := deletedOf(housekeep(t, s, t0.Add(40*24*time.Hour+time.Microsecond), o)); got != (deleted{Received: 6, Parked: 1, Deliveries: 1, Outbox: 1}) {
		t.Fatalf("after 40 days deleted %+v", got)
	}
	wantCounts(t, s, counts{Received: 0, Outbox: 3, Deliveries: 3, Parked: 1})
}

// testHousekeepBacklogInBatches: a backlog of 200,000 deletable rows (20,000 with
// -short) goes over several calls, no statement deleting more than the batch, while
// messages are kept at the same time, by two stores at once that never count a row twice.
func testHousekeepBacklogInBatches(t *testing.T, h Harness) {
	db, s := fresh(t, h)
	s2 := migrated(t, db)
	ctx := context.Background()
	const seed = 1000
	copies := 100
	if testing.Short() {
		copies = 10
	}
	var keeps []store.Keep
	for i := range seed {
		keeps = append(keeps, keepOf(srcWarehouse, fmt.Sprintf("b%d", i)))
	}
	keepBatch(t, s, t0, keeps...)
	// Each row copied copies-1 times over: the same times, as the same rows' would be.
	series := fmt.Sprintf("(WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < %d) SELECT n FROM g) AS g", copies-1)
	db.Exec(t, `INSERT INTO jadpo_received_events (source, received_id, received_at)
SELECT source, received_id || '-' || CAST(g.n AS TEXT), received_at FROM jadpo_received_events CROSS JOIN `+series)
	db.Exec(t, `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at, headers, settled_at)
SELECT source, event_name, event_json, received_id, created_at, headers, settled_at FROM jadpo_outbox CROSS JOIN `+series)
	total := int64(2 * seed * copies)
	wantCounts(t, s, counts{Received: total / 2, Outbox: total / 2})

	const batch = 1000
	var mu sync.Mutex
	var statements int
	o := store.Housekeeping{Batch: batch, MaxBatches: 2, OnBatch: func(table string, n int64) {
		mu.Lock()
		defer mu.Unlock()
		statements++
		if n > batch {
			t.Errorf("a statement on %s deleted %d rows, more than the batch of %d", table, n, batch)
		}
	}}
	now := t0.Add(31 * 24 * time.Hour)
	var sum int64
	calls, received := 0, 0
	for {
		var wg sync.WaitGroup
		var hs [2]store.Housekept
		var errs [2]error
		for i, st := range []Timed{s, s2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hs[i], errs[i] = st.Housekeep(ctx, now, o)
			}()
		}
		// Receiving goes on while both housekeep, and its rows stay. (A SQLite keep may
		// outwait the tests' short busy timeout; it is tried again, as its queue would.)
		keep := keepOf(srcReturns, fmt.Sprintf("r%d", received), "pack_order")
		var res []store.KeepResult
		var err error
		for try := 0; try < 5; try++ {
			if res, err = s.KeepBatch(ctx, now, []store.Keep{keep}); err == nil || !store.IsTransient(err) {
				break
			}
		}
		if err != nil {
			t.Fatalf("KeepBatch while housekeeping: %v", err)
		}
		wantOutcomes(t, res, store.Kept)
		received++
		wg.Wait()
		calls++
		n := hs[0].Total() + hs[1].Total()
		for _, err := range errs {
			// SQLite's other writer may outwait the tests' short busy timeout: what
			// went before counts, the rest is left for the next call, as in a tick.
			if err != nil && !store.IsTransient(err) {
				t.Fatalf("Housekeep: %v", err)
			}
		}
		sum += n
		if n == 0 && errs[0] == nil && errs[1] == nil {
			break
		}
		if calls > 1000 {
			t.Fatalf("housekeeping does not end: %d rows in %d calls", sum, calls)
		}
	}
	if sum != total {
		t.Fatalf("housekeeping counted %d rows, want %d (each once)", sum, total)
	}
	if calls < 3 {
		t.Fatalf("the backlog went in %d calls; each call should do a bounded part", calls)
	}
	if min := int(total / batch); statements < min {
		t.Fatalf("%d statements for %d rows in batches of %d", statements, total, batch)
	}
	wantCounts(t, s, counts{Received: int64(received), Outbox: int64(received), Deliveries: int64(received)})
}

// Issue 30, item 7: a settlement's error text is kept beside its code and shown (cut to
// MaxErrorText, valid UTF-8), a released claim keeps the last one, a success keeps none; a
// succeeded delivery is listed by ListSucceeded and ListAll, never by ListFailed.
func testLastErrorTextAndSucceededListed(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m-1", "pack_order"), keepOf(srcWarehouse, "m-2", "pack_order")), store.Kept, store.Kept)
	cl := claim(t, s, t0, 10, time.Minute)
	if len(cl) != 2 {
		t.Fatalf("claimed %d", len(cl))
	}
	const text = "jobs.create_job refused: http_503 (HTTP 503, temporary)"
	if !settle(t, s, t0, store.Settlement{ID: cl[0].ID, Token: cl[0].Token, Outcome: store.SettleRetryWait, RetryAfter: time.Second, ErrorCode: "http_503", Error: text}) {
		t.Fatal("settle d1")
	}
	if !settle(t, s, t0, store.Settlement{ID: cl[1].ID, Token: cl[1].Token, Outcome: store.SettleSucceeded, Error: "ignored"}) {
		t.Fatal("settle d2")
	}
	if e := show(t, s, store.DeliveryID(cl[0].ID), false); e.Error != text || e.Code != "http_503" {
		t.Fatalf("show d1: code %q error %q", e.Code, e.Error)
	}
	// Released: the last error stays. Failed with a long text: cut.
	again := claim(t, s, t0.Add(time.Second), 10, time.Minute)
	if len(again) != 1 {
		t.Fatalf("claimed again %d", len(again))
	}
	if !settle(t, s, t0.Add(time.Second), store.Settlement{ID: again[0].ID, Token: again[0].Token, Outcome: store.SettleReleased}) {
		t.Fatal("release d1")
	}
	if e := show(t, s, store.DeliveryID(cl[0].ID), false); e.Error != text {
		t.Fatalf("a release lost the last error: %q", e.Error)
	}
	again = claim(t, s, t0.Add(2*time.Second), 10, time.Minute)
	long := strings.Repeat("é", store.MaxErrorText)
	if !settle(t, s, t0.Add(2*time.Second), store.Settlement{ID: again[0].ID, Token: again[0].Token, Outcome: store.SettleFailed, ErrorCode: "handler", Error: long}) {
		t.Fatal("fail d1")
	}
	e := show(t, s, store.DeliveryID(cl[0].ID), false)
	if len(e.Error) > store.MaxErrorText || len(e.Error) < store.MaxErrorText-1 || !utf8.ValidString(e.Error) {
		t.Fatalf("a long error kept as %d bytes (valid %v)", len(e.Error), utf8.ValidString(e.Error))
	}
	if e := show(t, s, store.DeliveryID(cl[1].ID), false); e.Error != "" || e.State != store.ListSucceeded {
		t.Fatalf("show d2: state %s error %q", e.State, e.Error)
	}
	wantIDs(t, "succeeded", list(t, s, store.Filter{State: store.ListSucceeded}), store.DeliveryID(cl[1].ID))
	wantIDs(t, "failed", list(t, s, store.Filter{State: store.ListFailed}), store.DeliveryID(cl[0].ID))
	wantIDs(t, "all", list(t, s, store.Filter{State: store.ListAll}), store.DeliveryID(cl[0].ID), store.DeliveryID(cl[1].ID))
}

// attemptsOf is a delivery's attempt log in a form to compare: "n outcome code error @s",
// the time in seconds from t0.
func attemptsOf(e store.Entry) []string {
	var out []string
	for _, a := range e.AttemptLog {
		out = append(out, fmt.Sprintf("%d %s %s %q @%v", a.N, a.Outcome, a.Code, a.Error, a.At.Sub(t0)))
	}
	return out
}

// testAttemptsOfADelivery: each settled attempt is a row with the store's time, its
// outcome, code and text; a release, a handler's start and a stale settlement write none;
// an operator's retry starts the numbers again; housekeeping deletes them with their
// delivery.
func testAttemptsOfADelivery(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	ctx := context.Background()
	wantOutcomes(t, keepBatch(t, s, t0, keepOf(srcWarehouse, "m-1", "pack_order"), keepOf(srcWarehouse, "m-2", "pack_order")), store.Kept, store.Kept)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	cl := claim(t, s, t0, 10, time.Minute)
	if len(cl) != 2 {
		t.Fatalf("claimed %d", len(cl))
	}
	d1, d2 := cl[0], cl[1]
	// Started (the batch's statement of starts), then settled in one batch.
	if ok, _, err := s.SettleAndClaim(ctx, sec(1), []store.Settlement{{ID: d1.ID, Token: d1.Token, Outcome: store.SettleStarted}, {ID: d2.ID, Token: d2.Token, Outcome: store.SettleStarted}}, 0, 0); err != nil || !ok[0] || !ok[1] {
		t.Fatalf("starting: %v %v", ok, err)
	}
	const text = "jobs.create_job refused: http_503 (HTTP 503, <temporary>)"
	if ok, err := s.SettleDeliveries(ctx, sec(2), []store.Settlement{
		{ID: d1.ID, Token: d1.Token, Outcome: store.SettleRetryWait, RetryAfter: time.Second, ErrorCode: "http_503", Error: text},
		{ID: d2.ID, Token: d2.Token, Outcome: store.SettleSucceeded, Error: "ignored"},
	}); err != nil || !ok[0] || !ok[1] {
		t.Fatalf("settling: %v %v", ok, err)
	}
	// A stale token writes nothing.
	if settle(t, s, sec(2), store.Settlement{ID: d1.ID, Token: d1.Token, Outcome: store.SettleFailed, ErrorCode: "stale"}) {
		t.Fatal("a stale token settled d1")
	}
	// Released: no attempt.
	again := claim(t, s, sec(3), 10, time.Minute)
	if len(again) != 1 || !settle(t, s, sec(3), store.Settlement{ID: again[0].ID, Token: again[0].Token, Outcome: store.SettleReleased}) {
		t.Fatalf("release d1: %+v", again)
	}
	again = claim(t, s, sec(4), 10, time.Minute)
	long := strings.Repeat("é", store.MaxErrorText)
	if len(again) != 1 || !settle(t, s, sec(5), store.Settlement{ID: again[0].ID, Token: again[0].Token, Outcome: store.SettleFailed, ErrorCode: "handler", Error: long}) {
		t.Fatalf("fail d1: %+v", again)
	}
	cut := show(t, s, store.DeliveryID(d1.ID), false).Error
	if len(cut) > store.MaxErrorText || !utf8.ValidString(cut) {
		t.Fatalf("the last error kept as %d bytes", len(cut))
	}
	if err := s.Retry(ctx, sec(6), []store.ID{store.DeliveryID(d1.ID)}); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	again = claim(t, s, sec(7), 10, time.Minute)
	if len(again) != 1 || !settle(t, s, sec(8), store.Settlement{ID: again[0].ID, Token: again[0].Token, Outcome: store.SettleSucceeded}) {
		t.Fatalf("succeed d1: %+v", again)
	}
	want := []string{
		fmt.Sprintf("1 retry_wait http_503 %q @2s", text),
		fmt.Sprintf("2 failed handler %q @5s", cut),
		`1 succeeded  "" @8s`,
	}
	if got := attemptsOf(show(t, s, store.DeliveryID(d1.ID), false)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("d1's attempts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := attemptsOf(show(t, s, store.DeliveryID(d2.ID), false)); strings.Join(got, "\n") != `1 succeeded  "" @2s` {
		t.Fatalf("d2's attempts: %q", got)
	}
	for _, e := range list(t, s, store.Filter{State: store.ListAll}) {
		if e.AttemptLog != nil {
			t.Fatalf("List read %s's attempts", e.ID)
		}
	}
	p := parkID(t, s, sec(9), parkedOf(srcWarehouse, `{"id":"p"}`))
	if e := show(t, s, p, false); e.AttemptLog != nil {
		t.Fatalf("a parked message has attempts: %+v", e.AttemptLog)
	}
	// Housekeeping deletes the succeeded deliveries, their attempts with them.
	hk := housekeep(t, s, sec(10), store.Housekeeping{Succeeded: time.Second, Outbox: time.Hour})
	if hk.Deliveries != 2 {
		t.Fatalf("Housekeep = %+v, want the 2 deliveries", hk)
	}
	if _, err := s.Show(ctx, store.DeliveryID(d1.ID), false); !errors.Is(err, store.ErrUnknownID) {
		t.Fatalf("Show after housekeeping: %v", err)
	}
}
