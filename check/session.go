package check

import (
	"slices"
	"strings"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
)

// Session checks one project again and again, as the language server does
// after each edit, and keeps between two checks what the first resolved of
// each module that nothing can have changed: a module is taken as it was
// (its declarations with their resolved types, its symbols and its
// references) when its file's tree is the same one (the caller's parse
// keeps the tree of a file whose content did not change), every module its
// `use` lines name is taken too, it had no diagnostic, and it names no
// package's declaration and declares nothing app-wide (a config, store,
// connection, queue or subscriber, which are checked against each other).
// Such a module's resolution depends on nothing else, so checking it again
// would give the same result. A module whose tree is the same but which
// uses a module that is checked again (its file changed) is taken too
// when every name it imports of that module is what it was: the same
// kind, public, and resolved to the same type and fields (an edit to a
// comment, or to what the module keeps to itself, changes none); its
// `use` lines are bound again to the new declarations and its references
// point to their symbols. The app itself and every other module are
// checked as Check checks them. The checker still runs nothing.
//
// The modules a check takes are the last check's own objects, bound
// anew: a Result's Index is read until the next Check, not after.
type Session struct {
	saved map[string]*savedModule
	// flat counted the references the last check recorded, to size this one's.
	flat int
	// decls counts each parsed file's declarations (declarations).
	decls map[*ast.File]declCount
	gen   int
	// app is the last check's app-level part (session_app.go), nil when
	// it cannot be taken.
	app *appSnapshot
}

type savedModule struct {
	m    *module
	sym  *Symbol // the module's own
	syms []*Symbol
	refs []Ref
}

type declCount struct{ n, gen int }

// NewSession starts a session with nothing kept.
func NewSession() *Session {
	return &Session{saved: map[string]*savedModule{}, decls: map[*ast.File]declCount{}}
}

// declarations is Project.Declarations, counting again only the files
// whose tree is new.
func (c *checker) declarations() int {
	s := c.session
	if s == nil {
		return c.proj.Declarations()
	}
	s.gen++
	n := 0
	for _, f := range c.proj.Parsed {
		dc, ok := s.decls[f]
		if !ok {
			dc.n = f.Unparsed // as Project.Declarations counts
			for _, d := range f.Decls {
				if d.Use == nil {
					dc.n++
				}
			}
		}
		dc.gen = s.gen
		s.decls[f] = dc
		n += dc.n
	}
	for f, dc := range s.decls {
		if dc.gen != s.gen {
			delete(s.decls, f)
		}
	}
	return n
}

// Check is CheckIndexed, reusing what the session kept.
func (s *Session) Check(p *project.Project) Result {
	if s.app != nil && s.app.fits(p) {
		if res, ok := s.check(p, s.app); ok {
			return res
		}
	}
	res, _ := s.check(p, nil)
	return res
}

// check is one check, taking the app-level part app when not nil: false
// when it did not fit after all.
func (s *Session) check(p *project.Project, app *appSnapshot) (Result, bool) {
	c := newChecker(p)
	c.idx = newIndex()
	c.session = s
	// Sized for what the project holds: each check fills them anew.
	n := len(p.Modules) + 1
	c.modules = make(map[string]*module, n)
	c.idx.Modules, c.idx.refs = make(map[string]*Symbol, n), make(map[string][]Ref, n+len(p.Packages)*8)
	c.idx.taken = make([][]*Symbol, 0, n)
	c.reusable, c.maybe = s.reusableModules(p)
	c.idx.flat = make([]Ref, 0, s.flat+s.flat/8)
	if app != nil {
		c.restoreApp(app)
	}
	res := c.finish(p, "")
	if c.aborted {
		s.app = nil
		return res, false
	}
	s.flat = res.Index.flatLen
	s.snapshotApp(c) // before keep, which lets go of the symbols made
	s.keep(c)
	return res, true
}

// reusableModules are the kept modules whose tree and whose uses' trees
// are the ones p holds, and (maybe) those whose own tree is.
func (s *Session) reusableModules(p *project.Project) (sure, maybe map[string]*module) {
	const (
		unknown = iota
		visiting
		decided
	)
	state := make(map[string]int, len(s.saved))
	ok := make(map[string]bool, len(s.saved))
	var can func(path string) bool
	can = func(path string) bool {
		sm := s.saved[path]
		if sm == nil || state[path] == visiting {
			return false
		}
		if state[path] == decided {
			return ok[path]
		}
		state[path] = visiting
		r := p.Modules[path] == sm.m.file
		for _, t := range sm.m.targets {
			if r && !can(t) {
				r = false
			}
		}
		state[path], ok[path] = decided, r
		return r
	}
	sure, maybe = make(map[string]*module, len(s.saved)), map[string]*module{}
	for path, sm := range s.saved {
		switch {
		case can(path):
			sure[path] = sm.m
		case p.Modules[path] == sm.m.file:
			maybe[path] = sm.m
		}
	}
	return sure, maybe
}

// settleMaybes decides each module that may be taken again, in the order
// of the `use` lines (a module after those it uses): the modules it uses
// are decided, and bound, first; it is taken when what it imports is what
// it was, else added as new. Modules that use one another in a cycle are
// all added as new, as before.
func (c *checker) settleMaybes() {
	if len(c.maybe) == 0 {
		return
	}
	if c.useCycle(sortedKeys(c.maybe)) {
		for _, path := range sortedKeys(c.maybe) {
			delete(c.maybe, path)
			c.addModule(path, c.proj.Modules[path])
		}
		return
	}
	settled := map[string]bool{}
	var settle func(path string)
	settle = func(path string) {
		m := c.modules[path]
		if m == nil || settled[path] {
			return
		}
		settled[path] = true
		undecided := c.maybe[path] == m
		if m.reused && !undecided {
			return
		}
		for _, t := range m.targets {
			settle(t)
		}
		if undecided {
			delete(c.maybe, path)
			if c.takeAgain(m) {
				return
			}
			c.addModule(path, c.proj.Modules[path])
			m = c.modules[path]
		}
		// Bound now: a module that uses it may compare what it imports.
		c.bindUses(m)
	}
	for _, path := range sortedKeys(c.maybe) {
		settle(path)
	}
}

