package check

import (
	"cmp"
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
)

// builtin scalar bases.
var scalarKinds = map[string]ir.Kind{
	"Text": ir.Text, "Int": ir.Int, "Decimal": ir.Decimal, "Bool": ir.Bool, "Uuid": ir.Uuid,
	"Instant": ir.Instant, "Email": ir.Email, "Url": ir.Url, "Duration": ir.Duration,
}

// scalarKind is scalarKinds[name] without hashing every field's type name
// (TestScalarKindSwitch keeps the two the same).
func scalarKind(name string) (ir.Kind, bool) {
	switch name {
	case "Text":
		return ir.Text, true
	case "Int":
		return ir.Int, true
	case "Decimal":
		return ir.Decimal, true
	case "Bool":
		return ir.Bool, true
	case "Uuid":
		return ir.Uuid, true
	case "Instant":
		return ir.Instant, true
	case "Email":
		return ir.Email, true
	case "Url":
		return ir.Url, true
	case "Duration":
		return ir.Duration, true
	}
	return "", false
}

func builtinNames() []string {
	return []string{"Bool", "Decimal", "Duration", "Email", "Instant", "Int", "List", "Map", "Text", "Url", "Uuid"}
}

func isTypeLike(d *decl) bool {
	return d.kind == kindType || d.kind == kindEnum || d.kind == kindValue || d.kind == kindEvent
}

// checkModuleTypes resolves every type-like declaration of the app's modules,
// so that each mistake in one is reported once, used or not.
func (c *checker) checkModuleTypes() {
	for _, path := range c.sortedModules() {
		m := c.modules[path]
		if m.reused {
			continue // resolved when it was checked
		}
		for _, name := range sortedKeys(m.ns.decls) {
			c.resolveDecl(m.ns.decls[name])
		}
	}
}

// resolveDecl resolves a type, enum or record declaration once.
func (c *checker) resolveDecl(d *decl) {
	if d.state != unresolved {
		return
	}
	d.state = resolving
	n := d.node.Named
	switch d.kind {
	case kindEnum:
		d.typ = ir.Type{Kind: ir.Enum, Name: d.id()}
		seen := map[string]*ast.Ident{}
		for _, v := range n.Enum.Variants {
			c.checkName(d.file, v, false, "enum variant")
			if first, dup := seen[v.Name]; dup {
				c.add(diag.SemanticDuplicateName, d.file.Range(v.Span()), "variant `%s` is listed twice", v.Name).
					WithRelated(d.file.Range(first.Span()), "first listed here")
				continue
			}
			seen[v.Name] = v
			d.typ.Variants = append(d.typ.Variants, v.Name)
			if c.idx != nil {
				c.newSym(SymVariant, v.Name, d.file.Range(v.Span()), d.file.Range(v.Span()), c.sym(d))
			}
		}
	case kindType:
		d.typ, d.failed = c.resolveTypeDecl(d, n.Type)
	case kindValue, kindEvent:
		d.typ = ir.Type{Kind: ir.RecordK, Name: d.id()}
		d.state = resolved // a record may refer to itself through a list
		// A lean parse left the fields out of the tree: they are read
		// again, and the reader's nodes let go once resolved (nothing
		// the check keeps points into them).
		r := c.takeFieldReader()
		c.resolveFields(d, r.Fields(d.file, n.Record))
		c.fieldReaders = append(c.fieldReaders, r)
	}
	d.state = resolved
}

// takeFieldReader is a reader no record being resolved is using.
func (c *checker) takeFieldReader() *parser.FieldReader {
	n := len(c.fieldReaders)
	if n == 0 {
		return &parser.FieldReader{}
	}
	r := c.fieldReaders[n-1]
	c.fieldReaders = c.fieldReaders[:n-1]
	return r
}

func (c *checker) resolveTypeDecl(d *decl, td *ast.TypeDecl) (ir.Type, bool) {
	s := d.scope()
	base, ok := c.typeOf(s, d.file, td.Base, "type")
	if !ok {
		return ir.Type{Kind: ir.Text}, true
	}
	if base.Kind == ir.RecordK || base.Kind == ir.List || base.Kind == ir.Map || base.Kind == ir.Enum {
		c.add(diag.TypeConstraintInvalid, d.file.Range(td.Base.Span()),
			"`%s` refines `%s`, which is not a scalar type", d.name, td.Base.Name.String()).
			WithHelp("a type refines Text, Int, Decimal, Bool, Uuid, Instant, Email, Url, Duration or another such type; use a `value` for a record")
		return ir.Type{Kind: ir.Text}, true
	}
	if base.Optional {
		c.add(diag.TypeConstraintInvalid, d.file.Range(td.Base.Span()), "a type cannot be optional itself").
			WithHelp("write `?` where the type is used: `note: " + d.name + "?`")
		base.Optional = false
	}
	c.applyRules(d.file, &base, td.Rules, "")
	base.Name = d.id()
	return base, false
}

