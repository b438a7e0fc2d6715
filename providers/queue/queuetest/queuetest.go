// Package queuetest is the conformance suite every queue driver passes, as
// River's riverdrivertest is its drivers' and Watermill's universal tests
// are its Pub/Subs': Run(t, h) receives, acknowledges, hands back and
// redelivers through the driver's queue.Source against its fake or real
// server, and holds it to what the runtime relies on (docs/guide/receiving.md):
//
//   - a receive brings at most Options.MaxBatch messages, and again while
//     the queue holds more; a message is delivered once until it is handed
//     back or its lease (visibility timeout) runs out;
//   - Acknowledge removes exactly the settled messages, in as few calls as
//     the driver can (one, a batch, a batch whose answer fails some entries,
//     which are then acknowledged on their own), and says how many took;
//   - what is not settled is handed back, never lost: it comes back;
//   - the body, and the id the body holds, arrive exactly as sent (escapes
//     that are not valid text, integers beyond 64 bits, spacing);
//   - a driver that implements queue.ParkedBodies parks the same copy of a
//     message for every delivery of it;
//   - a receive from an endpoint that hangs ends with its context;
//   - a process killed between keeping a batch and acknowledging it loses
//     nothing: the messages come back, to be recognised as repeats;
//   - a message held and never answered comes back after its lease.
//
// A driver's test file builds a Harness: how to make a fresh queue and
// open a Source on it, send a raw message, count what the broker holds and
// run its leases out; and says, by Caps, which of the driver's ways the
// suite checks. Adding a driver means passing Run (docs/design/architecture.md,
// "Adding a queue driver").
package queuetest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/providers/queue"
)

// AckCalls is how a driver counts its acknowledgement calls in queue.Acks.
type AckCalls int

const (
	// AckUncounted: the driver reports only how many took (a SQL inbox's
	// delete is one statement, not a call to a service).
	AckUncounted AckCalls = iota
	// AckBatch: one call acknowledges up to MaxBatch (Acks.BatchCalls).
	AckBatch
	// AckSingle: one call per message (Acks.SingleCalls).
	AckSingle
)

// Caps say what a driver can, so the suite checks each way it has.
type Caps struct {
	// Ack is how acknowledgements are counted.
	Ack AckCalls
	// PartialFailure: Queue.FailEntries makes entries of the next batch
	// acknowledgement fail while the call succeeds; the driver must
	// acknowledge those on their own.
	PartialFailure bool
	// Lease: a message received and never answered comes back once
	// Queue.Expire runs the leases out (SQS's visibility timeout,
	// Cloudflare's lease, a SQL inbox's lease). A row lock holds its rows
	// until the claim's session ends, and has none.
	Lease bool
	// Hang: Queue.Hang makes the next receive hang.
	Hang bool
}

// Queue is one fresh, empty queue of the driver's broker and what the
// suite does to it besides the Source's calls.
type Queue struct {
	// Open opens a Source on the queue, as a process starting opens it;
	// the suite closes the ones it does not Kill.
	Open func(t *testing.T, opts queue.Options) queue.Source
	// Send puts a message on the queue whose payload is the given text, as
	// a producer of the broker would (the body itself, or a row with a
	// json column holding it).
	Send func(t *testing.T, payload string)
	// Payload is the payload a received message carries (nil: its Body).
	Payload func(t *testing.T, m queue.Message) string
	// Received is what a payload sent reads as received (nil: byte for
	// byte the same): a SQL inbox's body is its row's JSON, where a json
	// column's value is compacted, its escapes and digits kept.
	Received func(payload string) string
	// Held counts the messages the queue still holds: visible, leased or
	// handed back with a delay; an acknowledged one is gone.
	Held func(t *testing.T) int
	// Expire runs out every lease, visibility timeout and hand-back delay
	// the queue holds.
	Expire func(t *testing.T)
	// Kill ends src as SIGKILL would end its process: no Acknowledge, no
	// Close (a database session ends with its connections). Nil: the
	// Source holds nothing the broker sees, and is dropped.
	Kill func(t *testing.T, src queue.Source)
	// FailEntries makes n entries of the next batch acknowledgement fail
	// (with Caps.PartialFailure).
	FailEntries func(t *testing.T, n int)
	// Hang makes the next receive's request hang unanswered until its
	// context ends (with Caps.Hang).
	Hang func(t *testing.T)
}

