package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// RunBrowser runs the conformance suite of store.Browser, the console's read side: every
// adapter's store implements it, and pages by keyset.
func RunBrowser(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"BrowseParkedFiltersAndPages", testBrowseParked},
		{"BrowseDeliveriesFiltersAndPages", testBrowseDeliveries},
		{"Activity", testActivity},
		{"HousekeepingRuns", testHousekeepingRuns},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

func browser(t *testing.T, s any) store.Browser {
	t.Helper()
	if ts, ok := s.(Timed); ok {
		s = ts.Store
	}
	b, ok := s.(store.Browser)
	if !ok {
		t.Fatalf("%T does not implement store.Browser", s)
	}
	return b
}

func entryIDs(es []store.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID.String()
	}
	return out
}

func testBrowseParked(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	b := browser(t, s)
	ctx := context.Background()
	var all []store.ID
	for i := range 7 {
		p := parkedOf(srcWarehouse, fmt.Sprintf(`{"n":%d}`, i))
		if i%2 == 1 {
			p.Source = srcReturns
			p.Reason = store.ReasonUnreadable
			p.WireType = ""
			p.EventName = eventShipped
			p.Problems = []store.Problem{{Field: "order_id", Rule: "min_length"}}
		}
		if i == 4 {
			p.ReceivedID = "producer-4"
		}
		_, id := parkAs(t, s, t0.Add(time.Duration(i)*time.Minute), p)
		all = append(all, id)
	}
	if err := s.Dismiss(ctx, t0.Add(time.Hour), []store.ID{all[0]}); err != nil {
		t.Fatal(err)
	}
	browse := func(q store.ParkedQuery) []string {
		t.Helper()
		es, err := b.BrowseParked(ctx, q)
		if err != nil {
			t.Fatalf("BrowseParked(%+v): %v", q, err)
		}
		n, err := b.CountParked(ctx, store.ParkedQuery{Source: q.Source, Reason: q.Reason, State: q.State, Event: q.Event,
			ReceivedID: q.ReceivedID, From: q.From, To: q.To})
		if err != nil {
			t.Fatal(err)
		}
		if q.Before == 0 && q.Limit == 0 && n != int64(len(es)) {
			t.Errorf("CountParked(%+v) = %d, the list has %d", q, n, len(es))
		}
		for _, e := range es {
			if e.Body != nil {
				t.Errorf("%s: BrowseParked read the body", e.ID)
			}
		}
		return entryIDs(es)
	}
	want := func(q store.ParkedQuery, w ...string) {
		t.Helper()
		if got := browse(q); !slices.Equal(got, w) {
			t.Errorf("BrowseParked(%+v) = %v, want %v", q, got, w)
		}
	}
	p := func(i int) string { return all[i].String() }
	want(store.ParkedQuery{}, p(6), p(5), p(4), p(3), p(2), p(1), p(0))
	// Keyset pages: each starts below the last id of the one before.
	want(store.ParkedQuery{Limit: 3}, p(6), p(5), p(4))
	want(store.ParkedQuery{Limit: 3, Before: all[4].N}, p(3), p(2), p(1))
	want(store.ParkedQuery{Limit: 3, Before: all[1].N}, p(0))
	want(store.ParkedQuery{Source: srcReturns}, p(5), p(3), p(1))
	want(store.ParkedQuery{Reason: store.ReasonUnlistedType}, p(6), p(4), p(2), p(0))
	want(store.ParkedQuery{Reason: store.ReasonUnlistedType, State: store.ParkedFailed}, p(6), p(4), p(2))
	want(store.ParkedQuery{State: store.ParkedDismissed}, p(0))
	want(store.ParkedQuery{Event: eventShipped}, p(5), p(3), p(1))
	want(store.ParkedQuery{Event: "order.shipped"}, p(6), p(4), p(2), p(0)) // the wire type, when no event was read
	want(store.ParkedQuery{ReceivedID: "producer-4"}, p(4))
	want(store.ParkedQuery{ReceivedID: "producer"})
	want(store.ParkedQuery{From: t0.Add(2 * time.Minute), To: t0.Add(4 * time.Minute)}, p(3), p(2))
	es, err := b.BrowseParked(ctx, store.ParkedQuery{ReceivedID: "producer-4"})
	if err != nil || len(es) != 1 {
		t.Fatal(es, err)
	}
	if e := es[0]; e.Source != srcWarehouse || e.ReceivedID != "producer-4" || e.Code != string(store.ReasonUnlistedType) || e.WireType != "order.shipped" || e.BodySHA256 == "" {
		t.Errorf("entry %+v", e)
	}
}