// scope is where names in the declaration's file are looked up.
func (d *decl) scope() scope {
	if d.home.pkg != nil {
		return scope{ns: d.home}
	}
	return scope{mod: d.home.module, ns: d.home}
}

// resolveFields types a record's fields.
func (c *checker) resolveFields(d *decl, fields []*ast.Field) {
	d.flds = make([]field, 0, len(fields))
	s := d.scope()
	for i, f := range fields {
		c.checkName(d.file, &f.Name, false, "field")
		if first := firstField(fields[:i], f.Name.Name); first != nil {
			c.add(diag.SemanticDuplicateName, d.file.Range(f.Name.Span()), "field `%s` is declared twice in `%s`", f.Name.Name, d.name).
				WithRelated(d.file.Range(first.Name.Span()), "first declared here")
			continue
		}
		fs := c.fieldSym(SymField, d.file, f, c.sym(d))
		t, td, ok := c.typeOfDecl(s, d.file, &f.Type, "field")
		if !ok {
			d.failed = true
			// Its type's problem is reported: reading the field is not.
			r := d.rareParts()
			r.failedFields = append(r.failedFields, f.Name.Name)
			continue
		}
		wireMember := c.applyRules(d.file, &t, f.Options, "wire_name")
		if fs != nil {
			tt := t
			fs.Type = &tt
		}
		wire := ""
		if m := wireMember; m != nil {
			if m.Value.Text == nil || m.Value.TextValue() == "" {
				c.add(diag.TypeConstraintInvalid, d.file.Range(m.Value.Span()), "`wire_name` takes a non-empty text").
					WithHelp(`write the member name used on the wire: wire_name: "MD5OfBody"`)
			} else {
				wire = m.Value.TextValue()
			}
		}
		if wire != "" {
			r := d.rareParts()
			r.wires = append(r.wires, wireName{field: len(d.flds), name: wire})
		}
		d.flds = append(d.flds, field{name: f.Name.Name, typ: c.fieldType(t, td)})
	}
	if len(d.flds) > fieldScanMax {
		fieldOf := make(map[string]int, len(d.flds))
		for i := range d.flds {
			fieldOf[d.flds[i].name] = i
		}
		d.rareParts().fieldOf = fieldOf
	}
}

// field is a record's resolved field as the checker keeps it.
type field struct {
	name string
	typ  *ir.Type // shared: never written through
}

// typeKey names a type: its kind, name, optionality, its shared element
// type (for a list or map) and its shared rules decide the whole of it.
type typeKey struct {
	kind  ir.Kind
	name  string
	opt   bool
	elem  *ir.Type
	rules *ir.Rules
}

// rulesKey is the whole of an ir.Rules, by value.
type rulesKey struct {
	min, max         string
	hasMin, hasMax   bool
	minLen, maxLen   int
	hasMinL, hasMaxL bool
	patterns         string // joined by NUL
	nPatterns        int
	format           string
}

// sharedRules is r kept once per check: the same rules (`{ min: 0 }`,
// `{ max_length: 500 }`) are one value wherever they are given, so every
// field that gives them points at one copy. What it returns is never
// written through (applyRules copies a type's rules before tightening
// them).
func (c *checker) sharedRules(r ir.Rules) *ir.Rules {
	k := rulesKey{format: r.Format, nPatterns: len(r.Patterns)}
	if r.Min != nil {
		k.min, k.hasMin = *r.Min, true
	}
	if r.Max != nil {
		k.max, k.hasMax = *r.Max, true
	}
	if r.MinLength != nil {
		k.minLen, k.hasMinL = *r.MinLength, true
	}
	if r.MaxLength != nil {
		k.maxLen, k.hasMaxL = *r.MaxLength, true
	}
	if len(r.Patterns) > 0 {
		k.patterns = strings.Join(r.Patterns, "\x00")
	}
	if p, ok := c.rules[k]; ok {
		return p
	}
	if c.rules == nil {
		c.rules = map[rulesKey]*ir.Rules{}
	}
	p := new(ir.Rules)
	*p = r
	c.rules[k] = p
	return p
}

