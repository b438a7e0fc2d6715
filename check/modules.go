package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// module is app.jadpo or one of the app's other files.
type module struct {
	path string
	file *ast.File
	ns   *namespace
	// imports holds the names `use` brought in; a nil entry is a name whose
	// import failed and was reported once: its uses stay silent.
	imports map[string]*decl
	// silenced names are not reported when used: a misspelt import's
	// intended name.
	silenced map[string]bool
	// clashed names are both declared in the file and brought in: reported
	// once, and their uses are not checked against either.
	clashed map[string]bool
	// usedImports are the imported names a lookup found (module.unused_name).
	usedImports map[string]bool
	uses        []*ast.Use
	targets     []string // the module each of uses names, joined once
	// unused are the names brought in and never used (unusedImports).
	unused      [][2]int
	unusedFound bool
	// usesPackage: a name of the module resolved to a package's
	// declaration; appWide: it declares a config, store, connection, queue
	// or subscriber. Either keeps a Session from reusing it (session.go).
	usesPackage, appWide bool
	reused               bool
	// usesBound: its `use` lines were bound before resolveUses, by a
	// Session settling the modules it may take again (session.go).
	usesBound bool
}

// scope is where a name in a file is looked up.
type scope struct {
	mod *module    // for app files
	ns  *namespace // the file's own namespace
}

// lookupResult says what a name found.
type lookupResult struct {
	decl     *decl
	silenced bool // the name failed before and was reported then
}

// lookup finds a type-like declaration by a possibly qualified name.
func (c *checker) lookup(s scope, q *ast.QualName) lookupResult {
	switch len(q.Parts) {
	case 1:
		name := q.Parts[0].Name
		if s.mod != nil && s.mod.clashed[name] {
			return lookupResult{silenced: true}
		}
		if d, ok := s.ns.decls[name]; ok {
			return lookupResult{decl: d}
		}
		if d, ok := s.ns.miscased[name]; ok {
			return lookupResult{decl: d}
		}
		if s.mod != nil {
			if d, ok := s.mod.imports[name]; ok {
				s.mod.usedImports[name] = true
				return lookupResult{decl: d, silenced: d == nil}
			}
			if s.mod.silenced[name] {
				return lookupResult{silenced: true}
			}
		}
	case 2:
		if p, ok := c.pkgs[q.Parts[0].Name]; ok {
			if d, ok := p.ns.decls[q.Parts[1].Name]; ok && (d.public || s.ns == p.ns) {
				if s.mod != nil {
					s.mod.usesPackage = true
				}
				return lookupResult{decl: d}
			}
		}
	}
	return lookupResult{}
}

