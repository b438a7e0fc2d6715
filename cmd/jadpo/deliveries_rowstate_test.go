package main

// A delivery listed as pending says what its row is doing: retry_wait with its next try,
// running with the lease of the process that holds it; a retry or dismiss refused names it
// so too. An id given twice is acted on and printed once.

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

func TestDeliveriesPendingRowStates(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
			st := env.Store()
			env.Target.Script(503) // m-1's first attempt: retried later
			env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
			if _, err := env.Runtime(st, runtime.Options{}).Tick(ctx); err != nil {
				t.Fatal(err)
			}
			// m-2's delivery claimed by a process that then stops: running until its lease ends.
			if res, err := st.KeepBatch(ctx, []store.Keep{{Source: "queue warehouse_queue", ReceivedID: "m-2", EventName: "OrderShipped",
				EventJSON: []byte(`{"order_id":"o-2"}`), Subscribers: []string{"pack_order"}}}); err != nil || res[0].Outcome != store.Kept {
				t.Fatalf("KeepBatch = %+v, %v", res, err)
			}
			claimed, err := st.ClaimDeliveries(ctx, 10, time.Minute)
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claim = %+v, %v", claimed, err)
			}
			var waiting, running store.Entry
			pending, err := st.List(ctx, store.Filter{State: store.ListPending})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pending {
				switch e.RowState {
				case "retry_wait":
					waiting = e
				case "running":
					running = e
				}
			}
			if waiting.ID.N == 0 || running.ID != store.DeliveryID(claimed[0].ID) || waiting.NextAttemptAt.IsZero() {
				t.Fatalf("pending: %+v", pending)
			}
			lease := claimed[0].LeaseExpiresAt
			w := &deliveriesWorld{env: env, st: st}

			// The list's STATE: pending, and the row's state with its time (of day, on SINCE's day).
			code, out, errs := w.cli(t, "deliveries", "--state", "pending", "--dir", exampleDir(t))
			if code != 0 || errs != "" {
				t.Fatalf("list: exit %d %q", code, errs)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			checkAligned(t, lines)
			clock := func(at, since time.Time) string {
				if at.UTC().Format(time.DateOnly) == since.UTC().Format(time.DateOnly) {
					return at.UTC().Format("15:04:05Z")
				}
				return at.UTC().Format(time.RFC3339)
			}
			for _, re := range []*regexp.Regexp{
				regexp.MustCompile(`^` + waiting.ID.String() + ` +pending \(retry_wait, next try ` + regexp.QuoteMeta(clock(waiting.NextAttemptAt, waiting.UpdatedAt)) +
					`\) +subscriber pack_order · OrderShipped +status_503 +1/8 +\d{4}-`),
				regexp.MustCompile(`^` + running.ID.String() + ` +pending \(running, lease until ` + regexp.QuoteMeta(clock(lease, running.UpdatedAt)) +
					`\) +subscriber pack_order · OrderShipped +- +1/8 +\d{4}-`),
			} {
				if !slices.ContainsFunc(lines[1:], re.MatchString) {
					t.Errorf("no line matches %s:\n%s", re, out)
				}
			}

			// show: the row's state on the first line, its time on a line of its own.
			_, out, _ = w.cli(t, "deliveries", "show", waiting.ID.String())
			if !strings.HasPrefix(out, waiting.ID.String()+"  pending (retry_wait)  subscriber pack_order") ||
				!strings.Contains(out, "\n  next try:    "+waiting.NextAttemptAt.UTC().Format(time.RFC3339)+"\n") {
				t.Errorf("show retry_wait:\n%s", out)
			}
			_, out, _ = w.cli(t, "deliveries", "show", running.ID.String())
			if !strings.HasPrefix(out, running.ID.String()+"  pending (running)  subscriber pack_order") ||
				!strings.Contains(out, "\n  lease until: "+lease.UTC().Format(time.RFC3339)+"  (a process holds it until then)\n") || strings.Contains(out, "next try") {
				t.Errorf("show running:\n%s", out)
			}

			// Completion describes each id the same way.
			_, out, _ = cli(t, "__complete", "deliveries", "retry", "--database", env.StoreURL, "")
			if !strings.Contains(out, waiting.ID.String()+"\tpending (retry_wait) subscriber pack_order") ||
				!strings.Contains(out, running.ID.String()+"\tpending (running) subscriber pack_order") {
				t.Errorf("completion:\n%s", out)
			}

			// JSON: state is the listing state; rowState and the time that applies beside it.
			isTime := func(v any, want time.Time) bool {
				s, _ := v.(string)
				got, err := time.Parse(time.RFC3339Nano, s)
				return err == nil && got.Equal(want)
			}
			_, out, _ = w.cli(t, "deliveries", "show", waiting.ID.String(), "--json")
			if e := entryOf(t, out); e["state"] != "pending" || e["rowState"] != "retry_wait" || !isTime(e["nextAttemptAt"], waiting.NextAttemptAt) ||
				e["leaseUntil"] != nil || e["settledAt"] != nil {
				t.Errorf("show --json retry_wait: %v", e)
			}
			_, out, _ = w.cli(t, "deliveries", "list", "--state", "pending", "--json")
			byID := map[string]map[string]any{}
			for _, e := range listJSON(t, out) {
				byID[e["id"].(string)] = e
			}
			if e := byID[running.ID.String()]; e["state"] != "pending" || e["rowState"] != "running" || !isTime(e["leaseUntil"], lease) || e["nextAttemptAt"] != nil {
				t.Errorf("list --json running: %v", e)
			}
			if e := byID[waiting.ID.String()]; e["rowState"] != "retry_wait" || !isTime(e["nextAttemptAt"], waiting.NextAttemptAt) {
				t.Errorf("list --json retry_wait: %v", e)
			}

			// A refusal says what the list says, and what becomes of it.
			for _, op := range []string{"retry", "dismiss"} {
				code, _, errs := w.cli(t, "deliveries", op, waiting.ID.String(), running.ID.String())
				want := op + " refused, nothing changed: " +
					waiting.ID.String() + " is pending (retry_wait, next try " + waiting.NextAttemptAt.UTC().Format(time.RFC3339) + "): it is retried by itself; " +
					running.ID.String() + " is pending (running, lease until " + lease.UTC().Format(time.RFC3339) + "): a process holds it until then"
				if code != 1 || !strings.Contains(errs, want) {
					t.Errorf("%s: exit %d, stderr %q, want %q", op, code, errs, want)
				}
			}
		})
	}
}

