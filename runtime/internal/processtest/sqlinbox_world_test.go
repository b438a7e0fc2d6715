package processtest

// The SQL inbox counterparts of the SQS world (runtimetest.Env): a world running
// a copy of examples/jobs whose queue is the table order_jobs in a fresh
// PostgreSQL schema (JOBS_DATABASE_URL), with its events' store in another
// fresh schema; `jadpo run` of that copy as a child process; a seeded
// workload of job rows inserted over a while; and the SQL checks that each
// row was kept, or parked, exactly once.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime/internal/workload"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// JobsSource is where the store records the rows of examples/jobs' queue.
const JobsSource = "queue order_jobs"

// JobsTable is examples/jobs' inbox table; locked_until only with Lease.
func JobsTable(lease bool) string {
	lu := ""
	if lease {
		lu = ", locked_until TIMESTAMPTZ NULL"
	}
	return `CREATE TABLE order_jobs (job_id BIGSERIAL PRIMARY KEY, name TEXT, attempt SMALLINT NOT NULL DEFAULT 0,
  tenant TEXT, trace TEXT NULL, order_id BIGINT, note TEXT NULL` + lu + `)`
}

// SQLInboxOptions change what NewSQLInbox sets up.
type SQLInboxOptions struct {
	// Lease, when not 0, turns the copy's claims into the lease form
	// (claim: lease, locked_until, this lease) and gives the table its
	// locked_until column; 0 keeps the default row_lock form.
	Lease time.Duration
	// LockKey, when not "", turns them into the advisory lock form
	// (claim: advisory_lock, lock_key: LockKey) instead.
	LockKey string
}

// SQLInboxEnv is one test's SQL inbox world: examples/jobs copied into a
// temporary folder, its inbox table in a fresh schema of its own and its
// events' store in another.
type SQLInboxEnv struct {
	T        testing.TB
	AppDir   string // the copy of examples/jobs
	Plan     *ir.Program
	InboxURL string // JOBS_DATABASE_URL: the inbox table's schema
	StoreURL string // --database: the events' store's schema
	Environ  []string
	// Inbox is a pool on the inbox's schema, for the test's inserts and checks.
	Inbox *pgxpool.Pool
}

