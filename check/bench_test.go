package check_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
	"github.com/jadpo/jadpo/lang/source"
)

// benchLines is the size of the generated project the front-end benchmarks
// read (docs/performance.md, "Front end: parse and check").
const benchLines = 50000

var benchFS = func() func() fstest.MapFS {
	var fsys fstest.MapFS
	return func() fstest.MapFS {
		if fsys == nil {
			fsys = projectgen.Generate(benchLines)
		}
		return fsys
	}
}()

// BenchmarkCheck is what `jadpo check` costs on a 50,000-line project, minus
// the disk: load from an in-memory file system, parse (lean, as `jadpo
// check` does: records' fields read again by the check), check. The generated
// project is meant to be valid; the errors/op metric says how many errors
// the checker found in it (0 expected: otherwise the generator or the
// checker is wrong, and the figure measures an early exit).
func BenchmarkCheck(b *testing.B) {
	fsys := benchFS()
	b.SetBytes(int64(projectgen.Bytes(fsys)))
	b.ReportAllocs()
	var res check.Result
	for b.Loop() {
		res = check.Check(project.LoadFSLean(fsys))
	}
	errs := res.Diags.Errors()
	b.ReportMetric(float64(errs), "errors/op")
	for i, d := range res.Diags {
		if i == 5 {
			b.Logf("... and %d more", len(res.Diags)-i)
			break
		}
		b.Logf("generated project: %s", fmt.Sprint(diagLine(d.Subject, d.Code, d.Summary)))
	}
}

// BenchmarkCheckFull is BenchmarkCheck on a full load (project.LoadFS,
// every record's fields kept in the trees), as the language server loads.
func BenchmarkCheckFull(b *testing.B) {
	fsys := benchFS()
	b.SetBytes(int64(projectgen.Bytes(fsys)))
	b.ReportAllocs()
	for b.Loop() {
		if res := check.Check(project.LoadFS(fsys)); res.Diags.HasErrors() {
			b.Fatal(res.Diags[0])
		}
	}
}

// BenchmarkLoad is project.LoadFS alone: walk, read and parse what a check
// reads before checking (app, modules, package headers and mappings; the
// resources the checker asks for come later). BenchmarkCheck minus this is
// the checker's own cost.
func BenchmarkLoad(b *testing.B) {
	fsys := benchFS()
	b.SetBytes(int64(projectgen.Bytes(fsys)))
	b.ReportAllocs()
	for b.Loop() {
		if p := project.LoadFS(fsys); len(p.Diags) > 0 {
			b.Fatal(p.Diags)
		}
	}
}

// BenchmarkParse parses every file of the same project (resources too),
// nothing else: the difference to BenchmarkCheck is loading and checking.
func BenchmarkParse(b *testing.B) {
	fsys := benchFS()
	names := projectgen.Files(fsys)
	files := make([]*source.File, len(names))
	for i, name := range names {
		files[i] = source.NewFile(name, fsys[name].Data)
	}
	b.SetBytes(int64(projectgen.Bytes(fsys)))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, diags := parser.ParseFile(f); len(diags) > 0 {
				b.Fatalf("%s: %v", f.Path, diags)
			}
		}
	}
}

func diagLine(r source.Range, code diag.Code, summary string) string {
	if r.File == nil {
		return fmt.Sprintf("[%s] %s", code, summary)
	}
	p := r.File.Position(r.Span.Start)
	return fmt.Sprintf("%s:%d:%d: [%s] %s", r.File.Path, p.Line, p.Column, code, summary)
}

// BenchmarkCheckLongLine is issue 11's quadratic case: `store primary {}`
// then N stray characters on one line, N diagnostics, checked and rendered
// as text (and JSON) as `jadpo check` does. Time and memory per op must grow
// with N, not N² (docs/performance.md, "Long lines and large files").
func BenchmarkCheckLongLine(b *testing.B) {
	for _, n := range []int{16000, 64000, 256000} {
		src := []byte("store primary {}\n" + strings.Repeat("- ", n) + "\n")
		fsys := fstest.MapFS{"app.jadpo": {Data: src}}
		b.Run(fmt.Sprintf("diagnostics=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				res := check.Check(project.LoadFS(fsys))
				if res.Diags.Errors() != n {
					b.Fatalf("%d errors, want %d", res.Diags.Errors(), n)
				}
				diag.WriteText(io.Discard, res.Diags, diag.TextOptions{})
				_ = diag.WriteJSON(io.Discard, diag.NewReport("check", ".", res.Files, res.Declarations, res.Diags))
			}
		})
	}
}

// BenchmarkCheckSize checks generated projects of growing size, up to the
// 50 MB of the memory bound (files under 8 MiB each): time and bytes
// allocated per op grow with the input.
func BenchmarkCheckSize(b *testing.B) {
	for _, mb := range []int{5, 10, 20, 50} {
		fsys := projectgen.GenerateBytes(mb << 20)
		b.Run(fmt.Sprintf("MB=%d", mb), func(b *testing.B) {
			b.SetBytes(int64(projectgen.Bytes(fsys)))
			b.ReportAllocs()
			for b.Loop() {
				if res := check.Check(project.LoadFS(fsys)); len(res.Diags) > 0 {
					b.Fatal(res.Diags[0].Summary)
				}
			}
		})
	}
}