// shared is t kept once per check: a type is the same value wherever it
// is used (an Int?, an Address, a List<Line>, an Int { min: 0 } with its
// rules shared by sharedRules), so every use points at one copy. What it
// returns is never written through.
//
// d is the declaration whose type t is (typeOfDecl), or nil: a declared
// type keeps its two shared copies (as is, and optional) itself, so the
// map holds only the built-in types and the lists and maps.
func (c *checker) shared(t ir.Type, d *decl) *ir.Type {
	if d != nil && t.Rules == d.typ.Rules && t.Elem == d.typ.Elem {
		// Copies, not &d.typ: a program's types must not hold the
		// checker's declarations (and through them every tree) alive.
		i := 0
		if t.Optional {
			i = 1
		}
		if d.shared == nil {
			d.shared = new([2]*ir.Type)
		}
		if d.shared[i] == nil {
			d.shared[i] = new(ir.Type)
			*d.shared[i] = t
		}
		return d.shared[i]
	}
	k := typeKey{kind: t.Kind, name: t.Name, opt: t.Optional, elem: t.Elem, rules: t.Rules}
	if p, ok := c.types[k]; ok {
		return p
	}
	if c.types == nil {
		c.types = map[typeKey]*ir.Type{}
	}
	p := new(ir.Type)
	*p = t
	c.types[k] = p
	return p
}

// fieldType is the shared type of a field of type t, itself of
// declaration d's type (or d is nil). A field of a declared type as it is
// points at the declaration's own type: fieldAt copies a field's type out,
// so that pointer never leaves the checker (a program's types must not
// hold its declarations, and through them every tree, alive).
func (c *checker) fieldType(t ir.Type, d *decl) *ir.Type {
	if d != nil && !t.Optional && t.Rules == d.typ.Rules && t.Elem == d.typ.Elem {
		return &d.typ // resolved: never written again
	}
	return c.shared(t, d)
}

// fieldAt is the record's i-th field.
func (d *decl) fieldAt(i int) ir.Field {
	return ir.Field{Name: d.flds[i].name, WireName: d.wireAt(i), Type: *d.flds[i].typ}
}

// wireAt is the record's i-th field's wire name, "" when it gives none.
func (d *decl) wireAt(i int) string {
	if d.rare == nil {
		return ""
	}
	for _, w := range d.rare.wires {
		if w.field == i {
			return w.name
		}
	}
	return ""
}

// fields are the record's fields (nil when it was never resolved), made
// on each call.
func (d *decl) fields() []ir.Field {
	if d.flds == nil {
		return nil
	}
	out := make([]ir.Field, len(d.flds))
	for i := range d.flds {
		out[i] = d.fieldAt(i)
	}
	return out
}

// fieldFailed reports whether the record declares the field with a type
// that did not resolve: its problem is reported there, and a use of the
// field is not reported again.
func (d *decl) fieldFailed(name string) bool {
	for _, n := range d.failedFields() {
		if n == name {
			return true
		}
	}
	return false
}

// fieldScanMax: a record of up to so many fields is searched field by
// field; a larger one gets a map. A map a record cost some 40 bytes a field
// of a check's memory, for lookups a short scan does as fast.
const fieldScanMax = 16

// field is the record's field of that name, or nil.
func (d *decl) field(name string) *ir.Field {
	if d.rare != nil && d.rare.fieldOf != nil {
		if i, ok := d.rare.fieldOf[name]; ok {
			f := d.fieldAt(i)
			return &f
		}
		return nil
	}
	for i := range d.flds {
		if d.flds[i].name == name {
			f := d.fieldAt(i)
			return &f
		}
	}
	return nil
}

// firstField finds an earlier field of the same name (records are small:
// a scan costs less than a map).
func firstField(fields []*ast.Field, name string) *ast.Field {
	for _, f := range fields {
		if f.Name.Name == name {
			return f
		}
	}
	return nil
}

// typeOf resolves a type reference. ok is false when the type is unknown;
// the problem has been reported (or was reported before, for a name whose
// declaration failed).
func (c *checker) typeOf(s scope, f *ast.File, te *ast.TypeExpr, what string) (ir.Type, bool) {
	t, _, ok := c.typeOfDecl(s, f, te, what)
	return t, ok
}

