package check

import (
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// The app-level checks (the config, the store, the connections, the
// queues and the subscribers, checked against each other and against the
// installed packages) are most of what an edit to one module costs when
// they are done again. A Session keeps their results from a check that
// found nothing wrong (nothing but what checkUnused tells, which it tells
// again from what it reads), and takes them into the next check when
// nothing they read can have changed:
//
//   - app.jadpo's tree is the one kept, and so is the tree of every module
//     that declares something app-wide or names a package's declaration
//     (those modules are taken with the app: "taken" below);
//   - every installed package's files are the trees kept (the resources the
//     check read included), and the catalogue and the drivers are the same;
//   - every name a taken module imports is what it was: the same
//     declaration, or one of the same kind and publicity resolved to the
//     same type and fields, and so, recursively, is every record, enum and
//     type those types name (the subscribers read a record's fields through
//     an event's), in this check against the last.
//
// The modules outside the app-level part are checked or taken as the
// Session does anyway; the app's `use` lines are then bound to the new
// declarations and its references to their symbols retargeted. When a
// name differs, the attempt is dropped and the project checked with the
// app-level checks run (Session.Check). jadpo.lock is verified each time.
type appSnapshot struct {
	proj    *project.Project   // the check's project: its app, packages, catalogue and drivers
	taken   map[string]*module // the app and the modules taken with it, by module path
	modules map[string]*module // every module of that check, for the declarations types name

	pkgs, pkgDirs map[string]*pkg
	configDecl    *decl
	configs       map[string]*configField
	store         *decl
	connections   map[string]*connection
	connAlias     map[string]string
	queues        map[string]*decl
	subscribers   map[string]*decl
	out           programParts
	patterns      map[string]error

	pkgSyms map[string]*Symbol // Index.Packages
	modSyms map[string]*Symbol // the taken modules' symbols, by file path
	syms    []*Symbol          // the symbols declared in the taken modules' files and the packages'
	refs    map[string][]Ref   // the references written in those files, by file path
	// resources are the package resources the clean check read, by
	// package directory and name (a check with a syntax error reads them
	// all, for its count of files: not what the app-level checks read).
	resources map[string]map[string]*ast.File
	// byTarget lists, by module path, where in refs the references to a
	// symbol of that module (outside the taken ones) are.
	byTarget map[string][]refAt
}

type refAt struct {
	file string
	i    int
}

// afterUnused are the codes checkUnused tells, again in every check.
func afterUnused(c diag.Code) bool {
	return c == diag.ModuleUnusedName || c == diag.ConfigUnusedField || c == diag.ConnectionUnused
}

// appLevelFile reports whether a file's symbols and references belong to
// the app-level part: a taken module's, a package's, or none.
func appLevelFile(f *source.File, takenFiles map[string]bool) bool {
	return f == nil || strings.HasPrefix(f.Path, "packages/") || takenFiles[f.Path]
}

// snapshotApp keeps the app-level part of a finished check, or drops what
// was kept when the check cannot give it.
func (s *Session) snapshotApp(c *checker) {
	if c.app != nil {
		// Taken this time, and bound anew: what it read is what it was
		// in the clean check it came from, whatever a module outside it
		// says now (an error while the user types, say).
		a := c.app
		a.proj, a.modules = c.proj, c.modules
		s.app = a
		return
	}
	s.app = nil
	if c.proj.App == nil || c.aborted || len(c.proj.Diags) > 0 || c.proj.HasSyntaxErrors() {
		return
	}
	for _, d := range c.diags {
		if !afterUnused(d.Code) {
			return
		}
	}
	a := &appSnapshot{proj: c.proj, taken: map[string]*module{}, modules: c.modules,
		pkgs: c.pkgs, pkgDirs: c.pkgDirs, configDecl: c.configDecl, configs: c.configs, store: c.store,
		connections: c.connections, connAlias: c.connAlias, queues: c.queues, subscribers: c.subscribers,
		out: c.out, patterns: c.patterns, pkgSyms: c.idx.Packages, modSyms: map[string]*Symbol{}, refs: map[string][]Ref{}}
	a.resources = map[string]map[string]*ast.File{}
	for dir, pp := range c.proj.Packages {
		a.resources[dir] = map[string]*ast.File{}
		for _, name := range pp.LoadedResources() {
			a.resources[dir][name] = pp.Resource(name)
		}
	}
	takenFiles := map[string]bool{}
	for path, m := range c.modules {
		if path == "app" || m.appWide || m.usesPackage {
			if m.reused {
				return // a Session never takes such a module alone
			}
			a.taken[path] = m
			takenFiles[m.file.Source.Path] = true
			a.modSyms[m.file.Source.Path] = c.idx.Modules[m.file.Source.Path]
		}
	}
	for _, sym := range c.idx.fresh {
		if appLevelFile(sym.Ident.File, takenFiles) {
			a.syms = append(a.syms, sym)
		}
	}
	a.byTarget = map[string][]refAt{}
	for file, refs := range c.idx.refs {
		if !strings.HasPrefix(file, "packages/") && !takenFiles[file] {
			continue
		}
		a.refs[file] = refs
		for i, r := range refs {
			if f := r.Target.Ident.File; f != nil && !strings.HasPrefix(f.Path, "packages/") && !takenFiles[f.Path] {
				path := strings.TrimSuffix(f.Path, ".jadpo") // a module is its file's path without .jadpo
				a.byTarget[path] = append(a.byTarget[path], refAt{file, i})
			}
		}
	}
	s.app = a
}

// fits reports whether the kept app-level part can stand in p: the trees
// it read are p's.
func (a *appSnapshot) fits(p *project.Project) bool {
	old := a.proj
	if p.App == nil || p.App != old.App || !same(p.Catalogue, old.Catalogue) || !sameDrivers(p.Drivers, old.Drivers) {
		return false
	}
	takenFiles := map[string]bool{}
	for path, m := range a.taken {
		if path != "app" && p.Modules[path] != m.file {
			return false
		}
		takenFiles[m.file.Source.Path] = true
	}
	// What the project's reading says (a syntax error, mostly) is about
	// a module outside the app-level part, else nothing is taken.
	for _, d := range p.Diags {
		if f := d.Subject.File; f == nil || appLevelFile(f, takenFiles) {
			return false
		}
	}
	if len(p.Packages) != len(old.Packages) {
		return false
	}
	for dir, op := range old.Packages {
		np := p.Packages[dir]
		if np == nil || np.Header != op.Header || len(np.Files) != len(op.Files) || len(np.Provides) != len(op.Provides) {
			return false
		}
		for i, f := range op.Files {
			if np.Files[i] != f {
				return false
			}
		}
		for name, f := range op.Provides {
			if np.Provides[name] != f {
				return false
			}
		}
		for name, f := range a.resources[dir] {
			if np.Resource(name) != f {
				return false
			}
		}
	}
	return true
}

// same compares two values an interface holds, whatever their type.
func same(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if t := reflect.TypeOf(a); t == reflect.TypeOf(b) && t.Comparable() {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// sameDrivers compares two projects' drivers: the same slice at once (the
// language server makes them once), else by content.
func sameDrivers(a, b project.DriverSet) bool {
	da, okA := a.(Drivers)
	db, okB := b.(Drivers)
	if okA && okB && len(da) == len(db) && (len(da) == 0 || unsafe.SliceData(da) == unsafe.SliceData(db)) {
		return true
	}
	if okA && okB && len(da) == len(db) {
		// A contract's functions (Check, Body) are never DeepEqual: the
		// same function is the same rules.
		for i := range da {
			x, y := da[i], db[i]
			if !sameFunc(x.Check, y.Check) || !sameFunc(x.Body, y.Body) {
				return false
			}
			x.Check, x.Body, y.Check, y.Body = nil, nil, nil, nil
			if !reflect.DeepEqual(x, y) {
				return false
			}
		}
		return true
	}
	return same(a, b)
}

// sameFunc reports whether two functions are both nil or the same one.
func sameFunc(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.IsNil() || vb.IsNil() {
		return va.IsNil() && vb.IsNil()
	}
	return va.Pointer() == vb.Pointer()
}

// restoreApp takes the kept app-level state into this check.
func (c *checker) restoreApp(a *appSnapshot) {
	c.app = a
	c.pkgs, c.pkgDirs = a.pkgs, a.pkgDirs
	for dir, p := range c.pkgDirs {
		p.proj = c.proj.Packages[dir] // the same trees (fits)
	}
	c.configDecl, c.configs, c.store = a.configDecl, a.configs, a.store
	c.connections, c.connAlias, c.queues, c.subscribers = a.connections, a.connAlias, a.queues, a.subscribers
	c.out, c.patterns = a.out, a.patterns
	c.idx.Packages = a.pkgSyms
	c.idx.taken = append(c.idx.taken, a.syms)
	c.idx.AppReused = true
}

// takeModuleWithApp takes a module of the app-level part as it was.
func (c *checker) takeModuleWithApp(m *module) {
	m.reused = true
	c.modules[m.path] = m
	c.idx.Modules[m.file.Source.Path] = c.app.modSyms[m.file.Source.Path]
	if m.path != "app" {
		c.idx.Reused++
	}
}

// runTakingApp is run with the app-level part taken: the modules outside
// it are indexed, bound and resolved, then what the app imports is held
// to what it was (c.aborted when it is not).
func (c *checker) runTakingApp() {
	c.indexModules()
	if c.aborted {
		return
	}
	c.resolveUses()
	c.checkModuleTypes()
	if !c.appStillFits() {
		c.aborted = true
		return
	}
	c.verifyLock()
}

// appStillFits holds every name a taken module imports to what it was,
// then binds it anew and retargets the app-level references.
func (c *checker) appStillFits() bool {
	a := c.app
	remap := map[*Symbol]*Symbol{}
	compared := map[*decl]*decl{}
	oldDecl := func(id string) *decl {
		i := strings.LastIndex(id, ".")
		if i < 0 {
			return nil
		}
		if m, ok := a.modules[id[:i]]; ok {
			return m.ns.decls[id[i+1:]]
		}
		if p, ok := c.pkgs[id[:i]]; ok {
			return p.ns.decls[id[i+1:]]
		}
		return nil
	}
	var sameDecl func(od, nd *decl) bool
	sameDecl = func(od, nd *decl) bool {
		if od == nil || nd == nil {
			return od == nd
		}
		if od == nd {
			if m := nd.home.module; m == nil || c.reusable[m.path] == m {
				// A package's, or of a module whose uses are all taken as
				// they were: what its types name is too.
				return true
			}
		}
		if prev, ok := compared[od]; ok {
			return prev == nd
		}
		compared[od] = nd
		if od != nd {
			c.resolveDecl(nd)
			if od.public != nd.public || !sameShape(od, nd) {
				return false
			}
			if od.sym != nil && nd.sym != nil {
				remap[od.sym] = nd.sym
			}
		}
		for _, name := range typeNames(nd) {
			if !sameDecl(oldDecl(name), c.recordDecl(name)) {
				return false
			}
		}
		return true
	}
	type rebind struct {
		m    *module
		name string
		d    *decl
	}
	var rebinds []rebind
	for _, path := range sortedKeys(a.taken) {
		m := a.taken[path]
		for i, u := range m.uses {
			tm := c.modules[m.targets[i]]
			if tm == nil || tm == m {
				return false
			}
			if a.taken[tm.path] == tm || c.reusable[tm.path] == tm {
				// Its declarations are the ones imported, and what they
				// name is too (a taken module's imports are held here).
				continue
			}
			for _, n := range u.Names {
				od := m.imports[n.Name]
				nd, ok := tm.ns.decls[n.Name]
				if !ok {
					nd = tm.ns.miscased[n.Name]
				}
				if od == nil || nd == nil || !sameDecl(od, nd) {
					return false
				}
				if od != nd {
					rebinds = append(rebinds, rebind{m, n.Name, nd})
				}
			}
		}
	}
	// A reference to a symbol of a module of the last check that this
	// one checked again (or no longer has) is retargeted; every other
	// reference's symbol is this check's too (of a module taken as it
	// was, of the app, of a package).
	retarget := func(t *Symbol, m *module) *Symbol {
		if nt := remap[t]; nt != nil {
			return nt
		}
		switch {
		case m == nil:
			return nil
		case t.Kind == SymModule:
			return c.moduleSym(m)
		case t.Parent != nil:
			np := remap[t.Parent]
			if np == nil {
				return nil
			}
			var found *Symbol
			for _, ch := range np.Children {
				if ch.Kind == t.Kind && ch.Name == t.Name {
					if found != nil {
						return nil
					}
					found = ch
				}
			}
			return found
		}
		return nil
	}
	for path, om := range a.modules {
		m := c.modules[path]
		if m == om {
			continue
		}
		for _, at := range a.byTarget[path] {
			r := &a.refs[at.file][at.i]
			if r.Target.Ident.File != om.file.Source {
				return false // not the module's symbol: kept out of reach
			}
			nt := retarget(r.Target, m)
			if nt == nil {
				return false
			}
			r.Target = nt
		}
	}
	for _, r := range rebinds {
		r.m.imports[r.name] = r.d
	}
	return true
}

// sameShape compares what a declaration resolved to.
func sameShape(od, nd *decl) bool {
	return od.name == nd.name && od.kind == nd.kind && od.state == resolved && nd.state == resolved &&
		od.failed == nd.failed && od.home.qualifier == nd.home.qualifier &&
		slices.Equal(od.failedFields(), nd.failedFields()) && sameType(&od.typ, &nd.typ) && sameFields(od, nd)
}

// sameType compares two resolved types, as reflect.DeepEqual would.
func sameType(a, b *ir.Type) bool {
	for {
		if a == nil || b == nil {
			return a == b
		}
		if a.Kind != b.Kind || a.Optional != b.Optional || a.Name != b.Name || !slices.Equal(a.Variants, b.Variants) ||
			(a.Variants == nil) != (b.Variants == nil) || !sameRules(a.Rules, b.Rules) {
			return false
		}
		a, b = a.Elem, b.Elem
	}
}

func sameRules(a, b *ir.Rules) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameRef(a.Min, b.Min) && sameRef(a.Max, b.Max) && sameRef(a.MinLength, b.MinLength) && sameRef(a.MaxLength, b.MaxLength) &&
		slices.Equal(a.Patterns, b.Patterns) && (a.Patterns == nil) == (b.Patterns == nil) && a.Format == b.Format
}

func sameRef[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// sameFields reports whether two records resolved to the same fields.
func sameFields(od, nd *decl) bool {
	a, b := od.flds, nd.flds
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || od.wireAt(i) != nd.wireAt(i) || !sameType(a[i].typ, b[i].typ) {
			return false
		}
	}
	return true
}

// typeNames are the declared types a declaration's type and fields name.
func typeNames(d *decl) []string {
	var out []string
	walk := func(t *ir.Type) {
		for ; t != nil; t = t.Elem {
			if t.Name != "" {
				out = append(out, t.Name)
			}
		}
	}
	walk(&d.typ)
	for i := range d.flds {
		walk(d.flds[i].typ)
	}
	return out
}
