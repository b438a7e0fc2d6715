package check_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// A lean load (what `jadpo check` and `jadpo build` read: records' fields
// left out of the trees, read again one record at a time) checks exactly as
// a full load does: the same diagnostics, the same program. The planted
// records put their mistakes in fields, and refer to records of their own
// and of another module, so resolving one record's fields resolves another
// record's while the first reader is in use.
func TestLeanLoadChecksAsFullLoad(t *testing.T) {
	clean := projectgen.Generate(2000)
	planted := fstest.MapFS{}
	for name, f := range clean {
		planted[name] = f
	}
	module := ""
	for _, name := range projectgen.Files(clean) {
		if name != "app.jadpo" && !strings.HasPrefix(name, "packages/") && !strings.HasPrefix(name, "shared/") {
			module = name
			break
		}
	}
	planted[module] = &fstest.MapFile{Data: append(append([]byte(nil), clean[module].Data...), []byte(`
value LeanOuter {
    inner: LeanInner
    inners: List<LeanInner>
    by_key: Map<Text, LeanInner?>
    twice: Text
    twice: Int
    unknown: NoSuchType
    money: Money?
}
value LeanInner {
    again: List<LeanInner>
    outer: LeanOuter?
    wire: Text { wire_name: "" }
    count: Int { min: 5 max: 1 }
}
`)...)}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
	}{{"clean", clean}, {"planted", planted}} {
		t.Run(tc.name, func(t *testing.T) {
			full := check.Check(project.LoadFS(tc.fsys))
			lean := check.Check(project.LoadFSLean(tc.fsys))
			if got, want := diagLines(lean), diagLines(full); got != want {
				t.Fatalf("a lean load reports\n%s\na full load\n%s", got, want)
			}
			if tc.name == "planted" && !full.Diags.HasErrors() {
				t.Fatal("the planted mistakes are not reported: the test checks nothing")
			}
			if tc.name == "clean" && (full.Program == nil || lean.Program == nil) {
				t.Fatalf("no program: %s", diagLines(full))
			}
			if !reflect.DeepEqual(lean.Program, full.Program) {
				t.Fatal("a lean load's program differs from a full load's")
			}
		})
	}
}

// A lean load keeps no record's fields in its trees: that is what makes it
// lean (docs/performance.md, the 52 MB project's peak).
func TestLeanLoadKeepsNoFields(t *testing.T) {
	p := project.LoadFSLean(projectgen.Generate(1000))
	records := 0
	for path, f := range p.Modules {
		if !f.FieldsDeferred {
			t.Errorf("%s: a clean module's fields are kept", path)
		}
		for _, d := range f.Decls {
			if d.Named != nil && d.Named.Record != nil {
				records++
				if d.Named.Record.Fields != nil {
					t.Fatalf("%s: record %s keeps its fields", path, d.Named.Record.Name.Name)
				}
			}
		}
	}
	if records == 0 {
		t.Fatal("the generated project has no records: the test checks nothing")
	}
}

func diagLines(r check.Result) string {
	var b strings.Builder
	for _, d := range r.Diags {
		fmt.Fprintf(&b, "%s label=%q help=%q context=%v", diagLine(d.Subject, d.Code, d.Summary), d.Label, d.Help, d.Context)
		if d.Fix != nil {
			fmt.Fprintf(&b, " fix=%q", *d.Fix)
		}
		for _, r := range d.Related {
			fmt.Fprintf(&b, " related=%s", diagLine(r.Range, "", r.Message))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
