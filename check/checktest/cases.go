package checktest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
)

// Case is one golden case: testdata/cases/<case>/ holds a small project (or
// files laid over examples/<base>/) and a CASE file:
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
// range). cmd/jadpo's TestGolden runs each case's command and compares what
// it prints with testdata/golden/<case>.json and <case>.txt; check's
// TestGoldenCasesThroughCheck runs the `check` cases through check.Check.
type Case struct {
	Name     string
	Base     string
	Remove   []string
	Edits    []Edit
	KeepLock bool
	Args     []string // the command line after `jadpo`
	Expects  []Expectation
}

// Expectation is one `expect` line: a diagnostic's code and the source text
// of its range.
type Expectation struct {
	Code diag.Code
	Text string
}

// Cases reads every case under root/testdata/cases.
func Cases(t testing.TB, root string) []Case {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "cases"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		gc := Case{Name: e.Name(), Args: []string{"check"}}
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
				t.Fatalf("case %s: CASE line %q is not `key: value`", gc.Name, line)
			}
			val = strings.TrimSpace(val)
			switch key {
			case "base":
				gc.Base = val
			case "remove":
				gc.Remove = append(gc.Remove, val)
			case "edit":
				if strings.HasSuffix(val, " |") {
					val += " " // an empty replacement
				}
				parts := strings.Split(val, " | ")
				if len(parts) != 3 {
					t.Fatalf("case %s: edit line %q is not `edit: file | old | new`", gc.Name, line)
				}
				gc.Edits = append(gc.Edits, Edit{File: parts[0], Old: unescape(parts[1]), New: unescape(parts[2])})
			case "args":
				gc.Args = strings.Fields(val)
			case "lock":
				gc.KeepLock = val == "keep"
			case "expect":
				code, text, ok := strings.Cut(val, " ")
				text = strings.TrimSpace(text)
				if !ok || len(text) < 2 || text[0] != '`' || text[len(text)-1] != '`' {
					t.Fatalf("case %s: expect line %q is not `expect: code `text``", gc.Name, line)
				}
				gc.Expects = append(gc.Expects, Expectation{Code: diag.Code(code), Text: text[1 : len(text)-1]})
			default:
				t.Fatalf("case %s: unknown CASE key %q", gc.Name, key)
			}
		}
		f.Close()
		cases = append(cases, gc)
	}
	return cases
}

// CaseProject lays the golden case named name into a fresh temporary
// folder and returns the project's folder: a test of another layer starts
// from the same project the case's golden files show.
func CaseProject(t testing.TB, name string) string {
	t.Helper()
	root := reporoot.Dir(t)
	for _, gc := range Cases(t, root) {
		if gc.Name == name {
			return gc.Materialize(t, root, t.TempDir())
		}
	}
	t.Fatalf("no golden case %s under testdata/cases", name)
	return ""
}

// Materialize lays the case (over its base) into dir/<case> and returns
// that folder.
func (gc Case) Materialize(t testing.TB, root, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, gc.Name)
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
	if gc.Base != "" {
		copyTree(filepath.Join(root, "examples", gc.Base))
	}
	copyTree(filepath.Join(root, "testdata", "cases", gc.Name))
	for _, r := range gc.Remove {
		if err := os.RemoveAll(filepath.Join(dst, filepath.FromSlash(r))); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range gc.Edits {
		path := filepath.Join(dst, filepath.FromSlash(e.File))
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), e.Old) {
			t.Fatalf("case %s: edit: %s does not contain %q", gc.Name, e.File, e.Old)
		}
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), e.Old, e.New, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !gc.KeepLock {
		Relock(t, dst)
	}
	return dst
}

// Relock records every package folder of the project in dir in its
// jadpo.lock afresh, as `jadpo package add` would after an edit.
func Relock(t testing.TB, dir string) {
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
