package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// storeCommand is `jadpo store stats`: what the events' store holds. It is
// read-only: it never creates or migrates a store.
func (e *env) storeCommand() *cobra.Command {
	var f appFlags
	var dir string
	var asJSON bool
	root := &cobra.Command{
		Use:   "store",
		Short: "Look at the events' store",
		Args:  cobra.NoArgs,
	}
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Deliveries by state and subscriber, parked messages, the oldest pending delivery, each table's rows",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			url, err := e.storeURL(dir, &f)
			if err != nil {
				return err
			}
			st, err := openExisting(ctx, url)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(ctx)
			if err != nil {
				return startupError{fmt.Sprintf("cannot read the events' store %s: %v (a store no jadpo run has opened yet has no tables)", store.RedactURL(url), err)}
			}
			now := time.Now()
			if asJSON {
				return writeJSON(e.stdout, storeStatsJSON(s, now))
			}
			writeStoreStats(e.stdout, s, now)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&dir, "dir", ".", "the project directory")
	root.PersistentFlags().StringVar(&f.database, "database", "", "the events' store: postgres://... or sqlite:PATH (default: as jadpo run finds it)")
	root.PersistentFlags().StringVar(&f.plan, "plan", "", "read the store's database from this plan")
	stats.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	root.AddCommand(stats)
	return root
}

// storeURL finds the store's database as jadpo run does.
func (e *env) storeURL(dir string, f *appFlags) (string, error) {
	if f.database != "" {
		return f.database, nil
	}
	p, err := e.loadPlan(dir, f)
	if err != nil {
		return "", err
	}
	cfg, err := runtime.LoadConfig(p, os.Environ(), filepath.Join(dir, ".env.local"))
	if err != nil && p.Store != nil && p.Store.Database != nil && p.Store.Database.Config != "" {
		return "", startupError{"cannot start: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	if cfg == nil {
		cfg = runtime.EmptyConfig()
	}
	url, err := databaseURL(dir, p, cfg, "")
	if err != nil {
		return "", startupError{err.Error()}
	}
	return url, nil
}

// openExisting opens a store without migrating it; a SQLite file that does
// not exist is not created.
func openExisting(ctx context.Context, url string) (store.Store, error) {
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		path, _, _ = strings.Cut(path, "?")
		if _, err := os.Stat(path); err != nil {
			return nil, startupError{fmt.Sprintf("no events' store at %s: nothing has been received yet (jadpo run creates it)", store.RedactURL(url))}
		}
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, startupError{fmt.Sprintf("cannot open the events' store %s: %v", store.RedactURL(url), err)}
	}
	return st, nil
}

// storeStatsJSON is `store stats --json`: one envelope, kind store_stats.
func storeStatsJSON(s store.Stats, now time.Time) any {
	type count struct {
		Subscriber string `json:"subscriber,omitempty"`
		Reason     string `json:"reason,omitempty"`
		State      string `json:"state"`
		Count      int64  `json:"count"`
	}
	type table struct {
		Name  string `json:"name"`
		Rows  int64  `json:"rows"`
		Bytes *int64 `json:"bytes,omitempty"`
	}
	out := struct {
		Version          int      `json:"version"`
		Kind             string   `json:"kind"`
		Deliveries       []count  `json:"deliveries"`
		Parked           []count  `json:"parked_messages"`
		OldestPending    *string  `json:"oldest_pending_at"`
		OldestPendingAge *float64 `json:"oldest_pending_age_seconds"`
		Tables           []table  `json:"tables"`
	}{Version: 1, Kind: "store_stats", Deliveries: []count{}, Parked: []count{}, Tables: []table{}}
	for _, k := range sortedKeys(s.BySubscriber, func(a, b store.SubscriberKey) int {
		return strings.Compare(a.Subscriber+"\x00"+string(a.State), b.Subscriber+"\x00"+string(b.State))
	}) {
		out.Deliveries = append(out.Deliveries, count{Subscriber: k.Subscriber, State: string(k.State), Count: s.BySubscriber[k]})
	}
	for _, k := range sortedKeys(s.Parked, func(a, b store.ParkedKey) int {
		return strings.Compare(string(a.Reason)+"\x00"+string(a.State), string(b.Reason)+"\x00"+string(b.State))
	}) {
		out.Parked = append(out.Parked, count{Reason: string(k.Reason), State: string(k.State), Count: s.Parked[k]})
	}
	if !s.OldestPending.IsZero() {
		at := s.OldestPending.UTC().Format(time.RFC3339Nano)
		age := now.Sub(s.OldestPending).Seconds()
		out.OldestPending, out.OldestPendingAge = &at, &age
	}
	for _, t := range s.Tables {
		tb := table{Name: t.Name, Rows: t.Rows}
		if t.Bytes >= 0 {
			b := t.Bytes
			tb.Bytes = &b
		}
		out.Tables = append(out.Tables, tb)
	}
	return out
}

func sortedKeys[K comparable](m map[K]int64, cmp func(a, b K) int) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, cmp)
	return ks
}

func writeStoreStats(w io.Writer, s store.Stats, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DELIVERIES\tSTATE\tCOUNT")
	if len(s.BySubscriber) == 0 {
		fmt.Fprintln(tw, "(none)\t\t")
	}
	for _, k := range sortedKeys(s.BySubscriber, func(a, b store.SubscriberKey) int {
		return strings.Compare(a.Subscriber+"\x00"+string(a.State), b.Subscriber+"\x00"+string(b.State))
	}) {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", k.Subscriber, k.State, s.BySubscriber[k])
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "PARKED\tSTATE\tCOUNT")
	if len(s.Parked) == 0 {
		fmt.Fprintln(tw, "(none)\t\t")
	}
	for _, k := range sortedKeys(s.Parked, func(a, b store.ParkedKey) int {
		return strings.Compare(string(a.Reason)+"\x00"+string(a.State), string(b.Reason)+"\x00"+string(b.State))
	}) {
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
