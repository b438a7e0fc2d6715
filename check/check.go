// Package check decides whether a project can run: it resolves every name
// across modules and packages, types every value, applies the rules of the
// receiving slice and, when nothing is wrong, produces the typed IR that
// `jadpo build` writes as the plan. It runs nothing.
//
// The work is split by what a newcomer would look for: modules.go (use lines
// and scopes), types.go (types and rules), config.go, store.go,
// connections.go, queues.go, packages.go (package files and capability
// mappings), subscribers.go, and ir.go (assembling the program).
package check

import (
	"slices"
	"sort"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// Result is what a check found.
type Result struct {
	Diags diag.List
	// Program is the typed IR; nil when there are errors.
	Program *ir.Program
	// Files and Declarations count what was read, for the report.
	Files, Declarations int
	// Index holds the symbols and references; only CheckIndexed fills it.
	Index *Index
}

// Check checks a loaded project.
func Check(p *project.Project) Result { return checkFor(p, "") }

func checkFor(p *project.Project, target string) Result { return newChecker(p).finish(p, target) }

func (c *checker) finish(p *project.Project, target string) Result {
	// An index is wanted while the user types, when some file often has a
	// syntax error: the checker then runs on the declarations that parsed
	// (the others are absent from the tree), and its diagnostics are
	// dropped as Check drops them, below.
	if p.App != nil {
		// A syntax error stops only its own declaration: the checker runs
		// on the declarations that parsed (the others are absent from the
		// tree), and what it says only because one is absent is dropped
		// (withoutCascades).
		c.run()
		if c.aborted {
			return Result{}
		}
		if !c.diags.HasErrors() && !p.HasSyntaxErrors() {
			// What is never used is told once the rest is sound: a check
			// that stopped early has not seen every use.
			c.checkUnused()
		}
		if target == TargetWorkers && !c.diags.HasErrors() {
			c.checkWorkers()
		}
	}
	if p.HasSyntaxErrors() {
		// The summary counts the project's files, those a declaration
		// that did not parse would have read too.
		p.ReadAllResources()
	}
	diags := append(append(diag.List(nil), p.Diags...), c.withoutBrokenPackages(withoutCascades(c.diags, p.Parsed))...)
	diags.Sort()
	diags = diags.Capped(diag.MaxPerFile)
	res := Result{Diags: diags, Files: len(p.Parsed), Declarations: c.declarations()}
	if !diags.HasErrors() && p.App != nil && c.idx == nil {
		res.Program = c.program() // an index is for an editor, which builds nothing
	}
	if c.idx != nil {
		c.finishIndex()
		res.Index = c.idx
	}
	return res
}

// onlySyntaxIfAny keeps only syntax problems while any file has one (the
// package description, which reads a project only once it parses).
func onlySyntaxIfAny(l diag.List) diag.List {
	hasSyntax := false
	for _, d := range l {
		if strings.HasPrefix(string(d.Code), "syntax.") {
			hasSyntax = true
			break
		}
	}
	if !hasSyntax {
		return l
	}
	out := l[:0:0]
	for _, d := range l {
		if strings.HasPrefix(string(d.Code), "syntax.") || strings.HasPrefix(string(d.Code), "toolchain.") {
			out = append(out, d)
		}
	}
	return out
}

// withoutCascades drops the checker's diagnostics that come only from a
// declaration that did not parse: a use of a name it declared (reported as
// unknown, since it is absent from the tree), a missing store or config
// when the store or config is the one that failed. Its syntax error is that
// mistake's one diagnostic; every other mistake is still reported.
func withoutCascades(l diag.List, files []*ast.File) diag.List {
	names := map[string]bool{}
	storeFailed := false
	for _, f := range files {
		for _, fd := range f.Failed {
			for _, n := range fd.Names {
				names[n] = true
			}
			switch kw := strings.ToLower(fd.Keyword); {
			case kw == "store" || diag.EditDistance(kw, "store") == 1:
				storeFailed = true
			case kw == "config" || diag.EditDistance(kw, "config") == 1:
				names["config"] = true
			}
		}
	}
	if len(names) == 0 && !storeFailed {
		return l
	}
	out := l[:0:0]
	for _, d := range l {
		if d.Code == diag.EventStoreRequired && storeFailed || namesAny(d.Subject.Text(), names) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// withoutBrokenPackages drops what the checker says only because a
// package's declaration did not parse: a problem in the package's other
// declarations, or one that names the package, or one inside a connection
// of the package (its settings, its credential). The syntax error is the
// package's one diagnostic until it parses.
func (c *checker) withoutBrokenPackages(l diag.List) diag.List {
	broken := map[string]bool{}
	for _, f := range c.proj.Parsed {
		if len(f.Failed) == 0 {
			continue
		}
		if rest, ok := strings.CutPrefix(f.Source.Path, "packages/"); ok {
			dir, _, _ := strings.Cut(rest, "/")
			broken[dir] = true
		}
	}
	if len(broken) == 0 {
		return l
	}
	var inside []source.Range // the connections of broken packages
	for _, cn := range c.connections {
		if cn.decl == nil || cn.decl.node == nil {
			continue
		}
		for dir := range broken {
			if strings.Contains(cn.decl.file.Range(cn.decl.node.Span()).Text(), dir) {
				inside = append(inside, cn.decl.file.Range(cn.decl.node.Span()))
			}
		}
	}
	out := l[:0:0]
next:
	for _, d := range l {
		if strings.HasPrefix(string(d.Code), "syntax.") || strings.HasPrefix(string(d.Code), "toolchain.") || d.Code == diag.PackageLockMismatch || d.Code == diag.PackageNotCatalogue {
			out = append(out, d)
			continue
		}
		for dir := range broken {
			if d.Subject.File != nil && strings.HasPrefix(d.Subject.File.Path, "packages/"+dir+"/") || strings.Contains(d.Summary, "`"+dir+"`") || strings.Contains(d.Summary, dir+"'s") {
				continue next
			}
		}
		for _, r := range inside {
			if d.Subject.File == r.File && d.Subject.Span.Start >= r.Span.Start && d.Subject.Span.End <= r.Span.End {
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}

// namesAny reports whether text holds one of names as a whole word.
func namesAny(text string, names map[string]bool) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if names[w] {
			return true
		}
	}
	return false
}

// declKind says what a declaration declares.
type declKind uint8

const (
	kindType declKind = iota
	kindEnum
	kindValue
	kindEvent
	kindConfig
	kindStore
	kindConnection
	kindQueue
	kindSubscriber
)

var kindWords = map[declKind]string{
	kindType: "type", kindEnum: "enum", kindValue: "value", kindEvent: "event", kindConfig: "config",
	kindStore: "store", kindConnection: "connection", kindQueue: "queue", kindSubscriber: "subscriber",
}

// decl is a named declaration with what the checker learnt about it.
type decl struct {
	name string
	node *ast.Decl
	file *ast.File
	// home is the module or package the declaration belongs to.
	home *namespace

	kind   declKind
	public bool
	// For types, enums and records: the resolved type (computed once).
	state  resolveState
	failed bool // resolution failed: uses are not reported again
	typ    ir.Type
	// flds are a record's resolved fields, each its name and a type shared
	// with every field of the same type (fields(), field() and fieldAt()
	// give them as ir.Field). A field is 24 bytes here, where an ir.Field
	// is 112: a check holds one per field of every record.
	flds []field
	// shared are its type as lists, maps and optional fields use it, as is
	// and optional (shared; a field of its type as is points at typ).
	shared *[2]*ir.Type
	// rare holds what few records have, nil for the others: a check holds
	// one decl per declaration of the project (219,217 for 52 MB), and a
	// decl is 176 bytes with it here, 280 with its three slices and map.
	rare *declRare
	sym  *Symbol // its index symbol, when indexing
}

// declRare is what few records have.
type declRare struct {
	// wires are the wire names of the fields that give one.
	wires []wireName
	// failedFields are fields whose type did not resolve (reported once).
	failedFields []string
	fieldOf      map[string]int // only for records of more than fieldScanMax fields
}

// wireName is the wire name of a record's field, by the field's index.
type wireName struct {
	field int
	name  string
}

// rareParts is d.rare, made when first needed.
func (d *decl) rareParts() *declRare {
	if d.rare == nil {
		d.rare = &declRare{}
	}
	return d.rare
}

// failedFields are the record's fields whose type did not resolve.
func (d *decl) failedFields() []string {
	if d.rare == nil {
		return nil
	}
	return d.rare.failedFields
}

type resolveState uint8

const (
	unresolved resolveState = iota
	resolving
	resolved
)

// id is the record's or type's program-wide identity: its resolved type's
// name once resolved (made once, there; the decl keeps no copy of it),
// made anew before.
func (d *decl) id() string {
	if d.typ.Name != "" {
		return d.typ.Name
	}
	return d.home.qualifier + "." + d.name
}

// displayName is how code in the app names it.
func (d *decl) displayName() string {
	if d.home.pkg != nil {
		return d.home.pkg.name + "." + d.name
	}
	return d.name
}

func (d *decl) rng() source.Range { return d.file.Range(d.ident().Span()) }

// ident is the declaration's name as written, read from its node (a decl
// keeps no copy of the pointer: 8 bytes of every declaration).
func (d *decl) ident() *ast.Ident { return d.node.Name() }

// namespace holds the type-like declarations of a module or a package.
type namespace struct {
	// qualifier prefixes record ids: the module path, or the package name.
	qualifier string
	decls     map[string]*decl
	// miscased holds a declaration named in the wrong case under the name it
	// should have: its semantic.name_case is the one diagnostic, and uses
	// spelt correctly find it rather than failing too.
	miscased map[string]*decl
	module   *module // set for a module's namespace
	pkg      *pkg    // set for a package's namespace
}

// checker carries one run's state.
type checker struct {
	// fieldReaders read the fields of records that a lean parse left out
	// of the tree (parser.ParseFileLean), a reader per record being
	// resolved at once (resolving a field's type may resolve another
	// record): a check then holds one record's field nodes at a time.
	fieldReaders []*parser.FieldReader
	// types holds each type without rules once (shared).
	types map[typeKey]*ir.Type
	rules map[rulesKey]*ir.Rules // each set of rules once (sharedRules)
	proj  *project.Project
	diags diag.List

	modules map[string]*module // by module path; app.jadpo is "app"
	sorted  []string           // their paths in order (sortedModules)
	pkgs    map[string]*pkg    // by package name (AmazonSqs), installed ones only
	pkgDirs map[string]*pkg    // by directory name (AmazonSqs.v2012_11_05)

	// App-wide declarations, gathered from every module.
	configDecl  *decl
	configs     map[string]*configField
	store       *decl
	connections map[string]*connection
	// connAlias maps the right spelling of a connection named in the wrong
	// case to its name (semantic.name_case is reported once).
	connAlias   map[string]string
	queues      map[string]*decl
	subscribers map[string]*decl
	// wireAt is where each queue's wire_name is written, by queue and wire
	// name (queueWireKey), for diagnostics across queues.
	wireAt map[string]source.Range

	out programParts
	// patterns remembers each pattern's compile result: a project repeats them.
	patterns map[string]error
	// idx is filled as names resolve when the caller asked for an index (nil otherwise).
	idx *Index
	// reusable are the modules a Session kept from its last check that
	// are taken as they are (session.go).
	reusable map[string]*module
	// maybe are the kept modules whose tree is the same but which use a
	// module checked again: taken too when what they import of it is
	// what it was (session.go), until then undecided.
	maybe   map[string]*module
	session *Session
	// app is the app-level part a Session kept, taken into this check
	// (session_app.go); aborted: it did not fit, and the check is dropped.
	app     *appSnapshot
	aborted bool
}

func newChecker(p *project.Project) *checker {
	return &checker{
		proj: p, modules: map[string]*module{}, pkgs: map[string]*pkg{}, pkgDirs: map[string]*pkg{},
		configs: map[string]*configField{}, connections: map[string]*connection{}, connAlias: map[string]string{},
		queues: map[string]*decl{}, subscribers: map[string]*decl{}, wireAt: map[string]source.Range{},
		out:      programParts{receivingConnections: map[string]bool{}, calledOps: map[string][]*operation{}},
		patterns: map[string]error{},
	}
}

func (c *checker) run() {
	if c.app != nil {
		c.runTakingApp()
		return
	}
	c.indexPackages()
	c.indexModules()
	c.resolveUses()
	c.checkModuleTypes()
	c.checkConfig()
	c.checkStore()
	c.checkConnections()
	c.checkQueues()
	c.checkSharedInboxTables()
	c.checkSubscribers()
	c.verifyLock()
}

// connection finds a connection by name, or by the right spelling of one
// named in the wrong case.
func (c *checker) connection(name string) *connection {
	if cn := c.connections[name]; cn != nil {
		return cn
	}
	if real, ok := c.connAlias[name]; ok {
		return c.connections[real]
	}
	return nil
}

// add reports a diagnostic.
func (c *checker) add(code diag.Code, rng source.Range, format string, args ...any) *diag.Diagnostic {
	return c.diags.Addf(code, rng, format, args...)
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkName reports a name in the wrong case.
func (c *checker) checkName(f *ast.File, id *ast.Ident, upper bool, what string) {
	if id == nil {
		return
	}
	if upper && !isUpperCamel(id.Name) {
		c.add(diag.SemanticNameCase, f.Range(id.Span()), "%s `%s` should be UpperCamelCase", what, id.Name).
			Suggest(ir.UpperCamel(id.Name)).WithHelp("rename it `" + ir.UpperCamel(id.Name) + "`: types, enums, values, events, config declarations and packages are named in UpperCamelCase")
	}
	if !upper && !isLowerSnake(id.Name) {
		c.add(diag.SemanticNameCase, f.Range(id.Span()), "%s `%s` should be lower_snake_case", what, id.Name).
			Suggest(toLowerSnake(id.Name)).WithHelp("rename it `" + toLowerSnake(id.Name) + "`: fields, settings, connections, queues, subscribers, resources, operations and enum variants are named in lower_snake_case")
	}
}

// members checks a block's keys: each known and at most once. It returns the
// members by key; entries (members without a key) are reported with code.
func (c *checker) members(f *ast.File, b *ast.Block, code diag.Code, where string, known ...string) map[string]*ast.Member {
	out := map[string]*ast.Member{}
	if b == nil {
		return out
	}
	for i, m := range c.memberList(f, b, code, where, known, nil) {
		if m != nil {
			out[known[i]] = m
		}
	}
	return out
}

// memberList is members by index: the member given for known[i], or nil,
// appended to buf (a caller on the hot path passes an array's slice, so no
// map is made per block).
func (c *checker) memberList(f *ast.File, b *ast.Block, code diag.Code, where string, known []string, buf []*ast.Member) []*ast.Member {
	out := append(buf[:0], make([]*ast.Member, len(known))...)
	if b == nil {
		return out
	}
	// misspelt holds, by the known key's index, a member given under a
	// misspelling of that key: it stands for the key (when the key is not
	// given too), so the key is not reported missing as well.
	var misspelt []*ast.Member
	for _, m := range b.Members {
		if m.Key == nil {
			c.add(code, f.Range(m.Span()), "`%s` is not a member %s takes", m.Entry.String(), where).
				WithHelp("write members as `key: value`; " + where + " takes " + keyList(known))
			continue
		}
		k := m.Key.Name
		i := slices.Index(known, k)
		if i >= 0 && out[i] != nil {
			c.add(diag.SemanticDuplicateName, f.Range(m.Key.Span()), "`%s` is given twice %s", k, where).
				WithRelated(f.Range(out[i].Key.Span()), "first given here")
			continue
		}
		if i < 0 {
			near := suggest(k, known)
			c.add(code, f.Range(m.Key.Span()), "%s has no member `%s`", strings.TrimPrefix(where, "in "), k).
				Suggest(near).WithHelp(strings.TrimPrefix(where, "in ") + " takes " + keyList(known))
			if j := slices.Index(known, near); near != "" && j >= 0 {
				if misspelt == nil {
					misspelt = make([]*ast.Member, len(known))
				}
				misspelt[j] = m
			}
			continue
		}
		out[i] = m
	}
	for i, m := range misspelt {
		if m != nil && out[i] == nil {
			out[i] = m
		}
	}
	return out
}

func keyList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = "`" + k + "`"
	}
	return strings.Join(q, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
