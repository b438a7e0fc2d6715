package parser

import (
	"unsafe"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
)

// The fast path: a hand-written recursive descent over the same grammar as
// the struct tags in lang/ast, building the very tree participle would build
// (each node's Tokens included) without reflection, branch contexts or
// deferred field setters, which cost participle some 200 bytes and 15
// allocations per token.
//
// It only ever accepts: the first thing it does not expect (any syntax
// error, and any shape it was not written for) makes it give up, and
// participle parses the declaration again and reports the error as before.
// So diagnostics still come from participle alone, and the fast path must
// only agree with participle on what both accept. FuzzParse checks that it
// does, declaration by declaration, on every input it tries.

// fastDecl parses one declaration's tokens, or reports false. The
// declarations of one file share slab (nil: their own).
func fastDecl(chunk []plexer.Token, slab *identSlab) (*ast.Decl, bool) {
	toks := make([]lexer.Tok, len(chunk))
	for i, t := range chunk {
		toks[i] = lexer.Tok{Value: t.Value, Off: int32(t.Pos.Offset), Type: uint8(t.Type)}
	}
	return fastTokens(toks, slab)
}

// fastTokens is fastDecl on the lexer's compact tokens.
func fastTokens(chunk []lexer.Tok, slab *identSlab) (*ast.Decl, bool) {
	if len(chunk) == 0 {
		return nil, false
	}
	if slab == nil {
		slab = &identSlab{}
	}
	slab.reset()
	slab.bind()
	p := fastParser{toks: chunk, slab: slab}
	d := p.decl()
	if p.failed || p.i != len(chunk) {
		return nil, false
	}
	return d, true
}

// identSlab is what a file's nodes are cut from: one allocation per run of
// nodes of a type instead of one per node, each run twice the last (up to
// slabMaxBytes), so a small file wastes little and a large one allocates rarely.
// It is shared by a file's declarations: a slab per declaration left most
// of each unused. The lists (a block's members, a record's fields...) are
// gathered on a stack per element type and copied, once their length is
// known, into a run of exactly that length: no slice grows by appending.
type identSlab struct {
	idents  slab[ast.Ident]
	names   slab[nameBundle]
	typeBs  slab[typeBundle]
	fieldBs slab[fieldBundle]

	decls     slab[ast.Decl]
	nameds    slab[namedBundle]
	records   slab[recordBundle]
	typeDecls slab[typeDeclBundle]
	enums     slab[enumBundle]
	blockDecl slab[ast.BlockDecl]
	blocks    slab[ast.Block]
	members   slab[ast.Member]
	keyed     slab[memberBundle]
	exprs     slab[exprBundle]
	lists     slab[ast.List]
	refs      slab[refBundle]
	argss     slab[ast.Args]
	args      slab[ast.Arg]
	subItems  slab[ast.SubscriberItem]
	attempts  slab[ast.Attempt]

	identList  list[*ast.Ident]
	fieldList  list[*ast.Field]
	memberList list[*ast.Member]
	exprList   list[*ast.Expr]
	argList    list[*ast.Arg]
	typeList   list[*ast.TypeExpr]

	// file is how many tokens the file has and how many are left from the
	// declaration being parsed (0: not known). A run is cut to what the
	// rest of the file will take of its type, at the rate the file took
	// so far, not doubled past it: a tree holds its runs whole, and their
	// empty tails were some 6% of a large project's trees.
	file  fileLeft
	bound bool

	// scratch, when set, is where a record's fields are parsed and then
	// let go (ParseFileLean): it is recycled record after record, so a
	// lean parse allocates for fields only what the largest record takes.
	scratch *identSlab
}

type fileLeft struct{ tokens, left int }

// bind gives every run the file's tokens left, with the fewest tokens a
// node of its type takes.
func (s *identSlab) bind() {
	if s.bound {
		return
	}
	s.bound = true
	l := &s.file
	s.idents.bind(l, 1)
	s.names.bind(l, 1)
	s.typeBs.bind(l, 1)
	s.fieldBs.bind(l, 3) // name : Type
	s.decls.bind(l, 2)
	s.nameds.bind(l, 3)
	s.records.bind(l, 4) // value Name { }
	s.typeDecls.bind(l, 4)
	s.enums.bind(l, 4)
	s.blockDecl.bind(l, 4)
	s.blocks.bind(l, 2) // { }
	s.members.bind(l, 1)
	s.keyed.bind(l, 3) // key : value
	s.exprs.bind(l, 1)
	s.lists.bind(l, 2)
	s.refs.bind(l, 1)
	s.argss.bind(l, 1) // its (
	s.args.bind(l, 1)
	s.subItems.bind(l, 1)
	s.attempts.bind(l, 2)
	s.identList.store.bind(l, 1)
	s.fieldList.store.bind(l, 3)
	s.memberList.store.bind(l, 1)
	s.exprList.store.bind(l, 1)
	s.argList.store.bind(l, 1)
	s.typeList.store.bind(l, 1)
}

