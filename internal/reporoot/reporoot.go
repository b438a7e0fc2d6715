// Package reporoot finds the repository's root, the folder holding go.mod,
// for the tests and generators that read the repository's own files (docs,
// examples, goldens). It is the one finder: a test that needs the root asks
// here instead of walking up or counting "../" of its own.
package reporoot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Find is the nearest folder at or above dir that holds a go.mod.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for start := dir; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above %s: run from inside the jadpo repository", start)
		}
		dir = parent
	}
}

// Dir is the repository's root above the test's working directory (a test
// runs in its package's folder); the test fails when there is none.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := Find(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