// typeOfDecl is typeOf with the declaration whose type it is, as it is
// (bar its optionality), when te names one: nil for a built-in type.
func (c *checker) typeOfDecl(s scope, f *ast.File, te *ast.TypeExpr, what string) (ir.Type, *decl, bool) {
	t, d, ok := c.typeOfBase(s, f, te, what)
	if ok && te.Optional {
		t.Optional = true
	}
	return t, d, ok
}

func (c *checker) typeOfBase(s scope, f *ast.File, te *ast.TypeExpr, what string) (ir.Type, *decl, bool) {
	name := te.Name.String()
	if len(te.Name.Parts) == 1 {
		switch name {
		case "List":
			if len(te.Args) != 1 {
				c.add(diag.TypeArgumentsInvalid, f.Range(te.Span()), "`List` takes one type: `List<T>`")
				return ir.Type{}, nil, false
			}
			elem, ed, ok := c.typeOfDecl(s, f, te.Args[0], what)
			if !ok {
				return ir.Type{}, nil, false
			}
			return ir.Type{Kind: ir.List, Elem: c.shared(elem, ed)}, nil, true
		case "Map":
			if len(te.Args) != 2 {
				c.add(diag.TypeArgumentsInvalid, f.Range(te.Span()), "`Map` takes a key and a value type: `Map<Text, T>`")
				return ir.Type{}, nil, false
			}
			if te.Args[0].Name.String() != "Text" || te.Args[0].Optional || len(te.Args[0].Args) > 0 {
				c.add(diag.TypeArgumentsInvalid, f.Range(te.Args[0].Span()), "a map's keys are `Text`, not `%s`", te.Args[0].Name.String()).
					Suggest("Text")
				return ir.Type{}, nil, false
			}
			elem, ed, ok := c.typeOfDecl(s, f, te.Args[1], what)
			if !ok {
				return ir.Type{}, nil, false
			}
			return ir.Type{Kind: ir.Map, Elem: c.shared(elem, ed)}, nil, true
		}
		if k, ok := scalarKind(name); ok {
			if len(te.Args) > 0 {
				c.add(diag.TypeArgumentsInvalid, f.Range(te.Span()), "`%s` takes no type arguments", name)
				return ir.Type{}, nil, false
			}
			return ir.Type{Kind: k}, nil, true
		}
	}
	r := c.lookup(s, &te.Name)
	if r.silenced {
		return ir.Type{}, nil, false
	}
	if r.decl == nil || !isTypeLike(r.decl) {
		c.unknownType(s, f, te)
		return ir.Type{}, nil, false
	}
	if len(te.Args) > 0 {
		c.add(diag.TypeArgumentsInvalid, f.Range(te.Span()), "`%s` takes no type arguments", name)
		return ir.Type{}, nil, false
	}
	d := r.decl
	c.refName(f, &te.Name, d)
	if d.state == resolving && d.kind == kindType {
		c.add(diag.TypeCycle, f.Range(te.Name.Span()), "`%s` refers to itself through its own definition", name).
			WithHelp("a type refines a scalar base; break the loop")
		d.failed = true
		return ir.Type{}, nil, false
	}
	c.resolveDecl(d)
	if d.failed && d.kind == kindType {
		return ir.Type{}, nil, false
	}
	t := d.typ
	t.Optional = false
	return t, d, true
}

func (c *checker) unknownType(s scope, f *ast.File, te *ast.TypeExpr) {
	q := te.Name
	name := q.String()
	if c.foreignType(f, te) {
		return
	}
	cands := append(builtinNames(), c.candidates(s, isTypeLike)...)
	sugg := suggest(name, cands)
	foreign := ""
	if sugg == "" && len(q.Parts) == 1 {
		// `Strng`: a typo of another language's name is answered as that name.
		if foreign = suggest(name, sortedKeys(foreignScalars)); foreign != "" {
			sugg = foreignScalars[foreign]
		}
	}
	d := c.add(diag.TypeUnknownName, f.Range(q.Span()), "there is no type `%s`", name).Suggest(sugg)
	if foreign != "" {
		d.WithHelp("`" + foreign + "`, as other languages call it, is `" + sugg + "` here; the built-in types are Text, Int, Decimal, Bool, Uuid, Instant, Email, Url, Duration, List<T>, Map<Text, T>, and `T?` for one that may be none")
	} else if other := c.elsewhere(s, name, isTypeLike); other != nil {
		d.WithHelp(fmt.Sprintf("`%s` is declared in `%s`; bring it in with `use %s { %s }`", name, other.home.qualifier, other.home.qualifier, name))
	} else {
		d.WithHelp("declare it with `type`, `enum` or `value`, or use a built-in type: Text, Int, Decimal, Bool, Uuid, Instant, Email, Url, Duration, List<T>, Map<Text, T>")
	}
}

