package sqlinbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
	"github.com/jadpo/jadpo/providers/sqlinbox"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// The sql_inbox driver passes the shared suite in each claim form, on a
// fresh PostgreSQL schema: a table whose json column holds each payload as
// it was written (json, not jsonb, keeps the text as it is).

const suiteDDL = `CREATE TABLE suite_jobs(job_id BIGSERIAL PRIMARY KEY, attempt INT NOT NULL DEFAULT 0,
	locked_until timestamptz NULL, payload json NOT NULL)`

var sources atomic.Int64

func inboxHarness(form sqlinbox.Form) queuetest.Harness {
	caps := queuetest.Caps{Ack: queuetest.AckUncounted, Hang: true, Lease: form == sqlinbox.Lease}
	return queuetest.Harness{Caps: caps, New: func(t *testing.T) *queuetest.Queue {
		dbURL := pgtest.FreshURL(t)
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Close(context.Background()) })
		exec := func(t *testing.T, sql string, args ...any) {
			t.Helper()
			if _, err := admin.Exec(ctx, sql, args...); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		exec(t, suiteDDL)
		settings := map[string]any{"table": "suite_jobs", "id": "job_id", "attempt": "attempt", "columns": "payload", "claim": string(form)}
		if form == sqlinbox.Lease {
			settings["locked_until"] = "locked_until"
			settings["lease"] = "30s"
		}
		// Each Source dials through a dialer that keeps its connections, so
		// that Kill can cut them as a process's death would, and names its
		// sessions, so that Kill can wait for the server to end them.
		sessions := map[queue.Source]*session{}
		var mu sync.Mutex
		return &queuetest.Queue{
			Open: func(t *testing.T, opts queue.Options) queue.Source {
				ses := &session{name: fmt.Sprintf("queuetest_%d", sources.Add(1))}
				u, _ := url.Parse(dbURL)
				q := u.Query()
				q.Set("application_name", ses.name)
				u.RawQuery = q.Encode()
				var d net.Dialer
				opts.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := d.DialContext(ctx, network, addr)
					if err == nil {
						ses.mu.Lock()
						ses.conns = append(ses.conns, c)
						ses.mu.Unlock()
					}
					return c, err
				}
				conn := &queue.Conn{Name: "jobs", Receiving: &ir.Receiving{Driver: ir.DriverSQLInbox}, Settings: settings,
					Credentials: map[string]string{ir.MemberURL: u.String()}}
				src, err := sqlinbox.Driver.Open(conn, opts)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				sessions[src] = ses
				mu.Unlock()
				return src
			},
			Send: func(t *testing.T, payload string) {
				exec(t, `INSERT INTO suite_jobs(payload) VALUES ($1::text::json)`, payload)
			},
			Payload: func(t *testing.T, m queue.Message) string {
				var row map[string]json.RawMessage
				if err := json.Unmarshal([]byte(m.Body), &row); err != nil {
					t.Fatalf("a row's body is not a JSON object: %v: %q", err, m.Body)
				}
				return string(row["payload"])
			},
			Received: func(payload string) string {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(payload)); err != nil {
					panic(err)
				}
				return b.String()
			},
			Held: func(t *testing.T) int {
				var n int
				if err := admin.QueryRow(ctx, `SELECT count(*)::int FROM suite_jobs`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			Expire: func(t *testing.T) {
				if form == sqlinbox.Lease {
					exec(t, `UPDATE suite_jobs SET locked_until = now() - interval '1 second' WHERE locked_until IS NOT NULL`)
				}
			},
			Kill: func(t *testing.T, src queue.Source) {
				mu.Lock()
				ses := sessions[src]
				mu.Unlock()
				ses.mu.Lock()
				for _, c := range ses.conns {
					c.Close()
				}
				ses.mu.Unlock()
				// The server ends the sessions (rolling back a row lock's
				// claim, releasing an advisory lock's) as it reads their end.
				deadline := time.Now().Add(30 * time.Second)
				for {
					var n int
					if err := admin.QueryRow(ctx, `SELECT count(*)::int FROM pg_stat_activity WHERE application_name = $1`, ses.name).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n == 0 {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d sessions of the killed source still open", n)
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
			// A lock on the whole table holds every claim until the
			// receive's context ends; it is let go a moment later.
			Hang: func(t *testing.T) {
				locker, err := pgx.Connect(ctx, dbURL)
				if err != nil {
					t.Fatal(err)
				}
				tx, err := locker.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, `LOCK TABLE suite_jobs IN ACCESS EXCLUSIVE MODE`); err != nil {
					t.Fatal(err)
				}
				go func() {
					time.Sleep(2 * time.Second)
					_ = tx.Rollback(context.Background())
					locker.Close(context.Background())
				}()
			},
		}
	}}
}

// session is what one Source's database sessions are: their
// application_name and connections.
type session struct {
	name  string
	mu    sync.Mutex
	conns []net.Conn
}

func TestSuite(t *testing.T) {
	for _, form := range []sqlinbox.Form{sqlinbox.RowLock, sqlinbox.Lease, sqlinbox.AdvisoryLock} {
		t.Run(string(form), func(t *testing.T) { queuetest.Run(t, inboxHarness(form)) })
	}
}

// TestCloseLetsGoOfClaimsLeft: the Source keeps each batch's claim itself
// (queue.Batch carries none): a batch acknowledged on another Source finishes
// nothing, and Close abandons the claims of the batches never acknowledged,
// so that closing does not wait on a row lock's open transaction and the
// rows are claimed again at once.
func TestCloseLetsGoOfClaimsLeft(t *testing.T) {
	q := inboxHarness(sqlinbox.RowLock).New(t)
	opts := queue.Options{Queue: "jobs", Log: slog.New(slog.DiscardHandler), MaxBatch: 10, InFlight: 2}
	first := q.Open(t, opts)
	q.Send(t, `{"n":1}`)
	ctx := context.Background()
	b, err := first.Receive(ctx)
	if err != nil || len(b.Messages) != 1 {
		t.Fatalf("receive: %v, %+v", err, b)
	}
	second := q.Open(t, opts)
	defer second.Close()
	b.Messages[0].Settled = true
	if acks := second.Acknowledge(ctx, b); acks.Acknowledged != 0 {
		t.Fatalf("another Source acknowledged the batch: %+v", acks)
	}
	if n := q.Held(t); n != 1 {
		t.Fatalf("%d rows held after a foreign acknowledgement, want 1", n)
	}
	closed := make(chan struct{})
	go func() { first.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited on the claim of a batch never acknowledged")
	}
	again, err := second.Receive(ctx)
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("after Close, receive: %v, %+v; want the row claimed again", err, again)
	}
	again.Messages[0].Settled = true
	if acks := second.Acknowledge(ctx, again); acks.Acknowledged != 1 {
		t.Fatalf("acks %+v, want 1", acks)
	}
	if n := q.Held(t); n != 0 {
		t.Fatalf("%d rows held, want 0", n)
	}
}
