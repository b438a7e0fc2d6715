package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The README's first command must show the whole receive loop.
func TestDemo(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(root, "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("dev", dir, "--demo")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"received 6: kept 1, repeats 1, parked 4, handed back 0, acknowledged 6",
		"deliveries run: 1 succeeded",
		"queue warehouse_queue · order_delayed  unlisted_type",
		"too_large",
		"problem:     order_id: min_length",
		"operator-retried parked messages: kept 1, parked again 0",
		"(p1 is no longer listed: it was kept as an OrderDelayed event",
		"The store now holds 2 events",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo does not show %q:\n%s", want, out)
		}
	}
}
