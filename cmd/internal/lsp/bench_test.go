package lsp

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// The language server's speed on the generated 50,000-line project
// (docs/performance.md, "Language server"): an edit to one module until
// its diagnostics are published (the debounce included), hover and
// completion, each next to the peer it must beat, a whole check of the
// project as `jadpo check` does it.

const benchLines = 50000

// benchModule is the module the benchmarks edit: one of the generated
// project's, used by app.jadpo.
const benchModule = "accounts/batch.jadpo"

type benchSession struct {
	c    *testClient
	dir  string
	path string
	text string
	n    int
}

func newBenchSession(b *testing.B) *benchSession { return newBenchSessionOf(b, benchLines) }

// newBenchSessionOf is a session on a generated project of lines lines.
func newBenchSessionOf(b *testing.B, lines int) *benchSession {
	b.Helper()
	dir := b.TempDir()
	if err := projectgen.WriteDir(dir, lines); err != nil {
		b.Fatal(err)
	}
	c := startServer(b, Options{})
	c.initialize(dir)
	path := filepath.Join(dir, filepath.FromSlash(benchModule))
	text := read(b, path)
	c.open(path, text)
	if ds := c.Published(pathURI(path), 0); len(ds) != 0 {
		b.Fatalf("the generated project has problems: %v", ds)
	}
	return &benchSession{c: c, dir: dir, path: path, text: text}
}

// edit changes the module (a comment line that grows with each edit, so
// every text is new) and waits for its diagnostics.
func (bs *benchSession) edit(b *testing.B) {
	bs.n++
	uri := pathURI(bs.path)
	before := bs.c.Pubs(uri)
	text := strings.Replace(bs.text, "\n", fmt.Sprintf("\n// edit %d\n", bs.n), 1)
	bs.c.change(bs.path, text, bs.n+1)
	if ds := bs.c.Published(uri, before); len(ds) != 0 {
		b.Fatalf("edit %d: %v", bs.n, ds)
	}
}

// BenchmarkEditToDiagnostics is one edit of one module, from didChange
// to its publishDiagnostics; BenchmarkEditToDiagnostics/peer is what the
// server did before it kept anything between edits: load, parse and check
// the whole project from disk.
func BenchmarkEditToDiagnostics(b *testing.B) {
	server := func(lines int) func(b *testing.B) {
		return func(b *testing.B) {
			bs := newBenchSessionOf(b, lines)
			cpu := cpuTime()
			n := 0
			for b.Loop() {
				bs.edit(b)
				n++
			}
			reportCPU(b, cpu, n)
			for _, pr := range bs.c.server().ws.projects {
				b.ReportMetric(float64(pr.res.Index.Reused), "modules-reused")
				if pr.res.Index.AppReused {
					b.ReportMetric(1, "app-reused") // the app-level checks' results taken from the last check
				}
				b.ReportMetric(float64(len(pr.proj.Modules)), "modules")
			}
		}
	}
	b.Run("server", server(benchLines))
	// server-200k is the same edit in a project four times as large
	// (204,000 lines): ns/op is the wall time from didChange to the
	// diagnostics, the debounce included.
	b.Run("server-200k", server(4*benchLines))
	b.Run("peer", func(b *testing.B) {
		dir := b.TempDir()
		if err := projectgen.WriteDir(dir, benchLines); err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime()
		n := 0
		for b.Loop() {
			if res := check.Check(project.Load(dir)); res.Diags.HasErrors() {
				b.Fatal(res.Diags)
			}
			n++
		}
		reportCPU(b, cpu, n)
	})
}

// cpuTime is the process's CPU time so far (user and system, every
// thread): on a machine shared with other work, wall time measures the
// neighbours as much as the code, CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration, n int) {
	if n > 0 {
		b.ReportMetric(float64(cpuTime()-since)/float64(n)/1e6, "cpu-ms/op")
	}
}

// BenchmarkHover is hover on a use of a type imported from another module.
func BenchmarkHover(b *testing.B) {
	bs := newBenchSession(b)
	pos := at(bs.text, "AccountsBatchId", 1, 3)
	cpu, n := cpuTime(), 0
	for b.Loop() {
		if r := bs.c.Call("textDocument/hover", docPos(bs.path, pos)); r == nil {
			b.Fatal("no hover")
		}
		n++
	}
	reportCPU(b, cpu, n)
}

// BenchmarkCompletion is completion of a field's type: every type in scope.
func BenchmarkCompletion(b *testing.B) {
	bs := newBenchSession(b)
	pos := at(bs.text, "batch_id: AccountsBatchId", 0, len("batch_id: "))
	cpu, n := cpuTime(), 0
	for b.Loop() {
		r := bs.c.Call("textDocument/completion", docPos(bs.path, pos)).(map[string]any)
		if len(r["items"].([]any)) == 0 {
			b.Fatal("no completion")
		}
		n++
	}
	reportCPU(b, cpu, n)
}

// BenchmarkHeapAfterEdits reports the server's HeapInuse after 100 and
// after 1,000 edits (after a collection each): what the server keeps must
// not grow with the edits.
func BenchmarkHeapAfterEdits(b *testing.B) {
	for b.Loop() {
		bs := newBenchSession(b)
		heap := func() float64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return float64(ms.HeapInuse) / (1 << 20)
		}
		for bs.n < 100 {
			bs.edit(b)
		}
		at100 := heap()
		for bs.n < 1000 {
			bs.edit(b)
		}
		at1000 := heap()
		b.ReportMetric(at100, "MiB-at-100")
		b.ReportMetric(at1000, "MiB-at-1000")
		b.ReportMetric(100*(at1000-at100)/at100, "%growth")
	}
}
