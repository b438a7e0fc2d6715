package codegen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/ir"
)

// Issue 11, point 12: two `jadpo build`s of one project at once collided on
// fixed build/plan.json.tmp names (1 run in 60 failed, or renamed the
// other's half-written file). Each write has its own temporary file and an
// atomic rename, so every run succeeds and the files are whole.
func TestConcurrentWritesDoNotCollide(t *testing.T) {
	p := &ir.Program{Version: ir.Version, Config: []ir.ConfigField{{Name: "a", Binding: "A", Type: ir.Type{Kind: ir.Text}}}}
	plan, err := EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.Repeat("CREATE TABLE t (id TEXT);\n", 20000) // big enough to be caught half-written
	out := Input{Schemas: map[string]string{"postgres": sql, "sqlite": sql}}
	for round := 0; round < 30; round++ {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := Build(dir, p, out); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: a concurrent write failed: %v", round, err)
		}
		for name, want := range map[string][]byte{PlanFile: plan, "build/sql/postgres.sql": []byte(sql), "build/sql/sqlite.sql": []byte(sql)} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("round %d: %s is not whole (%d bytes of %d): %v", round, name, len(got), len(want), err)
			}
		}
		var left []string
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".tmp") {
				left = append(left, path)
			}
			return nil
		})
		if len(left) > 0 {
			t.Fatalf("round %d: temporary files left: %v", round, left)
		}
	}
}

// A named pipe where build/plan.json goes is replaced, not read and waited on.
func TestWriteReplacesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "build", "plan.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Build(dir, &ir.Program{Version: ir.Version}, Input{}); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Build blocked on a named pipe")
	}
	if st, err := os.Lstat(filepath.Join(dir, "build", "plan.json")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("build/plan.json: %v %v", st, err)
	}
}
