// Package checktest turns source trees into what tests need from the
// checker: the plan of a project (Plan, PlanDir), the repository's examples
// as edited copies (Example, CopyExample, ExamplePlan), and the golden cases
// of testdata/cases laid out on disk (Cases).
//
// It is the one place a test goes from source to plan. The runtime reads
// plans, never source, and so do its test helpers (runtime/runtimetest,
// runtime/internal/...): a runtime test that starts from an example asks this
// package for the plan and hands the plan on. It stands in check/ because it
// imports lang and check (and the toolchain's catalogue, which it holds
// installed packages to as `jadpo check` does), and it is not internal
// because the tests of runtime/ and cmd/ use it as much as check's own do;
// like HCL's hcltest it is a helper any user of the checker could use in
// their tests.
package checktest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/project"
)

// Plan checks the project in fsys, its installed packages held to the
// toolchain's catalogue as `jadpo check` holds them, and returns its plan;
// a project with errors fails the test with them.
func Plan(t testing.TB, fsys fs.FS) *ir.Program {
	t.Helper()
	p := project.LoadFS(fsys)
	wire(p)
	res := check.Check(p)
	if res.Diags.HasErrors() {
		t.Fatalf("the project does not check: %v", res.Diags)
	}
	return res.Program
}

// PlanDir checks the project in the folder dir, as `jadpo check dir` reads
// it, and returns its plan; a project with errors fails the test with them.
func PlanDir(t testing.TB, dir string) *ir.Program {
	t.Helper()
	res := check.Check(LoadDir(dir))
	if res.Diags.HasErrors() {
		t.Fatalf("%s does not check: %v", dir, res.Diags)
	}
	return res.Program
}

// LoadDir loads the project in the folder dir as `jadpo check dir` does:
// its installed packages held to the toolchain's catalogue.
func LoadDir(dir string) *project.Project {
	p := project.Load(dir)
	wire(p)
	return p
}

// wired is what Wire handed in.
var wired struct {
	catalogue lockfile.Catalogue
	drivers   project.DriverSet
}

// Wire hands checktest what a test project is checked against, as cmd/jadpo
// hands them to the checker: the toolchain's catalogue and the queue
// drivers' contracts. checktest stands in check, below providers, so it may
// not take them itself (docs/design/architecture.md, the flow's rules); each
// test package that checks projects with it calls Wire once, from an init of
// one of its _test.go files (checktest_wire_test.go):
//
//	func init() { checktest.Wire(catalog.Builtin, check.Drivers(providers.Contracts())) }
func Wire(catalogue lockfile.Catalogue, drivers project.DriverSet) {
	wired.catalogue, wired.drivers = catalogue, drivers
}

// wire holds p to what Wire handed in; a test package that did not call it
// is told how.
func wire(p *project.Project) {
	if wired.catalogue == nil || wired.drivers == nil {
		panic("checktest: no catalogue handed in: add a checktest_wire_test.go to this package with " +
			"func init() { checktest.Wire(catalog.Builtin, check.Drivers(providers.Contracts())) } (see check/checktest_wire_test.go)")
	}
	p.Catalogue, p.Drivers = wired.catalogue, wired.drivers
}

// Edit replaces the first Old in File of a source tree with New; an Old of
// "" appends New, creating the file if need be.
type Edit struct{ File, Old, New string }

// Example is examples/<name> (without build/ and dot files) as an in-memory
// file system, with edits applied.
func Example(t testing.TB, name string, edits ...Edit) fstest.MapFS {
	t.Helper()
	dir := filepath.Join(reporoot.Dir(t), "examples", name)
	fsys := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "build" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fsys[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ed := range edits {
		f := fsys[ed.File]
		if f == nil {
			f = &fstest.MapFile{Mode: 0o644}
			fsys[ed.File] = f
		}
		if ed.Old == "" {
			f.Data = append(f.Data, ed.New...)
			continue
		}
		s := string(f.Data)
		if !strings.Contains(s, ed.Old) {
			t.Fatalf("edit of %s: %q is not in it", ed.File, ed.Old)
		}
		f.Data = []byte(strings.Replace(s, ed.Old, ed.New, 1))
	}
	return fsys
}

// ExamplePlan checks examples/<name> with edits applied and returns its plan.
func ExamplePlan(t testing.TB, name string, edits ...Edit) *ir.Program {
	t.Helper()
	return Plan(t, Example(t, name, edits...))
}

// CopyExample writes examples/<name> (without build/) with edits applied
// into dir, and returns dir.
func CopyExample(t testing.TB, name, dir string, edits ...Edit) string {
	t.Helper()
	for file, f := range Example(t, name, edits...) {
		p := filepath.Join(dir, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