// recycle empties every run and stack for the next record's fields: what
// the slab handed out before is overwritten (FieldReader.Fields).
func (s *identSlab) recycle() {
	s.reset()
	s.idents.recycle()
	s.names.recycle()
	s.typeBs.recycle()
	s.fieldBs.recycle()
	s.decls.recycle()
	s.nameds.recycle()
	s.records.recycle()
	s.typeDecls.recycle()
	s.enums.recycle()
	s.blockDecl.recycle()
	s.blocks.recycle()
	s.members.recycle()
	s.keyed.recycle()
	s.exprs.recycle()
	s.lists.recycle()
	s.refs.recycle()
	s.argss.recycle()
	s.args.recycle()
	s.subItems.recycle()
	s.attempts.recycle()
	s.identList.store.recycle()
	s.fieldList.store.recycle()
	s.memberList.store.recycle()
	s.exprList.store.recycle()
	s.argList.store.recycle()
	s.typeList.store.recycle()
}

// reset empties the stacks a declaration the fast path gave up on may
// have left items on.
func (s *identSlab) reset() {
	s.identList.stack = s.identList.stack[:0]
	s.fieldList.stack = s.fieldList.stack[:0]
	s.memberList.stack = s.memberList.stack[:0]
	s.exprList.stack = s.exprList.stack[:0]
	s.argList.stack = s.argList.stack[:0]
	s.typeList.stack = s.typeList.stack[:0]
}

const (
	slabMin = 8
	// slabMaxBytes bounds a run: above 32 KB an allocation is a large
	// object, each zeroed and swept on its own, which measured slower.
	slabMaxBytes = 16 << 10
)

type slab[T any] struct {
	items []T
	size  int // the next run's length
	file  *fileLeft
	per   int // the fewest tokens a node of this type takes
	taken int // items of the runs before this one
}

func (s *slab[T]) bind(f *fileLeft, per int) { s.file, s.per = f, per }

func (s *slab[T]) grow(n int) {
	if s.size < slabMin {
		s.size = slabMin
	}
	size := max(s.size, n)
	s.taken += len(s.items)
	if f := s.file; f != nil && f.left > 0 && f.left <= f.tokens {
		// At most what the tokens left could hold, and a quarter more
		// than the rate so far says they will take.
		need := f.left/s.per + 1
		if done := f.tokens - f.left; done > 0 {
			need = min(need, s.taken*f.left/done*5/4+slabMin)
		}
		size = max(min(size, need), n)
	}
	s.items = make([]T, 0, size)
	var zero T
	if s.size*int(unsafe.Sizeof(zero)) < slabMaxBytes {
		s.size *= 2
	}
}

// recycle zeroes the current run for reuse from its start; the runs
// before it are let go. next's slots are zero, as in a new run.
func (s *slab[T]) recycle() {
	clear(s.items)
	s.items = s.items[:0]
	s.taken = 0
}

func (s *slab[T]) next() *T {
	if len(s.items) == cap(s.items) {
		s.grow(1)
	}
	// The run is zeroed when made and never reused: taking the next slot
	// is a reslice, not an append of a zero value, which copies it with a
	// write barrier per pointer while the collector marks.
	s.items = s.items[:len(s.items)+1]
	return &s.items[len(s.items)-1]
}

// take copies vs into the slab: a slice of exactly their length and
// capacity, so that an append to it copies rather than overwrite a
// neighbour.
func (s *slab[T]) take(vs []T) []T {
	n := len(vs)
	if cap(s.items)-len(s.items) < n {
		s.grow(n)
	}
	start := len(s.items)
	s.items = append(s.items, vs...)
	return s.items[start : start+n : start+n]
}

