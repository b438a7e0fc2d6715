package reporoot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirIsTheModuleRoot(t *testing.T) {
	root := Dir(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/jadpo/jadpo\n") {
		t.Fatalf("Dir = %s: go.mod %q, %v; want the jadpo module's root", root, mod, err)
	}
	if want, _ := filepath.Abs(filepath.Join("..", "..")); root != want {
		t.Errorf("Dir = %s, want %s", root, want)
	}
}

func TestFindWalksUpAndSaysWhenThereIsNone(t *testing.T) {
	tmp := t.TempDir()
	deep := filepath.Join(tmp, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(deep); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("Find without a go.mod: %v, want an error saying so", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "a", "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(deep); err != nil || got != filepath.Join(tmp, "a") {
		t.Errorf("Find = %s, %v; want %s", got, err, filepath.Join(tmp, "a"))
	}
}