// Harness is a driver's part of the suite.
type Harness struct {
	// New makes a fresh, empty queue.
	New  func(t *testing.T) *Queue
	Caps Caps
}

// MaxBatch is the batch the suite receives with, the tick's.
const MaxBatch = 10

// Payloads are bodies the suite sends: an id beyond 64 bits, escapes that
// are not valid text (a lone surrogate, NUL), spacing and key order a
// decoder would not keep, text beyond ASCII.
var Payloads = []string{
	`{"id":123456789012345678901234567890,"n":-0.0e-7}`,
	`{"id":"lone \ud800 surrogate \u0000 nul","text":"caf\u00e9"}`,
	`{ "z" : 1 ,  "id" : "spaced",	"a":[ ] }`,
	`{"id":"ünïcödé ✓ 日本","big":18446744073709551616}`,
}

// Run runs the suite against h.
func Run(t *testing.T, h Harness) {
	t.Run("receives_in_batches", func(t *testing.T) { receivesInBatches(t, h) })
	t.Run("acknowledges_one", func(t *testing.T) { acknowledgesOne(t, h) })
	t.Run("acknowledges_a_batch", func(t *testing.T) { acknowledgesBatch(t, h) })
	t.Run("acknowledges_part_and_hands_back_the_rest", func(t *testing.T) { acknowledgesPart(t, h) })
	t.Run("partial_failure_of_a_batch_acknowledgement", func(t *testing.T) {
		if !h.Caps.PartialFailure {
			t.Skip("the driver has no batch acknowledgement whose entries can fail alone")
		}
		partialFailure(t, h)
	})
	t.Run("hands_back_and_parks_the_same_body", func(t *testing.T) { handsBack(t, h) })
	t.Run("body_and_id_exactly_as_sent", func(t *testing.T) { exactBodies(t, h) })
	t.Run("a_hanging_endpoint_is_bounded", func(t *testing.T) {
		if !h.Caps.Hang {
			t.Skip("the harness cannot make the endpoint hang")
		}
		hanging(t, h)
	})
	t.Run("killed_between_keep_and_acknowledge_comes_back", func(t *testing.T) { killed(t, h) })
	t.Run("redelivered_after_the_lease", func(t *testing.T) {
		if !h.Caps.Lease {
			t.Skip("the driver holds messages by a session, not a lease")
		}
		redelivered(t, h)
	})
}

