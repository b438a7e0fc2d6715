package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/project"
)

// FuzzEditorAnswers feeds any text as an app.jadpo and asks, at offsets
// across it, what hover, definition and completion read: the index's name
// at the offset, its description, and the completion context from the
// tokens before it. None may panic, whatever the text (an editor sends
// every keystroke's state, most of them half-written). Seeded with every
// .jadpo file of the examples.
func FuzzEditorAnswers(f *testing.F) {
	addExampleSeeds(f)
	f.Add([]byte("connection c {\n    package: \n    settings: { x: config. }\n}\nsubscriber s { on E(e) { attempt c.r.o( a: e. ) } }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		res := check.CheckIndexed(project.LoadFS(fstest.MapFS{"app.jadpo": {Data: src}}))
		step := len(src)/64 + 1
		for off := 0; off <= len(src); off += step {
			if res.Index != nil {
				if sym, _ := res.Index.At("app.jadpo", off); sym != nil {
					_ = describeSymbol(sym)
					_ = res.Index.RefsTo(sym)
				}
			}
			cc := readCompletionContext(src, off)
			_ = cc.blockKind()
		}
	})
}

// addExampleSeeds seeds a fuzz target with every .jadpo file of the examples.
func addExampleSeeds(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join(reporoot.Dir(f), "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jadpo") {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
}
