package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/docs/docstest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/diag"
)

// The golden cases (checktest.Case says what testdata/cases/<case>/ holds):
// the run must report exactly the diagnostics of the case's expect lines.
// The JSON report (stdout of --format json) and the human text (stderr) are
// compared with testdata/golden/<case>.json and <case>.txt;
// `go test ./cmd/jadpo -update` rewrites them for review.

// updateDocs is goldie's -update flag, read here too: it rewrites the docs pages.
var updateDocs = flag.Lookup("update")

// repoRoot is the folder holding go.mod.
func repoRoot(t testing.TB) string { return reporoot.Dir(t) }

// runCLI runs the command line as a user would and returns what it printed.
func runCLI(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestGolden(t *testing.T) {
	root := repoRoot(t)
	cases := checktest.Cases(t, root)
	tmp := t.TempDir()
	emitted := map[diag.Code]bool{}
	g := goldie.New(t, goldie.WithFixtureDir(filepath.Join(root, "testdata", "golden")), goldie.WithNameSuffix(""))
	t.Chdir(tmp)
	for _, gc := range cases {
		t.Run(gc.Name, func(t *testing.T) {
			gc.Materialize(t, root, tmp)
			args := expandArgs(gc.Args, gc.Name)
			jsonOut, _, jsonCode := runCLI(append(append([]string(nil), args...), "--format", "json")...)
			_, textErr, textCode := runCLI(args...)
			if jsonCode != textCode {
				t.Errorf("exit code %d with --format json but %d with text", jsonCode, textCode)
			}
			var rep diag.Report
			if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
				t.Fatalf("--format json printed invalid JSON: %v\n%s", err, jsonOut)
			}
			got := make([]checktest.Expectation, 0, len(rep.Diagnostics))
			for _, d := range rep.Diagnostics {
				emitted[d.Code] = true
				text := ""
				if d.Location != nil {
					src, err := os.ReadFile(filepath.Join(tmp, gc.Name, d.Location.Source))
					if err != nil {
						t.Fatalf("diagnostic in %s, which cannot be read: %v", d.Location.Source, err)
					}
					text = strings.ToValidUTF8(string(src[d.Location.Range.Start.Byte:d.Location.Range.End.Byte]), "\uFFFD")
				}
				got = append(got, checktest.Expectation{Code: d.Code, Text: text})
			}
			if fmt.Sprint(got) != fmt.Sprint(gc.Expects) {
				t.Errorf("diagnostics differ from CASE's expect lines\n got: %v\nwant: %v", got, gc.Expects)
			}
			wantExit := 0 // a warning alone passes the check
			for _, e := range gc.Expects {
				if diag.Catalogue[e.Code].Severity == diag.Error {
					wantExit = 1
				}
			}
			if strings.Contains(strings.Join(gc.Args, " "), "--bogus") {
				wantExit = 2
			}
			if textCode != wantExit {
				t.Errorf("exit code %d, want %d", textCode, wantExit)
			}
			human := fmt.Sprintf("$ jadpo %s\n%s[exit %d]\n", strings.Join(args, " "), textErr, textCode)
			g.Assert(t, gc.Name+".txt", []byte(human))
			g.Assert(t, gc.Name+".json", []byte(jsonOut))
		})
	}
	t.Run("catalogue", func(t *testing.T) {
		for code := range emitted {
			if _, ok := diag.Catalogue[code]; !ok {
				t.Errorf("code %s is emitted but not in the catalogue", code)
			}
		}
		var never []string
		for code := range diag.Catalogue {
			if !emitted[code] {
				never = append(never, string(code))
			}
		}
		sort.Strings(never)
		if len(never) > 0 {
			t.Errorf("catalogue codes no golden case emits: %v", never)
		}
	})
}

// expandArgs puts the case's directory where the command takes it.
func expandArgs(args []string, dir string) []string {
	out := append([]string(nil), args...)
	if len(out) > 0 && (out[0] == "check" || out[0] == "build") {
		hasDir := false
		for _, a := range out[1:] {
			if !strings.HasPrefix(a, "-") {
				hasDir = true
			}
		}
		if !hasDir {
			out = append(out, dir)
		}
	}
	return out
}

func TestDocsPageForEveryCode(t *testing.T) {
	root := repoRoot(t)
	for code := range diag.Catalogue {
		page := filepath.Join(root, diag.DocsPath(code))
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("code %s has no page %s", code, diag.DocsPath(code))
			continue
		}
		s := string(b)
		for _, section := range []string{"# " + string(code), "## What it means", "## Usual causes", "## How to fix", "## Example"} {
			if !strings.Contains(s, section) {
				t.Errorf("%s lacks %q", diag.DocsPath(code), section)
			}
		}
	}
}

// TestDocsPages keeps docs/diagnostics/ true: each code's page is its row of
// the table in lang/diag/codes.go (diag.Entry.Page) with the first golden
// case that emits the code as its example (its human text is the failing
// example), and the catalogue's page (diag.Index) lists every code. `make
// docs` (this test with -update) rewrites them.
func TestDocsPages(t *testing.T) {
	root := repoRoot(t)
	cases := checktest.Cases(t, root)
	// A page's example is the first case that reports its code alone, else
	// the first that reports it first, else the first that reports it.
	example := map[diag.Code]checktest.Case{}
	for pass := 0; pass < 3; pass++ {
		for _, gc := range cases {
			for i, e := range gc.Expects {
				if pass == 0 && len(gc.Expects) > 1 || pass == 1 && i > 0 {
					break
				}
				if _, ok := example[e.Code]; !ok {
					example[e.Code] = gc
				}
			}
		}
	}
	pages := map[string]string{path.Base(diag.IndexPath): diag.Index()}
	for code, entry := range diag.Catalogue {
		gc, ok := example[code]
		if !ok {
			continue // TestGolden reports a code without a case
		}
		human, err := os.ReadFile(filepath.Join(root, "testdata", "golden", gc.Name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		ex := diag.Example{Case: gc.Name, Human: string(human), Base: gc.Base}
		for _, e := range gc.Edits {
			ex.Edits = append(ex.Edits, diag.Edit{File: e.File, Old: e.Old, New: e.New})
		}
		pages[path.Base(diag.DocsPath(code))] = entry.Page(ex)
	}
	update := updateDocs != nil && updateDocs.Value.String() == "true"
	docstest.Folder{Dir: path.Dir(diag.IndexPath), Regenerate: "make docs", Orphan: "is the page of no code of lang/diag/codes.go"}.Check(t, root, pages, update)
}
