package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/sebdah/goldie/v2"
)

// A small project for jadpo fmt: app.jadpo badly laid out, a module already
// formatted, and files fmt leaves alone unless they are named (an installed
// package, a build folder, a hidden folder).
var fmtProject = map[string]string{
	"app.jadpo":                       "// The app.\nuse stock/events {OrderShipped}\nstore primary {\n}\nqueue q { id_at:\"id\"\n  events: { OrderShipped } }\n",
	"stock/events.jadpo":              "public event OrderShipped {\n    order_id: Text\n}\n",
	"packages/Inbox.v1/package.jadpo": "package Inbox.v1\nprovider {protocol: Protocol.sql}\n",
	"build/copy.jadpo":                "type  A=Int\n",
	".cache/old.jadpo":                "type  A=Int\n",
	"notes/readme.txt":                "not source\n",
	"broken/app.jadpo":                "value V {\n    sku Sku\n}\n",
	"broken/packages/P.v1/pkg.jadpo":  "type  A=Int\n",
	"broken/stock/unformatted.jadpo":  "type  B=Int\n",
}

type fmtCase struct {
	name  string
	args  []string
	stdin string
	drop  string   // a folder of fmtProject left out
	show  []string // files shown after the run
}

var fmtCases = []fmtCase{
	{name: "help", args: []string{"fmt", "--help"}},
	{name: "print_one_file", args: []string{"fmt", "app.jadpo"}, drop: "broken/"},
	{name: "list_folder", args: []string{"fmt"}, drop: "broken/"},
	{name: "check", args: []string{"fmt", "--check", "."}, drop: "broken/"},
	{name: "check_formatted", args: []string{"fmt", "--check", "stock"}},
	{name: "check_packages_named", args: []string{"fmt", "--check", "packages", "build"}},
	{name: "write", args: []string{"fmt", "-w", "app.jadpo", "stock"}, drop: "broken/", show: []string{"app.jadpo"}},
	{name: "syntax_error", args: []string{"fmt", "-w", "broken"}, show: []string{"broken/app.jadpo", "broken/stock/unformatted.jadpo"}},
	{name: "stdin", args: []string{"fmt", "-"}, stdin: "type  A=Int{min:1}\n"},
	{name: "stdin_check", args: []string{"fmt", "--check", "-"}, stdin: "type  A=Int{min:1}\n"},
	{name: "stdin_syntax_error", args: []string{"fmt", "-"}, stdin: "type A = Int {\n"},
	{name: "usage_write_stdin", args: []string{"fmt", "-w", "-"}},
	{name: "usage_write_check", args: []string{"fmt", "-w", "--check", "app.jadpo"}},
	{name: "missing_path", args: []string{"fmt", "--check", "nope.jadpo", "stock"}},
}

func writeFmtProject(t *testing.T, dir string, drop string) {
	for name, content := range fmtProject {
		if drop != "" && strings.HasPrefix(name, drop) {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFmtGolden shows what a user sees of jadpo fmt: testdata/golden/fmt_<case>.txt.
func TestFmtGolden(t *testing.T) {
	root := repoRoot(t)
	g := goldie.New(t, goldie.WithFixtureDir(filepath.Join(root, "testdata", "golden")), goldie.WithNameSuffix(""))
	for _, c := range fmtCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFmtProject(t, dir, c.drop)
			t.Chdir(dir)
			var out, errb bytes.Buffer
			code := run(c.args, strings.NewReader(c.stdin), &out, &errb)
			var b strings.Builder
			fmt.Fprintf(&b, "$ jadpo %s\n", strings.Join(c.args, " "))
			if c.stdin != "" {
				fmt.Fprintf(&b, "--- standard input\n%s", c.stdin)
			}
			fmt.Fprintf(&b, "--- standard output\n%s--- standard error\n%s[exit %d]\n", out.String(), errb.String(), code)
			for _, name := range c.show {
				content, err := os.ReadFile(filepath.FromSlash(name))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "--- %s after the run\n%s", name, content)
			}
			g.Assert(t, "fmt_"+c.name+".txt", []byte(b.String()))
		})
	}
}

