package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// The golden cases: testdata/cases/<case>/ holds a small project (or files
// laid over examples/<base>/) and a CASE file:
//
//	base: warehouse                 lay the case's files over examples/warehouse
//	remove: stock/returns.jadpo     drop a file of the base
//	edit: app.jadpo | old | new     replace the first `old` in a file
//	lock: keep                      keep jadpo.lock as it is (by default the
//	                                case's packages are recorded afresh, as
//	                                `jadpo package add` would after an edit)
//	args: build                     the command (default: check)
//	expect: receiving.invalid `OrderShiped`
//
// Each `expect` line is one diagnostic the run must report: its code and the
// exact source text of its range (empty backticks for a diagnostic with no
// range). The run must report exactly the expected diagnostics. The JSON
// report (stdout of --format json) and the human text (stderr) are compared
// with testdata/golden/<case>.json and <case>.txt; `go test ./cmd/jadpo -update`
// rewrites them for review.

// updateDocs is goldie's -update flag, read here too: it rewrites the docs pages.
var updateDocs = flag.Lookup("update")

type goldenCase struct {
	name     string
	base     string
	remove   []string
	edits    [][3]string
	keepLock bool
	args     []string
	expects  []expectation
}

type expectation struct{ code, text string }

// repoRoot is the folder holding go.mod.
func repoRoot(t testing.TB) string { return runtimetest.RepoRoot(t) }

func loadCases(t *testing.T, root string) []goldenCase {
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "cases"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		gc := goldenCase{name: e.Name(), args: []string{"check"}}
		f, err := os.Open(filepath.Join(root, "testdata", "cases", e.Name(), "CASE"))
		if err != nil {
			t.Fatalf("case %s has no CASE file: %v", e.Name(), err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			key, val, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("case %s: CASE line %q is not `key: value`", gc.name, line)
			}
			val = strings.TrimSpace(val)
			switch key {
			case "base":
				gc.base = val
			case "remove":
				gc.remove = append(gc.remove, val)
			case "edit":
				if strings.HasSuffix(val, " |") {
					val += " " // an empty replacement
				}
				parts := strings.Split(val, " | ")
				if len(parts) != 3 {
					t.Fatalf("case %s: edit line %q is not `edit: file | old | new`", gc.name, line)
				}
				gc.edits = append(gc.edits, [3]string{parts[0], unescape(parts[1]), unescape(parts[2])})
			case "args":
				gc.args = strings.Fields(val)
			case "lock":
				gc.keepLock = val == "keep"
			case "expect":
				code, text, ok := strings.Cut(val, " ")
				text = strings.TrimSpace(text)
				if !ok || len(text) < 2 || text[0] != '`' || text[len(text)-1] != '`' {
					t.Fatalf("case %s: expect line %q is not `expect: code `text``", gc.name, line)
				}
				gc.expects = append(gc.expects, expectation{code: code, text: text[1 : len(text)-1]})
			default:
				t.Fatalf("case %s: unknown CASE key %q", gc.name, key)
			}
		}
		f.Close()
		cases = append(cases, gc)
	}
	return cases
}

// materialize lays the case (over its base) into dir/<case>.
func materialize(t *testing.T, root string, gc goldenCase, dir string) {
	dst := filepath.Join(dir, gc.name)
	copyTree := func(src string) {
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
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
			if rel == "CASE" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if gc.base != "" {
		copyTree(filepath.Join(root, "examples", gc.base))
	}
	copyTree(filepath.Join(root, "testdata", "cases", gc.name))
	for _, r := range gc.remove {
		if err := os.RemoveAll(filepath.Join(dst, filepath.FromSlash(r))); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range gc.edits {
		path := filepath.Join(dst, filepath.FromSlash(e[0]))
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), e[1]) {
			t.Fatalf("case %s: edit: %s does not contain %q", gc.name, e[0], e[1])
		}
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), e[1], e[2], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !gc.keepLock {
		relock(t, dst)
	}
}

