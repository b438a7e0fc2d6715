package cfqueues_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers/cfqueues"
	"github.com/jadpo/jadpo/providers/cfqueuesfake"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/testclock"
	"github.com/jadpo/jadpo/runtime"
)

// The cloudflare_queues driver passes the shared suite against the
// Cloudflare Queues fake, through examples/returns' CloudflareQueues.v4
// (which leases for 60 s).

const (
	account = "acc-1"
	queueID = "returns-queue-id"
)

func harness(t *testing.T) *queuetest.Queue {
	plan := checktest.PlanDir(t, filepath.Join(checktest.RepoRoot(t), "examples", "returns"))
	clock := testclock.NewManual(testclock.Epoch())
	fake := cfqueuesfake.New(cfqueuesfake.Options{Clock: clock})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	if err := fake.CreateQueue(account, queueID, cfqueuesfake.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := runtime.LoadConfig(plan, []string{"CF_HOST=" + srv.URL, "CF_API_TOKEN=" + cfqueuesfake.DefaultToken,
		"CF_ACCOUNT_ID=" + account, "CF_RETURNS_QUEUE_ID=" + queueID, "REFUNDS_TOKEN=r"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return &queuetest.Queue{
		Open: func(t *testing.T, opts queue.Options) queue.Source {
			conn, err := runtime.QueueConn(plan, "returns_queue", cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			src, err := cfqueues.Driver.Open(conn, opts)
			if err != nil {
				t.Fatal(err)
			}
			return src
		},
		Send: func(t *testing.T, body string) {
			if _, err := fake.Send(account, queueID, body); err != nil {
				t.Fatal(err)
			}
		},
		Held: func(t *testing.T) int {
			st, ok := fake.Stats(account, queueID)
			if !ok {
				t.Fatal("no queue on the fake")
			}
			return st.Visible + st.InFlight + st.Delayed
		},
		// The lease (60 s) and a hand-back's delay (RetryDelay) run out.
		Expire: func(t *testing.T) { clock.Advance(61*time.Second + cfqueues.RetryDelay) },
		Hang:   func(t *testing.T) { fake.HangNext("pull", 1) },
	}
}

func TestSuite(t *testing.T) {
	queuetest.Run(t, queuetest.Harness{New: harness, Caps: queuetest.Caps{Ack: queuetest.AckBatch, Lease: true, Hang: true}})
}