// list gathers one node list's elements on a stack shared by the nested
// lists of its type, then stores them at their final length.
type list[T any] struct {
	stack []T
	store slab[T]
}

func (l *list[T]) mark() int { return len(l.stack) }
func (l *list[T]) push(v T)  { l.stack = append(l.stack, v) }
func (l *list[T]) done(mark int) []T {
	if len(l.stack) == mark {
		return nil // participle leaves an empty list nil
	}
	out := l.store.take(l.stack[mark:])
	clear(l.stack[mark:])
	l.stack = l.stack[:mark]
	return out
}

type fastParser struct {
	toks   []lexer.Tok
	i      int
	failed bool
	slab   *identSlab
}

func (p *fastParser) fail() { p.failed = true }

// is reports whether the token at i has the given value (a keyword or a
// punctuation mark: participle's literals match the value alone).
func (p *fastParser) is(i int, value string) bool {
	return i < len(p.toks) && p.toks[i].Value == value
}

func (p *fastParser) isIdent(i int) bool {
	return i < len(p.toks) && p.toks[i].Type == uint8(lexer.Ident)
}

// expect consumes the literal or fails.
func (p *fastParser) expect(value string) {
	if p.failed || !p.is(p.i, value) {
		p.fail()
		return
	}
	p.i++
}

// node is the tokens from start to the current position.
func (p *fastParser) node(start int) ast.Node {
	if start >= p.i {
		return ast.Node{}
	}
	last := &p.toks[p.i-1]
	return ast.Node{SpanStart: p.toks[start].Off, SpanEnd: last.Off + int32(len(last.Value))}
}

func (p *fastParser) ident() *ast.Ident { return p.identIn(nil) }

// identIn fills id (nil: one from the slab).
func (p *fastParser) identIn(id *ast.Ident) *ast.Ident {
	if p.failed || !p.isIdent(p.i) {
		p.fail()
		return nil
	}
	if id == nil {
		id = p.slab.idents.next()
	}
	*id = ast.Ident{Start: p.toks[p.i].Off, Name: p.toks[p.i].Value}
	p.i++
	return id
}

// The commonest shapes are cut from the slab in one piece: a name with
// its first part, a type with its name's, a field (which holds its name
// and type, and its type's name) with its type's name's first part. The
// check reads them together, and together they sit in one or two cache
// lines; a tree holds them all as long as any. A second part copies the
// parts out (their slice has capacity 1).
type nameBundle struct {
	q    ast.QualName
	part [1]ast.Ident
}

type typeBundle struct {
	t    ast.TypeExpr
	part [1]ast.Ident
}

type fieldBundle struct {
	f    ast.Field
	part [1]ast.Ident
}

// A member `key: value` is cut with its key and its value's expression,
// an expression with a literal's value, a reference with its name: the
// checker reads a rules block's members, keys and values together.
type memberBundle struct {
	m   ast.Member
	key ast.Ident
	v   exprBundle
}

type exprBundle struct {
	e ast.Expr
	// s is a literal's value: its own copy of the token's header (a
	// pointer into the token slice would keep every token of the file
	// alive).
	s string
}

type refBundle struct {
	r ast.Ref
	n nameBundle
}

// A named declaration is cut with its Named node, a type, enum or record
// declaration with its name (and a type's base): the checker's index
// reads a declaration's name first, and its resolution the rest.
type namedBundle struct {
	d ast.Decl
	n ast.Named
}

type typeDeclBundle struct {
	t    ast.TypeDecl
	name ast.Ident
	base typeBundle
}

type enumBundle struct {
	e    ast.Enum
	name ast.Ident
}

type recordBundle struct {
	r    ast.Record
	name ast.Ident
}

func (p *fastParser) decl() *ast.Decl {
	if v := p.toks[0].Value; v != "use" && v != "package" && v != "provider" && v != "settings" &&
		v != "resource" && v != "subscriber" && !(v == "public" && p.is(1, "subscriber")) {
		b := p.slab.nameds.next()
		d := &b.d
		d.Named = p.namedIn(&b.n)
		d.Node = p.node(0)
		return d
	}
	d := p.slab.decls.next()
	switch p.toks[0].Value {
	case "use":
		d.Use = p.use()
	case "package":
		d.Package = p.pkg()
	case "provider":
		d.Provider = p.provider()
	case "settings":
		d.Settings = p.settings()
	case "resource":
		d.Resource = p.resource()
	case "subscriber":
		d.Subscriber = p.subscriber()
	case "public": // public subscriber
		d.Subscriber = p.subscriber()
	}
	d.Node = p.node(0)
	return d
}