// TestFmtWriteKeepsTheFilesMode: -w replaces a file by rename, keeping its
// permissions and leaving no temporary file, and writes through a link.
func TestFmtWriteKeepsTheFilesMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jadpo")
	if err := os.WriteFile(path, []byte("type  A=Int\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jadpo")
	target := filepath.Join(dir, "target.jadpo")
	if err := os.WriteFile(target, []byte("type  B=Int\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if _, errs, code := runCLI("fmt", "-w", p); code != 0 {
			t.Fatalf("fmt -w %s: exit %d\n%s", p, code, errs)
		}
	}
	for p, want := range map[string]os.FileMode{path: 0o600, target: 0o640} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v after -w, want %v", p, st.Mode().Perm(), want)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "type A = Int\n" {
		t.Errorf("app.jadpo after -w: %q", b)
	}
	if b, _ := os.ReadFile(target); string(b) != "type B = Int\n" {
		t.Errorf("the link's target after -w: %q", b)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-w replaced the link itself")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left beside the rewritten ones: %v", names)
	}
}

// formattedPaths are the sources kept in the canonical layout, which CI
// checks: the examples, the catalogue's packages and the passing golden
// cases, each with its installed packages (which a folder's walk skips).
// Failing cases keep their source as written, so their goldens stay.
func formattedPaths(t *testing.T, root string) []string {
	var dirs []string
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, examples...)
	dirs = append(dirs, filepath.Join(root, "providers", "catalog"))
	for _, gc := range checktest.Cases(t, root) {
		if len(gc.Expects) == 0 {
			dirs = append(dirs, filepath.Join(root, "testdata", "cases", gc.Name))
		}
	}
	var out []string
	for _, d := range dirs {
		out = append(out, d)
		if st, err := os.Stat(filepath.Join(d, "packages")); err == nil && st.IsDir() {
			out = append(out, filepath.Join(d, "packages"))
		}
	}
	sort.Strings(out)
	return out
}

// unformatted runs `jadpo fmt --check` on paths as CI does.
func unformatted(paths []string) (listed, errs string, code int) {
	return runCLI(append([]string{"fmt", "--check"}, paths...)...)
}

// TestRepositorySourcesAreFormatted is CI's `jadpo fmt --check` (make test
// runs it): it fails listing each file that is not in the canonical layout.
func TestRepositorySourcesAreFormatted(t *testing.T) {
	root := repoRoot(t)
	paths := formattedPaths(t, root)
	listed, errs, code := unformatted(paths)
	if code != 0 {
		t.Fatalf("jadpo fmt --check exits %d; format these files with `jadpo fmt -w <file>` "+
			"(a catalogue package then needs its new digest in providers/catalog/published.txt):\n%s%s", code, listed, errs)
	}
	var jadpoFiles int
	for _, p := range paths {
		_ = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".jadpo") {
				jadpoFiles++
			}
			return nil
		})
	}
	if jadpoFiles < 40 {
		t.Fatalf("the check saw only %d .jadpo files under %v", jadpoFiles, paths)
	}
}

// TestFormatCheckCatchesABadlyFormattedFile: the CI check above fails on a
// file out of layout, naming it, and on an installed package's too.
func TestFormatCheckCatchesABadlyFormattedFile(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	gc := checktest.Case{Name: "pass_warehouse", Base: "warehouse", KeepLock: true}
	project := gc.Materialize(t, root, tmp)
	paths := []string{project, filepath.Join(project, "packages")}
	if listed, errs, code := unformatted(paths); code != 0 {
		t.Fatalf("the copy of examples/warehouse is not formatted (exit %d):\n%s%s", code, listed, errs)
	}
	app := filepath.Join(project, "app.jadpo")
	pkg := filepath.Join(project, "packages", "Packing.v1", "package.jadpo")
	for _, f := range []string{app, pkg} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, bytes.Replace(b, []byte("{\n"), []byte("{\n\n  "), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listed, _, code := unformatted(paths)
	if code != 1 || listed != app+"\n"+pkg+"\n" {
		t.Fatalf("want exit 1 listing app.jadpo and Packing.v1's package.jadpo, got exit %d:\n%s", code, listed)
	}
}