// foreignScalars are other languages' names for the built-in scalars.
var foreignScalars = map[string]string{
	"String": "Text", "string": "Text", "str": "Text", "Str": "Text", "char": "Text", "varchar": "Text",
	"int": "Int", "integer": "Int", "Integer": "Int", "long": "Int", "Long": "Int", "int32": "Int", "int64": "Int", "i32": "Int", "i64": "Int",
	"float": "Decimal", "Float": "Decimal", "double": "Decimal", "Double": "Decimal", "number": "Decimal", "Number": "Decimal", "decimal": "Decimal", "f64": "Decimal", "BigDecimal": "Decimal",
	"bool": "Bool", "boolean": "Bool", "Boolean": "Bool",
	"uuid": "Uuid", "UUID": "Uuid", "Guid": "Uuid", "GUID": "Uuid",
	"DateTime": "Instant", "datetime": "Instant", "Timestamp": "Instant", "timestamp": "Instant", "Time": "Instant", "Date": "Instant",
	"URL": "Url", "URI": "Url", "Uri": "Url", "url": "Url",
	"email": "Email", "EMAIL": "Email",
	"duration": "Duration", "TimeSpan": "Duration",
}

// foreignGenerics are other languages' generic types and how this one
// writes them.
var foreignGenerics = map[string]string{
	"Array": "List", "Vec": "List", "Seq": "List", "Sequence": "List", "Set": "List", "Collection": "List", "list": "List", "array": "List",
	"Optional": "?", "Option": "?", "Maybe": "?", "Nullable": "?",
	"Dict": "Map", "Dictionary": "Map", "HashMap": "Map", "Record": "Map", "Object": "Map", "map": "Map", "dict": "Map",
}

// foreignType answers a type written as another language writes it
// (`String`, `Array<T>`, `Optional<T>`) with this language's form, and
// reports whether it did.
func (c *checker) foreignType(f *ast.File, te *ast.TypeExpr) bool {
	if len(te.Name.Parts) != 1 {
		return false
	}
	name := te.Name.String()
	var want, why string
	if to, ok := foreignScalars[name]; ok && len(te.Args) == 0 {
		want, why = to, "`"+name+"` is another language's name: this one writes `"+to+"`"
	} else if to, ok := foreignGenerics[name]; ok && len(te.Args) > 0 {
		args := make([]string, len(te.Args))
		for i, a := range te.Args {
			args[i] = f.Range(a.Span()).Text()
		}
		switch to {
		case "?":
			if len(args) != 1 {
				return false
			}
			want, why = args[0]+"?", "a type that may be none is written with `?`: `"+args[0]+"?`"
		case "Map":
			want = "Map<Text, " + args[len(args)-1] + ">"
			why = "a map is `Map<Text, T>`: its keys are text"
		default:
			if len(args) != 1 {
				return false
			}
			want, why = to+"<"+args[0]+">", "a list is `List<T>`"
		}
	} else {
		return false
	}
	if te.Optional && !strings.HasSuffix(want, "?") {
		want += "?"
	}
	c.add(diag.TypeUnknownName, f.Range(te.Span()), "there is no type `%s`", name).
		Suggest(want).WithFix(want).
		WithHelp(why + "; the built-in types are Text, Int, Decimal, Bool, Uuid, Instant, Email, Url, Duration, List<T>, Map<Text, T>, and `T?` for one that may be none")
	return true
}

var ruleKeys = []string{"min", "max", "min_length", "max_length", "pattern", "format"}

// rulesAnd is ruleKeys and one extra key, for the extras the callers pass
// (read-only once built).
var rulesAnd = map[string][]string{
	"wire_name": append(ruleKeys[:len(ruleKeys):len(ruleKeys)], "wire_name"),
	"default":   append(ruleKeys[:len(ruleKeys):len(ruleKeys)], "default"),
}

