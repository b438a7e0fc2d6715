package cfqueuesfake

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
)

// modelMessage is a message as a plain, scan-everything model of the queue
// sees it.
type modelMessage struct {
	id        string
	seq       int
	visibleAt time.Time
	attempts  int
	lease     string
	gone      bool
}

type modelQueue struct {
	msgs          []*modelMessage // in the order added
	maxDeliveries int
	dlq           string
}

// TestAgainstAModel runs random pushes, pulls, acks, retries and clock moves
// on a queue with a dead-letter queue, and checks each answer and the
// queues' contents against a model that scans every message: the heap and
// the lazy removals must not change what is delivered, in what order, or
// which leases take effect.
func TestAgainstAModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, seed, 3000) })
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	clock := testclock.NewManual(start)
	f := New(Options{Clock: clock})
	if err := f.CreateQueue(acct, "dlq", QueueOptions{MaxRetries: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.CreateQueue(acct, "q", QueueOptions{MaxRetries: 2, DeadLetterQueue: "dlq"}); err != nil {
		t.Fatal(err)
	}
	model := map[string]*modelQueue{"q": {maxDeliveries: 3, dlq: "dlq"}, "dlq": {maxDeliveries: 2}}
	seq := 0
	var leases []string // every lease given, current or not

	for step := range steps {
		now := clock.Now()
		name := "q"
		if rng.IntN(4) == 0 {
			name = "dlq"
		}
		mq := model[name]
		switch r := rng.IntN(10); {
		case r < 3: // push (to q only: the dead-letter queue fills by moves)
			id, err := f.Send(acct, "q", fmt.Sprint(step))
			if err != nil {
				t.Fatal(err)
			}
			seq++
			model["q"].msgs = append(model["q"].msgs, &modelMessage{id: id, seq: seq, visibleAt: now})
		case r < 6: // pull
			n, vis := 1+rng.IntN(6), 1+rng.IntN(3000)
			res, e := f.servePull(queueKey{acct, name}, fmt.Appendf(nil, `{"batch_size":%d,"visibility_timeout_ms":%d}`, n, vis))
			if e != nil {
				t.Fatal(e)
			}
			got := res.(pullResult)
			// The model: visible messages by (visibleAt, seq); those at
			// the limit move or go, the others are delivered up to n.
			var cands []*modelMessage
			for _, m := range mq.msgs {
				if !m.gone && !m.visibleAt.After(now) {
					cands = append(cands, m)
				}
			}
			slices.SortFunc(cands, func(a, b *modelMessage) int {
				if c := a.visibleAt.Compare(b.visibleAt); c != 0 {
					return c
				}
				return a.seq - b.seq
			})
			var want []*modelMessage
			for _, m := range cands {
				if len(want) == n {
					break
				}
				if m.attempts >= mq.maxDeliveries {
					m.gone = true
					if mq.dlq != "" {
						seq++
						model[mq.dlq].msgs = append(model[mq.dlq].msgs, &modelMessage{id: m.id, seq: seq, visibleAt: now})
					}
					continue
				}
				m.attempts++
				m.visibleAt = now.Add(time.Duration(vis) * time.Millisecond)
				want = append(want, m)
			}
			if len(got.Messages) != len(want) {
				t.Fatalf("step %d: pull %s got %d messages, want %d", step, name, len(got.Messages), len(want))
			}
			for i, m := range want {
				g := got.Messages[i]
				if g.ID != m.id || g.Attempts != m.attempts {
					t.Fatalf("step %d: pull %s message %d is %s attempt %d, want %s attempt %d", step, name, i, g.ID, g.Attempts, m.id, m.attempts)
				}
				m.lease = g.LeaseID
				leases = append(leases, g.LeaseID)
			}
			if live := countLive(mq); got.MessageBacklogCount != live {
				t.Fatalf("step %d: backlog %d, want %d", step, got.MessageBacklogCount, live)
			}
		case r < 8: // ack and retry, with leases current and stale
			if len(leases) == 0 {
				continue
			}
			var in struct {
				Acks    []map[string]any `json:"acks"`
				Retries []map[string]any `json:"retries"`
			}
			wantAcks, wantRetries := 0, 0
			current := func(l string) *modelMessage {
				for _, m := range mq.msgs {
					if !m.gone && m.lease == l && m.visibleAt.After(now) {
						return m
					}
				}
				return nil
			}
			var retries []struct {
				l string
				d int
			}
			for range 1 + rng.IntN(8) {
				l := leases[len(leases)-1-rng.IntN(min(len(leases), 20))]
				if rng.IntN(3) > 0 {
					in.Acks = append(in.Acks, map[string]any{"lease_id": l})
				} else {
					d := rng.IntN(3)
					in.Retries = append(in.Retries, map[string]any{"lease_id": l, "delay_seconds": d})
					retries = append(retries, struct {
						l string
						d int
					}{l, d})
				}
			}
			for _, a := range in.Acks {
				if m := current(a["lease_id"].(string)); m != nil {
					m.gone = true
					wantAcks++
				}
			}
			for _, r := range retries {
				if m := current(r.l); m != nil {
					m.lease = ""
					m.visibleAt = now.Add(time.Duration(r.d) * time.Second)
					wantRetries++
				}
			}
			body, _ := json.Marshal(in)
			res, e := f.serveAck(queueKey{acct, name}, body)
			if e != nil {
				t.Fatal(e)
			}
			if got := res.(ackResult); got.AckCount != wantAcks || got.RetryCount != wantRetries {
				t.Fatalf("step %d: ack %s counted %d/%d, want %d/%d", step, name, got.AckCount, got.RetryCount, wantAcks, wantRetries)
			}
		default:
			clock.Advance(time.Duration(rng.IntN(2000)) * time.Millisecond)
		}
		if step%50 == 0 || step == steps-1 {
			for qn, mq := range model {
				checkModel(t, f, step, qn, mq)
				f.checkBookkeeping(t, acct, qn)
			}
		}
	}
}

func countLive(mq *modelQueue) int {
	n := 0
	for _, m := range mq.msgs {
		if !m.gone {
			n++
		}
	}
	return n
}

func checkModel(t *testing.T, f *Fake, step int, name string, mq *modelQueue) {
	t.Helper()
	now := f.clock.Now()
	var want []MessageInfo
	var stats QueueStats
	for _, m := range mq.msgs {
		if m.gone {
			continue
		}
		visible := !m.visibleAt.After(now)
		want = append(want, MessageInfo{ID: m.id, Attempts: m.attempts, Visible: visible})
		switch {
		case visible:
			stats.Visible++
		case m.lease != "":
			stats.InFlight++
		default:
			stats.Delayed++
		}
	}
	got := f.Messages(acct, name)
	for i := range got {
		got[i].Body = ""
	}
	if !slices.Equal(got, want) {
		t.Fatalf("step %d: %s holds %+v, want %+v", step, name, got, want)
	}
	if st, _ := f.Stats(acct, name); st != stats {
		t.Fatalf("step %d: %s stats %+v, want %+v", step, name, st, stats)
	}
}
