package check

import (
	"strings"

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
// would give the same result; the app itself and every other module are
// checked as Check checks them. The checker still runs nothing.
type Session struct {
	saved map[string]*savedModule
	// refs and symbols counted the last check's, to size this one's.
	refs, symbols int
}

type savedModule struct {
	m    *module
	sym  *Symbol // the module's own
	syms []*Symbol
	refs []Ref
}

// NewSession starts a session with nothing kept.
func NewSession() *Session { return &Session{saved: map[string]*savedModule{}} }

// Check is CheckIndexed, reusing what the session kept.
func (s *Session) Check(p *project.Project) Result {
	c := newChecker(p)
	c.idx = newIndex()
	c.session = s
	c.reusable = s.reusableModules(p)
	c.idx.Symbols = make([]*Symbol, 0, s.symbols+s.symbols/8)
	c.idx.flat = make([]Ref, 0, s.refs/4)
	res := c.finish(p, "")
	s.symbols = len(res.Index.Symbols)
	s.refs = 0
	for _, refs := range res.Index.refs {
		s.refs += len(refs)
	}
	s.keep(c)
	return res
}

// reusableModules are the kept modules whose tree and whose uses' trees
// are the ones p holds.
func (s *Session) reusableModules(p *project.Project) map[string]*module {
	const (
		unknown = iota
		visiting
		decided
	)
	state := map[string]int{}
	ok := map[string]bool{}
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
		for _, u := range sm.m.uses {
			if r && !can(strings.Join(u.Path.Parts, "/")) {
				r = false
			}
		}
		state[path], ok[path] = decided, r
		return r
	}
	out := map[string]*module{}
	for path := range s.saved {
		if can(path) {
			out[path] = s.saved[path].m
		}
	}
	return out
}

// reuseModule takes a kept module into this check.
func (c *checker) reuseModule(m *module) {
	m.reused = true
	c.modules[m.path] = m
	sm := c.session.saved[m.path]
	c.idx.Symbols = append(c.idx.Symbols, sm.syms...)
	c.idx.Modules[m.file.Source.Path] = sm.sym
	c.idx.Reused++
}

// keep saves the modules the next check may take as they are.
func (s *Session) keep(c *checker) {
	dirty := map[string]bool{}
	for _, d := range c.diags {
		if d.Subject.File != nil {
			dirty[d.Subject.File.Path] = true
		}
	}
	for _, d := range c.proj.Diags {
		if d.Subject.File != nil {
			dirty[d.Subject.File.Path] = true
		}
	}
	byFile := map[string]*savedModule{}
	saved := map[string]*savedModule{}
	for path, m := range c.modules {
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
	c.idx.fresh = nil
	s.saved = saved
}
