package sqlinbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// Source is the sql_inbox queue driver (docs/guide/receiving.md, "A SQL inbox"): a queue that is a
// table of the connection's database. It claims up to MaxBatch rows a batch
// (by row lock, lease or advisory lock), hands each row's columns on as a
// JSON body (its header columns travel with the kept event), and at the
// end of the batch deletes the rows settled; the others are claimed again
// later (row_lock: at once; lease: when the lease runs out). A claimed id
// the fetch found no row for is NotFound, parked with the table's own row
// as its body (Batch.Unfetched) and deleted, never dropped silently.
// With a group column, it claims only the rows whose group is one of its
// queue's kinds (queue.Options.Kinds).
type Source struct {
	log      *slog.Logger
	queue    string
	maxBatch int
	pool     *pgxpool.Pool
	inbox    *Inbox
	// claimColumns are the columns a claim writes: left out of a parked copy.
	claimColumns []string

	mu sync.Mutex
	// claims are the claims of the batches received and not yet
	// acknowledged, by batch: Acknowledge finishes a batch's claim, Close
	// abandons those left.
	claims map[*queue.Batch]*Batch
}

// The parked copy of a row is not its body (ParkedBody), and its headers
// are columns of it (ParkedHeaders).
var (
	_ queue.ParkedBodies  = (*Source)(nil)
	_ queue.ParkedHeaders = (*Source)(nil)
)

// OpenSource opens the connection's database (its credential's url) and
// prepares the inbox's statements, so a table or column the database
// lacks stops the start.
func OpenSource(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	t, err := TableOf(conn.Settings)
	if err != nil {
		return nil, err
	}
	if t.Group != "" {
		// Several connections may share one table, each queue its own kinds:
		// a row no queue lists waits in the table rather than being parked.
		t.Kinds = opts.Kinds
	}
	cfg, err := pgxpool.ParseConfig(conn.Credentials[ir.MemberURL])
	if err != nil {
		// pgx's message may quote the URL: say only what is wrong.
		return nil, fmt.Errorf("connection %s: the credential's url is not a PostgreSQL URL", conn.Name)
	}
	cfg.MaxConns = int32(opts.InFlight + 2) // a row_lock claim holds a connection until its batch is settled
	if opts.Dial != nil {
		// Every connection goes through the given dialer, unresolved, so
		// that no name is looked up off the machine either.
		cfg.ConnConfig.DialFunc = opts.Dial
		cfg.ConnConfig.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connection %s: cannot open the inbox database: %w", conn.Name, err)
	}
	inbox, err := Open(ctx, pool, t)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	s := &Source{log: opts.Log, queue: opts.Queue, maxBatch: opts.MaxBatch, pool: pool, inbox: inbox, claims: map[*queue.Batch]*Batch{}}
	for _, c := range []string{t.Attempt, t.LockedUntil} {
		if c != "" {
			s.claimColumns = append(s.claimColumns, c)
		}
	}
	return s, nil
}

// LongPoll is 0: a claim answers at once.
func (s *Source) LongPoll() time.Duration { return 0 }

// Receive claims one batch of rows.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	b, err := s.inbox.Claim(ctx, s.maxBatch)
	if err != nil {
		return nil, err
	}
	out := &queue.Batch{Messages: make([]queue.Message, 0, len(b.Rows)+len(b.Missing))}
	for _, row := range b.Rows {
		out.Messages = append(out.Messages, queue.Message{Body: string(row.Body), Handle: row.ID, Headers: row.Headers})
	}
	for _, id := range b.Missing {
		s.log.Warn("a claimed row was not found by the fetch; it is parked", "queue", s.queue, "message_id", id)
		row := b.Unfetched[id]
		out.Messages = append(out.Messages, queue.Message{Body: string(row.Body), Handle: id, Headers: row.Headers, NotFound: true})
	}
	if len(out.Messages) == 0 {
		b.Abandon(ctx) // nothing claimed: end the claim's transaction
		return out, nil
	}
	s.mu.Lock()
	s.claims[out] = b
	s.mu.Unlock()
	return out, nil
}

// Acknowledge deletes the settled rows and ends the claim.
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	s.mu.Lock()
	claim := s.claims[b]
	delete(s.claims, b)
	s.mu.Unlock()
	if len(b.Messages) == 0 || claim == nil {
		return queue.Acks{}
	}
	var ack []string
	for _, m := range b.Messages {
		if m.Settled {
			ack = append(ack, m.Handle)
		}
	}
	deleted, err := claim.Finish(ctx, ack)
	if err != nil {
		// The rows stay (row_lock: the claim rolled back); claimed again,
		// the kept ones are repeats.
		s.log.Warn("deleting settled rows failed; they will be claimed again, the kept ones as repeats", "queue", s.queue, "rows", len(ack), "error", err)
		return queue.Acks{}
	}
	if deleted < len(ack) {
		s.log.Warn("some rows' leases had run out before they were deleted; they will come back as repeats",
			"queue", s.queue, "deleted", deleted, "settled", len(ack))
	}
	return queue.Acks{Acknowledged: deleted}
}

// Close abandons the claims of batches never acknowledged (their rows are
// claimed again: row_lock at once, lease when it runs out) and closes the
// database pool.
func (s *Source) Close() {
	s.mu.Lock()
	left := s.claims
	s.claims = map[*queue.Batch]*Batch{}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, claim := range left {
		claim.Abandon(ctx)
	}
	s.pool.Close()
}

// ParkedBody is a row's body without the columns each claim changes
// (attempt, locked_until), keys sorted: the same for every claim of a row.
// Parking keeps it, so that a row parked and then claimed again before its
// delete (a crash, or a lease that ran out) is "parked already", not parked
// twice. Nil when the body is not a JSON object: then the body itself is kept.
func (s *Source) ParkedBody(m *queue.Message) []byte {
	var cols map[string]json.RawMessage
	d := json.NewDecoder(strings.NewReader(m.Body))
	d.UseNumber()
	if err := d.Decode(&cols); err != nil {
		return nil
	}
	for _, c := range s.claimColumns {
		delete(cols, c)
	}
	out, err := json.Marshal(cols)
	if err != nil {
		return nil
	}
	return out
}

// ParkedHeaders gives the header columns' values of a parked body, as
// text by the rules a first read gives them (Row.Headers): a retried row
// is kept with the headers it would have had. A header column the body
// lacks or holds null is left out; nil when the body is not a JSON object.
func (s *Source) ParkedHeaders(body []byte) map[string]string {
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(body, &cols); err != nil || cols == nil {
		return nil
	}
	h := map[string]string{}
	for _, c := range s.inbox.t.Headers {
		if js, ok := cols[c]; ok {
			if text, ok := jsonText(js); ok {
				h[c] = text
			}
		}
	}
	return h
}
