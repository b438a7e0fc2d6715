package processtest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Expected is what the store must hold of one message a workload sent.
type Expected struct {
	ID   string // the id the body holds (the queue's id_at)
	Body []byte // the body as the broker held it
	// Event is the event it is kept as; "" for one to park, Park its reason.
	Event, Park string
	// Fields, when not nil, are the kept event's JSON members, as text.
	Fields map[string]string
}

// StoreCounts is what VerifyKeptOnce found in the store.
type StoreCounts struct {
	Outbox, ReceivedIDs, Deliveries int
	Parked                          map[string]int // by reason
}

// VerifyKeptOnce holds the events' store at storeURL to each message of
// want exactly once, whatever broker it came from: the outbox holds one
// row per valid id (none missing, none twice), from source, as its event
// (with its Fields, when given); the received ids are exactly the valid
// ids; the deliveries are the subscribers' (subs); the parked messages are
// exactly the ones to park, each once, from source, for its reason, its
// body byte for byte the broker's (a parked body is matched to its message
// by the `"<idKey>":"..."` it holds, read from the bytes, so a body that is
// not valid text is matched too). broker, when not nil, adds what the
// broker still holds to the problems (it must hold nothing). Every problem
// is reported at once, at most 20 of them.
func VerifyKeptOnce(t testing.TB, storeURL, source, idKey string, want []Expected, subs map[string][]string, broker func(fail func(format string, args ...any))) StoreCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, storeURL)
	if err != nil {
		t.Fatalf("connecting to check the store: %v", err)
	}
	defer conn.Close(context.Background())
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byID := make(map[string]Expected, len(want))
	valid, deliveries := 0, 0
	for _, m := range want {
		byID[m.ID] = m
		if m.Park == "" {
			valid++
			deliveries += len(subs[m.Event])
		}
	}
	k := StoreCounts{Parked: map[string]int{}}

	rows, err := conn.Query(ctx, `SELECT source, received_id, event_name, event_json::text FROM jadpo_outbox`)
	if err != nil {
		t.Fatal(err)
	}
	var src, id, event, eventJSON string
	seen := map[string]int{}
	if _, err := pgx.ForEachRow(rows, []any{&src, &id, &event, &eventJSON}, func() error {
		k.Outbox++
		seen[id]++
		m, ok := byID[id]
		switch {
		case src != source:
			fail("outbox row %s is from %q, not %q", id, src, source)
		case !ok:
			fail("outbox holds %s (%s), which is no message's id", id, event)
		case m.Park != "":
			fail("outbox holds %s (%s), which had to be parked %s", id, event, m.Park)
		case seen[id] == 2:
			fail("outbox holds %s twice", id)
		case event != m.Event:
			fail("outbox holds %s as %s, not %s", id, event, m.Event)
		case m.Fields != nil && !maps.Equal(jsonMap(eventJSON), m.Fields):
			fail("outbox %s: event %s, want %v", id, eventJSON, m.Fields)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, m := range byID {
		if m.Park == "" && seen[id] == 0 {
			fail("%s (%s) was lost: no outbox row", id, m.Event)
		}
	}

	rows, err = conn.Query(ctx, `SELECT source, received_id FROM jadpo_received_events`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&src, &id}, func() error {
		k.ReceivedIDs++
		if m, ok := byID[id]; src != source || !ok || m.Park != "" {
			fail("received id %s %s is no valid message's id", src, id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if k.ReceivedIDs != valid || k.Outbox != valid {
		fail("outbox %d rows, received ids %d; want %d each (the valid messages)", k.Outbox, k.ReceivedIDs, valid)
	}

	if err := conn.QueryRow(ctx, `SELECT count(*) FROM jadpo_deliveries`).Scan(&k.Deliveries); err != nil {
		t.Fatal(err)
	}
	if k.Deliveries != deliveries {
		fail("%d deliveries, want %d", k.Deliveries, deliveries)
	}

	idAt := regexp.MustCompile(`"` + regexp.QuoteMeta(idKey) + `":"([^"]*)"`)
	rows, err = conn.Query(ctx, `SELECT source, reason, body FROM jadpo_parked_messages`)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	var body []byte
	parked := map[string]int{}
	if _, err := pgx.ForEachRow(rows, []any{&src, &reason, &body}, func() error {
		found := idAt.FindSubmatch(body)
		if found == nil {
			fail("a parked body holds no %s: %.120q", idKey, body)
			return nil
		}
		id := string(found[1])
		m, ok := byID[id]
		switch {
		case src != source:
			fail("parked %s is from %q, not %q", id, src, source)
		case !ok:
			fail("parked %s, which is no message's id", id)
		case m.Park == "":
			fail("valid message %s was parked (%s)", id, reason)
		case m.Park != reason:
			fail("%s was parked %s, not %s", id, reason, m.Park)
		case !bytes.Equal(body, m.Body):
			fail("%s was parked as %q, not as the broker held it, %q", id, body, m.Body)
		}
		k.Parked[reason]++
		parked[id]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, m := range byID {
		switch n := parked[id]; {
		case m.Park == "":
		case n == 0:
			fail("%s (%s) was not parked", id, m.Park)
		case n > 1:
			fail("%s was parked %d times", id, n)
		}
	}

	if broker != nil {
		broker(fail)
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > 20 {
			more = fmt.Sprintf("\n... and %d more", len(problems)-20)
			problems = problems[:20]
		}
		t.Errorf("the store does not hold each message exactly once:\n%s%s", strings.Join(problems, "\n"), more)
	}
	return k
}
