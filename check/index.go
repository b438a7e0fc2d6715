package check

import (
	"cmp"
	"encoding/json"
	"iter"
	"slices"
	"sort"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// The index is what an editor asks of a checked project: every name the
// check declared, with where it is written and what it resolved to (a
// type with its rules, a record's fields, a config field's binding), and
// every use of a name with the declaration it found. The language server
// answers hover, definition, references, rename, symbols and completion
// from it. It is filled only by CheckIndexed, as a side record of the one
// resolution the check does anyway: nothing is resolved twice, and a plain
// Check pays nothing for it.

// SymbolKind says what a symbol declares.
type SymbolKind int

const (
	SymModule SymbolKind = iota
	SymType
	SymEnum
	SymVariant
	SymValue
	SymEvent
	SymField
	SymConfig
	SymConfigField
	SymStore
	SymConnection
	SymQueue
	SymSubscriber
	SymBinding // a handler's event binding: on OrderShipped(shipment)
	SymPackage
	SymSetting
	SymResource
	SymOperation
)

var symbolKindWords = [...]string{"module", "type", "enum", "variant", "value", "event", "field", "config",
	"config field", "store", "connection", "queue", "subscriber", "binding", "package", "setting", "resource", "operation"}

func (k SymbolKind) String() string { return symbolKindWords[k] }

// Symbol is one declared name.
type Symbol struct {
	Kind SymbolKind
	Name string
	// Ident is where the name is written; Decl is the whole declaration.
	// A module's Ident is the file's start.
	Ident, Decl source.Range
	Parent      *Symbol // a field's record, a config field's config, a setting's or resource's package, an operation's resource
	Public      bool
	// Package is the directory of the package the symbol is declared in
	// (AmazonSqs.v2012_11_05), "" in the app. For a connection it is the
	// package it uses.
	Package string
	// Type is the resolved type of a field, config field, setting or type
	// declaration (nil when it did not resolve).
	Type *ir.Type
	// Fields are a record's resolved fields; Variants an enum's.
	Fields   []ir.Field
	Variants []string
	// Config is a config field's binding, type and whether it is secret.
	Config *ir.ConfigField
	// Default is a setting's declared default (JSON), nil without one.
	Default json.RawMessage
	// ID is a record's or type's program-wide id (stock/events.OrderShipped),
	// as ir.Type.Name gives it.
	ID string
	// Scheme is a package's credential scheme (aws_sigv4, bearer, ...).
	Scheme string
	// Input and Output are an operation's records; Op is the operation.
	Input, Output *Symbol
	Op            *ir.Operation
	// Children are the symbols declared inside: fields, variants, config
	// fields, settings, operations, handlers' bindings.
	Children []*Symbol

	decl *decl // the checker's declaration, read when the check ends
}

// Ref is one use of a name: At is the identifier (or dotted name) as written.
type Ref struct {
	At     source.Range
	Target *Symbol
}

// Named is a name visible in a file, with what it names.
type Named struct {
	Name   string
	Symbol *Symbol
}

// Index is a checked project's symbols and references.
type Index struct {
	// Modules are the app's files by path (app.jadpo, stock/events.jadpo).
	Modules map[string]*Symbol
	// Packages are the installed packages by directory name.
	Packages map[string]*Symbol
	// Reused counts the modules a Session took from its last check;
	// AppReused says it took the app-level checks' results too.
	Reused    int
	AppReused bool

	fresh   []*Symbol        // the symbols this check made (not taken from a Session)
	taken   [][]*Symbol      // the symbols taken from a Session, a module's (or the app's) at a time
	flat    []Ref            // as recorded, during the check
	flatLen int              // how many were recorded
	refs    map[string][]Ref // by file path, in position order
	modules map[string]*module
	public  []Named // the packages' public declarations, as Package.Name
}

// Symbols lists every declared name: what a Session took, then what the
// check declared.
func (ix *Index) Symbols() iter.Seq[*Symbol] {
	return func(yield func(*Symbol) bool) {
		for _, run := range ix.taken {
			for _, s := range run {
				if !yield(s) {
					return
				}
			}
		}
		for _, s := range ix.fresh {
			if !yield(s) {
				return
			}
		}
	}
}

func newIndex() *Index {
	return &Index{Modules: map[string]*Symbol{}, Packages: map[string]*Symbol{}, refs: map[string][]Ref{}}
}

// CheckIndexed is Check that also fills res.Index.
func CheckIndexed(p *project.Project) Result {
	c := newChecker(p)
	c.idx = newIndex()
	return c.finish(p, "")
}

// RefsIn lists the uses of names written in the file at path, in position order.
func (ix *Index) RefsIn(path string) []Ref { return ix.refs[path] }

// InScope lists the type-like names the file at path can write: its own
// declarations, what its `use` lines bring in, and the installed
// packages' public declarations as Package.Name.
func (ix *Index) InScope(path string) []Named {
	var m *module
	for _, mm := range ix.modules {
		if mm.file.Source.Path == path {
			m = mm
			break
		}
	}
	var names []Named
	if m != nil {
		for _, name := range sortedKeys(m.ns.decls) {
			if s := m.ns.decls[name].sym; s != nil {
				names = append(names, Named{name, s})
			}
		}
		for _, name := range sortedKeys(m.imports) {
			if d := m.imports[name]; d != nil && d.sym != nil {
				names = append(names, Named{name, d.sym})
			}
		}
	}
	return append(names, ix.public...)
}

// sym is d's symbol (made on first use), nil when not indexing.
func (c *checker) sym(d *decl) *Symbol {
	if c.idx == nil || d == nil {
		return nil
	}
	if d.sym == nil {
		kind := map[declKind]SymbolKind{kindType: SymType, kindEnum: SymEnum, kindValue: SymValue, kindEvent: SymEvent,
			kindConfig: SymConfig, kindStore: SymStore, kindConnection: SymConnection, kindQueue: SymQueue, kindSubscriber: SymSubscriber}[d.kind]
		d.sym = c.newSym(kind, d.name, d.rng(), d.file.Range(d.node.Span()), nil)
		d.sym.Public, d.sym.decl = d.public, d
		if isTypeLike(d) {
			d.sym.ID = d.id()
		}
		if d.home != nil && d.home.pkg != nil {
			d.sym.Package = d.home.pkg.dir
		}
	}
	return d.sym
}

func (c *checker) newSym(kind SymbolKind, name string, ident, whole source.Range, parent *Symbol) *Symbol {
	s := &Symbol{Kind: kind, Name: name, Ident: ident, Decl: whole, Parent: parent}
	if parent != nil {
		s.Package = parent.Package
		parent.Children = append(parent.Children, s)
	}
	c.idx.fresh = append(c.idx.fresh, s)
	return s
}

// ref records a use of a name.
func (c *checker) ref(f *ast.File, span source.Span, s *Symbol) {
	if c.idx == nil || s == nil || f == nil {
		return
	}
	c.idx.flat = append(c.idx.flat, Ref{At: f.Range(span), Target: s})
}

// refName records a possibly qualified name's use: Package.Event is a use
// of the package (its first part) and of the declaration (its last).
func (c *checker) refName(f *ast.File, q *ast.QualName, d *decl) {
	if c.idx == nil || d == nil || q == nil || len(q.Parts) == 0 {
		return
	}
	if len(q.Parts) == 2 && d.home != nil && d.home.pkg != nil {
		c.ref(f, q.Parts[0].Span(), c.pkgSym(d.home.pkg))
	}
	c.ref(f, q.Parts[len(q.Parts)-1].Span(), c.sym(d))
}

// pkgSym is an installed package's symbol, at its header's name.
func (c *checker) pkgSym(p *pkg) *Symbol {
	if c.idx == nil || p == nil {
		return nil
	}
	if s := c.idx.Packages[p.dir]; s != nil {
		return s
	}
	var ident, whole source.Range
	if h := p.proj.Header; h != nil {
		whole = h.Range(source.Span{Start: 0, End: len(h.Source.Content)})
		ident = h.Range(source.Span{})
		for _, d := range h.Decls {
			if d.Package != nil {
				ident = h.Range(d.Package.Name.Span())
				break
			}
		}
	}
	s := c.newSym(SymPackage, p.dir, ident, whole, nil)
	s.Package = p.dir
	c.idx.Packages[p.dir] = s
	return s
}

// moduleSym is an app file's symbol, at its start.
func (c *checker) moduleSym(m *module) *Symbol {
	if c.idx == nil || m == nil {
		return nil
	}
	path := m.file.Source.Path
	if s := c.idx.Modules[path]; s != nil {
		return s
	}
	s := c.newSym(SymModule, m.path, m.file.Range(source.Span{}), m.file.Range(source.Span{End: len(m.file.Source.Content)}), nil)
	c.idx.Modules[path] = s
	return s
}

// fieldSym is a record's, config's or settings' field symbol.
func (c *checker) fieldSym(kind SymbolKind, f *ast.File, fl *ast.Field, parent *Symbol) *Symbol {
	if c.idx == nil {
		return nil
	}
	return c.newSym(kind, fl.Name.Name, f.Range(fl.Name.Span()), f.Range(fl.Span()), parent)
}

// fieldOfSym is the symbol of record d's field name, nil when not indexing.
func (c *checker) fieldOfSym(d *decl, name string) *Symbol {
	if c.idx == nil || d == nil {
		return nil
	}
	for _, ch := range c.sym(d).Children {
		if ch.Name == name {
			return ch
		}
	}
	return nil
}

// finishIndex copies what resolution found into the symbols and lists
// each file's names in scope.
func (c *checker) finishIndex() {
	ix := c.idx
	for _, s := range ix.fresh {
		d := s.decl
		if d == nil {
			continue
		}
		switch d.kind {
		case kindType, kindEnum:
			if d.state == resolved && !d.failed && s.Type == nil {
				t := d.typ
				s.Type = &t
				s.Variants = d.typ.Variants
			}
		case kindValue, kindEvent:
			s.Fields = d.fields()
		}
	}
	ix.modules = c.modules
	for _, pn := range sortedKeys(c.pkgs) {
		p := c.pkgs[pn]
		c.pkgSym(p).Scheme = string(p.provider.Credential)
		for _, name := range sortedKeys(p.ns.decls) {
			if d := p.ns.decls[name]; d.public {
				ix.public = append(ix.public, Named{p.name + "." + name, c.sym(d)})
			}
		}
	}
	count := map[string]int{}
	for _, r := range ix.flat {
		count[r.At.File.Path]++
	}
	for _, r := range ix.flat {
		refs := ix.refs[r.At.File.Path]
		if refs == nil {
			refs = make([]Ref, 0, count[r.At.File.Path])
		}
		ix.refs[r.At.File.Path] = append(refs, r)
	}
	ix.flatLen, ix.flat = len(ix.flat), nil
	byStart := func(a, b Ref) int { return cmp.Compare(a.At.Span.Start, b.At.Span.Start) }
	for _, refs := range ix.refs {
		if !slices.IsSortedFunc(refs, byStart) { // recorded in source order, mostly
			slices.SortFunc(refs, byStart)
		}
	}
	for path, m := range c.modules {
		if m.reused && (c.app == nil || c.app.taken[path] != m) {
			ix.refs[m.file.Source.Path] = c.session.saved[path].refs
		}
	}
	if c.app != nil {
		for file, refs := range c.app.refs {
			ix.refs[file] = refs
		}
	}
}

// At is the reference or declared name at a byte offset of a file, nil
// when there is none: a use resolves to its declaration, a declared name
// to its own symbol.
func (ix *Index) At(path string, offset int) (*Symbol, source.Range) {
	if ix == nil {
		return nil, source.Range{}
	}
	refs := ix.refs[path]
	i := sort.Search(len(refs), func(i int) bool { return refs[i].At.Span.End >= offset })
	for ; i < len(refs) && refs[i].At.Span.Start <= offset; i++ {
		if r := refs[i]; offset <= r.At.Span.End {
			return r.Target, r.At
		}
	}
	for s := range ix.Symbols() {
		if s.Kind != SymModule && s.Ident.File != nil && s.Ident.File.Path == path && s.Ident.Span.Start <= offset && offset <= s.Ident.Span.End {
			return s, s.Ident
		}
	}
	return nil, source.Range{}
}

// RefsTo lists the uses of s, in file and position order.
func (ix *Index) RefsTo(s *Symbol) []source.Range {
	var out []source.Range
	for _, path := range sortedKeys(ix.refs) {
		for _, r := range ix.refs[path] {
			if r.Target == s {
				out = append(out, r.At)
			}
		}
	}
	return out
}