func TestDeliveriesChangeOnceEachID(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	f, u, r := w.failed.String(), w.unlisted.String(), w.unreadble.String()
	code, out, errs := w.cli(t, "deliveries", "retry", u, f, u, strings.ToUpper(f))
	if code != 0 || errs != "" || out != u+" is pending again\n"+f+" is pending again\n" {
		t.Fatalf("retry twice each: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = w.cli(t, "deliveries", "dismiss", r, r, "--json")
	if code != 0 || !regexp.MustCompile(`"ids": \[\s*"`+r+`"\s*\]`).MatchString(out) {
		t.Fatalf("dismiss twice --json: exit %d\n%s", code, out)
	}
}

// A settled delivery shows when it was settled; a dismissed entry, when it was dismissed.
func TestDeliveriesSettledAndDismissedTimes(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	ctx := context.Background()
	failed, err := w.st.Show(ctx, w.failed, false)
	if err != nil || failed.SettledAt.IsZero() {
		t.Fatalf("show %s = %+v, %v", w.failed, failed, err)
	}
	_, out, _ := w.cli(t, "deliveries", "show", w.failed.String())
	if !strings.Contains(out, "\n  settled:     "+failed.SettledAt.UTC().Format(time.RFC3339)+"\n") {
		t.Errorf("show a failed one:\n%s", out)
	}
	_, out, _ = w.cli(t, "deliveries", "show", w.failed.String(), "--json")
	if e := entryOf(t, out); e["rowState"] != "failed" || e["settledAt"] == nil || e["dismissedAt"] != nil || e["nextAttemptAt"] != nil {
		t.Errorf("show --json a failed one: %v", e)
	}
	if code, _, _ := w.cli(t, "deliveries", "dismiss", w.unreadble.String()); code != 0 {
		t.Fatal("dismiss failed")
	}
	_, out, _ = w.cli(t, "deliveries", "show", w.unreadble.String(), "--json")
	if e := entryOf(t, out); e["state"] != "dismissed" || e["rowState"] != "dismissed" || e["dismissedAt"] == nil {
		t.Errorf("show --json a dismissed one: %v", e)
	}
}
