package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// StoreCounts counts what a PostgreSQL store holds, read with SQL on its schema.
type StoreCounts struct {
	Outbox, ReceivedIDs, Deliveries, Parked int
	// DeliveryStates counts deliveries by state.
	DeliveryStates map[string]int
}

// PGStoreCounts reads the row counts of the store at url (a postgres:// URL with
// its search_path), on a connection of its own.
func PGStoreCounts(t testing.TB, url string) StoreCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to check the store: %v", err)
	}
	defer conn.Close(context.Background())
	k := StoreCounts{DeliveryStates: map[string]int{}}
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM jadpo_outbox), (SELECT count(*) FROM jadpo_received_events),
    (SELECT count(*) FROM jadpo_deliveries), (SELECT count(*) FROM jadpo_parked_messages)`).
		Scan(&k.Outbox, &k.ReceivedIDs, &k.Deliveries, &k.Parked)
	if err != nil {
		t.Fatalf("counting the store's rows: %v", err)
	}
	rows, err := conn.Query(ctx, `SELECT state, count(*) FROM jadpo_deliveries GROUP BY state`)
	if err != nil {
		t.Fatal(err)
	}
	var state string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { k.DeliveryStates[state] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return k
}

// VerifyExactlyOnce checks with SQL on the PostgreSQL store at url that w
// was kept exactly once: one outbox row and one received id per distinct
// valid message (none missing, none twice, none unexpected), one delivery
// per subscriber of its event (subs, from ir.Program.SubscribersByEvent) and no other, and
// exactly the messages to park parked, once each (no valid message among
// them). It reports each difference as a test error and returns the counts.
func VerifyExactlyOnce(t testing.TB, url string, w *Workload, subs map[string][]string) StoreCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to check the store: %v", err)
	}
	defer conn.Close(context.Background())
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	want := w.Kept()
	// Outbox: each key once, with its event.
	rows, err := conn.Query(ctx, `SELECT source, received_id, event_name, count(*) FROM jadpo_outbox GROUP BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	var src, id, event string
	var n int
	seen := map[MsgKey]bool{}
	_, err = pgx.ForEachRow(rows, []any{&src, &id, &event, &n}, func() error {
		k := MsgKey{src, id}
		switch wantEvent, ok := want[k]; {
		case !ok:
			fail("outbox holds %s %s (%s), which was never sent", src, id, event)
		case seen[k]:
			fail("outbox holds %s %s as two events", src, id)
		case wantEvent != event:
			fail("outbox holds %s %s as %s, not %s", src, id, event, wantEvent)
		case n != 1:
			fail("outbox holds %s %s %d times", src, id, n)
		}
		seen[k] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if !seen[k] {
			fail("%s %s was lost: no outbox row", k.Source, k.ID)
		}
	}
	// Received ids: the same keys.
	rows, err = conn.Query(ctx, `SELECT source, received_id FROM jadpo_received_events`)
	if err != nil {
		t.Fatal(err)
	}
	received := 0
	_, err = pgx.ForEachRow(rows, []any{&src, &id}, func() error {
		received++
		if _, ok := want[MsgKey{src, id}]; !ok {
			fail("received id %s %s was never sent", src, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if received != len(want) {
		fail("%d received ids, want %d", received, len(want))
	}
	// Deliveries: per outbox row, exactly its event's subscribers, once each.
	rows, err = conn.Query(ctx, `SELECT o.source, o.received_id, o.event_name,
    COALESCE(array_agg(d.subscriber ORDER BY d.subscriber) FILTER (WHERE d.id IS NOT NULL), '{}')
FROM jadpo_outbox AS o LEFT JOIN jadpo_deliveries AS d ON d.outbox_id = o.id
GROUP BY o.id, o.source, o.received_id, o.event_name`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	deliveries := 0
	_, err = pgx.ForEachRow(rows, []any{&src, &id, &event, &got}, func() error {
		deliveries += len(got)
		wantSubs := slices.Clone(subs[event])
		slices.Sort(wantSubs)
		if !slices.Equal(got, wantSubs) {
			fail("%s %s (%s) has deliveries for %v, want %v", src, id, event, got, wantSubs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var orphans int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM jadpo_deliveries AS d
WHERE NOT EXISTS (SELECT 1 FROM jadpo_outbox AS o WHERE o.id = d.outbox_id)`).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		fail("%d deliveries have no outbox row", orphans)
	}
	// Parked: exactly the messages to park, once each.
	wantParked := w.parked()
	rows, err = conn.Query(ctx, `SELECT source, convert_from(body, 'UTF8'), reason FROM jadpo_parked_messages`)
	if err != nil {
		t.Fatal(err)
	}
	var body, reason string
	parked := map[MsgKey]bool{}
	_, err = pgx.ForEachRow(rows, []any{&src, &body, &reason}, func() error {
		k := MsgKey{src, body}
		switch {
		case parked[k]:
			fail("parked twice: %.80s", body)
		case !wantParked[k]:
			fail("a message was parked (%s) that should not have been: %.80s", reason, body)
		}
		parked[k] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range wantParked {
		if !parked[k] {
			fail("not parked: %.80s", k.ID)
		}
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > 20 {
			more = fmt.Sprintf("\n... and %d more", len(problems)-20)
			problems = problems[:20]
		}
		t.Errorf("the store does not hold each message exactly once:\n%s%s", strings.Join(problems, "\n"), more)
	}
	k := PGStoreCounts(t, url)
	if k.Deliveries != deliveries {
		t.Errorf("deliveries counted %d and %d", k.Deliveries, deliveries)
	}
	return k
}

// WaitUntil polls cond every 50 ms until it holds or timeout passes; then it
// fails the test with what.
func WaitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
