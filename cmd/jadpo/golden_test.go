package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/jadpo/jadpo/check/checktest"
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
func repoRoot(t testing.TB) string { return checktest.RepoRoot(t) }

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
	emitted := map[string]bool{}
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
				never = append(never, code)
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
		for _, section := range []string{"# " + code, "## What it means", "## Usual causes", "## How to fix", "## Example"} {
			if !strings.Contains(s, section) {
				t.Errorf("%s lacks %q", diag.DocsPath(code), section)
			}
		}
	}
}

// TestDocsPages keeps docs/diagnostics/<code>.md true: each page is made
// from the catalogue and the first golden case that emits the code (its
// human text is the failing example), and `-update` rewrites the pages.
func TestDocsPages(t *testing.T) {
	root := repoRoot(t)
	cases := checktest.Cases(t, root)
	// A page's example is the first case that reports its code alone, else
	// the first that reports it first, else the first that reports it.
	example := map[string]checktest.Case{}
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
	for code, entry := range diag.Catalogue {
		gc, ok := example[code]
		if !ok {
			continue // TestGolden reports a code without a case
		}
		human, err := os.ReadFile(filepath.Join(root, "testdata", "golden", gc.Name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		page := diag.Pages[code] // TestEveryCodeHasAPage holds one for every code
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n%s: %s.\n\n", code, upperFirst(entry.Severity.String()), entry.Title)
		fmt.Fprintf(&b, "## What it means\n\n%s\n\n", page.Means)
		if len(page.Causes) > 0 {
			b.WriteString("## Usual causes\n\n")
			for _, c := range page.Causes {
				if c.Case != "" {
					fmt.Fprintf(&b, "- %s (case `%s`)\n", c.Text, c.Case)
				} else {
					fmt.Fprintf(&b, "- %s\n", c.Text)
				}
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## How to fix\n\n%s.\n\n", strings.TrimSuffix(upperFirst(entry.Help), "."))
		fmt.Fprintf(&b, "## Example\n\nThe golden case `testdata/cases/%s` reports it:\n\n```text\n%s```\n", gc.Name, human)
		if len(gc.Edits) > 0 {
			b.WriteString("\nThe case is the example project `examples/" + gc.Base + "` with this change; undoing it is the fix:\n\n```text\n")
			for _, e := range gc.Edits {
				fmt.Fprintf(&b, "%s: %q -> %q\n", e.File, e.Old, e.New)
			}
			b.WriteString("```\n")
		}
		path := filepath.Join(root, diag.DocsPath(code))
		want := b.String()
		if updateDocs != nil && updateDocs.Value.String() == "true" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is out of date: run `go test ./cmd/jadpo -run TestDocsPages -update`", diag.DocsPath(code))
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