// relock records every package folder of a project in its jadpo.lock.
func relock(t *testing.T, dir string) {
	entries, err := os.ReadDir(filepath.Join(dir, "packages"))
	if err != nil {
		return
	}
	lock := &lockfile.Lock{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := lockfile.ReadDir(filepath.Join(dir, "packages", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lock.SetFiles(e.Name(), lockfile.Digest(files), lockfile.FileDigests(files))
	}
	if err := lockfile.Write(dir, lock); err != nil {
		t.Fatal(err)
	}
}

// unescape reads \n in an edit as a line break.
func unescape(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }

// runCLI runs the command line as a user would and returns what it printed.
func runCLI(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestGolden(t *testing.T) {
	root := repoRoot(t)
	cases := loadCases(t, root)
	tmp := t.TempDir()
	emitted := map[string]bool{}
	g := goldie.New(t, goldie.WithFixtureDir(filepath.Join(root, "testdata", "golden")), goldie.WithNameSuffix(""))
	t.Chdir(tmp)
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			materialize(t, root, gc, tmp)
			args := expandArgs(gc.args, gc.name)
			jsonOut, _, jsonCode := runCLI(append(append([]string(nil), args...), "--format", "json")...)
			_, textErr, textCode := runCLI(args...)
			if jsonCode != textCode {
				t.Errorf("exit code %d with --format json but %d with text", jsonCode, textCode)
			}
			var rep diag.Report
			if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
				t.Fatalf("--format json printed invalid JSON: %v\n%s", err, jsonOut)
			}
			got := make([]expectation, 0, len(rep.Diagnostics))
			for _, d := range rep.Diagnostics {
				emitted[d.Code] = true
				text := ""
				if d.Location != nil {
					src, err := os.ReadFile(filepath.Join(tmp, gc.name, d.Location.Source))
					if err != nil {
						t.Fatalf("diagnostic in %s, which cannot be read: %v", d.Location.Source, err)
					}
					text = strings.ToValidUTF8(string(src[d.Location.Range.Start.Byte:d.Location.Range.End.Byte]), "\uFFFD")
				}
				got = append(got, expectation{d.Code, text})
			}
			if fmt.Sprint(got) != fmt.Sprint(gc.expects) {
				t.Errorf("diagnostics differ from CASE's expect lines\n got: %v\nwant: %v", got, gc.expects)
			}
			wantExit := 0
			if len(gc.expects) > 0 {
				wantExit = 1
			}
			if strings.Contains(strings.Join(gc.args, " "), "--bogus") {
				wantExit = 2
			}
			if textCode != wantExit {
				t.Errorf("exit code %d, want %d", textCode, wantExit)
			}
			human := fmt.Sprintf("$ jadpo %s\n%s[exit %d]\n", strings.Join(args, " "), textErr, textCode)
			g.Assert(t, gc.name+".txt", []byte(human))
			g.Assert(t, gc.name+".json", []byte(jsonOut))
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
		for _, section := range []string{"# " + code, "## Example", "## Fix"} {
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
	cases := loadCases(t, root)
	example := map[string]goldenCase{}
	for _, gc := range cases {
		for _, e := range gc.expects {
			if _, ok := example[e.code]; !ok {
				example[e.code] = gc
			}
		}
	}
	for code, entry := range diag.Catalogue {
		gc, ok := example[code]
		if !ok {
			continue // TestGolden reports a code without a case
		}
		human, err := os.ReadFile(filepath.Join(root, "testdata", "golden", gc.name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n%s: %s.\n\n", code, upperFirst(entry.Severity.String()), entry.Title)
		fmt.Fprintf(&b, "## Example\n\nThe golden case `testdata/cases/%s` reports it:\n\n```text\n%s```\n\n", gc.name, human)
		fmt.Fprintf(&b, "## Fix\n\n%s.\n", strings.TrimSuffix(upperFirst(entry.Help), "."))
		if len(gc.edits) > 0 {
			b.WriteString("\nThe case is the example project `examples/" + gc.base + "` with this change; undoing it is the fix:\n\n```text\n")
			for _, e := range gc.edits {
				fmt.Fprintf(&b, "%s: %q -> %q\n", e[0], e[1], e[2])
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
