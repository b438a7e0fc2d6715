package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestFrontEndKeepsDefaultGC: check and build leave the collector's target
// where the environment put it (Go's default without GOGC): a lower one
// cost 60% more CPU for about 1% of peak memory (docs/performance.md).
func TestFrontEndKeepsDefaultGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set")
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	for _, cmd := range [][]string{{"check", filepath.Join(repoRoot(t), "examples", "warehouse")}, {"build", "--dir", t.TempDir()}} {
		runCLI(cmd...)
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("jadpo %s set the collector's target to %d%%", cmd[0], got)
		}
	}
}
