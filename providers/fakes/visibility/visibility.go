// Package visibility is the in-memory queue the queue fakes keep (sqsfake,
// cfqueuesfake), written once: messages held in the order they were added,
// each visible from a time on; a delivery hides a message for a lease (SQS's
// visibility timeout, Cloudflare's visibility_timeout_ms) and gives it a new
// handle (a receipt handle, a lease id) that only its latest delivery holds;
// deleting, handing back or changing the visibility through a handle that is
// no longer current does nothing to the message.
//
// A removed message is marked gone and left in place until enough of them
// are gone to drop them at once (each removal pays for its share of one
// copy), so receiving and deleting cost the same however long the queue is.
//
// The fakes keep their own message type, which embeds Message:
//
//	type message struct {
//		visibility.Message
//		body string
//	}
//	q := visibility.New[*message](visibility.SendOrder)
//
// A Queue is not safe for concurrent use: the fake's lock guards it.
package visibility

import (
	"fmt"
	"iter"
	"slices"
	"time"
)

// Order is which of the visible messages a delivery takes first.
type Order int

const (
	// SendOrder takes the visible messages in the order they were added
	// (SQS's standard queues: roughly the order sent). A delivery scans
	// from the first message not gone, passing over those in flight: cheap
	// while the front of the queue is what is delivered, as it mostly is
	// (BenchmarkReceiveDelete: messages in flight at the front for the
	// whole run cost a delivery their number).
	SendOrder Order = iota
	// EarliestVisible takes the message visible earliest first, ties in the
	// order added (Cloudflare Queues: a message handed back with a delay
	// waits behind those visible before it). A heap of due times makes a
	// delivery look only at the messages it delivers.
	EarliestVisible
)

// Message is what the queue keeps of one message; a fake's message type
// embeds it. The exported fields are the fake's to read; VisibleAt and
// Handle change only through the Queue's methods once the message is added.
type Message struct {
	ID string
	// VisibleAt is when the message may next be delivered.
	VisibleAt time.Time
	// Deliveries counts the deliveries so far.
	Deliveries int
	// Handle is the latest delivery's handle: "" before the first delivery
	// and after the message is handed back (Release).
	Handle string

	gone bool   // removed from its queue (left in msgs until tidy)
	seq  uint64 // the order added; orders messages visible at the same instant
	gen  uint64 // moves on with each change of VisibleAt
}

// base gives the queue the Message a fake's message embeds.
func (m *Message) base() *Message { return m }

// InFlight says whether the message is hidden at now (delivered, or added
// or handed back with a delay).
func (m *Message) InFlight(now time.Time) bool { return m.VisibleAt.After(now) }

// Item is a pointer to a fake's message type embedding Message.
type Item interface {
	comparable
	base() *Message
}

// Queue is one queue's messages.
type Queue[M Item] struct {
	order Order
	// msgs is in the order added; a removed message is marked gone and left
	// in place until tidy.
	msgs    []M
	byID    map[string]M // the messages not gone
	removed int          // gone messages still in msgs
	head    int          // msgs[:head] are all gone (SendOrder)
	seq     uint64

	// due orders the messages by when they are next visible, ties in the
	// order added (EarliestVisible), so that a delivery looks only at the
	// messages it delivers and at stale entries, each once. Each message not
	// gone has exactly one live entry; an entry is stale once its message is
	// gone or its visibility changed (Message.gen moved on). stale counts
	// those still in due.
	due   entryHeap[M]
	stale int

	// tidies and compactions count how often tidy dropped gone messages and
	// stale entries, for the tests.
	tidies, compactions int
}

// New makes an empty queue that delivers in the given order.
func New[M Item](order Order) *Queue[M] {
	return &Queue[M]{order: order, byID: map[string]M{}}
}

// Len is how many messages the queue holds.
func (q *Queue[M]) Len() int { return len(q.byID) }

// Add appends m, visible from m.VisibleAt. A copy of a message of another
// queue (a move to a dead-letter queue) may be added: its bookkeeping starts
// anew.
func (q *Queue[M]) Add(m M) {
	b := m.base()
	q.seq++
	b.gone, b.seq, b.gen = false, q.seq, 0
	q.msgs = append(q.msgs, m)
	q.byID[b.ID] = m
	q.schedule(m)
}

// schedule puts m's live entry in due, at its VisibleAt (EarliestVisible).
func (q *Queue[M]) schedule(m M) {
	if q.order != EarliestVisible {
		return
	}
	b := m.base()
	q.due.push(entry[M]{at: b.VisibleAt, seq: b.seq, m: m, gen: b.gen})
}

// Lookup finds the message with the id, if the queue holds it.
func (q *Queue[M]) Lookup(id string) (M, bool) {
	m, ok := q.byID[id]
	return m, ok
}

