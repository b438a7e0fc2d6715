// Package docstest keeps a folder of generated pages under docs/ true to
// what generates them: the tests of each generator (the diagnostics' pages,
// the CLI reference, the catalogue's package pages) hand it the pages, and it
// rewrites the folder or reports each stale, missing or orphaned page with
// the command to run (`make docs` runs them all).
// It is test scaffolding.
package docstest

import (
	"os"
	"path/filepath"
	"testing"
)

// Folder is one folder of generated pages.
type Folder struct {
	// Dir is the folder, relative to the repository's root, with slashes
	// (it is printed in failures).
	Dir string
	// Regenerate is the command that rewrites it, for failures.
	Regenerate string
	// Orphan says what a file in Dir that no page names is not, for
	// failures: "documents no command".
	Orphan string
}

// Check compares the pages (by file name) with the files in root/f.Dir;
// with update it rewrites the folder to hold exactly the pages instead.
func (f Folder) Check(t testing.TB, root string, pages map[string]string, update bool) {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(f.Dir))
	if update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range pages {
		path := filepath.Join(dir, name)
		if update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s/%s is stale: run `%s`", f.Dir, name, f.Regenerate)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v: run `%s`", f.Dir, err, f.Regenerate)
	}
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok {
			t.Errorf("%s/%s %s: run `%s`", f.Dir, e.Name(), f.Orphan, f.Regenerate)
		}
	}
}
