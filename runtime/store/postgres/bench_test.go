package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/postgres"
)

const benchBatch = 10

// benchStore is a migrated store on a fresh schema. With asyncCommit the sessions run with
// synchronous_commit=off, so that a commit does not wait for its WAL flush: what is left is
// the work and the round trips.
func benchStore(b *testing.B, asyncCommit bool) *postgres.Store {
	d := newDatabase(b)
	cfg, _ := d.config(b)
	if asyncCommit {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	s, err := postgres.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

// commitModes runs fn with commits flushed (the default) and not.
func commitModes(b *testing.B, fn func(b *testing.B, s *postgres.Store)) {
	for _, async := range []bool{false, true} {
		name := "sync-commit"
		if async {
			name = "async-commit"
		}
		b.Run(name, func(b *testing.B) { fn(b, benchStore(b, async)) })
	}
}

func benchKeeps(i int) []store.Keep {
	keeps := make([]store.Keep, benchBatch)
	for j := range keeps {
		id := fmt.Sprintf("m%d-%d", i, j)
		keeps[j] = store.Keep{
			Source:      "queue warehouse_queue",
			ReceivedID:  id,
			EventName:   "OrderShipped",
			EventJSON:   []byte(`{"order_id":"` + id + `","carrier":"dhl","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}]}`),
			Subscribers: []string{"pack_order", "notify_customer"},
		}
	}
	return keeps
}

// BenchmarkKeepBatch keeps batches of 10 messages (2 subscribers each) through the store:
// one transaction, a savepoint and one statement per message, pipelined.
func BenchmarkKeepBatch(b *testing.B) { commitModes(b, benchKeepBatch) }

func benchKeepBatch(b *testing.B, s *postgres.Store) {
	ctx := context.Background()
	i := 0
	for b.Loop() {
		res, err := s.KeepBatch(ctx, benchKeeps(i))
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Outcome != store.Kept {
			b.Fatalf("outcome %v", res[0].Outcome)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/message")
}

// BenchmarkKeepBatchRawLoop writes the same rows in the same transaction shape (READ
// COMMITTED, a savepoint per message) with plain pgx calls, one round trip per statement.
func BenchmarkKeepBatchRawLoop(b *testing.B) { commitModes(b, benchKeepBatchRawLoop) }

func benchKeepBatchRawLoop(b *testing.B, s *postgres.Store) {
	ctx := context.Background()
	pool := s.Pool()
	now := time.Now().UTC().Truncate(time.Microsecond)
	i := 0
	for b.Loop() {
		err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
			for _, k := range benchKeeps(i) {
				if _, err := tx.Exec(ctx, "SAVEPOINT k"); err != nil {
					return err
				}
				tag, err := tx.Exec(ctx, `INSERT INTO jadpo_received_events (source, received_id, received_at)
VALUES ($1, $2, $3) ON CONFLICT (source, received_id) DO NOTHING`, k.Source, k.ReceivedID, now)
				if err != nil {
					return err
				}
				if tag.RowsAffected() == 1 {
					var id int64
					if err := tx.QueryRow(ctx, `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at)
VALUES ($1, $2, $3, $4, $5) RETURNING id`, k.Source, k.EventName, string(k.EventJSON), k.ReceivedID, now).Scan(&id); err != nil {
						return err
					}
					for _, sub := range k.Subscribers {
						if _, err := tx.Exec(ctx, `INSERT INTO jadpo_deliveries
    (outbox_id, subscriber, state, attempts, next_attempt_at, fencing_token, created_at, updated_at)
VALUES ($1, $2, 'pending', 0, $3, 0, $3, $3)`, id, sub, now); err != nil {
							return err
						}
					}
				}
				if _, err := tx.Exec(ctx, "RELEASE SAVEPOINT k"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/message")
}

// BenchmarkClaimSettle claims 10 deliveries and settles each as succeeded.
func BenchmarkClaimSettle(b *testing.B) { commitModes(b, benchClaimSettle) }

func benchClaimSettle(b *testing.B, s *postgres.Store) {
	ctx := context.Background()
	for i := range 200 {
		if _, err := s.KeepBatch(ctx, benchKeeps(i)); err != nil {
			b.Fatal(err)
		}
	}
	i := 200
	for b.Loop() {
		c, err := s.ClaimDeliveries(ctx, 10, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if len(c) == 0 {
			b.StopTimer()
			if _, err := s.KeepBatch(ctx, benchKeeps(i)); err != nil {
				b.Fatal(err)
			}
			i++
			b.StartTimer()
			continue
		}
		for _, d := range c {
			if _, err := s.SettleDelivery(ctx, store.Settlement{ID: d.ID, Token: d.Token, Outcome: store.SettleSucceeded}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
