package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// rawPool is a raw loop's store: the schema of url (fresh, fsync on)
// migrated as the runtime's store is (benchDurableStoreAt), and a pool on
// it, closed when the benchmark ends.
func rawPool(b *testing.B, url string) *pgxpool.Pool {
	b.Helper()
	benchDurableStoreAt(b, url)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// rawKept is one message a broker's raw loop keeps: its id and its event.
type rawKept struct{ ID, EventJSON string }

const (
	rawInsReceived = `INSERT INTO jadpo_received_events (source, received_id, received_at)
VALUES ($1, $2, $3) ON CONFLICT (source, received_id) DO NOTHING`
	rawInsOutbox = `INSERT INTO jadpo_outbox (source, event_name, event_json, received_id, created_at)
VALUES ($1, $2, $3, $4, $5)`
)

// rawKeep keeps a batch as the runtime's keep does for an app without
// subscribers, with plain pgx, one statement at a time: in one read
// committed transaction, each message's received id and, when the id was
// not recorded before, its outbox row. The broker benchmarks' raw loops
// call it between receiving and acknowledging.
func rawKeep(ctx context.Context, pool *pgxpool.Pool, source, event string, msgs []rawKept, now time.Time) error {
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		for _, m := range msgs {
			tag, err := tx.Exec(ctx, rawInsReceived, source, m.ID, now)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, rawInsOutbox, source, event, m.EventJSON, m.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
}
