package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// runDemo is the README's first command: a tour of the receive loop on the
// warehouse example, against the SQS fake and the embedded store. It works
// on a copy of the project, so that "fixing the cause" of a parked message
// (listing its type) can edit the copy and build again.
func (e *env) runDemo(ctx context.Context, dir string) error {
	out := e.stdout
	work, err := os.MkdirTemp("", "jadpo-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := copyProject(dir, work); err != nil {
		return startupError{msg: "the demo cannot copy the project: " + err.Error()}
	}
	f := &appFlags{logFormat: "text"}
	// The project's own store, build/local.sqlite, where jadpo deliveries finds it after
	// the demo (docs/design/store.md); the demo starts it afresh.
	url, err := defaultStoreURL(dir)
	if err != nil {
		return err
	}
	f.database = url
	abs := strings.TrimPrefix(url, "sqlite:")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(abs + suffix)
	}
	// What to type after the demo: as the demo was called, and naming the store only when
	// jadpo deliveries would not find it by itself.
	prog, project := progName(), shellQuote(dir)
	if os.Getenv("DATABASE_URL") != "" {
		project += " --database " + shellQuote(shownStore(url))
	}
	quiet := &env{stdin: e.stdin, stdout: e.stdout, stderr: discard{}}
	w, err := quiet.startDev(ctx, work, f, false)
	if err != nil {
		return err
	}
	if _, ok := w.SQSQueue("warehouse_queue"); !ok {
		w.close()
		return startupError{msg: "the demo is written for examples/warehouse: it needs queue warehouse_queue"}
	}
	fmt.Fprintf(out, "jadpo demo: %s receiving from a local SQS fake (%s) into the embedded store (%s, started afresh)\n\n", dir, w.SQS.URL, shownStore(url))

	big := `{"id":"m-1003","type":"order_shipped","order_id":"o-3","shipped_at":"2026-11-30T10:00:00Z","carrier":"ups","lines":[` +
		strings.TrimSuffix(strings.Repeat(`{"sku":"SKU-LONG-PART-NUMBER-000000","quantity":1},`, 1500), ",") + `]}`
	sends := []struct{ body, what string }{
		{`{"id":"m-1001","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":2}],"warehouse":"north"}`, "a good order_shipped message"},
		{`{"id":"m-1001","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":2}],"warehouse":"north"}`, "the same message again (SQS delivers at least once)"},
		{`{"id":"m-1002","type":"order_delayed","order_id":"o-2","delayed_until":"2026-12-02T09:00:00Z"}`, "a type the queue does not list (order_delayed)"},
		{`{"id":"m-1004","type":"order_shipped","order_id":"","shipped_at":"yesterday","carrier":"pigeon","lines":[]}`, "an order_shipped its event refuses"},
		{`shipped: o-5`, "a body that is not JSON"},
		{big, fmt.Sprintf("an order_shipped of %d KB, over the 64 KB an event may be", len(big)/1024)},
	}
	fmt.Fprintln(out, "1. Sending six messages to warehouse_queue:")
	for i, s := range sends {
		if _, err := w.SQS.SendMessage("warehouse_queue", s.body); err != nil {
			w.close()
			return err
		}
		fmt.Fprintf(out, "   %d. %s\n", i+1, s.what)
	}
	fmt.Fprintln(out, "\n2. One tick:")
	rep, err := w.rt.Tick(ctx)
	if err != nil {
		w.close()
		return err
	}
	printTick(out, rep)
	stats, err := w.st.Stats(ctx)
	if err != nil {
		w.close()
		return err
	}
	qs, _ := w.SQS.Stats("warehouse_queue")
	fmt.Fprintf(out, "   the store holds %d event(s) with %d received id(s); the queue holds %d message(s)\n", stats.Outbox, stats.ReceivedIDs, qs.Visible+qs.InFlight)
	fmt.Fprintf(out, "   deliveries: %s\n", deliveryStates(stats))

	open := func(context.Context) (store.Store, string, error) {
		st, err := openExistingStore(ctx, f.database)
		return st, f.database, err
	}
	fmt.Fprintf(out, "\n3. $ %s deliveries %s\n", prog, project)
	if err := indent(e, func() error { return e.listEntries(ctx, open, "failed", "text", "deliveries") }); err != nil {
		w.close()
		return err
	}
	entries, err := w.st.List(ctx, store.Filter{State: store.ListFailed})
	if err != nil {
		w.close()
		return err
	}
	var unlisted store.Entry
	for _, en := range entries {
		if en.Code == string(store.ReasonUnlistedType) {
			unlisted = en
		}
		if en.Code == string(store.ReasonUnreadable) && len(en.Problems) > 0 {
			fmt.Fprintf(out, "\n   $ %s deliveries show %s --dir %s\n", prog, en.ID, project)
			full, err := w.st.Show(ctx, en.ID, false)
			if err == nil {
				_ = indent(e, func() error { e.printEntry(full, false); return nil })
			}
		}
	}
	w.close()

	fmt.Fprintln(out, "\n4. Fixing the cause of the unlisted type: the app now lists order_delayed.")
	if err := fixUnlisted(work); err != nil {
		return err
	}
	fmt.Fprintln(out, "   stock/events.jadpo: + public event OrderDelayed { order_id: OrderId  delayed_until: Instant }")
	fmt.Fprintln(out, "   app.jadpo:          + OrderDelayed { wire_name: \"order_delayed\" } in warehouse_queue's events")
	w2, err := quiet.startDev(ctx, work, f, false)
	if err != nil {
		return err
	}
	defer w2.close()
	fmt.Fprintf(out, "\n   $ %s deliveries retry %s --dir %s\n", prog, unlisted.ID, project)
	if err := w2.st.Retry(ctx, []store.ID{unlisted.ID}); err != nil {
		return err
	}
	fmt.Fprintf(out, "   %s is pending again\n\n   One tick with the new build:\n", unlisted.ID)
	rep, err = w2.rt.Tick(ctx)
	if err != nil {
		return err
	}
	printTick(out, rep)
	fmt.Fprintf(out, "\n5. $ %s deliveries %s --state all\n", prog, project)
	if err := indent(e, func() error { return e.listEntries(ctx, open, "all", "text", "deliveries") }); err != nil {
		return err
	}
	if _, err := w2.st.Show(ctx, unlisted.ID, false); err != nil {
		// Kept: a retried parked message's row goes once its event is in the store.
		fmt.Fprintf(out, "   (%s is no longer listed: it was kept as an OrderDelayed event, and its parked row went with it)\n", unlisted.ID)
	}
	stats, _ = w2.st.Stats(ctx)
	fmt.Fprintf(out, "\nThe store now holds %d events; nothing was dropped: every message is kept once or parked for an operator.\n", stats.Outbox)
	fmt.Fprintf(out, "It stays in %s: see it again with\n\n  %s deliveries %s --state all\n", shownStore(url), prog, project)
	return nil
}

