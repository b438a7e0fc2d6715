package check

import (
	"testing"
	"testing/fstest"
	"unsafe"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/project"
)

// TestFieldsShareTheirTypes: a record's fields keep one type per distinct
// type (not an ir.Field each): fields of the same declared or built-in
// type, optional or not, a list of it, or the same type with the same
// rules, point at one copy; other rules are another type; and what
// fields() gives is each field's whole type and wire name, as before.
func TestFieldsShareTheirTypes(t *testing.T) {
	src := `value Address { street: Text }
value Order {
    a: Address
    b: Address
    c: Address?
    d: Address?
    n: Int
    m: Int
    o: Int?
    x: Text { max_length: 3 }
    y: Text { max_length: 3 }
    z: Text { max_length: 4 }
    v: Int { min: 0 }
    l: List<Address>
    k: List<Address>
    w: Text { wire_name: "W" }
}
`
	p := project.LoadFS(fstest.MapFS{"app.jadpo": {Data: []byte(src)}})
	c := newChecker(p)
	c.finish(p, "")
	var d *decl
	for _, m := range c.modules {
		if o := m.ns.decls["Order"]; o != nil {
			d = o
		}
	}
	if d == nil || len(d.flds) != 14 {
		t.Fatalf("Order not resolved with its 14 fields: %+v", d)
	}
	at := map[string]int{}
	for i, f := range d.flds {
		at[f.name] = i
	}
	typ := func(name string) *ir.Type { return d.flds[at[name]].typ }
	for _, same := range [][2]string{{"a", "b"}, {"c", "d"}, {"n", "m"}, {"l", "k"}, {"x", "y"}} {
		if typ(same[0]) != typ(same[1]) {
			t.Errorf("fields %s and %s have the same type but two copies of it", same[0], same[1])
		}
	}
	for _, other := range [][2]string{{"a", "c"}, {"n", "o"}, {"x", "z"}, {"n", "v"}, {"n", "w"}} {
		if typ(other[0]) == typ(other[1]) {
			t.Errorf("fields %s and %s share one type, but their types differ or hold rules of their own", other[0], other[1])
		}
	}
	addr := c.recordDecl(d.home.qualifier + ".Address")
	if typ("a") != &addr.typ {
		t.Errorf("field a of type Address does not point at Address's own type")
	}
	if l := typ("l"); l.Elem == &addr.typ {
		t.Errorf("a list's element points into the declaration: a program would hold the checker alive")
	}
	fs := d.fields()
	want := map[string]ir.Field{
		"a": {Name: "a", Type: ir.Type{Kind: ir.RecordK, Name: d.home.qualifier + ".Address"}},
		"c": {Name: "c", Type: ir.Type{Kind: ir.RecordK, Name: d.home.qualifier + ".Address", Optional: true}},
		"o": {Name: "o", Type: ir.Type{Kind: ir.Int, Optional: true}},
		"w": {Name: "w", WireName: "W", Type: ir.Type{Kind: ir.Text}},
	}
	for name, w := range want {
		got := fs[at[name]]
		if got.Name != w.Name || got.WireName != w.WireName || !sameType(&got.Type, &w.Type) {
			t.Errorf("field %s = %+v, want %+v", name, got, w)
		}
	}
	if l := fs[at["l"]].Type; l.Kind != ir.List || l.Elem == nil || l.Elem.Name != d.home.qualifier+".Address" || l.Elem.Optional {
		t.Errorf("field l = %+v, want a list of Address", l)
	}
	if x := fs[at["x"]].Type; x.Rules == nil || x.Rules.MaxLength == nil || *x.Rules.MaxLength != 3 {
		t.Errorf("field x lost its rule: %+v", x)
	}
	if z := fs[at["z"]].Type; z.Rules == nil || z.Rules.MaxLength == nil || *z.Rules.MaxLength != 4 {
		t.Errorf("field z took another field's rule: %+v", z)
	}
	if f := d.field("w"); f == nil || f.WireName != "W" {
		t.Errorf(`field("w") = %+v, want wire name W`, f)
	}
}

// TestDeclStaysSmall: a check holds a decl per declaration of the project
// (219,217 for the 52 MB generated one), so what few records have lives in
// declRare, and the decl stays in the 176-byte size class.
func TestDeclStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(decl{}); n > 176 {
		t.Errorf("a decl is %d bytes, over 176: put what few declarations need in declRare", n)
	}
}