func (p *fastParser) use() *ast.Use {
	start := p.i
	p.expect("use")
	u := &ast.Use{Path: p.modulePath()}
	p.expect("{")
	names := &p.slab.identList
	mark := names.mark()
	if !p.failed && !p.is(p.i, "}") {
		names.push(p.ident())
		for !p.failed && p.is(p.i, ",") {
			p.i++
			if p.is(p.i, "}") {
				break
			}
			names.push(p.ident())
		}
	}
	u.Names = names.done(mark)
	p.expect("}")
	u.Node = p.node(start)
	return u
}

func (p *fastParser) modulePath() *ast.ModulePath {
	start := p.i
	if p.failed || !p.isIdent(p.i) {
		p.fail()
		return nil
	}
	m := &ast.ModulePath{Parts: []string{p.toks[p.i].Value}}
	p.i++
	for p.is(p.i, "/") && p.isIdent(p.i+1) {
		m.Parts = append(m.Parts, p.toks[p.i+1].Value)
		p.i += 2
	}
	m.Node = p.node(start)
	return m
}

func (p *fastParser) qualName() *ast.QualName {
	b := p.slab.names.next()
	p.qualNameIn(&b.q, &b.part)
	return &b.q
}

// qualNameIn fills q, its first part in part.
func (p *fastParser) qualNameIn(q *ast.QualName, part *[1]ast.Ident) {
	start := p.i
	q.Parts = part[:] // a second part copies it out: cap 1
	p.identIn(&q.Parts[0])
	for !p.failed && p.is(p.i, ".") && p.isIdent(p.i+1) {
		p.i++
		q.Parts = append(q.Parts, ast.Ident{Start: p.toks[p.i].Off, Name: p.toks[p.i].Value})
		p.i++
	}
	q.Node = p.node(start)
}

func (p *fastParser) pkg() *ast.Package {
	start := p.i
	p.expect("package")
	k := &ast.Package{Name: p.qualName()}
	k.Node = p.node(start)
	return k
}

func (p *fastParser) provider() *ast.Provider {
	start := p.i
	p.expect("provider")
	v := &ast.Provider{Body: p.block()}
	v.Node = p.node(start)
	return v
}

func (p *fastParser) settings() *ast.Settings {
	start := p.i
	p.expect("settings")
	s := &ast.Settings{Fields: p.fields()}
	s.Node = p.node(start)
	return s
}

func (p *fastParser) resource() *ast.Resource {
	start := p.i
	p.expect("resource")
	r := &ast.Resource{Name: p.ident()}
	p.expect("{")
	for !p.failed && !p.is(p.i, "}") {
		r.Operations = append(r.Operations, p.operation())
	}
	p.expect("}")
	r.Node = p.node(start)
	return r
}

func (p *fastParser) operation() *ast.Operation {
	start := p.i
	p.expect("operation")
	o := &ast.Operation{Name: p.ident(), Body: p.block()}
	o.Node = p.node(start)
	return o
}

func (p *fastParser) subscriber() *ast.Subscriber {
	start := p.i
	public := p.is(p.i, "public")
	if public {
		p.i++
	}
	p.expect("subscriber")
	s := &ast.Subscriber{Public: public, Name: p.ident()}
	p.expect("{")
	for !p.failed && !p.is(p.i, "}") {
		s.Items = append(s.Items, p.subscriberItem())
	}
	p.expect("}")
	s.Node = p.node(start)
	return s
}

func (p *fastParser) subscriberItem() *ast.SubscriberItem {
	start := p.i
	it := p.slab.subItems.next()
	switch {
	case p.is(p.i, "on") && p.isIdent(p.i+1):
		it.Handler = p.handler()
	case p.is(p.i, "on") && !p.is(p.i+1, ":"):
		// Participle would try a handler, fail after one token and take
		// `on` for an entry; rare enough to leave to it.
		p.fail()
	default:
		it.Member = p.member()
	}
	it.Node = p.node(start)
	return it
}

