package processtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
	"github.com/jadpo/jadpo/runtime/store/postgres"
)

// TestVerifyKeptOnceFindsEachFault holds the broker tests' one check of the
// store to what it promises: on a store that holds three messages kept (one
// with a subscriber) and one parked, it passes for exactly those, and fails,
// naming the fault, for each thing a broken driver or runtime would leave: a
// message lost, one kept twice (under two sources' names), a valid one
// parked, one parked for another reason or with another body, a missing
// delivery, a kept event's field changed, what the broker still holds.
func TestVerifyKeptOnceFindsEachFault(t *testing.T) {
	url := pgtest.FreshURL(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const src = "queue orders"
	keep := func(id, event string, subs ...string) store.Keep {
		return store.Keep{Source: src, ReceivedID: id, EventName: event, EventJSON: []byte(`{"order_id":"` + id + `"}`), Subscribers: subs}
	}
	if _, err := s.KeepBatch(ctx, []store.Keep{keep("a", "OrderPlaced", "notify"), keep("b", "OrderPlaced", "notify"), keep("c", "OrderCancelled")}); err != nil {
		t.Fatal(err)
	}
	parkedBody := []byte("\xff{\"id\":\"p\",\"type\":\"order_refunded\"}")
	if _, _, err := s.Park(ctx, store.Parked{Source: src, ReceivedID: "p", Reason: store.Reason("unlisted_type"), Body: parkedBody}); err != nil {
		t.Fatal(err)
	}
	subs := map[string][]string{"OrderPlaced": {"notify"}}
	exact := func() []Expected {
		return []Expected{
			{ID: "a", Event: "OrderPlaced", Fields: map[string]string{"order_id": "a"}},
			{ID: "b", Event: "OrderPlaced"},
			{ID: "c", Event: "OrderCancelled"},
			{ID: "p", Park: "unlisted_type", Body: parkedBody},
		}
	}
	run := func(want []Expected, subs map[string][]string, broker func(func(string, ...any))) (StoreCounts, string) {
		r := &errRecorder{TB: t}
		k := VerifyKeptOnce(r, url, src, "id", want, subs, broker)
		return k, r.text()
	}

	k, msg := run(exact(), subs, nil)
	if msg != "" {
		t.Fatalf("the store as it is must pass: %s", msg)
	}
	if k.Outbox != 3 || k.ReceivedIDs != 3 || k.Deliveries != 2 || k.Parked["unlisted_type"] != 1 {
		t.Fatalf("counts %+v", k)
	}
	for _, c := range []struct {
		name   string
		edit   func(w []Expected) []Expected
		subs   map[string][]string
		broker func(func(string, ...any))
		says   string
	}{
		{"a message lost", func(w []Expected) []Expected { return append(w, Expected{ID: "d", Event: "OrderPlaced"}) }, nil, nil, "d (OrderPlaced) was lost"},
		{"one kept that is no message's", func(w []Expected) []Expected { return w[1:] }, nil, nil, "outbox holds a (OrderPlaced), which is no message's id"},
		{"one kept that had to be parked", func(w []Expected) []Expected { w[2].Event, w[2].Park = "", "unreadable"; return w }, nil, nil, "which had to be parked unreadable"},
		{"kept as another event", func(w []Expected) []Expected { w[1].Event = "OrderCancelled"; return w }, nil, nil, "outbox holds b as OrderPlaced, not OrderCancelled"},
		{"a field changed", func(w []Expected) []Expected { w[0].Fields = map[string]string{"order_id": "A"}; return w }, nil, nil, "outbox a: event"},
		{"a valid one parked", func(w []Expected) []Expected { w[3].Park, w[3].Event = "", "OrderRefunded"; return w }, nil, nil, "valid message p was parked"},
		{"parked for another reason", func(w []Expected) []Expected { w[3].Park = "unreadable"; return w }, nil, nil, "p was parked unlisted_type, not unreadable"},
		{"parked with another body", func(w []Expected) []Expected { w[3].Body = []byte(`{"id":"p"}`); return w }, nil, nil, "not as the broker held it"},
		{"one to park not parked", func(w []Expected) []Expected { return append(w, Expected{ID: "q", Park: "unreadable"}) }, nil, nil, "q (unreadable) was not parked"},
		{"a delivery missing", nil, map[string][]string{"OrderPlaced": {"notify", "audit"}}, nil, "2 deliveries, want 4"},
		{"the broker still holds some", nil, nil, func(fail func(string, ...any)) { fail("the queue still holds %d messages", 2) }, "the queue still holds 2 messages"},
	} {
		w := exact()
		if c.edit != nil {
			w = c.edit(w)
		}
		sb := subs
		if c.subs != nil {
			sb = c.subs
		}
		if _, msg := run(w, sb, c.broker); !strings.Contains(msg, c.says) {
			t.Errorf("%s: want a failure saying %q, got %q", c.name, c.says, msg)
		}
	}
}

// errRecorder keeps what a check reports instead of failing the test.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Helper() {}
func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *errRecorder) text() string { return strings.Join(r.errs, "\n") }