// NewSQLInbox builds the jobs example's world.
func NewSQLInbox(t testing.TB, opts SQLInboxOptions) *SQLInboxEnv {
	t.Helper()
	e := &SQLInboxEnv{T: t}
	var edits []checktest.Edit
	switch {
	case opts.Lease > 0:
		edits = append(edits, checktest.Edit{File: "app.jadpo", Old: `columns: "note"`, New: `columns: "note"
        claim: lease
        locked_until: "locked_until"
        lease: ` + opts.Lease.String()})
	case opts.LockKey != "":
		edits = append(edits, checktest.Edit{File: "app.jadpo", Old: `columns: "note"`, New: `columns: "note"
        claim: advisory_lock
        lock_key: "` + opts.LockKey + `"`})
	}
	e.AppDir = checktest.CopyExample(t, "jobs", filepath.Join(t.TempDir(), "jobs"), edits...)
	e.Plan = checktest.PlanDir(t, e.AppDir)
	e.StoreURL = pgtest.FreshURL(t)
	e.InboxURL = pgtest.FreshURL(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, e.InboxURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e.Inbox = pool
	if _, err := pool.Exec(ctx, JobsTable(opts.Lease > 0)); err != nil {
		t.Fatal(err)
	}
	e.Environ = []string{"JOBS_DATABASE_URL=" + e.InboxURL}
	return e
}

// StartRun starts `bin run <AppDir> --database <StoreURL> --log-format
// json` and extra args, with JOBS_DATABASE_URL in its environment and its
// output appended to logPath. The process is killed when the test ends if
// it is still running.
func (e *SQLInboxEnv) StartRun(bin, logPath string, extra ...string) *Proc {
	e.T.Helper()
	args := append([]string{"run", e.AppDir, "--database", e.StoreURL, "--log-format", "json"}, extra...)
	return startProc(e.T, bin, args, runtimetest.ChildEnviron(e.Environ), logPath)
}

// InboxRows counts the rows left in the inbox table.
func (e *SQLInboxEnv) InboxRows() int {
	e.T.Helper()
	var n int
	if err := e.Inbox.QueryRow(context.Background(), `SELECT count(*) FROM order_jobs`).Scan(&n); err != nil {
		e.T.Fatal(err)
	}
	return n
}

// Job is one row of a jobs workload and what the store must end up holding
// for it.
type Job struct {
	Name, Tenant, Trace, Note string // Trace and Note: NULL when ""
	OrderID                   int64
	// Event is the event it is kept as ("PackingRequested",
	// "ReceiptRequested"); "" for a row to park.
	Event string
	// Park is the reason it must be parked for ("unreadable"); "" for a
	// row to keep.
	Park string
	// Stays: a kind the queue does not list ("refund"), which its claims
	// never take: the row must be left in the table, unclaimed.
	Stays bool
	// ID is the job_id the database gave the row; 0 until it is inserted.
	ID int64
}

// JobsWorkload is a seeded mix of rows for examples/jobs' order_jobs.
type JobsWorkload struct {
	Jobs []Job
	mu   sync.Mutex // guards the Jobs' IDs while a flow inserts them
}

// NewJobsWorkload makes n rows from seed: about 2% of kind "refund" (a kind
// the queue does not list, left in the table), about 1% packing rows with an empty tenant (parked
// unreadable), the rest valid packing (about 70%) and receipts rows with a
// tenant and an order id, about half with a trace and a third with a note.
func NewJobsWorkload(seed uint64, n int) *JobsWorkload {
	rng := rand.New(rand.NewPCG(seed, seed^0x6a6f62735f73716c))
	w := &JobsWorkload{Jobs: make([]Job, 0, n)}
	tenants := []string{"acme", "globex", "initech", "umbrella"}
	for i := 0; i < n; i++ {
		j := Job{Tenant: tenants[rng.IntN(len(tenants))], OrderID: int64(1 + rng.IntN(1_000_000))}
		if rng.IntN(2) == 0 {
			j.Trace = fmt.Sprintf("tr-%d-%x", i, rng.Uint32())
		}
		if rng.IntN(3) == 0 {
			j.Note = fmt.Sprintf("note %d: \"fragile\" <ü>", i)
		}
		switch r := rng.IntN(100); {
		case r < 2:
			j.Name, j.Stays, j.Event = "refund", true, ""
		case r < 3:
			j.Name, j.Park, j.Tenant = "packing", "unreadable", ""
		case r < 73:
			j.Name, j.Event = "packing", "PackingRequested"
		default:
			j.Name, j.Event = "receipts", "ReceiptRequested"
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w
}

// Count says how many rows must be kept, parked (by reason) and left in
// the table.
func (w *JobsWorkload) Count() (kept int, parked map[string]int, stay int) {
	parked = map[string]int{}
	for _, j := range w.Jobs {
		switch {
		case j.Stays:
			stay++
		case j.Park != "":
			parked[j.Park]++
		default:
			kept++
		}
	}
	return kept, parked, stay
}

// Insert inserts rows [from, to) of w at once.
func (w *JobsWorkload) Insert(e *SQLInboxEnv, from, to int) {
	e.T.Helper()
	if err := w.insert(context.Background(), e.Inbox, from, to); err != nil {
		e.T.Fatal(err)
	}
}

func (w *JobsWorkload) insert(ctx context.Context, pool *pgxpool.Pool, from, to int) error {
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for i := from; i < to; i++ {
		j := w.Jobs[i]
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO order_jobs (name, tenant, trace, order_id, note) VALUES ($1, $2, $3, $4, $5) RETURNING job_id`,
			j.Name, j.Tenant, nullable(j.Trace), j.OrderID, nullable(j.Note)).Scan(&id); err != nil {
			return fmt.Errorf("inserting job %d: %w", i, err)
		}
		w.mu.Lock()
		w.Jobs[i].ID = id
		w.mu.Unlock()
	}
	return nil
}

// InsertFlow inserts rows [from, to) of w from a goroutine of its own, in
// steps of ten, row i at start + over*(i-from)/(to-from), as Flow sends
// messages to the SQS fake. It stops when the test ends.
func (w *JobsWorkload) InsertFlow(e *SQLInboxEnv, from, to int, over time.Duration) *workload.Flow {
	return workload.StartFlow(e.T, from, to, over, func(i, j int) error {
		if err := w.insert(context.Background(), e.Inbox, i, j); err != nil {
			return fmt.Errorf("inserting into the inbox: %w", err)
		}
		return nil
	})
}

// SQLInboxCounts is what VerifySQLInbox found.
type SQLInboxCounts struct {
	Outbox, ReceivedIDs, Deliveries, Left int
	Parked                                map[string]int // parked rows by reason
}

// VerifySQLInbox checks with SQL that every row of w was kept or parked
// exactly once:
//   - the outbox holds one row per valid job_id (none missing, none twice,
//     none that is not a valid job's id), as the job's event, its event JSON
//     the row's fields and its headers column the row's tenant, order_id and
//     trace (when set); the received ids are exactly the valid job ids; the
//     deliveries are those of the app's subscribers (subs);
//   - the parked messages are exactly the rows to park, each once (by the
//     job_id in its body) and for its reason; no valid row is parked;
//   - the inbox table is empty.
func VerifySQLInbox(t testing.TB, e *SQLInboxEnv, w *JobsWorkload, subs map[string][]string) SQLInboxCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, e.StoreURL)
	if err != nil {
		t.Fatalf("connecting to check the store: %v", err)
	}
	defer conn.Close(context.Background())
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	w.mu.Lock()
	jobs := make(map[string]Job, len(w.Jobs))
	for i, j := range w.Jobs {
		if j.ID == 0 {
			fail("job %d was never inserted", i)
			continue
		}
		jobs[strconv.FormatInt(j.ID, 10)] = j
	}
	w.mu.Unlock()
	k := SQLInboxCounts{Parked: map[string]int{}}

	// Outbox: each valid job once, as its event, with its fields and headers.
	rows, err := conn.Query(ctx, `SELECT source, received_id, event_name, event_json::text, COALESCE(headers, '') FROM jadpo_outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var src, id, event, eventJSON, headers string
	seen := map[string]int{}
	_, err = pgx.ForEachRow(rows, []any{&src, &id, &event, &eventJSON, &headers}, func() error {
		k.Outbox++
		seen[id]++
		j, ok := jobs[id]
		switch {
		case src != JobsSource:
			fail("outbox row %s is from %q, not %q", id, src, JobsSource)
		case !ok:
			fail("outbox holds %s (%s), which is no job's id", id, event)
			return nil
		case j.Park != "":
			fail("outbox holds job %s (%s), which had to be parked %s", id, event, j.Park)
			return nil
		case j.Stays:
			fail("outbox holds job %s (%s), of a kind the queue does not list", id, event)
			return nil
		case seen[id] == 2:
			fail("outbox holds job %s twice", id)
		case event != j.Event:
			fail("outbox holds job %s as %s, not %s", id, event, j.Event)
		}
		if got, want := jsonMap(eventJSON), j.eventFields(); !maps.Equal(got, want) {
			fail("outbox job %s: event %s, want %v", id, eventJSON, want)
		}
		if got, want := jsonMap(headers), j.headers(); !maps.Equal(got, want) {
			fail("outbox job %s: headers %q, want %v", id, headers, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	valid := 0
	for id, j := range jobs {
		if j.Park == "" && !j.Stays {
			valid++
			if seen[id] == 0 {
				fail("job %s (%s) was lost: no outbox row", id, j.Name)
			}
		}
	}
	// Received ids: exactly the valid job ids.
	rows, err = conn.Query(ctx, `SELECT source, received_id FROM jadpo_received_events`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgx.ForEachRow(rows, []any{&src, &id}, func() error {
		k.ReceivedIDs++
		if j, ok := jobs[id]; src != JobsSource || !ok || j.Park != "" || j.Stays {
			fail("received id %s %s is no valid job's id", src, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if k.ReceivedIDs != valid || k.Outbox != valid {
		fail("outbox %d rows, received ids %d; want %d each (the distinct valid job ids)", k.Outbox, k.ReceivedIDs, valid)
	}
	// Deliveries: the subscribers of each kept event.
	wantDeliveries := 0
	for _, j := range jobs {
		if j.Park == "" && !j.Stays {
			wantDeliveries += len(subs[j.Event])
		}
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM jadpo_deliveries`).Scan(&k.Deliveries); err != nil {
		t.Fatal(err)
	}
	if k.Deliveries != wantDeliveries {
		fail("%d deliveries, want %d", k.Deliveries, wantDeliveries)
	}
	// Parked: exactly the rows to park, once each, for their reason.
	rows, err = conn.Query(ctx, `SELECT source, reason, convert_from(body, 'UTF8') FROM jadpo_parked_messages`)
	if err != nil {
		t.Fatal(err)
	}
	var reason, body string
	parked := map[string][]string{} // job id → bodies
	_, err = pgx.ForEachRow(rows, []any{&src, &reason, &body}, func() error {
		var b struct {
			JobID json.Number `json:"job_id"`
		}
		if err := json.Unmarshal([]byte(body), &b); err != nil || b.JobID == "" {
			fail("a parked body without a job_id: %.120s", body)
			return nil
		}
		id := b.JobID.String()
		j, ok := jobs[id]
		switch {
		case src != JobsSource:
			fail("parked job %s is from %q", id, src)
		case !ok:
			fail("parked %s, which is no job's id: %.120s", id, body)
		case j.Stays:
			fail("job %s of a kind the queue does not list (%s) was parked (%s)", id, j.Name, reason)
		case j.Park == "":
			fail("valid job %s (%s) was parked (%s): %.120s", id, j.Name, reason, body)
		case j.Park != reason:
			fail("job %s was parked %s, not %s", id, reason, j.Park)
		}
		k.Parked[reason]++
		parked[id] = append(parked[id], body)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, j := range jobs {
		bodies := parked[id]
		switch {
		case j.Park == "":
		case len(bodies) == 0:
			fail("job %s (%s) was not parked", id, j.Park)
		case len(bodies) > 1:
			fail("job %s was parked %d times:\n  %s", id, len(bodies), strings.Join(bodies, "\n  "))
		}
	}
	// The inbox: every row deleted but those of kinds the queue does not
	// list, which no claim took (their attempt is still 0).
	left, err := e.Inbox.Query(ctx, `SELECT job_id::text, attempt FROM order_jobs ORDER BY job_id`)
	if err != nil {
		t.Fatal(err)
	}
	var attempt int16
	stayed := map[string]bool{}
	_, err = pgx.ForEachRow(left, []any{&id, &attempt}, func() error {
		k.Left++
		if j, ok := jobs[id]; !ok || !j.Stays {
			fail("the inbox table still holds job %s", id)
		} else if attempt != 0 {
			fail("job %s of a kind the queue does not list was claimed (attempt %d)", id, attempt)
		}
		stayed[id] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, j := range jobs {
		if j.Stays && !stayed[id] {
			fail("job %s of a kind the queue does not list (%s) left the table", id, j.Name)
		}
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > 20 {
			more = fmt.Sprintf("\n... and %d more", len(problems)-20)
			problems = problems[:20]
		}
		t.Errorf("the store does not hold each row exactly once:\n%s%s", strings.Join(problems, "\n"), more)
	}
	return k
}

// eventFields is the event JSON a kept job must have, its values as text.
func (j Job) eventFields() map[string]string {
	m := map[string]string{"tenant": j.Tenant, "order_id": strconv.FormatInt(j.OrderID, 10)}
	if j.Event == "PackingRequested" && j.Note != "" {
		m["note"] = j.Note
	}
	return m
}

// headers is the headers column a kept job must have.
func (j Job) headers() map[string]string {
	m := map[string]string{"tenant": j.Tenant, "order_id": strconv.FormatInt(j.OrderID, 10)}
	if j.Trace != "" {
		m["trace"] = j.Trace
	}
	return m
}

// jsonMap reads a JSON object's values as text (strings unquoted); nil for
// "" or what is not a JSON object.
func jsonMap(s string) map[string]string {
	var raw map[string]json.RawMessage
	if s == "" || json.Unmarshal([]byte(s), &raw) != nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
		} else {
			out[k] = string(v)
		}
	}
	return out
}
