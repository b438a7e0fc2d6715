package postgres_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/runtime/store"
	"github.com/jadpo/jadpo/runtime/store/storetest"
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
	s := storetest.Timed{Store: db.open(t)}
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	o := store.Housekeeping{Succeeded: 48 * time.Hour, Outbox: 48 * time.Hour}
	// Deleted rows' space is reused once VACUUM has run. With autovacuum off on the
	// server (as on the shared test server), the soak does autovacuum's part itself: every
	// 10 ticks it vacuums each table whose dead rows passed autovacuum's own trigger
	// (autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor x live rows, read from
	// the server), which is what autovacuum with its default settings would do.
	var autovacuum string
	var threshold, scale float64
	conn := db.conn(t)
	if err := conn.QueryRow(ctx, "SELECT current_setting('autovacuum'), current_setting('autovacuum_vacuum_threshold')::float8, current_setting('autovacuum_vacuum_scale_factor')::float8").Scan(&autovacuum, &threshold, &scale); err != nil {
		t.Fatal(err)
	}
	vacuum := autovacuum != "on"
	vacuums := 0
	if vacuum {
		fmt.Printf("autovacuum is off on this server: the soak vacuums a table once its dead rows pass %.0f + %.2f x its live rows, as autovacuum would\n", threshold, scale)
	}
	vacuumDue := func() {
		rows, err := conn.Query(ctx, `SELECT relname FROM pg_stat_user_tables
			WHERE relname IN ('jadpo_received_events', 'jadpo_outbox', 'jadpo_deliveries', 'jadpo_parked_messages')
			  AND n_dead_tup > $1 + $2 * n_live_tup`, threshold, scale)
		if err != nil {
			t.Fatal(err)
		}
		var due []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			due = append(due, name)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, name := range due {
			if _, err := conn.Exec(ctx, "VACUUM "+name); err != nil {
				t.Fatal(err)
			}
			vacuums++
		}
	}
	now := testclock.Epoch()
	tickStep := 24 * time.Hour / time.Duration(step/perTick)
	fmt.Printf("%-9s %-26s %-26s %-26s %s\n", "messages", "received_events rows/MiB", "outbox rows/MiB", "deliveries rows/MiB", "mean tick ms")
	keeps := make([]store.Keep, perTick)
	type point struct {
		rows, bytes [3]float64
		tick        float64
	}
	var points []point
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
		if vacuum && ticks%10 == 0 {
			vacuumDue()
		}
		sent += perTick
		now = now.Add(tickStep)
		if sent%step == 0 {
			st, err := s.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			row := fmt.Sprintf("%-9d", sent)
			var p point
			for i, tb := range st.Tables[:3] {
				row += fmt.Sprintf(" %-26s", fmt.Sprintf("%d / %.1f", tb.Rows, float64(tb.Bytes)/(1<<20)))
				p.rows[i], p.bytes[i] = float64(tb.Rows), float64(tb.Bytes)
			}
			p.tick = float64(took.Microseconds()) / 1000 / float64(ticks)
			points = append(points, p)
			fmt.Printf("%s %.2f\n", row, p.tick)
			took, ticks = 0, 0
		}
	}
	// The goal: from the third tenth on, each table's rows and size within 10% of their
	// level (their mean over those tenths); the last tenth's tick within 20% of the
	// first's. Received ids are kept 30 days, so they level only after 30 "days".
	for i, name := range []string{"received ids", "outbox", "deliveries"} {
		var rows, bytes []float64
		for _, p := range points[2:] {
			rows, bytes = append(rows, p.rows[i]), append(bytes, p.bytes[i])
		}
		fmt.Printf("%s: rows within %.1f%% of their level, size within %.1f%%\n", name, spread(rows), spread(bytes))
	}
	fmt.Printf("tick at the last tenth / at the first: %.2f\n", points[len(points)-1].tick/points[0].tick)
	if vacuum {
		fmt.Printf("VACUUMs run by the soak: %d\n", vacuums)
	}
}

// spread is the largest distance of xs from their mean, in percent of it.
func spread(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	worst := 0.0
	for _, x := range xs {
		worst = max(worst, math.Abs(x-mean)/mean*100)
	}
	return worst
}
