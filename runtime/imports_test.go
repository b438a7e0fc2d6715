package runtime_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The runtime reads plans, never source: no file under runtime/ but a
// _test.go one (runtimetest and runtime/internal included) imports anything
// under lang/ or any part of check but the IR. Tests may go from source to
// plan through check/checktest.
func TestRuntimeImportsNoFrontEnd(t *testing.T) {
	const module = "github.com/jadpo/jadpo/"
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ours := strings.CutPrefix(p, module)
			if !ours || rel == "check/ir" {
				continue
			}
			if rel == "lang" || strings.HasPrefix(rel, "lang/") || rel == "check" || strings.HasPrefix(rel, "check/") {
				t.Errorf("runtime/%s imports %s: the runtime reads plans (check/ir), never source", filepath.ToSlash(path), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 30 {
		t.Fatalf("only %d files under runtime/ read; the walk missed the tree", files)
	}
}