// applyRules reads a rules block into t's rules, reporting rules that do not
// fit its base. The member named extra (none: "") is the caller's, returned
// when given.
func (c *checker) applyRules(f *ast.File, t *ir.Type, b *ast.Block, extra string) *ast.Member {
	if b == nil {
		return nil // most fields have no rules: nothing to read
	}
	known := ruleKeys
	if extra != "" {
		known = rulesAnd[extra]
		if known == nil {
			known = append(append(make([]string, 0, len(ruleKeys)+1), ruleKeys...), extra)
		}
	}
	// The members by their key's index in known: no map per rules block.
	var given [8]*ast.Member
	ms := c.memberList(f, b, diag.TypeConstraintInvalid, "in this type's rules", known, given[:0])
	var out *ast.Member
	if extra != "" {
		out = ms[len(ruleKeys)]
	}
	var rules ir.Rules
	if t.Rules != nil {
		rules = *t.Rules
		rules.Patterns = append([]string(nil), t.Rules.Patterns...)
	}
	base := t.Kind
	for i, k := range ruleKeys {
		m := ms[i]
		if m == nil {
			continue
		}
		rng := f.Range(m.Key.Span())
		switch k {
		case "min", "max":
			if base != ir.Int && base != ir.Decimal {
				c.add(diag.TypeConstraintInvalid, rng, "`%s` applies to Int and Decimal, not %s", k, kindName(base))
				continue
			}
			text, ok := canonicalInt(m.Value)
			if !ok {
				num, isNum := numberLiteral(m.Value)
				if !isNum || base == ir.Int && !num.IsInt() {
					want := "a number"
					if base == ir.Int {
						want = "a whole number"
					}
					c.add(diag.TypeConstraintInvalid, f.Range(m.Value.Span()), "`%s` takes %s", k, want)
					continue
				}
				text = ratText(num)
			}
			if k == "min" {
				rules.Min = tighter(rules.Min, text, 1)
			} else {
				rules.Max = tighter(rules.Max, text, -1)
			}
		case "min_length", "max_length":
			if base != ir.Text && base != ir.Email && base != ir.Url {
				c.add(diag.TypeConstraintInvalid, rng, "`%s` applies to Text, Email and Url, not %s", k, kindName(base))
				continue
			}
			n, ok := lengthLiteral(m.Value)
			if !ok {
				c.add(diag.TypeConstraintInvalid, f.Range(m.Value.Span()), "`%s` takes a whole number of characters, 0 or more", k)
				continue
			}
			if k == "min_length" {
				if rules.MinLength == nil || n > *rules.MinLength {
					rules.MinLength = intPtr(n)
				}
			} else if rules.MaxLength == nil || n < *rules.MaxLength {
				rules.MaxLength = intPtr(n)
			}
		case "pattern":
			if base != ir.Text {
				c.add(diag.TypeConstraintInvalid, rng, "`pattern` applies to Text, not %s", kindName(base))
				continue
			}
			if m.Value.Text == nil {
				c.add(diag.TypeConstraintInvalid, f.Range(m.Value.Span()), "`pattern` takes a text holding a regular expression")
				continue
			}
			p := m.Value.TextValue()
			err, seen := c.patterns[p]
			if !seen {
				// Parse it alone first: `a)|(b` only balances once wrapped.
				_, err = syntax.Parse(p, syntax.Perl)
				if err == nil {
					_, err = regexp.Compile("^(?:" + p + ")$")
				}
				c.patterns[p] = err
			}
			if err != nil {
				c.add(diag.TypeConstraintInvalid, f.Range(m.Value.Span()), "the pattern does not compile: %s", reError(err)).
					WithHelp("patterns are RE2 regular expressions that must match the whole text")
				continue
			}
			rules.Patterns = append(rules.Patterns, p)
		case "format":
			if base != ir.Text {
				c.add(diag.TypeConstraintInvalid, rng, "`format` applies to Text, not %s", kindName(base))
				continue
			}
			if refName(m.Value) != "email" && m.Value.TextValue() != "email" {
				c.add(diag.TypeConstraintInvalid, f.Range(m.Value.Span()), "`format` takes `email`, the one format there is")
				continue
			}
			rules.Format = "email"
		}
	}
	if rules.Min != nil && rules.Max != nil && cmpText(*rules.Min, *rules.Max) > 0 {
		c.add(diag.TypeConstraintInvalid, f.Range(b.Span()), "`min` %s is above `max` %s: no value fits", *rules.Min, *rules.Max).
			WithHelp("make `min` at most `max`; they bound the value from below and above")
	}
	if rules.MinLength != nil && rules.MaxLength != nil && *rules.MinLength > *rules.MaxLength {
		c.add(diag.TypeConstraintInvalid, f.Range(b.Span()), "`min_length` %d is above `max_length` %d: no text fits", *rules.MinLength, *rules.MaxLength)
	}
	if rules.Min != nil || rules.Max != nil || rules.MinLength != nil || rules.MaxLength != nil || len(rules.Patterns) > 0 || rules.Format != "" {
		t.Rules = c.sharedRules(rules) // on the heap only when there are rules
	}
	return out
}

