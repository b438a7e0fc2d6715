package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jadpo/jadpo/providers/testclock"
	"github.com/jadpo/jadpo/runtime/store"
)

// TestSoak (make soak; JADPO_SOAK=1): JADPO_SOAK_MESSAGES messages (default a million)
// kept and delivered through PostgreSQL in ticks of 100, housekeeping each tick with a
// 2-day retention, the clock moving a day every tenth of the messages. At every tenth it
// prints each table's rows and pg_total_relation_size and the mean time of its ticks
// (docs/performance.md, "Soak").
func TestSoak(t *testing.T) {
	if os.Getenv("JADPO_SOAK") == "" {
		t.Skip("the soak runs with make soak (JADPO_SOAK=1)")
	}
	total := 1_000_000
	if v := os.Getenv("JADPO_SOAK_MESSAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("JADPO_SOAK_MESSAGES=%q: give a whole number of at least 1000", v)
		}
		total = n
	}
	const perTick = 100
	step := total / 10
	db := newDatabase(t)
	s := db.open(t)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	o := store.Housekeeping{Succeeded: 48 * time.Hour, Outbox: 48 * time.Hour}
	// Deleted rows' space is reused once VACUUM has run. With autovacuum off on the
	// server (as on the shared test server), the soak runs a plain VACUUM once a day of
	// its clock instead, as autovacuum would at least.
	var autovacuum string
	conn := db.conn(t)
	if err := conn.QueryRow(ctx, "SHOW autovacuum").Scan(&autovacuum); err != nil {
		t.Fatal(err)
	}
	vacuum := autovacuum != "on"
	if vacuum {
		fmt.Println("autovacuum is off on this server: VACUUM once a day of the soak's clock")
	}
	now := testclock.Epoch()
	tickStep := 24 * time.Hour / time.Duration(step/perTick)
	fmt.Printf("%-9s %-26s %-26s %-26s %s\n", "messages", "received_events rows/MiB", "outbox rows/MiB", "deliveries rows/MiB", "mean tick ms")
	keeps := make([]store.Keep, perTick)
	var took time.Duration // the step's ticks, for their mean
	ticks := 0
	for sent := 0; sent < total; {
		for i := range keeps {
			keeps[i] = store.Keep{Source: "queue soak", ReceivedID: fmt.Sprintf("m%d", sent+i), EventName: "OrderShipped",
				EventJSON: []byte(fmt.Sprintf(`{"order_id":"o-%d","lines":[1,2,3]}`, sent+i)), Subscribers: []string{"pack_order"}}
		}
		start := time.Now()
		if _, err := s.KeepBatch(ctx, now, keeps); err != nil {
			t.Fatal(err)
		}
		cs, err := s.ClaimDeliveries(ctx, now, perTick, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if _, err := s.SettleDelivery(ctx, now, store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleSucceeded}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Housekeep(ctx, now, o); err != nil {
			t.Fatal(err)
		}
		took += time.Since(start)
		ticks++
		sent += perTick
		now = now.Add(tickStep)
		if sent%step == 0 {
			if vacuum {
				if _, err := conn.Exec(ctx, "VACUUM jadpo_received_events, jadpo_outbox, jadpo_deliveries, jadpo_parked_messages"); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			row := fmt.Sprintf("%-9d", sent)
			for _, tb := range st.Tables[:3] {
				row += fmt.Sprintf(" %-26s", fmt.Sprintf("%d / %.1f", tb.Rows, float64(tb.Bytes)/(1<<20)))
			}
			fmt.Printf("%s %.2f\n", row, float64(took.Microseconds())/1000/float64(ticks))
			took, ticks = 0, 0
		}
	}
}
