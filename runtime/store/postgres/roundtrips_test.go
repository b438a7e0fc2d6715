package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/postgres"
)

// countingTracer counts what the store sends: statements sent alone (a round trip each),
// batches (a round trip each) and the statements in them.
type countingTracer struct{ queries, batches, batched atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}
func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *countingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	return ctx
}
func (c *countingTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.batched.Add(1)
}
func (c *countingTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *countingTracer) reset() { c.queries.Store(0); c.batches.Store(0); c.batched.Store(0) }

func (c *countingTracer) want(t *testing.T, what string, queries, batches, batched int64) {
	t.Helper()
	if q, b, n := c.queries.Load(), c.batches.Load(), c.batched.Load(); q != queries || b != batches || n != batched {
		t.Errorf("%s: %d statements alone and %d batches of %d statements, want %d alone and %d batches of %d", what, q, b, n, queries, batches, batched)
	}
	c.reset()
}

// A batch of messages is kept in one round trip (BEGIN, one statement, COMMIT), a batch the
// server refuses part of falls back to a savepoint a message, and settlements with a claim
// are one round trip.
func TestRoundTripsPerBatch(t *testing.T) {
	d := newDatabase(t)
	cfg, _ := d.config(t)
	tr := &countingTracer{}
	cfg.ConnConfig.Tracer = tr
	cfg.MaxConns = 1 // one connection: every statement is prepared once, by the warm-up
	ctx := context.Background()
	s, err := postgres.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	keeps := func(from, n int) []store.Keep {
		var ks []store.Keep
		for i := from; i < from+n; i++ {
			id := fmt.Sprint("m", i)
			ks = append(ks, store.Keep{Source: "queue q", ReceivedID: id, EventName: "E", EventJSON: []byte(`{"id":"` + id + `"}`), Subscribers: []string{"s"}})
		}
		return ks
	}
	if _, err := s.KeepBatch(ctx, keeps(0, 1)); err != nil { // warm-up
		t.Fatal(err)
	}
	tr.reset()
	res, err := s.KeepBatch(ctx, keeps(1, 10))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Outcome != store.Kept || r.OutboxID == 0 {
			t.Fatalf("message %d: %+v, want kept", i, r)
		}
		if i > 0 && r.OutboxID <= res[i-1].OutboxID {
			t.Fatalf("outbox ids %d then %d: not in the batch's order", res[i-1].OutboxID, r.OutboxID)
		}
	}
	tr.want(t, "a batch of 10 kept", 0, 1, 3)

	bad := keeps(11, 2)
	bad[1].EventJSON = []byte(`{"id":`)
	res, err = s.KeepBatch(ctx, bad)
	if err != nil || res[0].Outcome != store.Kept || res[1].Outcome != store.Refused {
		t.Fatalf("a batch with a refused message: %+v, %v", res, err)
	}
	if tr.batches.Load() < 2 {
		t.Errorf("a batch with a refused message was sent in %d batches, want the one statement and then a savepoint a message", tr.batches.Load())
	}
	tr.reset()

	claimed, err := s.ClaimDeliveries(ctx, 4, time.Minute)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	tr.reset()
	var sts []store.Settlement
	for _, c := range claimed {
		sts = append(sts, store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleSucceeded})
	}
	ok, more, err := s.SettleAndClaim(ctx, sts, 4, time.Minute)
	if err != nil || len(more) != 4 {
		t.Fatalf("SettleAndClaim: %v, %d claimed, %v", ok, len(more), err)
	}
	for i, o := range ok {
		if !o {
			t.Fatalf("settlement %d not written", i)
		}
	}
	tr.want(t, "4 settlements and a claim", 0, 1, 5)
}