func reError(err error) string {
	if re, ok := err.(*syntax.Error); ok {
		return string(re.Code)
	}
	return err.Error()
}

func kindName(k ir.Kind) string {
	switch k {
	case ir.RecordK:
		return "a record"
	case ir.List:
		return "a list"
	case ir.Map:
		return "a map"
	case ir.Enum:
		return "an enum"
	}
	for name, kk := range scalarKinds {
		if kk == k {
			return name
		}
	}
	return string(k)
}

// canonicalInt is a whole-number literal's text as ratText writes it, when
// the literal already is that text (no leading zero, no -0) and fits an
// int64: the literal itself, without big's arithmetic.
func canonicalInt(e *ast.Expr) (string, bool) {
	if e == nil || e.Number == nil {
		return "", false
	}
	s := *e.Number
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return "", false
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return "", false
	}
	return s, true
}

// lengthLiteral reads min_length and max_length: a whole number, 0 or more.
func lengthLiteral(e *ast.Expr) (int, bool) {
	if e == nil || e.Number == nil {
		return 0, false
	}
	if n, err := strconv.ParseInt(*e.Number, 10, 64); err == nil {
		return int(n), n >= 0 && int64(int(n)) == n
	}
	num, ok := numberLiteral(e)
	if !ok || !num.IsInt() || num.Sign() < 0 || !num.Num().IsInt64() {
		return 0, false
	}
	return int(num.Num().Int64()), true
}

// smallInts are the lengths most rules give, shared rather than allocated
// (a rule's bounds are read, never written through).
var smallInts = func() (out [1025]int) {
	for i := range out {
		out[i] = i
	}
	return
}()

func intPtr(n int) *int {
	if n >= 0 && n < len(smallInts) {
		return &smallInts[n]
	}
	return &n
}

// numberLiteral reads a Number token exactly.
func numberLiteral(e *ast.Expr) (*big.Rat, bool) {
	if e == nil || e.Number == nil {
		return nil, false
	}
	if n, err := strconv.ParseInt(*e.Number, 10, 64); err == nil {
		return new(big.Rat).SetInt64(n), true // the common case, without big's parser
	}
	r, ok := new(big.Rat).SetString(*e.Number)
	return r, ok
}

func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// exact decimal text for a terminating fraction (all literals are)
	return r.FloatString(decimalPlaces(r))
}

func decimalPlaces(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	n := 0
	ten := big.NewInt(10)
	for d.Cmp(big.NewInt(1)) > 0 && n < 40 {
		d.Quo(d, ten)
		n++
	}
	return n
}

// tighter keeps the stricter bound: dir 1 keeps the larger (min), -1 the smaller (max).
func tighter(old *string, text string, dir int) *string {
	if old == nil || cmpText(text, *old)*dir > 0 {
		return &text
	}
	return old
}

func cmpText(a, b string) int {
	if x, err := strconv.ParseInt(a, 10, 64); err == nil {
		if y, err := strconv.ParseInt(b, 10, 64); err == nil {
			return cmp.Compare(x, y) // whole numbers, the common case, without big
		}
	}
	ra, _ := new(big.Rat).SetString(a)
	rb, _ := new(big.Rat).SetString(b)
	if ra == nil || rb == nil {
		return 0
	}
	return ra.Cmp(rb)
}

// refName is a bare single-name reference's name (true, none, email), or "".
func refName(e *ast.Expr) string {
	if e == nil || e.Ref == nil || e.Ref.Call != nil || len(e.Ref.Path.Parts) != 1 {
		return ""
	}
	return e.Ref.Path.Parts[0].Name
}

// parseInt64 reads a whole-number literal.
func parseInt64(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
