// Package repofiles finds the repository's own .jadpo sources for lang's
// tests: fuzz seeds, and the files the formatter's and parser's properties
// are checked on. It is test scaffolding, internal to lang.
package repofiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// Sources reads every .jadpo file of at most max bytes under the named
// folders of the repository (the whole repository when none is named; a
// folder that is missing is passed over), by path relative to the root.
// .git and node_modules are not walked.
func Sources(t testing.TB, max int, tops ...string) map[string][]byte {
	t.Helper()
	root := reporoot.Dir(t)
	if len(tops) == 0 {
		tops = []string{"."}
	}
	out := map[string][]byte{}
	for _, top := range tops {
		if _, err := os.Stat(filepath.Join(root, top)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".jadpo") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err == nil && len(b) <= max {
				rel, _ := filepath.Rel(root, path)
				out[rel] = b
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
