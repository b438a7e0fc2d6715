package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/lang/diag"
)

// A syntax error keeps the summary honest: a case that only edits
// examples/warehouse counts the project's files and declarations, those of
// the clean example (pass_warehouse), not the part that parsed.
func TestSyntaxErrorSummaryCountsTheProject(t *testing.T) {
	root := repoRoot(t)
	read := func(name string) diag.Report {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "golden", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var r diag.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	clean := read("pass_warehouse").Summary
	n := 0
	for _, gc := range checktest.Cases(t, root) {
		if gc.Base != "warehouse" || len(gc.Remove) > 0 || len(gc.Expects) == 0 || !strings.HasPrefix(string(gc.Expects[0].Code), "syntax.") {
			continue
		}
		if !strings.HasPrefix(gc.Name, "syntax_") || gc.Args[0] != "check" {
			continue
		}
		// An edit that adds or drops a declaration changes the count by design.
		if strings.Count(gc.Edits[0].New, "\n") != strings.Count(gc.Edits[0].Old, "\n") {
			continue
		}
		n++
		if s := read(gc.Name).Summary; s.Files != clean.Files || s.Declarations != clean.Declarations {
			t.Errorf("%s: %d files, %d declarations; the project has %d and %d", gc.Name, s.Files, s.Declarations, clean.Files, clean.Declarations)
		}
	}
	if n < 5 {
		t.Fatalf("only %d syntax cases over examples/warehouse", n)
	}
}