// progName is how the user called jadpo (bin/jadpo, jadpo), so that a command the demo
// prints can be pasted as it is; "jadpo" when run otherwise (tests).
func progName() string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "jadpo" {
		return os.Args[0]
	}
	return "jadpo"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func printTick(w interface{ Write([]byte) (int, error) }, rep runtime.TickReport) {
	fmt.Fprintf(w, "   received %d: %s, acknowledged %d\n", rep.Received, receivedCounts(rep), rep.Acked)
	if rep.RetriedKept+rep.RetriedParked+rep.RetriedRepeats > 0 {
		fmt.Fprintf(w, "   operator-retried parked messages: kept %d, parked again %d%s\n", rep.RetriedKept, rep.RetriedParked, retriedRepeats(rep))
	}
	d := rep.Delivered
	if d.Claimed > 0 {
		fmt.Fprintf(w, "   deliveries run: %d succeeded, %d to retry, %d failed%s\n", d.Succeeded, d.Retried, d.Failed, releasedCount(d))
	}
}

// releasedCount names the deliveries a step claimed and handed back unrun
// (a signal came while they waited for a worker), when there were any: they
// are pending again, their attempt not counted.
func releasedCount(d runtime.DeliverReport) string {
	if d.Released == 0 {
		return ""
	}
	return fmt.Sprintf(", %d handed back unrun", d.Released)
}

// receivedCounts says what became of a tick's received messages. Left counts
// those the store could not take, handed back to their queue: not what waits
// on the queue, which the tick does not know.
func receivedCounts(rep runtime.TickReport) string {
	return fmt.Sprintf("kept %d, repeats %d, parked %d, handed back %d", rep.Kept, rep.Repeats, rep.Parked, rep.Left)
}

func deliveryStates(s store.Stats) string {
	var parts []string
	for _, st := range store.DeliveryStates {
		if n := s.Deliveries[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// indent prints what fn prints, indented by three spaces.
func indent(e *env, fn func() error) error {
	var b strings.Builder
	saved := e.stdout
	e.stdout = &b
	err := fn()
	e.stdout = saved
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintf(saved, "   %s\n", line)
	}
	return err
}

// fixUnlisted lists order_delayed in the demo's copy of the warehouse app.
func fixUnlisted(dir string) error {
	events := filepath.Join(dir, "stock", "events.jadpo")
	b, err := os.ReadFile(events)
	if err != nil {
		return err
	}
	b = append(b, []byte("\npublic event OrderDelayed {\n    order_id: OrderId\n    delayed_until: Instant\n}\n")...)
	if err := os.WriteFile(events, b, 0o644); err != nil {
		return err
	}
	app := filepath.Join(dir, "app.jadpo")
	a, err := os.ReadFile(app)
	if err != nil {
		return err
	}
	s := strings.Replace(string(a), "use stock/events { OrderShipped, OrderCancelled }", "use stock/events { OrderShipped, OrderCancelled, OrderDelayed }", 1)
	s = strings.Replace(s, `        OrderCancelled { wire_name: "order_cancelled" }`, "        OrderCancelled { wire_name: \"order_cancelled\" }\n        OrderDelayed { wire_name: \"order_delayed\" }", 1)
	if s == string(a) {
		return fmt.Errorf("the demo could not edit app.jadpo")
	}
	return os.WriteFile(app, []byte(s), 0o644)
}

func copyProject(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "build" {
				return fs.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