// Current finds the message of id whose current handle is handle, or false:
// a handle is current until the message is delivered again, handed back,
// deleted or its lease runs out.
func (q *Queue[M]) Current(id, handle string, now time.Time) (M, bool) {
	m, ok := q.byID[id]
	if !ok || handle == "" || m.base().Handle != handle || !m.base().InFlight(now) {
		var zero M
		return zero, false
	}
	return m, true
}

// Receive delivers up to n messages visible at now, in the queue's order:
// each is hidden until now+lease, counted, and given the handle newHandle
// makes for it (called after the count moves on). Before delivering one,
// limit (nil: none) may take it instead, for a redelivery limit: it copies
// the message wherever it goes and returns true, and the message is removed.
// When fewer than n are delivered, next is when the next message becomes
// visible (zero when none waits).
func (q *Queue[M]) Receive(now time.Time, n int, lease time.Duration, limit func(M) bool, newHandle func(M) string) (got []M, next time.Time) {
	deliver := func(m M) {
		b := m.base()
		b.Deliveries++
		b.VisibleAt = now.Add(lease)
		b.gen++
		b.Handle = newHandle(m)
		got = append(got, m)
	}
	if q.order == EarliestVisible {
		for len(got) < n && q.top() {
			e := q.due.s[0]
			if e.at.After(now) {
				break // nothing else is visible yet
			}
			q.due.pop()
			if limit != nil && limit(e.m) {
				q.remove(e.m, false)
				continue
			}
			deliver(e.m)
		}
		// The delivered messages' new entries go in after the loop, so that
		// a lease of zero does not deliver a message twice in one call.
		for _, m := range got {
			q.schedule(m)
		}
		if len(got) < n && q.top() {
			next = q.due.s[0].at
		}
	} else {
		for i := q.head; i < len(q.msgs) && len(got) < n; i++ {
			m := q.msgs[i]
			b := m.base()
			if b.gone {
				if i == q.head {
					q.head++ // consumed from the front, as a queue mostly is
				}
				continue
			}
			if b.InFlight(now) {
				if next.IsZero() || b.VisibleAt.Before(next) {
					next = b.VisibleAt
				}
				continue
			}
			if limit != nil && limit(m) {
				q.remove(m, false)
				continue
			}
			deliver(m)
		}
		if len(got) == n {
			next = time.Time{} // only wanted when fewer were delivered
		}
	}
	q.tidy()
	return got, next
}

// top drops the stale entries at the top of due and says whether a live
// one is left there.
func (q *Queue[M]) top() bool {
	for len(q.due.s) > 0 && !q.due.s[0].live() {
		q.due.pop()
		q.stale--
	}
	return len(q.due.s) > 0
}

// Delete removes m from the queue.
func (q *Queue[M]) Delete(m M) {
	q.remove(m, true)
	q.tidy()
}

// DeleteIf removes every message for which gone says true (as retention
// does), visiting them in the order added.
func (q *Queue[M]) DeleteIf(gone func(M) bool) {
	for _, m := range q.msgs {
		if !m.base().gone && gone(m) {
			q.remove(m, true)
		}
	}
	q.tidy()
}

// SetVisibleAt makes m visible at at (a visibility change); its handle stays
// current while it is in flight.
func (q *Queue[M]) SetVisibleAt(m M, at time.Time) {
	b := m.base()
	b.VisibleAt = at
	if q.order != EarliestVisible {
		return
	}
	b.gen++
	q.stale++ // its entry
	q.schedule(m)
	q.tidy()
}

// Release hands m back: its handle is current no more, and it is visible
// again at at (now, or after a delay).
func (q *Queue[M]) Release(m M, at time.Time) {
	m.base().Handle = ""
	q.SetVisibleAt(m, at)
}

// Purge removes every message.
func (q *Queue[M]) Purge() {
	*q = Queue[M]{order: q.order, byID: map[string]M{}, seq: q.seq, tidies: q.tidies, compactions: q.compactions}
}

// All visits the messages the queue holds in the order added (a dead-letter
// queue's in the order moved in). The visit must not change the queue.
func (q *Queue[M]) All() iter.Seq[M] {
	return func(yield func(M) bool) {
		for _, m := range q.msgs {
			if !m.base().gone && !yield(m) {
				return
			}
		}
	}
}

// Counts are the queue's messages at now: visible (may be delivered now),
// in flight (delivered, the lease not run out) and delayed (added or handed
// back with a delay not yet over).
type Counts struct{ Visible, InFlight, Delayed int }

