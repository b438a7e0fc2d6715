package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/cmd/internal/jsonout"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// storeCommand is `jadpo store stats`: what the events' store holds. Like deliveries, it
// never creates or migrates a store.
func (e *env) storeCommand() *cobra.Command {
	var f appFlags
	var dirFlag, format string
	root := &cobra.Command{
		Use:     "store",
		Short:   "Look at the events' store",
		Example: "  jadpo store stats examples/warehouse\n  jadpo store stats --database postgres://db/events --format json",
		Args:    cobra.NoArgs,
	}
	stats := &cobra.Command{
		Use:   "stats [dir]",
		Short: "Deliveries by subscriber and state, parked messages, the oldest pending delivery, each table's rows",
		Long: "Stats reads the project's events' store (found as jadpo run finds it: docs/guide/operating.md) and never\n" +
			"creates or migrates one. It counts rows: on a very large store it takes a moment.",
		Example: "  jadpo store stats examples/warehouse\n" +
			"  jadpo store stats --database sqlite:build/local.sqlite --format json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			ctx := c.Context()
			url, from, err := e.statsStoreURL(dir, &f, format)
			if err != nil {
				return err
			}
			st, err := openExistingStore(ctx, url)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(ctx)
			if err != nil {
				return startupError{msg: fmt.Sprintf("cannot read the events' store %s: %v (a store no jadpo run or tick has opened has no tables yet)", shownStore(url), err)}
			}
			now := time.Now()
			if format == "json" {
				return writeStoreStatsJSON(e.stdout, commandName(c), url, s, now)
			}
			fmt.Fprintf(e.stderr, "store: %s (%s)\n", shownStore(url), from)
			writeStoreStats(e.stdout, s, now)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&dirFlag, "dir", "", "the project folder (or give it as the argument)")
	root.PersistentFlags().StringVar(&f.database, "database", "", "the events' store: postgres://... or sqlite:PATH (default: as jadpo run finds it)")
	root.PersistentFlags().StringVar(&f.plan, "plan", "", "read the store's database from this plan")
	addFormatFlag(stats, &format, true, false)
	root.AddCommand(stats)
	return root
}

// statsStoreURL finds the store's database as deliveries does.
func (e *env) statsStoreURL(dir string, f *appFlags, format string) (url, from string, err error) {
	if f.database != "" {
		url, from, err = storeURL(dir, nil, nil, f.database)
		if err != nil {
			return "", "", startupError{msg: err.Error()}
		}
		return url, from, nil
	}
	p, err := e.loadPlan(dir, f)
	var ee exitError
	if errors.As(err, &ee) && format == "json" {
		return "", "", cmdError{code: "check_failed", exit: ee.code, msg: fmt.Sprintf("the project %s has errors (jadpo check %s shows them), so its store's database is not known; or give --database", dir, shellQuote(dir))}
	}
	if err != nil {
		return "", "", err
	}
	cfg, err := runtime.LoadConfig(p, os.Environ(), filepath.Join(dir, ".env.local"))
	if err != nil && p.Store != nil && p.Store.Database != nil && p.Store.Database.Config != "" {
		return "", "", configProblems(err)
	}
	if cfg == nil {
		cfg = runtime.EmptyConfig()
	}
	if url, from, err = storeURL(dir, p, cfg, ""); err != nil {
		return "", "", startupError{msg: err.Error()}
	}
	return url, from, nil
}

// writeStoreStatsJSON is `store stats --format json`: the envelope (kind store_stats),
// then the figures.
func writeStoreStatsJSON(w io.Writer, command, url string, s store.Stats, now time.Time) error {
	out := jsonout.StoreStats{
		Envelope: jsonout.NewEnvelope("store_stats", command, jsonout.StatusOK),
		Store:    store.RedactURL(url), Deliveries: []jsonout.Count{}, Parked: []jsonout.Count{}, Tables: []jsonout.Table{},
	}
	for _, k := range subscriberKeys(s) {
		out.Deliveries = append(out.Deliveries, jsonout.Count{Subscriber: k.Subscriber, State: string(k.State), Count: s.BySubscriber[k]})
	}
	for _, k := range parkedKeys(s) {
		out.Parked = append(out.Parked, jsonout.Count{Reason: string(k.Reason), State: string(k.State), Count: s.Parked[k]})
	}
	if !s.OldestPending.IsZero() {
		at := s.OldestPending.UTC().Format(time.RFC3339Nano)
		age := now.Sub(s.OldestPending).Seconds()
		out.OldestPending, out.OldestPendingAge = &at, &age
	}
	for _, t := range s.Tables {
		tb := jsonout.Table{Name: t.Name, Rows: t.Rows}
		if t.Bytes >= 0 {
			b := t.Bytes
			tb.Bytes = &b
		}
		out.Tables = append(out.Tables, tb)
	}
	return jsonout.Write(w, out)
}

func subscriberKeys(s store.Stats) []store.SubscriberKey {
	ks := make([]store.SubscriberKey, 0, len(s.BySubscriber))
	for k := range s.BySubscriber {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b store.SubscriberKey) int {
		return strings.Compare(a.Subscriber+"\x00"+string(a.State), b.Subscriber+"\x00"+string(b.State))
	})
	return ks
}

func parkedKeys(s store.Stats) []store.ParkedKey {
	ks := make([]store.ParkedKey, 0, len(s.Parked))
	for k := range s.Parked {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b store.ParkedKey) int {
		return strings.Compare(string(a.Reason)+"\x00"+string(a.State), string(b.Reason)+"\x00"+string(b.State))
	})
	return ks
}

func writeStoreStats(w io.Writer, s store.Stats, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DELIVERIES\tSTATE\tCOUNT")
	if len(s.BySubscriber) == 0 {
		fmt.Fprintln(tw, "(none)\t\t")
	}
	for _, k := range subscriberKeys(s) {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k.Subscriber, k.State, s.BySubscriber[k])
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "PARKED\tSTATE\tCOUNT")
	if len(s.Parked) == 0 {
		fmt.Fprintln(tw, "(none)\t\t")
	}
	for _, k := range parkedKeys(s) {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k.Reason, k.State, s.Parked[k])
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "TABLE\tROWS\tSIZE")
	for _, t := range s.Tables {
		size := "-"
		if t.Bytes >= 0 {
			size = fmt.Sprintf("%.1f MiB", float64(t.Bytes)/(1<<20))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, t.Rows, size)
	}
	tw.Flush()
	if s.OldestPending.IsZero() {
		fmt.Fprintln(w, "\nno delivery pending")
	} else {
		fmt.Fprintf(w, "\noldest pending delivery: written %s ago (%s)\n", now.Sub(s.OldestPending).Round(time.Second), s.OldestPending.UTC().Format(time.RFC3339))
	}
}
