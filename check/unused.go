package check

import (
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// checkUnused warns of what is declared and never used: a config field no
// place reads (config.unused_field), a name a `use` line brings in that its
// file never names (module.unused_name), a connection with no queue and no
// call (connection.unused). Each carries the edit that removes it, the
// language server's quick fix.
func (c *checker) checkUnused() {
	for _, name := range sortedKeys(c.configs) {
		cf := c.configs[name]
		if cf.used || cf.field == nil {
			continue
		}
		c.add(diag.ConfigUnusedField, cf.file.Range(cf.field.Name.Span()), "config field `%s` is never used", name).
			WithFixAt(wholeLines(cf.file, cf.field.Span()), "").
			WithHelp("remove it, or read it where it is meant to go: `config." + name + "`; an unused field is still read from the environment at start")
	}
	for _, path := range c.sortedModules() {
		m := c.modules[path]
		for _, at := range m.unusedImports() {
			u := m.uses[at[0]]
			n := u.Names[at[1]]
			c.add(diag.ModuleUnusedName, m.file.Range(n.Span()), "`%s` is brought in by `use` and never used in this file", n.Name).
				WithFixAt(useNameRemoval(m.file, u, at[1]), "").
				WithHelp("remove `" + n.Name + "` from the `use` line")
		}
	}
	for _, name := range sortedKeys(c.connections) {
		cn := c.connections[name]
		if cn.called || c.queues[name] != nil || cn.decl == nil {
			continue
		}
		c.add(diag.ConnectionUnused, cn.decl.rng(), "connection `%s` has no queue and no subscriber calls it", name).
			WithFixAt(wholeLines(cn.decl.file, cn.decl.node.Span()), "").
			WithHelp("remove it, receive from it with `queue " + name + " { ... }`, or call it from a subscriber: `attempt " + name + ".<resource>.<operation>(...)`")
	}
}

// wholeLines widens a span to the whole lines it stands on, with their line
// break, when nothing else stands on them: what removing it leaves is tidy.
func wholeLines(f *ast.File, sp source.Span) source.Range {
	src := f.Source.Content
	start, end := sp.Start, sp.End
	for start > 0 && (src[start-1] == ' ' || src[start-1] == '\t') {
		start--
	}
	for end < len(src) && (src[end] == ' ' || src[end] == '\t' || src[end] == '\r') {
		end++
	}
	if (start == 0 || src[start-1] == '\n') && (end == len(src) || src[end] == '\n') {
		if end < len(src) {
			end++
		}
		return f.Range(source.Span{Start: start, End: end})
	}
	return f.Range(sp)
}

// useNameRemoval is the range that removes the i-th name of a `use` line:
// the whole line for its only name, else the name with the comma after it
// (or before it, for the last).
func useNameRemoval(f *ast.File, u *ast.Use, i int) source.Range {
	if len(u.Names) == 1 {
		return wholeLines(f, u.Span())
	}
	if i+1 < len(u.Names) {
		return f.Range(source.Span{Start: u.Names[i].Span().Start, End: u.Names[i+1].Span().Start})
	}
	return f.Range(source.Span{Start: u.Names[i-1].Span().End, End: u.Names[i].Span().End})
}

// unusedImports are the names m's `use` lines bring in that it never
// names, each as its line's index and its index on the line. They are
// found once per module: a module's uses are all looked up while it is
// resolved, and a Session that takes it again resolves nothing of it
// (binding its lines anew keeps each name brought in).
func (m *module) unusedImports() [][2]int {
	if !m.unusedFound {
		m.unusedFound = true
		for j, u := range m.uses {
			for i, n := range u.Names {
				if d := m.imports[n.Name]; d != nil && !m.usedImports[n.Name] {
					m.unused = append(m.unused, [2]int{j, i})
				}
			}
		}
	}
	return m.unused
}
