package parser

import (
	"reflect"
	"testing"

	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// runBytes sums, over an identSlab's runs of every type, the bytes taken
// by nodes and the bytes left empty at the end of each type's last run.
func runBytes(s *identSlab) (used, empty int) {
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Struct {
			continue
		}
		if st := f.FieldByName("store"); st.IsValid() {
			f = st
		}
		items := f.FieldByName("items")
		if !items.IsValid() {
			continue
		}
		size := int(items.Type().Elem().Size())
		used += (int(f.FieldByName("taken").Int()) + items.Len()) * size
		empty += (items.Cap() - items.Len()) * size
	}
	return used, empty
}

// A file's last runs are cut to what the rest of it takes: a tree keeps
// its runs whole, so their empty tails are memory held for nothing. On
// this project (207 files of some 20 KB) they were 38% of the nodes' bytes
// with each run twice the last, and are under 10% cut (1.4% on the 52 MB
// project, whose files are ten times larger): the test wants less than a
// fifth, and less than half of what doubling leaves.
func TestSlabRunsEndWithTheFile(t *testing.T) {
	fsys := projectgen.GenerateBytes(4 << 20)
	var used, empty, usedBefore, emptyBefore int
	for _, name := range projectgen.Files(fsys) {
		src := string(fsys[name].Data)
		toks, probs := lexer.LexTokens(src, nil)
		if len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		for _, cut := range []bool{true, false} {
			var slab identSlab
			splitTokens(src, toks, func(chunk []lexer.Tok) bool {
				if cut {
					slab.file = tokensLeft(toks, chunk)
				}
				if _, ok := fastTokens(chunk, &slab); !ok {
					t.Fatalf("%s: the fast path gave up", name)
				}
				return true
			})
			u, e := runBytes(&slab)
			if cut {
				used, empty = used+u, empty+e
			} else {
				usedBefore, emptyBefore = usedBefore+u, emptyBefore+e
			}
		}
	}
	if used != usedBefore {
		t.Errorf("the nodes take %d bytes cut, %d not: the same nodes should be made", used, usedBefore)
	}
	t.Logf("nodes %d bytes; empty tails %d bytes cut, %d doubled", used, empty, emptyBefore)
	if empty*5 > used || empty*2 > emptyBefore {
		t.Errorf("the runs' empty tails are %d bytes for %d of nodes (%d when doubled): more than a fifth, or than half", empty, used, emptyBefore)
	}
}