func testBrowseDeliveries(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	b := browser(t, s)
	ctx := context.Background()
	for i := range 4 {
		keepBatch(t, s, t0.Add(time.Duration(i)*time.Minute), keepOf(srcWarehouse, fmt.Sprintf("m%d", i), "pack_order", "notify"))
	}
	// Fail the first two pack_order deliveries.
	at := t0.Add(time.Hour)
	for _, c := range claim(t, s, at, 100, time.Minute) {
		out := store.SettleSucceeded
		if c.Subscriber == "pack_order" && (c.ReceivedID == "m0" || c.ReceivedID == "m1") {
			out = store.SettleFailed
		}
		if ok, err := s.SettleDelivery(ctx, at, store.Settlement{ID: c.ID, Token: c.Token, Outcome: out, ErrorCode: "http.500"}); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	got := func(q store.DeliveryQuery) []store.Entry {
		t.Helper()
		es, err := b.BrowseDeliveries(ctx, q)
		if err != nil {
			t.Fatalf("BrowseDeliveries(%+v): %v", q, err)
		}
		if q.Before == 0 && q.Limit == 0 {
			n, err := b.CountDeliveries(ctx, q)
			if err != nil || n != int64(len(es)) {
				t.Errorf("CountDeliveries(%+v) = %d, %v; the list has %d", q, n, err, len(es))
			}
		}
		return es
	}
	all := got(store.DeliveryQuery{})
	if len(all) != 8 || !slices.IsSortedFunc(all, func(a, b store.Entry) int { return int(b.ID.N - a.ID.N) }) {
		t.Fatalf("all deliveries, newest first: %v", entryIDs(all))
	}
	first := got(store.DeliveryQuery{Limit: 5})
	rest := got(store.DeliveryQuery{Limit: 5, Before: first[len(first)-1].ID.N})
	if !slices.Equal(append(entryIDs(first), entryIDs(rest)...), entryIDs(all)) {
		t.Errorf("two keyset pages %v + %v, want %v", entryIDs(first), entryIDs(rest), entryIDs(all))
	}
	failed := got(store.DeliveryQuery{Subscriber: "pack_order", State: store.DeliveryFailed})
	if len(failed) != 2 || failed[0].ReceivedID != "m1" || failed[1].ReceivedID != "m0" || failed[0].Code != "http.500" ||
		failed[0].EventName != eventShipped || failed[0].Attempts != 1 || failed[0].Source != srcWarehouse {
		t.Errorf("failed pack_order deliveries: %+v", failed)
	}
	if n := len(got(store.DeliveryQuery{Subscriber: "notify"})); n != 4 {
		t.Errorf("notify: %d deliveries, want 4", n)
	}
	if n := len(got(store.DeliveryQuery{Event: "Other"})); n != 0 {
		t.Errorf("event Other: %d deliveries, want 0", n)
	}
	if es := got(store.DeliveryQuery{From: t0.Add(time.Minute), To: t0.Add(3 * time.Minute)}); len(es) != 4 {
		t.Errorf("written in [1m, 3m): %v, want 4", entryIDs(es))
	}
}

func testActivity(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	b := browser(t, s)
	since := t0
	keepBatch(t, s, since.Add(-time.Minute), keepOf(srcWarehouse, "before")) // before the window
	keepBatch(t, s, since, keepOf(srcWarehouse, "a"), keepOf(srcReturns, "b"))
	keepBatch(t, s, since.Add(9*time.Minute), keepOf(srcWarehouse, "c"))
	keepBatch(t, s, since.Add(10*time.Minute), keepOf(srcWarehouse, "d"))
	park(t, s, since.Add(25*time.Minute), parkedOf(srcWarehouse, "x"))
	park(t, s, since.Add(-time.Hour), parkedOf(srcWarehouse, "old"))
	got, err := b.Activity(context.Background(), since, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b store.ActivityCount) int {
		if a.Source != b.Source {
			if a.Source < b.Source {
				return -1
			}
			return 1
		}
		return a.Bucket - b.Bucket
	})
	want := []store.ActivityCount{
		{Source: srcReturns, Bucket: 0, Received: 1},
		{Source: srcWarehouse, Bucket: 0, Received: 2},
		{Source: srcWarehouse, Bucket: 1, Received: 1},
		{Source: srcWarehouse, Bucket: 2, Parked: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Activity = %+v\nwant %+v", got, want)
	}
}

// testHousekeepingRuns: each Housekeep call that deleted something is recorded with its
// counts and the store's time; one that deleted nothing is not; newest first.
func testHousekeepingRuns(t *testing.T, h Harness) {
	_, s := fresh(t, h)
	b := browser(t, s)
	ctx := context.Background()
	if runs, err := b.HousekeepingRuns(ctx, 10); err != nil || len(runs) != 0 {
		t.Fatalf("HousekeepingRuns of a fresh store = %+v, %v", runs, err)
	}
	d := failedDelivery(t, s, t0, "old", "pack_order")
	if err := s.Dismiss(ctx, t0, []store.ID{store.DeliveryID(d)}); err != nil {
		t.Fatal(err)
	}
	parkID(t, s, t0, parkedOf(srcWarehouse, `{"id":"kept"}`))
	at := t0.Add(store.HousekeepAfter + time.Hour)
	if got := housekeep(t, s, at, store.Housekeeping{}); got.Total() != 3 {
		t.Fatalf("Housekeep = %+v, want the received id, the dismissed delivery and its outbox row", got)
	}
	if got := housekeep(t, s, at.Add(time.Minute), store.Housekeeping{}); got.Total() != 0 {
		t.Fatalf("second Housekeep = %+v", got)
	}
	wantOutcomes(t, keepBatch(t, s, at, keepOf(srcWarehouse, "new", "pack_order")), store.Kept)
	later := at.Add(store.HousekeepAfter + time.Hour)
	if got := housekeep(t, s, later, store.Housekeeping{}); got.ReceivedIDs != 1 {
		t.Fatalf("third Housekeep = %+v", got)
	}
	runs, err := b.HousekeepingRuns(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.HousekeepingRun{
		{At: later, ReceivedIDs: 1},
		{At: at, ReceivedIDs: 1, Deliveries: 1, Outbox: 1},
	}
	if len(runs) != len(want) {
		t.Fatalf("HousekeepingRuns = %+v, want %+v", runs, want)
	}
	for i := range want {
		if !runs[i].At.Equal(want[i].At) || runs[i].ReceivedIDs != want[i].ReceivedIDs || runs[i].ParkedMessages != want[i].ParkedMessages ||
			runs[i].Deliveries != want[i].Deliveries || runs[i].Outbox != want[i].Outbox || runs[i].More {
			t.Fatalf("HousekeepingRuns = %+v, want %+v", runs, want)
		}
	}
	if one, err := b.HousekeepingRuns(ctx, 1); err != nil || len(one) != 1 || !one[0].At.Equal(later) {
		t.Fatalf("HousekeepingRuns(1) = %+v, %v", one, err)
	}
}