// Count counts the queue's messages at now.
func (q *Queue[M]) Count(now time.Time) Counts {
	var c Counts
	for m := range q.All() {
		switch b := m.base(); {
		case !b.InFlight(now):
			c.Visible++
		case b.Handle != "":
			c.InFlight++
		default:
			c.Delayed++
		}
	}
	return c
}

// remove marks m gone. inDue says whether m's live entry is still in due
// (false when a delivery has just popped it).
func (q *Queue[M]) remove(m M, inDue bool) {
	b := m.base()
	b.gone = true
	delete(q.byID, b.ID)
	q.removed++
	if inDue && q.order == EarliestVisible {
		q.stale++
	}
}

// tidy drops gone messages from msgs, and stale entries from due, once
// they are at least half of it, so the copying is paid once per as many
// removals as there are messages left.
func (q *Queue[M]) tidy() {
	if q.removed >= 32 && q.removed*2 >= len(q.msgs) {
		n := len(q.msgs)
		q.msgs = slices.DeleteFunc(q.msgs, func(m M) bool { return m.base().gone })
		clear(q.msgs[len(q.msgs):n])
		q.removed, q.head = 0, 0
		q.tidies++
	}
	if q.stale >= 32 && q.stale*2 >= len(q.due.s) {
		n := len(q.due.s)
		q.due.s = slices.DeleteFunc(q.due.s, func(e entry[M]) bool { return !e.live() })
		clear(q.due.s[len(q.due.s):n])
		q.due.init()
		q.stale = 0
		q.compactions++
	}
}

// Check checks the queue's indexes against each other, for the fakes' model
// and fuzz tests: byID holds exactly the messages of msgs not gone, removed
// counts the gone ones, msgs[:head] are gone, and (EarliestVisible) due
// holds exactly one live entry for each message, at its VisibleAt, with
// stale counting the rest.
func (q *Queue[M]) Check() error {
	live, removed := 0, 0
	for i, m := range q.msgs {
		b := m.base()
		if b.gone {
			removed++
			continue
		}
		if i < q.head {
			return fmt.Errorf("message %s before the head (%d), not gone", b.ID, q.head)
		}
		live++
		if q.byID[b.ID] != m {
			return fmt.Errorf("message %s not in byID", b.ID)
		}
	}
	if live != len(q.byID) || removed != q.removed {
		return fmt.Errorf("%d live and %d removed in msgs, byID %d, removed %d", live, removed, len(q.byID), q.removed)
	}
	if q.order != EarliestVisible {
		if len(q.due.s) != 0 || q.stale != 0 {
			return fmt.Errorf("%d entries in due (%d stale) for a queue in send order", len(q.due.s), q.stale)
		}
		return nil
	}
	entries := map[M]int{}
	stale := 0
	for _, e := range q.due.s {
		if !e.live() {
			stale++
			continue
		}
		entries[e.m]++
		if !e.at.Equal(e.m.base().VisibleAt) {
			return fmt.Errorf("entry at %v for message %s visible at %v", e.at, e.m.base().ID, e.m.base().VisibleAt)
		}
	}
	if stale != q.stale || len(entries) != live {
		return fmt.Errorf("%d stale entries (counted %d), %d live for %d messages", stale, q.stale, len(entries), live)
	}
	for m, n := range entries {
		if n != 1 || q.byID[m.base().ID] != m {
			return fmt.Errorf("message %s has %d live entries", m.base().ID, n)
		}
	}
	return nil
}

// entry is a message's place in a heap, as of its gen.
type entry[M Item] struct {
	at  time.Time
	seq uint64
	m   M
	gen uint64
}

func (e entry[M]) live() bool { b := e.m.base(); return !b.gone && e.gen == b.gen }

// entryHeap orders entries by (at, seq): a binary heap of its own, as
// container/heap's would box each entry it moves.
type entryHeap[M Item] struct{ s []entry[M] }

func (h *entryHeap[M]) less(i, j int) bool {
	a, b := &h.s[i], &h.s[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

func (h *entryHeap[M]) push(e entry[M]) {
	h.s = append(h.s, e)
	for i := len(h.s) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.s[i], h.s[p] = h.s[p], h.s[i]
		i = p
	}
}

func (h *entryHeap[M]) pop() entry[M] {
	e := h.s[0]
	last := len(h.s) - 1
	h.s[0] = h.s[last]
	h.s[last] = entry[M]{}
	h.s = h.s[:last]
	h.down(0)
	return e
}

func (h *entryHeap[M]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.s) {
			return
		}
		c := l
		if r := l + 1; r < len(h.s) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h.s[i], h.s[c] = h.s[c], h.s[i]
		i = c
	}
}

// init restores the heap's order after its entries were filtered.
func (h *entryHeap[M]) init() {
	for i := len(h.s)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
