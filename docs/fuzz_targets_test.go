package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` lists every fuzz target of the
// module, so a new one is run with the rest (docs/design/testing.md).
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	root := reporoot.Dir(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, f := range strings.Fields(strings.ReplaceAll(regexp.MustCompile(`(?s)FUZZ_TARGETS = (.*?)\n\S`).FindStringSubmatch(string(mk) + "\nx")[1], "\\", " ")) {
		listed[f] = true
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return fs.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range fuzz.FindAllStringSubmatch(string(b), -1) {
			found++
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			target := "./" + filepath.ToSlash(rel) + ":" + m[1]
			if !listed[target] {
				t.Errorf("%s is not in the Makefile's FUZZ_TARGETS: add it, so that make fuzz runs it", target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 || len(listed) != found {
		t.Errorf("found %d fuzz targets, the Makefile lists %d: %v", found, len(listed), listed)
	}
}