// opts are the Options the suite opens each Source with.
func opts(t *testing.T) queue.Options {
	return queue.Options{Queue: "suite_queue", Log: testLog(t), MaxBatch: MaxBatch, InFlight: 4}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// fixture is one test's queue and Source.
type fixture struct {
	t   *testing.T
	q   *Queue
	src queue.Source
	// killed is the Source Kill ended: never closed.
	killed queue.Source
	// open are the batches received and not yet answered, by Source: a
	// test that stops early hands them back before closing (a row lock's
	// claim holds a connection the Close would wait for).
	unanswered map[queue.Source][]*queue.Batch
}

func newFixture(t *testing.T, h Harness) *fixture {
	t.Helper()
	q := h.New(t)
	f := &fixture{t: t, q: q, unanswered: map[queue.Source][]*queue.Batch{}}
	f.src = f.open()
	return f
}

func (f *fixture) open() queue.Source {
	f.t.Helper()
	src := f.q.Open(f.t, opts(f.t))
	closed := false
	f.t.Cleanup(func() {
		if !closed && src != f.killed {
			for _, b := range f.unanswered[src] {
				settle(b, none)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				src.Acknowledge(ctx, b)
				cancel()
			}
			src.Close()
		}
		closed = true
	})
	return src
}

func (f *fixture) payload(m queue.Message) string {
	if f.q.Payload == nil {
		return m.Body
	}
	return f.q.Payload(f.t, m)
}

func (f *fixture) send(n int, prefix string) []string {
	f.t.Helper()
	var sent []string
	for i := range n {
		p := fmt.Sprintf(`{"id":"%s-%02d"}`, prefix, i)
		f.q.Send(f.t, p)
		sent = append(sent, p)
	}
	return sent
}

func (f *fixture) receive(src queue.Source) *queue.Batch {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := src.Receive(ctx)
	if err != nil {
		f.t.Fatalf("Receive: %v", err)
	}
	f.unanswered[src] = append(f.unanswered[src], b)
	if len(b.Messages) > MaxBatch {
		f.t.Fatalf("a receive brought %d messages, more than MaxBatch %d", len(b.Messages), MaxBatch)
	}
	for _, m := range b.Messages {
		if m.Handle == "" || m.Damaged || m.NotFound || len(m.Unfit) > 0 || m.OverDeliveryLimit {
			f.t.Fatalf("a message sent well came in unfit: %+v", m)
		}
	}
	return b
}

// receiveAll receives until want messages came or a receive brings none.
func (f *fixture) receiveAll(src queue.Source, want int) []*queue.Batch {
	f.t.Helper()
	var out []*queue.Batch
	got := 0
	for range want + 2 {
		b := f.receive(src)
		if len(b.Messages) == 0 {
			break
		}
		out = append(out, b)
		got += len(b.Messages)
		if got >= want {
			break
		}
	}
	if got != want {
		f.t.Fatalf("received %d messages, want %d", got, want)
	}
	return out
}

func (f *fixture) ack(src queue.Source, b *queue.Batch) queue.Acks {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.unanswered[src] = slices.DeleteFunc(f.unanswered[src], func(o *queue.Batch) bool { return o == b })
	return src.Acknowledge(ctx, b)
}

func (f *fixture) wantHeld(n int) {
	f.t.Helper()
	if got := f.q.Held(f.t); got != n {
		f.t.Fatalf("the queue holds %d messages, want %d", got, n)
	}
}

func (f *fixture) payloads(bs ...*queue.Batch) []string {
	var out []string
	for _, b := range bs {
		for _, m := range b.Messages {
			out = append(out, f.payload(m))
		}
	}
	slices.Sort(out)
	return out
}

func settle(b *queue.Batch, keep func(i int) bool) {
	for i := range b.Messages {
		b.Messages[i].Settled = keep(i)
	}
}

func all(int) bool  { return true }
func none(int) bool { return false }

func (f *fixture) wantSame(got, sent []string) {
	t := f.t
	t.Helper()
	want := make([]string, len(sent))
	for i, p := range sent {
		want[i] = p
		if f.q.Received != nil {
			want[i] = f.q.Received(p)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("payloads received:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// 25 messages come in batches of at most ten, each once; acknowledged,
// they are gone.
func receivesInBatches(t *testing.T, h Harness) {
	f := newFixture(t, h)
	sent := f.send(25, "batch")
	bs := f.receiveAll(f.src, 25)
	if len(bs) < 3 {
		t.Fatalf("25 messages came in %d receives; at most %d a receive", len(bs), MaxBatch)
	}
	f.wantSame(f.payloads(bs...), sent)
	if b := f.receive(f.src); len(b.Messages) != 0 {
		t.Fatalf("a message held by a receive came again before it was handed back: %q", f.payloads(b))
	}
	n := 0
	for _, b := range bs {
		settle(b, all)
		n += f.ack(f.src, b).Acknowledged
	}
	if n != 25 {
		t.Fatalf("%d acknowledgements took, want 25", n)
	}
	f.wantHeld(0)
}

func acknowledgesOne(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.send(1, "one")
	b := f.receiveAll(f.src, 1)[0]
	settle(b, all)
	acks := f.ack(f.src, b)
	if acks.Acknowledged != 1 {
		t.Fatalf("acks %+v, want 1 acknowledged", acks)
	}
	if h.Caps.Ack != AckUncounted && acks.BatchCalls+acks.SingleCalls != 1 {
		t.Fatalf("acks %+v: one message took %d calls, want 1", acks, acks.BatchCalls+acks.SingleCalls)
	}
	f.wantHeld(0)
}

func acknowledgesBatch(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.send(MaxBatch, "full")
	bs := f.receiveAll(f.src, MaxBatch)
	var total queue.Acks
	for _, b := range bs {
		settle(b, all)
		a := f.ack(f.src, b)
		total.Acknowledged += a.Acknowledged
		total.BatchCalls += a.BatchCalls
		total.SingleCalls += a.SingleCalls
	}
	if total.Acknowledged != MaxBatch {
		t.Fatalf("acks %+v, want %d acknowledged", total, MaxBatch)
	}
	switch h.Caps.Ack {
	case AckBatch:
		if total.BatchCalls != len(bs) || total.SingleCalls != 0 {
			t.Fatalf("acks %+v: want one batch call a receive (%d), none single", total, len(bs))
		}
	case AckSingle:
		if total.SingleCalls != MaxBatch || total.BatchCalls != 0 {
			t.Fatalf("acks %+v: want one call a message", total)
		}
	}
	f.wantHeld(0)
}

// Of a batch, the settled are acknowledged; the others come back.
func acknowledgesPart(t *testing.T, h Harness) {
	f := newFixture(t, h)
	sent := f.send(6, "part")
	b := f.receiveAll(f.src, 6)[0]
	var kept, left []string
	settle(b, func(i int) bool { return i%2 == 0 })
	for _, m := range b.Messages {
		if m.Settled {
			kept = append(kept, f.payload(m))
		} else {
			left = append(left, f.payload(m))
		}
	}
	if acks := f.ack(f.src, b); acks.Acknowledged != len(kept) {
		t.Fatalf("acks %+v, want %d acknowledged", acks, len(kept))
	}
	f.wantHeld(len(left))
	f.q.Expire(t)
	again := f.receiveAll(f.src, len(left))
	f.wantSame(f.payloads(again...), left)
	if len(kept)+len(left) != len(sent) {
		t.Fatal("lost track of the messages")
	}
	for _, b := range again {
		settle(b, all)
		f.ack(f.src, b)
	}
	f.wantHeld(0)
}

// A batch acknowledgement whose answer fails some entries acknowledges
// those on their own: all take.
func partialFailure(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.send(5, "partial")
	b := f.receiveAll(f.src, 5)[0]
	settle(b, all)
	f.q.FailEntries(t, 2)
	acks := f.ack(f.src, b)
	if acks.Acknowledged != 5 || acks.FailedEntries != 2 || acks.BatchCalls != 1 || acks.SingleCalls != 2 {
		t.Fatalf("acks %+v, want 5 acknowledged: 1 batch call, 2 failed entries each sent again alone", acks)
	}
	f.wantHeld(0)
}

// A message handed back comes back with the same body and id, and parks
// the same copy each time.
func handsBack(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.q.Send(t, Payloads[0])
	first := f.receiveAll(f.src, 1)[0]
	m1 := first.Messages[0]
	parks, hasParked := f.src.(queue.ParkedBodies)
	var parked []byte
	if hasParked {
		parked = parks.ParkedBody(&m1)
	}
	settle(first, none)
	if acks := f.ack(f.src, first); acks.Acknowledged != 0 {
		t.Fatalf("acks %+v: nothing was settled", acks)
	}
	f.wantHeld(1)
	f.q.Expire(t)
	second := f.receiveAll(f.src, 1)[0]
	m2 := second.Messages[0]
	if f.payload(m2) != f.payload(m1) || m1.WireID != m2.WireID {
		t.Fatalf("handed back and received again: payload %q id %q, first %q id %q", f.payload(m2), m2.WireID, Payloads[0], m1.WireID)
	}
	if hasParked {
		if p2 := parks.ParkedBody(&m2); !bytes.Equal(parked, p2) {
			t.Fatalf("ParkedBody differs between deliveries: %q then %q", parked, p2)
		}
	}
	// Parked: settled, so acknowledged and gone.
	settle(second, all)
	if acks := f.ack(f.src, second); acks.Acknowledged != 1 {
		t.Fatalf("acks %+v, want the parked message acknowledged", acks)
	}
	f.wantHeld(0)
}

func exactBodies(t *testing.T, h Harness) {
	f := newFixture(t, h)
	for _, p := range Payloads {
		f.q.Send(t, p)
	}
	bs := f.receiveAll(f.src, len(Payloads))
	f.wantSame(f.payloads(bs...), Payloads)
	for _, b := range bs {
		settle(b, all)
		f.ack(f.src, b)
	}
	f.wantHeld(0)
}

// A receive whose endpoint never answers ends when its context does.
func hanging(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.send(1, "hang")
	f.q.Hang(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		b, err := f.src.Receive(ctx)
		if err == nil && len(b.Messages) > 0 {
			err = fmt.Errorf("a hanging receive brought %d messages", len(b.Messages))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			// An empty batch is an answer too, but not from a hanging
			// endpoint: it must say it could not receive.
			t.Fatal("a receive from a hanging endpoint returned no error")
		} else if strings.Contains(err.Error(), "brought") {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a receive from a hanging endpoint did not end with its context")
	}
	// The message was not lost.
	f.q.Expire(t)
	b := f.receiveAll(f.src, 1)[0]
	settle(b, all)
	f.ack(f.src, b)
	f.wantHeld(0)
}

// A process killed after keeping a batch and before acknowledging it: the
// messages come back to the next process (as repeats: the store knows
// their ids).
func killed(t *testing.T, h Harness) {
	f := newFixture(t, h)
	sent := f.send(3, "kill")
	bs := f.receiveAll(f.src, 3)
	for _, b := range bs {
		settle(b, all) // kept; the acknowledgement never goes
	}
	f.killed = f.src
	if f.q.Kill != nil {
		f.q.Kill(t, f.src)
	}
	f.wantHeld(3)
	next := f.open()
	f.q.Expire(t)
	again := f.receiveAll(next, 3)
	f.wantSame(f.payloads(again...), sent)
	for _, b := range again {
		settle(b, all)
		if acks := f.ack(next, b); acks.Acknowledged != len(b.Messages) {
			t.Fatalf("acks %+v after the kill, want %d", acks, len(b.Messages))
		}
	}
	f.wantHeld(0)
}

// A message received and never answered is not delivered again while its
// lease lasts, and is after it.
func redelivered(t *testing.T, h Harness) {
	f := newFixture(t, h)
	sent := f.send(2, "lease")
	f.receiveAll(f.src, 2)
	if b := f.receive(f.src); len(b.Messages) != 0 {
		t.Fatalf("a leased message came again before its lease ran out: %q", f.payloads(b))
	}
	f.q.Expire(t)
	again := f.receiveAll(f.src, 2)
	f.wantSame(f.payloads(again...), sent)
	for _, b := range again {
		settle(b, all)
		if acks := f.ack(f.src, b); acks.Acknowledged != len(b.Messages) {
			t.Fatalf("acks %+v, want %d", acks, len(b.Messages))
		}
	}
	f.wantHeld(0)
}
