package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestStoreStats(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	code, out, errs := w.cli(t, "store", "stats")
	if code != 0 {
		t.Fatalf("exit %d %q", code, errs)
	}
	for _, want := range []string{`pack_order\s+failed\s+1`, `pack_order\s+succeeded\s+1`, `unlisted_type\s+failed\s+1`,
		`unreadable\s+failed\s+1`, `jadpo_deliveries\s+2\s+-`, `jadpo_outbox\s+2\s+-`, `jadpo_received_events\s+2\s+-`, `no delivery pending`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	code, out, errs = w.cli(t, "store", "stats", "--format", "json")
	if code != 0 || errs != "" {
		t.Fatalf("--json: exit %d %q", code, errs)
	}
	var got struct {
		Version    int    `json:"schemaVersion"`
		Kind       string `json:"kind"`
		Deliveries []struct {
			Subscriber, State string
			Count             int64
		} `json:"deliveries"`
		Parked []map[string]any `json:"parkedMessages"`
		Tables []map[string]any `json:"tables"`
		Oldest *string          `json:"oldestPendingAt"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.Version != 1 || got.Kind != "store_stats" || len(got.Deliveries) != 2 || len(got.Parked) != 2 || len(got.Tables) != 6 || got.Oldest != nil {
		t.Fatalf("JSON %s", out)
	}
	if _, has := got.Tables[0]["bytes"]; has {
		t.Errorf("SQLite has no per-table size: %v", got.Tables[0])
	}
}

// store stats never creates or migrates a store.
func TestStoreStatsIsReadOnly(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.sqlite")
	code, _, errs := cli(t, "store", "stats", "--database", "sqlite:"+missing)
	if code == 0 || !strings.Contains(errs, "no events' store") {
		t.Fatalf("missing store: exit %d %q", code, errs)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("store stats created %s", missing)
	}
	empty := filepath.Join(dir, "empty.sqlite")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = cli(t, "store", "stats", "--database", "sqlite:"+empty)
	if code == 0 || !strings.Contains(errs, "no jadpo tables") {
		t.Fatalf("unmigrated store: exit %d %q", code, errs)
	}
	// Not migrated by the first call: the second finds no tables either.
	if code, _, errs = cli(t, "store", "stats", "--database", "sqlite:"+empty); code == 0 || !strings.Contains(errs, "no jadpo tables") {
		t.Fatalf("store stats migrated the store: exit %d %q", code, errs)
	}
}
