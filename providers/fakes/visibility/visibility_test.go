package visibility

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

type msg struct {
	Message
	body string
}

var t0 = testclock.Epoch()

func ids(ms []*msg) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func add(q *Queue[*msg], id string, visibleAt time.Time) *msg {
	m := &msg{Message: Message{ID: id, VisibleAt: visibleAt}, body: "body of " + id}
	q.Add(m)
	return m
}

func handles() func(*msg) string {
	n := 0
	return func(m *msg) string { n++; return m.ID + "#" + strconv.Itoa(n) }
}

func check(t *testing.T, q *Queue[*msg]) {
	t.Helper()
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestOrders: SendOrder takes the visible messages in the order added,
// EarliestVisible the one visible first (ties in the order added).
func TestOrders(t *testing.T) {
	for _, c := range []struct {
		order Order
		want  []string
	}{
		{SendOrder, []string{"late", "b", "a"}},
		{EarliestVisible, []string{"b", "a", "late"}},
	} {
		q := New[*msg](c.order)
		add(q, "late", t0.Add(5*time.Second)) // sent first with a delay
		add(q, "b", t0)
		add(q, "a", t0)
		got, _ := q.Receive(t0.Add(10*time.Second), 10, time.Minute, nil, handles())
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("order %d: received %v, want %v", c.order, ids(got), c.want)
		}
		check(t, q)
	}
}

// TestLeaseHidesAndHandleIsCurrentOnlyForTheLatestDelivery: a delivery hides
// the message for its lease with a new handle; the handle is current while
// it is in flight and stops being so when the lease runs out or the message
// is delivered again.
func TestLeaseHidesAndHandleIsCurrentOnlyForTheLatestDelivery(t *testing.T) {
	for _, order := range []Order{SendOrder, EarliestVisible} {
		q := New[*msg](order)
		add(q, "m", t0)
		h := handles()
		got, _ := q.Receive(t0, 10, 30*time.Second, nil, h)
		if len(got) != 1 || got[0].Deliveries != 1 || got[0].Handle != "m#1" || !got[0].VisibleAt.Equal(t0.Add(30*time.Second)) {
			t.Fatalf("order %d: first delivery %+v", order, got)
		}
		if again, next := q.Receive(t0.Add(29*time.Second), 10, 30*time.Second, nil, h); len(again) != 0 || !next.Equal(t0.Add(30*time.Second)) {
			t.Errorf("order %d: in flight, received %v (next %v)", order, ids(again), next)
		}
		if _, ok := q.Current("m", "m#1", t0.Add(29*time.Second)); !ok {
			t.Errorf("order %d: the handle is not current while in flight", order)
		}
		if _, ok := q.Current("m", "m#1", t0.Add(30*time.Second)); ok {
			t.Errorf("order %d: the handle is current after the lease ran out", order)
		}
		got, _ = q.Receive(t0.Add(31*time.Second), 10, 30*time.Second, nil, h)
		if len(got) != 1 || got[0].Deliveries != 2 || got[0].Handle != "m#2" {
			t.Fatalf("order %d: second delivery %+v", order, got)
		}
		now := t0.Add(32 * time.Second)
		if _, ok := q.Current("m", "m#1", now); ok {
			t.Errorf("order %d: the first handle is current after a second delivery", order)
		}
		if _, ok := q.Current("m", "", now); ok {
			t.Errorf("order %d: an empty handle is current", order)
		}
		m, ok := q.Current("m", "m#2", now)
		if !ok {
			t.Fatalf("order %d: the second handle is not current", order)
		}
		q.Delete(m)
		if _, ok := q.Lookup("m"); ok || q.Len() != 0 {
			t.Errorf("order %d: deleted, still held (%d)", order, q.Len())
		}
		check(t, q)
	}
}

