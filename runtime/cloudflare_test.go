package runtime_test

// The cloudflare_queues driver (docs/guide/receiving.md, "Cloudflare Queues") against the Cloudflare
// Queues fake, on every store adapter: examples/returns receives its
// returns_queue through Cloudflare's HTTP pull consumer API.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/cfqueues"
	"github.com/jadpo/jadpo/providers/fakes/cfqueuesfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

const (
	cfAccount = "acc-1"
	cfQueue   = "returns-queue-id"
)

// cfWorld is the seed tests' world with the returns app on a Cloudflare fake.
type cfWorld struct {
	*world
	cf      *cfqueuesfake.Fake
	cfClock *testclock.Manual
}

func returnsPlan(t *testing.T) *ir.Program {
	t.Helper()
	return checktest.PlanDir(t, filepath.Join(reporoot.Dir(t), "examples", "returns"))
}

func newCFWorld(t *testing.T, kind string) *cfWorld {
	t.Helper()
	w := newWorld(t, kind, nil)
	clock := testclock.NewManual(seedStart)
	cf := cfqueuesfake.New(cfqueuesfake.Options{Clock: clock})
	srv := httptest.NewServer(cf)
	t.Cleanup(srv.Close)
	if err := cf.CreateQueue(cfAccount, cfQueue, cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	w.env.SetEnv("CF_HOST", srv.URL)
	w.env.SetEnv("CF_API_TOKEN", cfqueuesfake.DefaultToken)
	w.env.SetEnv("CF_ACCOUNT_ID", cfAccount)
	w.env.SetEnv("CF_RETURNS_QUEUE_ID", cfQueue)
	w.env.SetEnv("REFUNDS_TOKEN", "refunds-token")
	w.rt = w.runtime(returnsPlan(t), runtime.Options{})
	return &cfWorld{world: w, cf: cf, cfClock: clock}
}

func (w *cfWorld) sendCF(bodies ...string) {
	w.t.Helper()
	for _, b := range bodies {
		if _, err := w.cf.Send(cfAccount, cfQueue, b); err != nil {
			w.t.Fatal(err)
		}
	}
}

// sendCFAs sends payload as a producer does with contentType.
func (w *cfWorld) sendCFAs(contentType, payload string) {
	w.t.Helper()
	if _, err := w.cf.SendAs(cfAccount, cfQueue, contentType, []byte(payload)); err != nil {
		w.t.Fatal(err)
	}
}

// onCF counts the messages the Cloudflare queue holds: visible, leased and
// handed back with a delay.
func (w *cfWorld) onCF() (visible, inFlight, delayed int) {
	w.t.Helper()
	s, ok := w.cf.Stats(cfAccount, cfQueue)
	if !ok {
		w.t.Fatal("no Cloudflare queue")
	}
	return s.Visible, s.InFlight, s.Delayed
}

func returnRequested(id string) string {
	return fmt.Sprintf(`{"return_id":%q,"type":"return_requested","order_id":"o-%s","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`, id, id)
}

func TestCloudflareQueuesDriver(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, w *cfWorld)
	}{
		{"kept_repeated_and_parked_are_acknowledged_in_one_call", func(t *testing.T, w *cfWorld) {
			w.sendCF(returnRequested("r-1"), returnRequested("r-1"), `not json`,
				`{"return_id":"r-2","type":"order_lost"}`,
				`{"return_id":"r-3","type":"return_requested","order_id":"o"}`)
			wantReport(t, w.tick(), "received 5 kept 1 repeats 1 parked 3 left 0 acked 5")
			wantRows(t, "outbox", w.outbox(), row("queue returns_queue", "ReturnRequested", "r-1",
				`{"customer_email":"a@example.com","items":{"SKU-1":1},"order_id":"o-r-1","requested_at":"2026-11-30T10:00:00Z"}`))
			if v, f, d := w.onCF(); v+f+d != 0 {
				t.Fatalf("the queue still holds %d visible, %d leased, %d delayed", v, f, d)
			}
			if got := w.cf.Calls("ack"); got != 1 {
				t.Fatalf("%d ack calls for one batch, want 1", got)
			}
			if got := len(w.parked("failed")); got != 3 {
				t.Fatalf("%d parked, want 3", got)
			}
		}},
		{"a_body_a_pull_consumer_cannot_read_is_parked_for_its_content_type_and_acknowledged", func(t *testing.T, w *cfWorld) {
			// As a Worker producer sends: v8 by default (the Workers
			// runtime's serialization, answered in base64), bytes of
			// JSON text and of none; json and text read as they are.
			w.sendCFAs("json", returnRequested("r-1"))
			w.sendCFAs("text", returnRequested("r-2"))
			w.sendCFAs("bytes", returnRequested("r-3"))
			w.sendCFAs("v8", "\xff\x0fo\"\x09return_id\"\x03r-4{\x01")
			w.sendCFAs("bytes", "\x00\x01\x02")
			wantReport(t, w.tick(), "received 5 kept 3 repeats 0 parked 2 left 0 acked 5")
			if got := len(w.outbox()); got != 3 {
				t.Fatalf("%d outbox rows, want r-1, r-2 and r-3", got)
			}
			if _, problems := w.parkedBodies(); !slices.Equal(problems, []string{"unreadable content_type:bytes", "unreadable content_type:v8"}) {
				t.Fatalf("parked problems %q, want each named by its content type alone", problems)
			}
			if v, f, d := w.onCF(); v+f+d != 0 {
				t.Fatalf("the queue still holds %d visible, %d leased, %d delayed", v, f, d)
			}
		}},
		{"ten_a_pull_and_again_while_full", func(t *testing.T, w *cfWorld) {
			for i := range 25 {
				w.sendCF(returnRequested(fmt.Sprintf("r-%02d", i)))
			}
			wantReport(t, w.tick(), "received 25 kept 25 repeats 0 parked 0 left 0 acked 25")
			if got := w.cf.Calls("pull"); got != 3 {
				t.Fatalf("%d pulls for 25 messages, want 3 (10, 10, 5)", got)
			}
		}},
		{"one_the_store_cannot_take_is_handed_back_then_kept", func(t *testing.T, w *cfWorld) {
			w.sendCF(returnRequested("r-1"), returnRequested("r-2"))
			w.st.FailKeeps(1)
			wantReport(t, w.tick(), "received 2 kept 0 repeats 0 parked 0 left 2 acked 0")
			if v, f, d := w.onCF(); v != 0 || f != 0 || d != 2 {
				t.Fatalf("queue: %d visible, %d leased, %d delayed; want both handed back with a delay", v, f, d)
			}
			wantRows(t, "outbox", w.outbox())
			wantReport(t, w.tick(), "received 0 kept 0 repeats 0 parked 0 left 0 acked 0")
			w.cfClock.Advance(cfqueues.RetryDelay)
			wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 2")
		}},
		{"a_failed_acknowledgement_comes_back_a_repeat", func(t *testing.T, w *cfWorld) {
			w.sendCF(returnRequested("r-1"))
			w.cf.FailNext("ack", 1, 500)
			wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 0")
			w.cfClock.Advance(61 * time.Second) // the app leases for 60 s
			wantReport(t, w.tick(), "received 1 kept 0 repeats 1 parked 0 left 0 acked 1")
			if got := len(w.outbox()); got != 1 {
				t.Fatalf("%d outbox rows, want 1", got)
			}
			if v, f, d := w.onCF(); v+f+d != 0 {
				t.Fatalf("the queue still holds %d visible, %d leased, %d delayed", v, f, d)
			}
		}},
		{"a_lease_that_ran_out_before_the_ack_is_not_counted_and_comes_back_a_repeat", func(t *testing.T, w *cfWorld) {
			w.sendCF(returnRequested("r-1"), returnRequested("r-2"))
			// The keep outlasts the 60 s lease on the fake's clock.
			slow := slowKeep{Store: w.st, during: func() { w.cfClock.Advance(61 * time.Second) }}
			w.rt = w.env.RuntimeFor(returnsPlan(t), slow, runtime.Options{Now: w.clock.Now})
			wantReport(t, w.tick(), "received 2 kept 2 repeats 0 parked 0 left 0 acked 0")
			wantReport(t, w.tick(), "received 2 kept 0 repeats 2 parked 0 left 0 acked 0")
			w.rt = w.runtime(returnsPlan(t), runtime.Options{})
			w.cfClock.Advance(61 * time.Second)
			wantReport(t, w.tick(), "received 2 kept 0 repeats 2 parked 0 left 0 acked 2")
			if v, f, d := w.onCF(); v+f+d != 0 {
				t.Fatalf("the queue still holds %d visible, %d leased, %d delayed", v, f, d)
			}
		}},
		{"a_refused_pull_is_the_ticks_error_and_loses_nothing", func(t *testing.T, w *cfWorld) {
			w.sendCF(returnRequested("r-1"))
			w.cf.FailNext("pull", 1, 429)
			if _, err := w.rt.Tick(w.ctx); err == nil {
				t.Fatal("a throttled pull: the tick reports no error")
			}
			wantReport(t, w.tick(), "received 1 kept 1 repeats 0 parked 0 left 0 acked 1")
		}},
	}
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, newCFWorld(t, kind)) })
			}
		})
	}
}

// slowKeep runs during inside each KeepBatch: time passing on a fake's
// clock while the store works.
type slowKeep struct {
	store.Store
	during func()
}

func (s slowKeep) KeepBatch(ctx context.Context, keeps []store.Keep) ([]store.KeepResult, error) {
	s.during()
	return s.Store.KeepBatch(ctx, keeps)
}
