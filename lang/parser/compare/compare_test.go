package compare

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	cueparser "cuelang.org/go/cue/parser"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
	"github.com/jadpo/jadpo/lang/source"
)

// benchLines matches check/bench_test.go.
const benchLines = 50000

type inputs struct {
	jadpo    fstest.MapFS
	cue, hcl map[string][]byte
}

var cached *inputs

func load(tb testing.TB) *inputs {
	if cached == nil {
		fsys := projectgen.Generate(benchLines)
		cue, hcl, err := Translate(fsys)
		if err != nil {
			tb.Fatal(err)
		}
		cached = &inputs{jadpo: fsys, cue: cue, hcl: hcl}
	}
	return cached
}

func size(files map[string][]byte) int {
	n := 0
	for _, b := range files {
		n += len(b)
	}
	return n
}

func sorted(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func lines(files map[string][]byte) int {
	n := 0
	for _, b := range files {
		n += strings.Count(string(b), "\n")
	}
	return n
}

// The translations parse cleanly, file for file, and are of a size with
// the original.
func TestTranslationsParse(t *testing.T) {
	in := load(t)
	for _, name := range sorted(in.cue) {
		if _, err := cueparser.ParseFile(name, in.cue[name]); err != nil {
			t.Fatalf("CUE: %v\n%s", err, in.cue[name])
		}
	}
	for _, name := range sorted(in.hcl) {
		if _, diags := hclsyntax.ParseConfig(in.hcl[name], name, hcl.InitialPos); diags.HasErrors() {
			t.Fatalf("HCL: %v\n%s", diags, in.hcl[name])
		}
	}
	jadpo := map[string][]byte{}
	for _, name := range projectgen.Files(in.jadpo) {
		jadpo[name] = in.jadpo[name].Data
	}
	for _, row := range []struct {
		what  string
		files map[string][]byte
	}{{"jadpo", jadpo}, {"CUE", in.cue}, {"HCL", in.hcl}} {
		t.Logf("%-5s %4d files %7d lines %8d bytes", row.what, len(row.files), lines(row.files), size(row.files))
	}
	ratio := func(a, b int) float64 { return float64(a) / float64(b) }
	if r := ratio(size(in.cue), size(jadpo)); r < 0.7 || r > 1.5 {
		t.Errorf("CUE is %.2f times the jadpo size", r)
	}
	if r := ratio(size(in.hcl), size(jadpo)); r < 0.7 || r > 1.5 {
		t.Errorf("HCL is %.2f times the jadpo size", r)
	}
}

// TestShowSample prints one module in the three syntaxes (go test -run
// ShowSample -v).
func TestShowSample(t *testing.T) {
	in := load(t)
	const name = "billing/customer"
	t.Logf("jadpo:\n%s", firstLines(in.jadpo[name+".jadpo"].Data, 40))
	t.Logf("CUE:\n%s", firstLines(in.cue[name+".cue"], 40))
	t.Logf("HCL:\n%s", firstLines(in.hcl[name+".hcl"], 50))
}

func firstLines(b []byte, n int) string {
	ls := strings.SplitN(string(b), "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}

// BenchmarkJadpoParseCheck is `jadpo check` minus the disk: load the
// project from memory, parse every file (lean, as `jadpo check` does: the
// check reads each record's fields again), check.
func BenchmarkJadpoParseCheck(b *testing.B) {
	in := load(b)
	clock := startCPU(b, projectgen.Bytes(in.jadpo))
	for b.Loop() {
		res := check.Check(project.LoadFSLean(in.jadpo))
		if res.Diags.HasErrors() {
			b.Fatalf("the generated project has errors: %v", res.Diags[0])
		}
	}
	clock.stop()
}

// BenchmarkJadpoParse parses every file, nothing else.
func BenchmarkJadpoParse(b *testing.B) {
	in := load(b)
	names := projectgen.Files(in.jadpo)
	files := make([]*source.File, len(names))
	for i, name := range names {
		files[i] = source.NewFile(name, in.jadpo[name].Data)
	}
	clock := startCPU(b, projectgen.Bytes(in.jadpo))
	for b.Loop() {
		for _, f := range files {
			if _, diags := parser.ParseFile(f); len(diags) > 0 {
				b.Fatal(diags)
			}
		}
	}
	clock.stop()
}

// BenchmarkCUEParse is cuelang.org/go/cue/parser.ParseFile over the same
// declarations in CUE.
func BenchmarkCUEParse(b *testing.B) {
	in := load(b)
	names := sorted(in.cue)
	clock := startCPU(b, size(in.cue))
	for b.Loop() {
		for _, name := range names {
			if _, err := cueparser.ParseFile(name, in.cue[name]); err != nil {
				b.Fatal(err)
			}
		}
	}
	clock.stop()
}

// BenchmarkHCLParse is hclsyntax.ParseConfig over the same declarations in
// HCL.
func BenchmarkHCLParse(b *testing.B) {
	in := load(b)
	names := sorted(in.hcl)
	clock := startCPU(b, size(in.hcl))
	for b.Loop() {
		for _, name := range names {
			if _, diags := hclsyntax.ParseConfig(in.hcl[name], name, hcl.InitialPos); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	}
	clock.stop()
}

var _ = fmt.Sprint

// cpuClock reports, next to the wall time, the CPU time each operation
// used and the bytes per CPU second. On a machine shared with other work,
// wall time measures the neighbours as much as the code; CPU time much less.
type cpuClock struct {
	b     *testing.B
	start time.Duration
	bytes int
}

func startCPU(b *testing.B, bytes int) *cpuClock {
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	return &cpuClock{b: b, start: cpuNow(), bytes: bytes}
}

func (c *cpuClock) stop() {
	used := cpuNow() - c.start
	if used <= 0 || c.b.N == 0 {
		return
	}
	perOp := used.Seconds() / float64(c.b.N)
	c.b.ReportMetric(perOp*1e3, "cpu-ms/op")
	c.b.ReportMetric(float64(c.bytes)/perOp/1e6, "cpu-MB/s")
}
