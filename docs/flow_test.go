package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/jadpo/jadpo"

// stage is each top-level folder's place in the one-way flow that
// design/architecture.md draws: source (lang) is checked (check) into a plan
// (codegen) that the runtime executes, calling providers for the wire; cmd
// wires them. A package may import packages of its own folder and of a lower
// stage only. providers stand below runtime, which calls them, and beside
// codegen, which never does; docs is a leaf the binary embeds.
var stage = map[string]int{
	"lang": 0, "docs": 0,
	"check":   1,
	"codegen": 2, "providers": 2,
	"runtime": 3,
	"cmd":     4,
}

// TestImportsFlowOneWay reads the import lines of every non-test Go file of
// the module and refuses an import against the flow (lang importing
// providers, providers importing runtime, anything importing cmd, ...).
// Tests may import what they check against, so _test.go files are not held
// to it, nor the test helper packages they share, named *test as httptest is
// (check/checktest holds packages to the catalogue as jadpo check does).
func TestImportsFlowOneWay(t *testing.T) {
	root := ".."
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root && fileExists(filepath.Join(p, "go.mod")) {
				return filepath.SkipDir // another module (lang/parser/compare)
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(path.Base(path.Dir(rel)), "test") {
			return nil
		}
		from := topFolder(rel)
		fromStage, ok := stage[from]
		if !ok {
			t.Errorf("%s: Go code in a top-level folder the flow does not place (%q)", rel, from)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip != module && !strings.HasPrefix(ip, module+"/") {
				continue
			}
			to := topFolder(strings.TrimPrefix(strings.TrimPrefix(ip, module), "/") + "/x.go")
			if to == from {
				continue
			}
			if toStage, ok := stage[to]; !ok || toStage >= fromStage {
				t.Errorf("%s (%s) imports %s (%s): against the one-way flow lang -> check -> codegen | providers -> runtime -> cmd (docs/design/architecture.md)",
					rel, from, ip, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("read %d Go files: run from the docs folder", seen)
	}
}

// topFolder is the first segment of a slash-separated path relative to the
// module's root ("lang" for lang/parser/parser.go).
func topFolder(rel string) string {
	if i := strings.IndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return path.Dir(rel) // a file at the root: "."
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