func (p *fastParser) handler() *ast.Handler {
	start := p.i
	p.expect("on")
	h := &ast.Handler{Event: p.qualName()}
	p.expect("(")
	h.Binding = p.ident()
	p.expect(")")
	p.expect("{")
	for !p.failed && !p.is(p.i, "}") {
		h.Steps = append(h.Steps, p.attempt())
	}
	p.expect("}")
	h.Node = p.node(start)
	return h
}

func (p *fastParser) attempt() *ast.Attempt {
	start := p.i
	p.expect("attempt")
	a := p.slab.attempts.next()
	a.Call = p.expr()
	a.Node = p.node(start)
	return a
}

// namedIn fills n.
func (p *fastParser) namedIn(n *ast.Named) *ast.Named {
	start := p.i
	if p.is(p.i, "public") {
		n.Public = true
		p.i++
	}
	if p.i >= len(p.toks) {
		p.fail()
		return nil
	}
	switch p.toks[p.i].Value {
	case "type":
		n.Type = p.typeDecl()
	case "enum":
		n.Enum = p.enum()
	case "value", "event":
		n.Record = p.record()
	case "config":
		n.Config = p.config()
	case "store", "connection", "queue", "provide":
		n.BlockDecl = p.blockDecl()
	default:
		p.fail()
		return nil
	}
	n.Node = p.node(start)
	return n
}

func (p *fastParser) typeDecl() *ast.TypeDecl {
	start := p.i
	p.expect("type")
	b := p.slab.typeDecls.next()
	t := &b.t
	t.Name = p.identIn(&b.name)
	p.expect("=")
	p.typeExprIn(&b.base.t, &b.base.part)
	t.Base = &b.base.t
	if !p.failed && p.is(p.i, "{") {
		t.Rules = p.block()
	}
	t.Node = p.node(start)
	return t
}

func (p *fastParser) enum() *ast.Enum {
	start := p.i
	p.expect("enum")
	b := p.slab.enums.next()
	e := &b.e
	e.Name = p.identIn(&b.name)
	p.expect("{")
	vs := &p.slab.identList
	mark := vs.mark()
	for !p.failed && !p.is(p.i, "}") {
		vs.push(p.ident())
	}
	e.Variants = vs.done(mark)
	p.expect("}")
	e.Node = p.node(start)
	return e
}

func (p *fastParser) record() *ast.Record {
	start := p.i
	b := p.slab.records.next()
	r := &b.r
	r.Kind = p.toks[p.i].Value
	p.i++
	r.Name = p.identIn(&b.name)
	if scratch := p.slab.scratch; scratch != nil {
		// Parsed to be sure they parse, then let go: a FieldReader
		// parses them again when the check asks.
		kept := p.slab
		scratch.recycle()
		p.slab = scratch
		p.fields()
		p.slab = kept
	} else {
		r.Fields = p.fields()
	}
	r.Node = p.node(start)
	return r
}

func (p *fastParser) config() *ast.Config {
	start := p.i
	p.expect("config")
	c := &ast.Config{Name: p.ident()}
	c.Fields = p.fields()
	c.Node = p.node(start)
	return c
}

func (p *fastParser) blockDecl() *ast.BlockDecl {
	start := p.i
	b := p.slab.blockDecl.next()
	b.Kind = p.toks[p.i].Value
	p.i++
	b.Name = p.ident()
	b.Body = p.block()
	b.Node = p.node(start)
	return b
}

// fields is `{ field* }`.
func (p *fastParser) fields() []*ast.Field {
	p.expect("{")
	l := &p.slab.fieldList
	mark := l.mark()
	for !p.failed && !p.is(p.i, "}") {
		l.push(p.field())
	}
	fs := l.done(mark)
	p.expect("}")
	return fs
}

func (p *fastParser) field() *ast.Field {
	start := p.i
	b := p.slab.fieldBs.next()
	f := &b.f
	p.identIn(&f.Name)
	p.expect(":")
	p.typeExprIn(&f.Type, &b.part)
	if !p.failed && p.is(p.i, "{") {
		f.Options = p.block()
	}
	f.Node = p.node(start)
	return f
}

func (p *fastParser) typeExpr() *ast.TypeExpr {
	b := p.slab.typeBs.next()
	p.typeExprIn(&b.t, &b.part)
	return &b.t
}

