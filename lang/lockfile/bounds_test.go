package lockfile

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe as jadpo.lock is an error for `package list`, not a wait.
func TestReadRefusesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("Read: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read blocked on a named pipe")
	}
}
