package project

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// TestParallelLoadIsSequential: LoadFS parses the files in parallel, and
// gives the project a parse one file after the other gives: the same
// files in the same order, the same diagnostics in the same order.
func TestParallelLoadIsSequential(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 4 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	}
	fsys := projectgen.Generate(3000)
	broken := 0
	for _, name := range projectgen.Files(fsys) {
		if broken%3 == 0 && name != "app.jadpo" {
			// Syntax errors in every third file, so the diagnostics'
			// order is something to keep.
			data := strings.Replace(string(fsys[name].Data), "{", "{ ?", 2)
			fsys[name] = &fstest.MapFile{Data: []byte(data)}
		}
		broken++
	}
	fsys["zz/unreadable.jadpo"] = &fstest.MapFile{Mode: fs.ModeNamedPipe} // not a regular file: a read failure
	render := func(p *Project) string {
		var b strings.Builder
		for _, f := range p.Parsed {
			fmt.Fprintf(&b, "file %s %d\n", f.Source.Path, len(f.Decls))
		}
		for _, d := range p.Diags {
			fmt.Fprintf(&b, "%s %v %s\n", d.Code, d.Subject.Span, d.Summary)
		}
		return b.String()
	}
	want := render(LoadFSParsing(fsys, parser.ParseFile))
	if !strings.Contains(want, "syntax.") || !strings.Contains(want, "project_read_failed") {
		t.Fatalf("the project should have syntax errors and a read failure:\n%s", want)
	}
	for range 5 {
		if got := render(LoadFS(fsys)); got != want {
			t.Fatalf("the parallel load differs:\n%s\n--- sequential:\n%s", got, want)
		}
	}
}
