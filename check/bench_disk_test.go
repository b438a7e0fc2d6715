package check_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// BenchmarkLoadDisk is project.Load of the same project written to disk:
// what the file rules (a kind check before and after opening, a bounded
// read, links followed only inside the project) cost over BenchmarkLoad.
func BenchmarkLoadDisk(b *testing.B) {
	fsys := benchFS()
	dir := b.TempDir()
	for name, f := range fsys {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(projectgen.Bytes(fsys)))
	b.ReportAllocs()
	for b.Loop() {
		if p := project.Load(dir); len(p.Diags) > 0 {
			b.Fatal(p.Diags)
		}
	}
}
