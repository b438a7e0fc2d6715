package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
)

// Issue 11, point 7: `jadpo package add ../bigdir` read 2.1 GB before saying
// the folder has no package.jadpo. The header is looked for first, before
// anything else in the folder is read...
func TestInstallDirLooksForTheHeaderFirst(t *testing.T) {
	src := t.TempDir()
	// Reading this folder's files fails (a link is refused); the missing
	// header must be what is said, so nothing was read before it.
	if err := os.Symlink("/dev/zero", filepath.Join(src, "zero")); err != nil {
		t.Fatal(err)
	}
	_, _, err := InstallDir(t.TempDir(), src)
	if err == nil || !strings.Contains(err.Error(), "has no package.jadpo") {
		t.Fatalf("InstallDir: %v, want `has no package.jadpo`", err)
	}
}

// ...and what is read is bounded: a file over the source limit is refused,
// naming it and the limit.
func TestInstallDirBoundsEachFile(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, lockfile.HeaderFile), []byte("package Big.v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "resources"), 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(src, "resources", "huge.jadpo")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(source.MaxFileSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	_, _, err = InstallDir(t.TempDir(), src)
	if err == nil || !strings.Contains(err.Error(), "huge.jadpo") || !strings.Contains(err.Error(), "over the limit of 8 MiB") {
		t.Fatalf("InstallDir: %v, want the file named with the 8 MiB limit", err)
	}
}