// TestReleaseAndVisibilityChange: a message handed back loses its handle
// and is visible at the time given; a visibility change keeps the handle.
func TestReleaseAndVisibilityChange(t *testing.T) {
	for _, order := range []Order{SendOrder, EarliestVisible} {
		q := New[*msg](order)
		add(q, "a", t0)
		add(q, "b", t0)
		h := handles()
		got, _ := q.Receive(t0, 2, time.Hour, nil, h)
		q.Release(got[0], t0.Add(10*time.Second))
		q.SetVisibleAt(got[1], t0.Add(5*time.Second))
		if got[0].Handle != "" || got[1].Handle != "b#2" {
			t.Errorf("order %d: handles %q %q", order, got[0].Handle, got[1].Handle)
		}
		if c := q.Count(t0.Add(time.Second)); c != (Counts{InFlight: 1, Delayed: 1}) {
			t.Errorf("order %d: counts %+v, want one in flight and one delayed", order, c)
		}
		if again, _ := q.Receive(t0.Add(6*time.Second), 10, time.Hour, nil, h); !slices.Equal(ids(again), []string{"b"}) {
			t.Errorf("order %d: at 6 s received %v, want [b]", order, ids(again))
		}
		if again, _ := q.Receive(t0.Add(10*time.Second), 10, time.Hour, nil, h); !slices.Equal(ids(again), []string{"a"}) {
			t.Errorf("order %d: at 10 s received %v, want [a]", order, ids(again))
		}
		check(t, q)
	}
}

// TestLimitTakesAMessage: a message the limit takes is removed, not
// delivered, and the copy the limit makes lives on in the other queue,
// its bookkeeping anew.
func TestLimitTakesAMessage(t *testing.T) {
	for _, order := range []Order{SendOrder, EarliestVisible} {
		q, dlq := New[*msg](order), New[*msg](order)
		add(q, "a", t0)
		add(q, "b", t0)
		h := handles()
		q.Receive(t0, 1, time.Second, nil, h) // a: once
		limit := func(m *msg) bool {
			if m.Deliveries < 1 {
				return false
			}
			moved := *m
			moved.Handle, moved.VisibleAt = "", t0.Add(2*time.Second)
			dlq.Add(&moved)
			return true
		}
		got, _ := q.Receive(t0.Add(2*time.Second), 10, time.Second, limit, h)
		if !slices.Equal(ids(got), []string{"b"}) {
			t.Errorf("order %d: received %v, want [b] (a is at the limit)", order, ids(got))
		}
		if _, ok := q.Lookup("a"); ok {
			t.Errorf("order %d: a still on the queue", order)
		}
		moved := slices.Collect(dlq.All())
		if len(moved) != 1 || moved[0].ID != "a" || moved[0].body != "body of a" || moved[0].Deliveries != 1 {
			t.Errorf("order %d: dead-letter queue holds %+v", order, moved)
		}
		check(t, q)
		check(t, dlq)
	}
}

// TestDeleteIfAndPurge: DeleteIf removes what it is told to, in the order
// added; Purge empties the queue, which takes messages again after.
func TestDeleteIfAndPurge(t *testing.T) {
	for _, order := range []Order{SendOrder, EarliestVisible} {
		q := New[*msg](order)
		for i := range 100 {
			add(q, strconv.Itoa(i), t0)
		}
		var seen []string
		q.DeleteIf(func(m *msg) bool { seen = append(seen, m.ID); return m.ID != "42" })
		if len(seen) != 100 || seen[0] != "0" || seen[99] != "99" {
			t.Errorf("order %d: DeleteIf visited %d, from %v", order, len(seen), seen[:1])
		}
		if got := ids(slices.Collect(q.All())); !slices.Equal(got, []string{"42"}) {
			t.Errorf("order %d: left %v", order, got)
		}
		check(t, q)
		q.Purge()
		if q.Len() != 0 || len(slices.Collect(q.All())) != 0 {
			t.Errorf("order %d: purged, %d left", order, q.Len())
		}
		add(q, "after", t0)
		if got, _ := q.Receive(t0, 10, time.Second, nil, handles()); !slices.Equal(ids(got), []string{"after"}) {
			t.Errorf("order %d: after a purge received %v", order, ids(got))
		}
		check(t, q)
	}
}

// modelMsg is what TestAgainstAModel knows of a message.
type modelMsg struct {
	id        string
	added     int
	visibleAt time.Time
	handle    string
	n         int
	gone      bool
}