// candidates lists the names visible in a scope, for suggestions.
func (c *checker) candidates(s scope, keep func(*decl) bool) []string {
	var out []string
	for name, d := range s.ns.decls {
		if keep(d) {
			out = append(out, name)
		}
	}
	if s.mod != nil {
		for name, d := range s.mod.imports {
			if d != nil && keep(d) {
				out = append(out, name)
			}
		}
		for _, p := range c.pkgs {
			for name, d := range p.ns.decls {
				if d.public && keep(d) {
					out = append(out, p.name+"."+name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// elsewhere finds a public declaration of this name in another module, to
// say which `use` line would bring it in.
func (c *checker) elsewhere(s scope, name string, keep func(*decl) bool) *decl {
	for _, path := range c.sortedModules() {
		m := c.modules[path]
		if s.mod == m {
			continue
		}
		if d, ok := m.ns.decls[name]; ok && d.public && keep(d) {
			return d
		}
	}
	return nil
}

// sortedModules lists c.modules' paths in order. After indexModules the
// set of paths does not change (a module may be replaced, never added or
// dropped), so the list is made once.
func (c *checker) sortedModules() []string {
	if len(c.sorted) != len(c.modules) {
		c.sorted = sortedKeys(c.modules)
	}
	return c.sorted
}

// indexModules gathers every module's declarations.
func (c *checker) indexModules() {
	if c.app != nil {
		c.takeModuleWithApp(c.app.taken["app"])
	} else {
		c.addModule("app", c.proj.App)
	}
	for _, path := range sortedKeys(c.proj.Modules) {
		if c.app != nil && c.app.taken[path] != nil {
			c.takeModuleWithApp(c.app.taken[path])
			continue
		}
		if m := c.reusable[path]; m != nil {
			c.reuseModule(m)
			continue
		}
		if m := c.maybe[path]; m != nil {
			// Its tree is the one kept, its names are those it had: it
			// stands here until settleMaybes decides (session.go).
			c.modules[path] = m
			continue
		}
		c.addModule(path, c.proj.Modules[path])
		if c.app != nil && c.modules[path] != nil && c.modules[path].appWide {
			c.aborted = true // a module now declares something app-wide
			return
		}
	}
	c.settleMaybes()
}

func (c *checker) addModule(path string, f *ast.File) {
	if f == nil {
		return
	}
	// The namespace sized for the file's declarations at once: grown by
	// doubling, a large module's map left its smaller tables behind.
	m := &module{path: path, file: f, ns: &namespace{qualifier: path, decls: make(map[string]*decl, len(f.Decls))}, imports: map[string]*decl{}, silenced: map[string]bool{}, clashed: map[string]bool{}, usedImports: map[string]bool{}}
	m.ns.module = m
	c.modules[path] = m
	c.moduleSym(m)
	seenDecl := false
	for _, d := range f.Decls {
		switch {
		case d.Use != nil:
			if seenDecl {
				c.add(diag.ModuleUseMisplaced, f.Range(d.Use.Span()), "`use %s` comes after a declaration", strings.Join(d.Use.Path.Parts, "/")).
					WithHelp("move every `use` line to the top of the file, before any declaration")
			}
			m.uses = append(m.uses, d.Use)
			m.targets = append(m.targets, strings.Join(d.Use.Path.Parts, "/"))
			continue
		case d.Package != nil, d.Provider != nil, d.Settings != nil, d.Resource != nil,
			d.Named != nil && d.Named.BlockDecl != nil && d.Named.BlockDecl.Kind == "provide":
			c.misplacedInApp(f, d)
			seenDecl = true
			continue
		}
		seenDecl = true
		c.addAppDecl(m, f, d)
	}
}

func (c *checker) misplacedInApp(f *ast.File, d *ast.Decl) {
	word := "package"
	switch {
	case d.Provider != nil:
		word = "provider"
	case d.Settings != nil:
		word = "settings"
	case d.Resource != nil:
		word = "resource"
	case d.Named != nil:
		word = "provide"
	}
	// The declaration's first word: its keyword.
	start := d.Span().Start
	end := start
	for end < len(f.Source.Content) && isWordByte(f.Source.Content[end]) {
		end++
	}
	c.add(diag.SemanticMisplacedDeclaration, f.Range(source.Span{Start: start, End: end}),
		"`%s` belongs in a package's files, not in the app's", word).
		WithHelp("a package lives under packages/<Name>.<version>/ and is installed with `jadpo package add`")
}

// publicIgnored warns of `public` on an app-wide declaration (config,
// store, connection, queue, subscriber), where it changes nothing. The range is
// `public` and the declaration's keyword; the fix keeps the keyword.
func (c *checker) publicIgnored(f *ast.File, d *ast.Decl, word string) {
	var rng source.Span
	if d.Subscriber != nil {
		// `public subscriber`: the keyword is the token before the name.
		rng = source.Span{Start: d.Subscriber.Span().Start, End: d.Subscriber.Name.Span().Start - 1}
		src := f.Source.Content
		for rng.End > rng.Start && (src[rng.End-1] == ' ' || src[rng.End-1] == '\t') {
			rng.End--
		}
	} else {
		var inner source.Span
		if n := d.Named; n.Config != nil {
			inner = n.Config.Span()
		} else {
			inner = n.BlockDecl.Span()
		}
		rng = source.Span{Start: d.Named.Span().Start, End: inner.Start + len(word)}
	}
	c.add(diag.SemanticPublicIgnored, f.Range(rng), "`public` changes nothing on a %s: every %s is app-wide", word, word).
		WithFix(word).
		WithHelp("a config, store, connection, queue or subscriber is seen from every module of the app without `use`; remove `public`")
}

// newDecl makes the decl of a named declaration: its kind and name.
func newDecl(d *ast.Decl, f *ast.File, home *namespace) *decl {
	n := d.Named
	dd := &decl{public: n.Public, node: d, file: f, home: home}
	switch {
	case n.Type != nil:
		dd.kind = kindType
	case n.Enum != nil:
		dd.kind = kindEnum
	case n.Record != nil:
		dd.kind = kindValue
		if n.Record.IsEvent() {
			dd.kind = kindEvent
		}
	case n.Config != nil:
		dd.kind = kindConfig
	case n.BlockDecl != nil:
		switch n.BlockDecl.Kind {
		case "store":
			dd.kind = kindStore
		case "connection":
			dd.kind = kindConnection
		default:
			dd.kind = kindQueue
		}
	}
	dd.name = dd.ident().Name
	return dd
}

// addAppDecl files a declaration of an app module.
func (c *checker) addAppDecl(m *module, f *ast.File, d *ast.Decl) {
	if d.Subscriber != nil {
		m.appWide = true
		dd := &decl{name: d.Subscriber.Name.Name, kind: kindSubscriber, node: d, file: f, home: m.ns}
		c.sym(dd)
		c.checkName(f, dd.ident(), false, "subscriber")
		c.addUnique(c.subscribers, dd)
		if d.Subscriber.Public {
			c.publicIgnored(f, d, "subscriber")
		}
		return
	}
	dd := newDecl(d, f, m.ns)
	c.sym(dd)
	if dd.kind != kindType && dd.kind != kindEnum && dd.kind != kindValue && dd.kind != kindEvent {
		m.appWide = true
		if dd.public {
			c.publicIgnored(f, d, kindWords[dd.kind])
		}
	}
	switch dd.kind {
	case kindType, kindEnum, kindValue, kindEvent:
		c.checkName(f, dd.ident(), true, kindWords[dd.kind])
		if _, dup := m.ns.decls[dd.name]; dup {
			// Its uses could mean either declaration: the duplicate is
			// the one diagnostic, and they are not checked against the first.
			m.clashed[dd.name] = true
		}
		c.addUnique(m.ns.decls, dd)
		if isUpperCamel(dd.name) {
			// Nothing to register under another case (and no allocation).
		} else if right := ir.UpperCamel(dd.name); right != dd.name && right != "" {
			if m.ns.miscased == nil {
				m.ns.miscased = map[string]*decl{}
			}
			if _, taken := m.ns.miscased[right]; !taken {
				m.ns.miscased[right] = dd
			}
		}
	case kindConfig:
		c.checkName(f, dd.ident(), true, "config")
		if c.configDecl != nil {
			c.add(diag.SemanticOnePerApp, dd.rng(), "the app declares a second config, `%s`", dd.name).
				WithRelated(c.configDecl.rng(), "the first config is here").
				WithHelp("an app has at most one config; put every field in it")
			return
		}
		c.configDecl = dd
	case kindStore:
		c.checkName(f, dd.ident(), false, "store")
		if c.store != nil {
			c.add(diag.SemanticOnePerApp, dd.rng(), "the app declares a second store, `%s`", dd.name).
				WithRelated(c.store.rng(), "the first store is here").
				WithHelp("an app keeps its events in one store")
			return
		}
		c.store = dd
	case kindConnection:
		c.checkName(f, dd.ident(), false, "connection")
		if first, dup := c.connections[dd.name]; dup {
			c.duplicate(dd, first.decl)
			return
		}
		c.connections[dd.name] = &connection{decl: dd}
		if right := toLowerSnake(dd.name); right != dd.name && isLowerSnake(right) {
			// `connection Packing`: its name_case is the one diagnostic;
			// uses spelt `packing` find it.
			c.connAlias[right] = dd.name
		}
	case kindQueue:
		c.checkName(f, dd.ident(), false, "queue")
		c.addUnique(c.queues, dd)
	}
}

func (c *checker) addUnique(m map[string]*decl, d *decl) {
	if first, dup := m[d.name]; dup {
		c.duplicate(d, first)
		return
	}
	m[d.name] = d
}

func (c *checker) duplicate(d, first *decl) {
	c.add(diag.SemanticDuplicateName, d.rng(), "`%s` is declared twice", d.name).
		WithRelated(first.rng(), "first declared here").
		WithHelp("give each " + kindWords[d.kind] + " its own name")
}

// resolveUses binds every `use` line's names and reports module cycles.
func (c *checker) resolveUses() {
	for _, path := range c.sortedModules() {
		if m := c.modules[path]; !m.reused && !m.usesBound {
			c.bindUses(m)
		}
	}
	c.reportCycles()
}

// bindUses binds one module's `use` lines.
func (c *checker) bindUses(m *module) {
	m.usesBound = true
	for i, u := range m.uses {
		target := m.targets[i]
		tm, ok := c.modules[target]
		if !ok || tm == m {
			d := c.add(diag.ModuleNotFound, m.file.Range(u.Path.Span()), "there is no module `%s`", target)
			if tm == m {
				d.Summary = "a file cannot `use` itself"
			} else {
				sugg := suggest(target, c.modulePaths())
				if sugg == "" {
					// `use events/signups` after the file moved: the
					// module that declares what the line brings in.
					sugg = c.moduleDeclaring(m, u)
				}
				d.Suggest(sugg).
					WithHelp("a module is a .jadpo file of the project, named by its path without .jadpo: stock/events.jadpo is `stock/events`")
			}
			for _, n := range u.Names {
				m.imports[n.Name] = nil // silence later uses
			}
			continue
		}
		c.ref(m.file, u.Path.Span(), c.moduleSym(tm))
		for _, n := range u.Names {
			c.importName(m, tm, target, n)
		}
	}
}

// moduleDeclaring is the one module, other than m, that declares every
// name the `use` line brings in, public; "" when none or several do.
func (c *checker) moduleDeclaring(m *module, u *ast.Use) string {
	if len(u.Names) == 0 {
		return ""
	}
	found := ""
	for _, path := range c.modulePaths() {
		tm := c.modules[path]
		if tm == m {
			continue
		}
		all := true
		for _, n := range u.Names {
			if d, ok := tm.ns.decls[n.Name]; !ok || !d.public {
				all = false
				break
			}
		}
		if all {
			if found != "" {
				return ""
			}
			found = path
		}
	}
	return found
}

func (c *checker) modulePaths() []string {
	var out []string
	for p := range c.modules {
		if p != "app" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (c *checker) importName(m, tm *module, target string, n *ast.Ident) {
	rng := m.file.Range(n.Span())
	if _, dup := m.imports[n.Name]; dup {
		c.add(diag.ModuleDuplicateName, rng, "`%s` is brought in twice", n.Name).
			WithHelp("name each imported declaration once")
		return
	}
	if own, clash := m.ns.decls[n.Name]; clash {
		// One diagnostic, at the second of the two (the declaration: `use`
		// lines come first); its uses could mean either, and are not
		// reported again.
		c.add(diag.ModuleDuplicateName, own.rng(), "`%s` is declared in this file and also brought in by `use`", n.Name).
			WithRelated(rng, "brought in here").
			WithHelp(fmt.Sprintf("rename this declaration, or drop `%s` from the `use` line", n.Name))
		m.imports[n.Name] = nil
		m.clashed[n.Name] = true
		return
	}
	d, ok := tm.ns.decls[n.Name]
	if !ok {
		// `use m { UserSignedUp }` of a declaration spelt userSignedUp: the
		// declaration's name_case says to fix it there, not here.
		d, ok = tm.ns.miscased[n.Name]
	}
	if ok {
		c.ref(m.file, n.Span(), c.sym(d))
	}
	if !ok {
		var names []string
		for k := range tm.ns.decls {
			names = append(names, k)
		}
		sugg := suggest(n.Name, names)
		c.add(diag.ModuleNameNotFound, rng, "module `%s` declares no `%s`", target, n.Name).Suggest(sugg)
		m.imports[n.Name] = nil
		if sugg != "" {
			// the file's uses of the intended name are the same mistake
			m.silenced[sugg] = true
		}
		return
	}
	if !d.public {
		c.add(diag.ModuleNameNotPublic, rng, "`%s` is not public in `%s`", n.Name, target).
			WithRelated(d.rng(), "declared here without `public`").
			WithHelp("mark the declaration `public` to use it from another file")
		m.imports[n.Name] = nil
		return
	}
	m.imports[n.Name] = d
}

// reportCycles reports each cycle of `use` lines once, at the use line of its
// first module (in path order) that closes it.
func (c *checker) reportCycles() {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(c.modules))
	var stack []string
	var visit func(string)
	visit = func(path string) {
		color[path] = grey
		stack = append(stack, path)
		m := c.modules[path]
		for i, u := range m.uses {
			next := m.targets[i]
			if _, ok := c.modules[next]; !ok || next == path {
				continue
			}
			switch color[next] {
			case white:
				visit(next)
			case grey:
				// stack from next to path is the cycle
				i := len(stack) - 1
				for stack[i] != next {
					i--
				}
				cycle := append(append([]string(nil), stack[i:]...), next)
				c.add(diag.ModuleCycle, m.file.Range(u.Path.Span()), "`use` lines form a cycle: %s", strings.Join(cycle, " -> ")).
					WithHelp("move the shared declarations into a module that both can use")
			}
		}
		stack = stack[:len(stack)-1]
		color[path] = black
	}
	for _, path := range c.sortedModules() {
		if color[path] == white {
			visit(path)
		}
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
