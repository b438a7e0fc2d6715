package projectgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

func TestGenerateParsesWithoutDiagnostics(t *testing.T) {
	for _, n := range []int{300, 5000, 50000} {
		fsys := Generate(n)
		for _, name := range Files(fsys) {
			f, diags := parser.ParseFile(source.NewFile(name, fsys[name].Data))
			if len(diags) > 0 {
				t.Fatalf("Generate(%d): %s:\n%v", n, name, diags)
			}
			if len(f.Decls) == 0 {
				t.Fatalf("Generate(%d): %s has no declarations", n, name)
			}
		}
	}
}

func TestGenerateSize(t *testing.T) {
	for _, n := range []int{5000, 20000, 50000, 100000} {
		fsys := Generate(n)
		got := Lines(fsys)
		if d := float64(got-n) / float64(n); d < -0.05 || d > 0.05 {
			t.Errorf("Generate(%d) has %d lines, more than 5%% off", n, got)
		}
		mods := 0
		for _, name := range Files(fsys) {
			if !strings.HasPrefix(name, "packages/") && name != "app.jadpo" {
				mods++
			}
		}
		if n >= 20000 && (mods < 50 || mods > 201) {
			t.Errorf("Generate(%d) has %d modules, want 50-200", n, mods)
		}
		t.Logf("Generate(%d): %d lines, %d bytes, %d modules", n, got, Bytes(fsys), mods)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(8000), Generate(8000)
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for name, f := range a {
		if !bytes.Equal(f.Data, b[name].Data) {
			t.Fatalf("%s differs between two runs", name)
		}
	}
}

func TestGenerateLoadsAsAProject(t *testing.T) {
	p := project.LoadFS(Generate(10000))
	if len(p.Diags) > 0 {
		t.Fatalf("diagnostics: %v", p.Diags)
	}
	if p.App == nil {
		t.Fatal("no app.jadpo")
	}
	pkg := p.Packages[PackageDir]
	if pkg == nil || pkg.Header == nil || pkg.Provides["receiving"] == nil {
		t.Fatalf("package %s not loaded whole: %+v", PackageDir, pkg)
	}
	for _, r := range []string{"messages", "jobs", "webhooks"} {
		if f := pkg.Resource(r); f == nil || len(f.Decls) == 0 {
			t.Errorf("resource %s did not load", r)
		}
	}
	if len(p.Diags) > 0 {
		t.Fatalf("diagnostics in resources: %v", p.Diags)
	}
	if _, ok := p.Modules["shared/common"]; !ok {
		t.Error("no shared/common module")
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, 2000); err != nil {
		t.Fatal(err)
	}
	fsys := Generate(2000)
	for name, f := range fsys {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs on disk", name)
		}
	}
	if p := project.Load(dir); len(p.Diags) > 0 {
		t.Fatalf("diagnostics: %v", p.Diags)
	}
}

// A 50 MB project (the memory bound of docs/performance.md is measured on
// it) keeps every file under the per-file limit of 8 MiB, and parses.
func TestGenerateBytes(t *testing.T) {
	sizes := []int{5 << 20}
	if !testing.Short() {
		sizes = append(sizes, 50<<20)
	}
	for _, size := range sizes {
		fsys := GenerateBytes(size)
		got := Bytes(fsys)
		if d := float64(got-size) / float64(size); d < -0.05 || d > 0.05 {
			t.Errorf("GenerateBytes(%d) has %d bytes, more than 5%% off", size, got)
		}
		largest := 0
		for _, name := range Files(fsys) {
			largest = max(largest, len(fsys[name].Data))
		}
		if largest >= 8<<20 {
			t.Errorf("GenerateBytes(%d): a file of %d bytes, over 8 MiB", size, largest)
		}
		// Loading 50 MB is BenchmarkCheckSize's work; the small one stands for it here.
		if size < 50<<20 {
			if p := project.LoadFS(fsys); len(p.Diags) > 0 {
				t.Fatalf("GenerateBytes(%d): %v", size, p.Diags[:min(len(p.Diags), 5)])
			}
		}
		t.Logf("GenerateBytes(%d): %d bytes, %d files, largest %d bytes", size, got, len(Files(fsys)), largest)
	}
}