// TestAgainstAModel drives a long queue of each order through random adds,
// receives, deletes, releases, visibility changes and clock moves, and
// compares every delivery with a plain model that scans all its messages:
// which messages come, in which order, with which counts, and which handles
// are current; the indexes are checked every 50 steps. The queue grows to
// hundreds of messages and drops its removed ones (and stale due entries)
// many times over, so that bookkeeping is covered.
func TestAgainstAModel(t *testing.T) {
	const steps = 12_000
	for _, order := range []Order{SendOrder, EarliestVisible} {
		rng := rand.New(rand.NewPCG(3, uint64(order)))
		q := New[*msg](order)
		var model, delivered []*modelMsg
		now := t0
		h := handles()
		longest := 0
		for step := range steps {
			switch r := rng.IntN(100); {
			case r < 20:
				id := strconv.Itoa(step)
				at := now.Add(time.Duration(rng.IntN(3)) * time.Second)
				add(q, id, at)
				model = append(model, &modelMsg{id: id, added: step, visibleAt: at})
			case r < 50:
				n := 1 + rng.IntN(10)
				lease := time.Duration(rng.IntN(100)) * time.Second
				got, _ := q.Receive(now, n, lease, nil, h)
				var want []*modelMsg
				for _, m := range model {
					if !m.gone && !m.visibleAt.After(now) {
						want = append(want, m)
					}
				}
				if order == EarliestVisible {
					// The n visible earliest, ties in the order added.
					for i := range min(n, len(want)) {
						k := i
						for j := i + 1; j < len(want); j++ {
							if c := want[j].visibleAt.Compare(want[k].visibleAt); c < 0 || c == 0 && want[j].added < want[k].added {
								k = j
							}
						}
						want[i], want[k] = want[k], want[i]
					}
				}
				want = want[:min(n, len(want))]
				if len(got) != len(want) {
					t.Fatalf("order %d step %d: received %d, the model %d", order, step, len(got), len(want))
				}
				for i, m := range want {
					m.n++
					m.visibleAt = now.Add(lease)
					m.handle = got[i].Handle
					if got[i].ID != m.id || got[i].Deliveries != m.n {
						t.Fatalf("order %d step %d: %d-th received %s (%d), the model %s (%d)", order, step, i, got[i].ID, got[i].Deliveries, m.id, m.n)
					}
				}
				delivered = append(delivered, want...)
			case r < 90 && len(delivered) > 0:
				// Mostly a message delivered lately, sometimes an older one.
				m := delivered[max(0, len(delivered)-1-rng.IntN(30))]
				if rng.IntN(5) == 0 {
					m = delivered[rng.IntN(len(delivered))]
				}
				cur, ok := q.Current(m.id, m.handle, now)
				if want := !m.gone && m.handle != "" && m.visibleAt.After(now); ok != want {
					t.Fatalf("order %d step %d: %s current %v, the model %v", order, step, m.id, ok, want)
				}
				if !ok {
					continue
				}
				switch rng.IntN(6) {
				case 0:
					at := now.Add(time.Duration(rng.IntN(5)) * time.Second)
					q.Release(cur, at)
					m.handle, m.visibleAt = "", at
				case 1:
					at := now.Add(time.Duration(rng.IntN(5)) * time.Second)
					q.SetVisibleAt(cur, at)
					m.visibleAt = at
				default:
					q.Delete(cur)
					m.gone = true
				}
			default:
				now = now.Add(time.Duration(rng.IntN(4)) * time.Second)
			}
			if step%50 == 0 || step == steps-1 {
				if err := q.Check(); err != nil {
					t.Fatalf("order %d step %d: %v", order, step, err)
				}
			}
			longest = max(longest, q.Len())
		}
		var wantAll []string
		for _, m := range model {
			if !m.gone {
				wantAll = append(wantAll, m.id)
			}
		}
		if got := ids(slices.Collect(q.All())); !slices.Equal(got, wantAll) {
			t.Errorf("order %d: holds %d messages, the model %d", order, len(got), len(wantAll))
		}
		t.Logf("order %d: at most %d messages held, tidied %d times, due compacted %d times", order, longest, q.tidies, q.compactions)
		if longest < 200 || q.tidies < 10 || (order == EarliestVisible && q.compactions < 3) {
			t.Errorf("order %d: at most %d held, tidied %d times, compacted %d: the run does not cover a long queue's bookkeeping", order, longest, q.tidies, q.compactions)
		}
	}
}
