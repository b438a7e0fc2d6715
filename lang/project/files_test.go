package project

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/lang/source"
)

const minimalApp = "app Tiny {}\n"

// loadBounded loads dir, failing the test instead of hanging with it.
func loadBounded(t *testing.T, dir string) *Project {
	t.Helper()
	done := make(chan *Project, 1)
	go func() { done <- Load(dir) }()
	select {
	case p := <-done:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("Load did not return: it blocked on a file")
		return nil
	}
}

func readFailures(p *Project) map[string]string {
	out := map[string]string{}
	for _, d := range p.Diags {
		if d.Code == "toolchain.project_read_failed" {
			out[d.Context["path"]] = d.Summary + " | " + d.Help
		}
	}
	return out
}

// Issue 11, point 7: a named pipe named app.jadpo or like a module hung
// `jadpo check` forever; a link to /dev/zero ran it out of memory. Only
// regular files are read, each at most 8 MiB, and a symbolic link is
// followed only to a regular file inside the project.
func TestLoadReadsOnlyBoundedRegularFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app.jadpo", minimalApp)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.jadpo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.jadpo")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.jadpo")
	if err := os.WriteFile(outside, []byte("// outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out.jadpo")); err != nil {
		t.Fatal(err)
	}
	write("shared.txt", "// a module reached through a link inside the project\n")
	if err := os.Symlink("shared.txt", filepath.Join(dir, "linked.jadpo")); err != nil {
		t.Fatal(err)
	}
	write("big.jadpo", strings.Repeat("// padding\n", source.MaxFileSize/11+1))
	write("exact.jadpo", strings.Repeat(" ", source.MaxFileSize))

	p := loadBounded(t, dir)
	got := readFailures(p)
	want := map[string]string{
		"pipe.jadpo": "is a named pipe, not a regular file",
		"zero.jadpo": "symbolic link that leads outside the project",
		"out.jadpo":  "symbolic link that leads outside the project",
		"big.jadpo":  "over the limit of 8 MiB",
	}
	for name, frag := range want {
		if !strings.Contains(got[name], frag) {
			t.Errorf("%s: %q, want it to say %q", name, got[name], frag)
		}
	}
	if len(got) != len(want) {
		t.Errorf("read failures %v, want only %v", got, want)
	}
	if p.Modules["linked"] == nil || p.Modules["exact"] == nil {
		t.Errorf("a link to a regular file inside the project, and a file of exactly the limit, are read: modules %v", p.Modules)
	}

	// app.jadpo itself a named pipe.
	dir2 := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir2, "app.jadpo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readFailures(loadBounded(t, dir2)); !strings.Contains(got["app.jadpo"], "named pipe") {
		t.Errorf("app.jadpo as a named pipe: %v", got)
	}
}

// A named pipe swapped in after the kind was looked at is still refused:
// the disk file system opens without blocking, and the opened file's kind
// is looked at again.
func TestDiskFSOpensPipesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "p.jadpo"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := source.DiskFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := fsys.Open("p.jadpo")
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("open: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("opening a named pipe blocked")
	}
}

// A named pipe as jadpo.lock is an error, not a wait.
func TestLockReadsNeverWaitOnAPipe(t *testing.T) {
	for _, pipe := range []string{"jadpo.lock"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "app.jadpo"), []byte(minimalApp), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(pipe))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := loadBounded(t, dir).Lock(); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("jadpo.lock a named pipe: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("reading the lock blocked on %s, a named pipe", pipe)
		}
	}
}

// An absolute link counts as leading outside, even to a file inside: the
// project must read the same wherever its folder is moved.
func TestLoadRefusesAbsoluteLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.jadpo"), []byte(minimalApp), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("// shared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "shared.txt"), filepath.Join(dir, "abs.jadpo")); err != nil {
		t.Fatal(err)
	}
	got := readFailures(loadBounded(t, dir))
	if !strings.Contains(got["abs.jadpo"], "make the link relative") {
		t.Fatalf("an absolute link: %v", got)
	}
}