// typeExprIn fills t, its name's first part in part.
func (p *fastParser) typeExprIn(t *ast.TypeExpr, part *[1]ast.Ident) {
	start := p.i
	p.qualNameIn(&t.Name, part)
	if !p.failed && p.is(p.i, "<") {
		p.i++
		l := &p.slab.typeList
		mark := l.mark()
		l.push(p.typeExpr())
		for !p.failed && p.is(p.i, ",") {
			p.i++
			l.push(p.typeExpr())
		}
		t.Args = l.done(mark)
		p.expect(">")
	}
	if !p.failed && p.is(p.i, "?") {
		t.Optional = true
		p.i++
	}
	t.Node = p.node(start)
}

func (p *fastParser) block() *ast.Block {
	start := p.i
	p.expect("{")
	b := p.slab.blocks.next()
	l := &p.slab.memberList
	mark := l.mark()
	for !p.failed && !p.is(p.i, "}") {
		l.push(p.member())
	}
	b.Members = l.done(mark)
	p.expect("}")
	b.Node = p.node(start)
	return b
}

func (p *fastParser) member() *ast.Member {
	start := p.i
	if p.failed {
		return nil
	}
	var m *ast.Member
	switch {
	case p.isIdent(p.i) && p.is(p.i+1, ":"):
		b := p.slab.keyed.next()
		m = &b.m
		m.Key = p.identIn(&b.key)
		p.i++
		m.Value = p.exprIn(&b.v)
	case p.isIdent(p.i):
		m = p.slab.members.next()
		m.Entry = p.qualName()
		if !p.failed && p.is(p.i, "{") {
			m.EntryBody = p.block()
		}
	default:
		p.fail()
		return nil
	}
	m.Node = p.node(start)
	return m
}

func (p *fastParser) expr() *ast.Expr { return p.exprIn(nil) }

// exprIn fills b (nil: one from the slab).
func (p *fastParser) exprIn(b *exprBundle) *ast.Expr {
	if p.failed || p.i >= len(p.toks) {
		p.fail()
		return nil
	}
	start := p.i
	if b == nil {
		b = p.slab.exprs.next()
	}
	e := &b.e
	t := &p.toks[p.i]
	switch {
	case t.Type == uint8(lexer.String):
		b.s = t.Value
		e.Text = &b.s
		p.i++
	case t.Type == uint8(lexer.Duration):
		b.s = t.Value
		e.Duration = &b.s
		p.i++
	case t.Type == uint8(lexer.Number):
		b.s = t.Value
		e.Number = &b.s
		p.i++
	case t.Value == "[":
		e.List = p.list()
	case t.Value == "{":
		e.Record = p.block()
	case t.Type == uint8(lexer.Ident):
		e.Ref = p.ref()
	default:
		p.fail()
		return nil
	}
	e.Node = p.node(start)
	return e
}

func (p *fastParser) list() *ast.List {
	start := p.i
	p.expect("[")
	l := p.slab.lists.next()
	items := &p.slab.exprList
	mark := items.mark()
	if !p.failed && !p.is(p.i, "]") {
		items.push(p.expr())
		for !p.failed && p.is(p.i, ",") {
			p.i++
			if p.is(p.i, "]") {
				break
			}
			items.push(p.expr())
		}
	}
	l.Items = items.done(mark)
	p.expect("]")
	l.Node = p.node(start)
	return l
}

func (p *fastParser) ref() *ast.Ref {
	start := p.i
	b := p.slab.refs.next()
	r := &b.r
	p.qualNameIn(&b.n.q, &b.n.part)
	r.Path = &b.n.q
	if !p.failed && p.is(p.i, "(") {
		p.i++
		r.Call = p.args()
		p.expect(")")
	}
	r.Node = p.node(start)
	return r
}

func (p *fastParser) args() *ast.Args {
	start := p.i
	a := p.slab.argss.next()
	items := &p.slab.argList
	mark := items.mark()
	if !p.failed && !p.is(p.i, ")") {
		items.push(p.arg())
		for !p.failed && !p.is(p.i, ")") {
			if p.is(p.i, ",") {
				p.i++
				if p.is(p.i, ")") {
					break
				}
			}
			items.push(p.arg())
		}
	}
	a.Items = items.done(mark)
	a.Node = p.node(start)
	return a
}

func (p *fastParser) arg() *ast.Arg {
	start := p.i
	a := p.slab.args.next()
	if p.isIdent(p.i) && p.is(p.i+1, ":") {
		a.Name = p.ident()
		p.i++
	}
	a.Value = p.expr()
	a.Node = p.node(start)
	return a
}