// useCycle reports whether the `use` lines of the modules from (and of
// those they use) form a cycle.
func (c *checker) useCycle(from []string) bool {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(path string) bool
	visit = func(path string) bool {
		switch state[path] {
		case 1:
			return true
		case 2:
			return false
		}
		state[path] = 1
		for _, t := range c.modules[path].targets {
			if t != path && c.modules[t] != nil && visit(t) {
				return true
			}
		}
		state[path] = 2
		return false
	}
	for _, path := range from {
		if visit(path) {
			return true
		}
	}
	return false
}

// takeAgain takes m, kept from the last check, when every name it imports
// is what it was; its `use` lines are bound to the declarations of this
// check and its references retargeted. False, and nothing changed, when
// one name differs or a reference cannot be retargeted.
func (c *checker) takeAgain(m *module) bool {
	remap := map[*Symbol]*Symbol{}
	var rebind []*decl
	var names []string
	for i, u := range m.uses {
		tm := c.modules[m.targets[i]]
		if tm == nil || tm == m || c.maybe[tm.path] == tm {
			return false
		}
		for _, n := range u.Names {
			od := m.imports[n.Name]
			nd, ok := tm.ns.decls[n.Name]
			if !ok {
				nd = tm.ns.miscased[n.Name]
			}
			if od == nil || nd == nil {
				return false
			}
			if nd == od {
				continue
			}
			c.resolveDecl(nd)
			if !sameInterface(od, nd) {
				return false
			}
			rebind, names = append(rebind, nd), append(names, n.Name)
			if od.sym != nil {
				remap[od.sym] = c.sym(nd)
			}
		}
	}
	held := func(s *Symbol) bool { // a symbol of a module taken as it was, or of m
		if s.Ident.File == nil {
			return false
		}
		path := strings.TrimSuffix(s.Ident.File.Path, ".jadpo") // a module is its file's path without .jadpo
		hm := c.modules[path]
		return hm != nil && (hm == m || hm.reused && c.maybe[path] != hm) && hm.file.Source == s.Ident.File
	}
	sm := c.session.saved[m.path]
	refs := make([]Ref, len(sm.refs))
	for i, r := range sm.refs {
		t := r.Target
		switch nt, ok := remap[t]; {
		case ok:
			t = nt
		case t.Kind == SymModule:
			tm := c.modules[t.Name]
			if tm == nil || c.maybe[t.Name] == tm {
				return false
			}
			t = c.moduleSym(tm)
		case !held(t):
			return false
		}
		refs[i] = Ref{At: r.At, Target: t}
	}
	for i, nd := range rebind {
		m.imports[names[i]] = nd
	}
	c.session.saved[m.path] = &savedModule{m: m, sym: sm.sym, syms: sm.syms, refs: refs}
	c.reuseModule(m)
	return true
}

// sameInterface reports whether a declaration a module imported (od, of
// the last check) is, to its importer, the one it is now (nd).
func sameInterface(od, nd *decl) bool {
	return od.name == nd.name && od.kind == nd.kind && od.public && nd.public &&
		od.state == resolved && nd.state == resolved && od.failed == nd.failed &&
		od.home.qualifier == nd.home.qualifier && slices.Equal(od.failedFields(), nd.failedFields()) &&
		sameType(&od.typ, &nd.typ) && sameFields(od, nd)
}

// reuseModule takes a kept module into this check.
func (c *checker) reuseModule(m *module) {
	m.reused = true
	c.modules[m.path] = m
	sm := c.session.saved[m.path]
	c.idx.taken = append(c.idx.taken, sm.syms)
	c.idx.Modules[m.file.Source.Path] = sm.sym
	c.idx.Reused++
}

// keep saves the modules the next check may take as they are.
func (s *Session) keep(c *checker) {
	dirty := map[string]bool{}
	for _, d := range c.diags {
		// A name brought in and never used is told again by checkUnused,
		// which reads every module, those taken as they were too.
		if d.Subject.File != nil && d.Code != diag.ModuleUnusedName {
			dirty[d.Subject.File.Path] = true
		}
	}
	for _, d := range c.proj.Diags {
		if d.Subject.File != nil {
			dirty[d.Subject.File.Path] = true
		}
	}
	byFile := map[string]*savedModule{}
	saved := make(map[string]*savedModule, len(c.modules))
	for path, m := range c.modules {
		if c.app != nil && c.app.taken[path] == m {
			continue // kept with the app (session_app.go)
		}
		if m.reused {
			saved[path] = s.saved[path] // as it was: nothing of it was checked again
			continue
		}
		if path == "app" || m.appWide || m.usesPackage || dirty[m.file.Source.Path] {
			continue
		}
		sm := &savedModule{m: m, sym: c.idx.Modules[m.file.Source.Path], refs: c.idx.refs[m.file.Source.Path]}
		saved[path], byFile[m.file.Source.Path] = sm, sm
	}
	for _, sym := range c.idx.fresh {
		if sym.Ident.File != nil {
			if sm := byFile[sym.Ident.File.Path]; sm != nil {
				sm.syms = append(sm.syms, sym)
			}
		}
	}
	s.saved = saved
}
