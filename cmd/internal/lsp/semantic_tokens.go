package lsp

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// Semantic tokens (LSP 3.17 textDocument/semanticTokens): what each word
// of a file is, read in three layers, each overriding the one before:
//
//  1. the lexer's tokens: text, numbers (durations with their unit) and,
//     between tokens, comments; so a file that does not parse at all is
//     still coloured, and a declaration keyword at a line's start in a
//     declaration that did not parse is still a keyword;
//  2. the parser's tree: keywords, declared names by kind, member keys,
//     built-in types and literals (true, false, none), a call's argument
//     names;
//  3. the checker's index: every declared name and every use of one,
//     coloured as what it resolved to (a queue's events, a handler's
//     binding, a config field through `config.x`).
//
// The legend below is what initialize advertises; its order is the wire's.

// semanticTokenTypes are the token types, in legend order. The first ones
// are LSP's own; config, store, connection, queue and subscriber are
// jadpo's (the VS Code extension declares them with a standard super type,
// so a theme without them still colours them).
var semanticTokenTypes = []string{
	"namespace", "type", "enum", "enumMember", "struct", "event", "property", "parameter",
	"variable", "function", "method", "interface", "keyword", "string", "number", "comment",
	"config", "store", "connection", "queue", "subscriber",
}

// semanticTokenModifiers are the modifiers, in legend order (bit i is the i-th).
var semanticTokenModifiers = []string{"declaration", "readonly", "defaultLibrary"}

const (
	modDeclaration = 1 << iota
	modReadonly
	modDefaultLibrary
)

// tokType is a token type's index in the legend.
func tokType(name string) int {
	for i, t := range semanticTokenTypes {
		if t == name {
			return i
		}
	}
	panic("semantic token type not in the legend: " + name)
}

var (
	ttNamespace  = tokType("namespace")
	ttType       = tokType("type")
	ttEnum       = tokType("enum")
	ttEnumMember = tokType("enumMember")
	ttStruct     = tokType("struct")
	ttEvent      = tokType("event")
	ttProperty   = tokType("property")
	ttParameter  = tokType("parameter")
	ttVariable   = tokType("variable")
	ttFunction   = tokType("function")
	ttMethod     = tokType("method")
	ttInterface  = tokType("interface")
	ttKeyword    = tokType("keyword")
	ttString     = tokType("string")
	ttNumber     = tokType("number")
	ttComment    = tokType("comment")
	ttConfig     = tokType("config")
	ttStore      = tokType("store")
	ttConnection = tokType("connection")
	ttQueue      = tokType("queue")
	ttSubscriber = tokType("subscriber")
)

// symbolTokenType is the token type of what a symbol declares, with the
// modifiers its kind always has.
func symbolTokenType(k check.SymbolKind) (typ, mods int) {
	switch k {
	case check.SymModule, check.SymPackage, check.SymResource:
		return ttNamespace, 0
	case check.SymType:
		return ttType, 0
	case check.SymEnum:
		return ttEnum, 0
	case check.SymVariant:
		return ttEnumMember, 0
	case check.SymValue:
		return ttStruct, 0
	case check.SymEvent:
		return ttEvent, 0
	case check.SymField:
		return ttProperty, 0
	case check.SymConfig:
		return ttConfig, modReadonly
	case check.SymConfigField, check.SymSetting:
		return ttProperty, modReadonly
	case check.SymStore:
		return ttStore, 0
	case check.SymConnection:
		return ttConnection, 0
	case check.SymQueue:
		return ttQueue, 0
	case check.SymSubscriber:
		return ttSubscriber, 0
	case check.SymBinding:
		return ttParameter, 0
	case check.SymOperation:
		return ttMethod, 0
	}
	return ttVariable, 0
}

// builtinType reports whether name is a scalar base or a generic type (the
// completion's builtinTypes): a type expression naming one is defaultLibrary.
func builtinType(name string) bool {
	for _, b := range builtinTypes {
		if b == name {
			return true
		}
	}
	return false
}

// builtinEnums are the enums a package's provider block names.
var builtinEnums = map[string]bool{"Protocol": true, "CredentialScheme": true}

// builtinRoots are the names a dotted reference starts from that the
// language gives: config.x in an app, the mappings' settings, response,
// item, message and input.
var builtinRoots = map[string]bool{"config": true, "settings": true, "response": true, "item": true, "message": true, "input": true}

// lineStartKeywords are the words that start a declaration, a handler or
// a step: a keyword at a line's start where the tree has nothing.
var lineStartKeywords = map[string]bool{
	"use": true, "public": true, "type": true, "enum": true, "value": true, "event": true,
	"config": true, "store": true, "connection": true, "queue": true, "subscriber": true,
	"package": true, "provider": true, "settings": true, "resource": true, "provide": true,
	"operation": true, "on": true, "attempt": true,
}

// semTok is one classified token: a byte range of the file, a type and
// modifiers.
type semTok struct {
	start, end int
	typ, mods  int
}

type tokClass struct{ typ, mods int }

// classifier gathers the classes of a file's words by their start offset.
type classifier struct {
	toks    []plexer.Token
	classes map[int]tokClass
	// parsed are the ranges of the declarations the tree holds.
	parsed []source.Span
}

func (c *classifier) set(start, typ, mods int) { c.classes[start] = tokClass{typ, mods} }

func (c *classifier) ident(id *ast.Ident, typ, mods int) {
	if id != nil && id.Name != "" {
		c.set(int(id.Start), typ, mods)
	}
}

// keywordAt marks the token starting at off as a keyword, and returns the
// offset of the token after it.
func (c *classifier) keywordAt(off int) int {
	i := sort.Search(len(c.toks), func(i int) bool { return c.toks[i].Pos.Offset >= off })
	if i < len(c.toks) && c.toks[i].Pos.Offset == off && c.toks[i].Type == lexer.Ident {
		c.set(off, ttKeyword, 0)
		if i+1 < len(c.toks) {
			return c.toks[i+1].Pos.Offset
		}
	}
	return -1
}

// fileTokens classifies a file's words. tree may be nil (the file is then
// parsed here), ix nil (no check: the tree and the lexer say all).
func fileTokens(f *source.File, tree *ast.File, ix *check.Index) []semTok {
	if tree == nil {
		tree, _ = parser.ParseFile(f)
	}
	src := string(f.Content)
	toks, _ := lexer.Lex(src)
	c := &classifier{toks: toks, classes: map[int]tokClass{}}
	for _, d := range tree.Decls {
		c.parsed = append(c.parsed, d.Span())
		c.decl(d)
	}
	if ix != nil {
		// Uses first, declarations over them: `queue X` is a use of
		// connection X and the queue's declaration.
		path := f.Path
		for _, r := range ix.RefsIn(path) {
			if r.Target == nil || r.At.Span.Len() == 0 {
				continue
			}
			typ, mods := symbolTokenType(r.Target.Kind)
			c.set(r.At.Span.Start, typ, mods)
		}
		for s := range ix.Symbols() {
			if s.Kind == check.SymModule || s.Ident.File == nil || s.Ident.File.Path != path || s.Ident.Span.Len() == 0 {
				continue
			}
			typ, mods := symbolTokenType(s.Kind)
			c.set(s.Ident.Span.Start, typ, mods|modDeclaration)
		}
	}
	out := make([]semTok, 0, len(toks))
	prevEnd := 0
	if strings.HasPrefix(src, source.BOM) {
		prevEnd = len(source.BOM)
	}
	for _, t := range toks {
		off := t.Pos.Offset
		out = appendComments(out, src, prevEnd, off)
		if t.Type == plexer.EOF {
			break
		}
		end := off + len(t.Value)
		prevEnd = end
		switch t.Type {
		case lexer.String:
			out = append(out, semTok{off, end, ttString, 0})
		case lexer.Number, lexer.Duration:
			out = append(out, semTok{off, end, ttNumber, 0})
		case lexer.Ident:
			if cl, ok := c.classes[off]; ok {
				out = append(out, semTok{off, end, cl.typ, cl.mods})
			} else if lineStartKeywords[t.Value] && !c.inParsed(off) && (atLineStart(src, off) || afterPublic(out, src, off)) {
				out = append(out, semTok{off, end, ttKeyword, 0})
			}
		}
	}
	return out
}

// appendComments adds the comments in src[from:to], the text between two
// tokens: each runs from `//` to the end of its line.
func appendComments(out []semTok, src string, from, to int) []semTok {
	for from < to {
		i := strings.Index(src[from:to], "//")
		if i < 0 {
			break
		}
		start := from + i
		end := start + strings.IndexByte(src[start:to]+"\n", '\n')
		end = min(end, to)
		if end > start && src[end-1] == '\r' {
			end--
		}
		out = append(out, semTok{start, end, ttComment, 0})
		from = end + 1
	}
	return out
}

// afterPublic reports whether the token at off follows the keyword
// `public` (the last token classified), with only spaces between.
func afterPublic(out []semTok, src string, off int) bool {
	if len(out) == 0 {
		return false
	}
	last := out[len(out)-1]
	return last.typ == ttKeyword && src[last.start:last.end] == "public" && strings.TrimSpace(src[last.end:off]) == ""
}

func atLineStart(src string, off int) bool {
	for i := off - 1; i >= 0; i-- {
		switch src[i] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

func (c *classifier) inParsed(off int) bool {
	for _, s := range c.parsed {
		if s.Start <= off && off < s.End {
			return true
		}
	}
	return false
}

func (c *classifier) decl(d *ast.Decl) {
	switch {
	case d.Use != nil:
		c.keywordAt(d.Use.Span().Start)
		if d.Use.Path != nil {
			c.modulePath(d.Use)
		}
		for _, n := range d.Use.Names {
			c.ident(n, ttType, 0)
		}
	case d.Package != nil:
		c.keywordAt(d.Package.Span().Start)
		c.qualNamespace(d.Package.Name)
	case d.Provider != nil:
		c.keywordAt(d.Provider.Span().Start)
		c.block(d.Provider.Body)
	case d.Settings != nil:
		c.keywordAt(d.Settings.Span().Start)
		for _, f := range d.Settings.Fields {
			c.field(f, modReadonly)
		}
	case d.Resource != nil:
		c.keywordAt(d.Resource.Span().Start)
		c.ident(d.Resource.Name, ttNamespace, modDeclaration)
		for _, op := range d.Resource.Operations {
			c.keywordAt(op.Span().Start)
			c.ident(op.Name, ttMethod, modDeclaration)
			c.block(op.Body)
		}
	case d.Subscriber != nil:
		c.keywordAt(d.Subscriber.Span().Start)
		c.ident(d.Subscriber.Name, ttSubscriber, modDeclaration)
		for _, it := range d.Subscriber.Items {
			if h := it.Handler; h != nil {
				c.keywordAt(h.Span().Start)
				c.qualType(h.Event, ttEvent)
				c.ident(h.Binding, ttParameter, modDeclaration)
				for _, st := range h.Steps {
					c.keywordAt(st.Span().Start)
					c.expr(st.Call)
				}
			}
			c.member(it.Member)
		}
	case d.Named != nil:
		c.named(d.Named)
	}
}

func (c *classifier) modulePath(u *ast.Use) {
	// The path's parts are identifiers between slashes: find them among
	// the tokens of the use line.
	sp := u.Path.Span()
	i := sort.Search(len(c.toks), func(i int) bool { return c.toks[i].Pos.Offset >= sp.Start })
	for ; i < len(c.toks) && c.toks[i].Pos.Offset < sp.End; i++ {
		if c.toks[i].Type == lexer.Ident {
			c.set(c.toks[i].Pos.Offset, ttNamespace, 0)
		}
	}
}

func (c *classifier) named(n *ast.Named) {
	kw := n.Span().Start
	if n.Public {
		kw = c.keywordAt(kw)
	}
	c.keywordAt(kw)
	switch {
	case n.Type != nil:
		c.ident(n.Type.Name, ttType, modDeclaration)
		c.typeExpr(n.Type.Base)
		c.block(n.Type.Rules)
	case n.Enum != nil:
		c.ident(n.Enum.Name, ttEnum, modDeclaration)
		for _, v := range n.Enum.Variants {
			c.ident(v, ttEnumMember, modDeclaration)
		}
	case n.Record != nil:
		typ := ttStruct
		if n.Record.IsEvent() {
			typ = ttEvent
		}
		c.ident(n.Record.Name, typ, modDeclaration)
		for _, f := range n.Record.Fields {
			c.field(f, 0)
		}
	case n.Config != nil:
		c.ident(n.Config.Name, ttConfig, modDeclaration|modReadonly)
		for _, f := range n.Config.Fields {
			c.field(f, modReadonly)
		}
	case n.BlockDecl != nil:
		b := n.BlockDecl
		switch b.Kind {
		case "store":
			c.ident(b.Name, ttStore, modDeclaration)
		case "connection":
			c.ident(b.Name, ttConnection, modDeclaration)
		case "queue":
			c.ident(b.Name, ttQueue, modDeclaration)
		case "provide":
			c.ident(b.Name, ttInterface, modDefaultLibrary)
		}
		c.block(b.Body)
	}
}

func (c *classifier) field(f *ast.Field, mods int) {
	if f == nil {
		return
	}
	c.ident(&f.Name, ttProperty, modDeclaration|mods)
	c.typeExpr(&f.Type)
	c.block(f.Options)
}

func (c *classifier) typeExpr(t *ast.TypeExpr) {
	if t == nil || len(t.Name.Parts) == 0 {
		return
	}
	if len(t.Name.Parts) == 1 && builtinType(t.Name.Parts[0].Name) {
		c.ident(&t.Name.Parts[0], ttType, modDefaultLibrary)
	} else {
		c.qualType(&t.Name, ttType)
	}
	for _, a := range t.Args {
		c.typeExpr(a)
	}
}

// qualType is Package.Name or Name: the package a namespace, the last part typ.
func (c *classifier) qualType(q *ast.QualName, typ int) {
	if q == nil || len(q.Parts) == 0 {
		return
	}
	for i := range len(q.Parts) - 1 {
		c.ident(&q.Parts[i], ttNamespace, 0)
	}
	c.ident(&q.Parts[len(q.Parts)-1], typ, 0)
}

func (c *classifier) qualNamespace(q *ast.QualName) {
	if q == nil {
		return
	}
	for i := range q.Parts {
		c.ident(&q.Parts[i], ttNamespace, 0)
	}
}

func (c *classifier) block(b *ast.Block) {
	if b == nil {
		return
	}
	for _, m := range b.Members {
		c.member(m)
	}
}

func (c *classifier) member(m *ast.Member) {
	if m == nil {
		return
	}
	if m.Key != nil {
		c.ident(m.Key, ttProperty, 0)
		if v := m.Value; m.Key.Name == "package" && v != nil && v.Ref != nil && v.Ref.Call == nil {
			c.qualNamespace(v.Ref.Path) // package: AmazonSqs.v2012_11_05
			return
		}
		c.expr(m.Value)
		return
	}
	c.qualType(m.Entry, ttEvent) // a queue's events: OrderShipped { wire_name: "x" }
	c.block(m.EntryBody)
}

func (c *classifier) expr(e *ast.Expr) {
	if e == nil {
		return
	}
	switch {
	case e.List != nil:
		for _, it := range e.List.Items {
			c.expr(it)
		}
	case e.Record != nil:
		c.block(e.Record)
	case e.Ref != nil:
		c.ref(e.Ref)
	}
}

func (c *classifier) ref(r *ast.Ref) {
	if r.Path == nil || len(r.Path.Parts) == 0 {
		return
	}
	parts := r.Path.Parts
	first := parts[0].Name
	switch {
	case len(parts) == 1 && r.Call == nil && (first == "true" || first == "false" || first == "none"):
		c.ident(&parts[0], ttKeyword, 0)
	case len(parts) == 1 && r.Call != nil && first == "json":
		c.ident(&parts[0], ttFunction, modDefaultLibrary)
	case len(parts) == 2 && builtinEnums[first]:
		c.ident(&parts[0], ttEnum, modDefaultLibrary)
		c.ident(&parts[1], ttEnumMember, modDefaultLibrary)
	case len(parts) == 1 && r.Call == nil:
		c.ident(&parts[0], ttEnumMember, 0) // a bare word: an enum's variant (`default: dhl`, `claim: lease`)
	default:
		if builtinRoots[first] && len(parts) > 1 {
			mods := modDefaultLibrary
			if first == "config" {
				mods |= modReadonly
			}
			c.ident(&parts[0], ttVariable, mods)
		} else {
			c.ident(&parts[0], ttVariable, 0)
		}
		for i := range parts[1:] {
			c.ident(&parts[1+i], ttProperty, 0)
		}
		if r.Call != nil {
			c.ident(&parts[len(parts)-1], ttMethod, 0)
		}
	}
	if r.Call != nil {
		for _, a := range r.Call.Items {
			c.ident(a.Name, ttParameter, 0)
			c.expr(a.Value)
		}
	}
}

// encodeTokens is LSP's relative encoding: five integers a token (line
// delta, start delta, length, type, modifiers), lengths in UTF-16 units.
func encodeTokens(f *source.File, toks []semTok) []uint32 {
	out := make([]uint32, 0, 5*len(toks))
	prevLine, prevChar := 0, 0
	for _, t := range toks {
		line := f.Position(t.start).Line - 1
		char := f.UTF16Column(t.start)
		n := 0
		for _, r := range string(f.Content[t.start:t.end]) {
			n += utf16Len(r)
		}
		if n == 0 {
			continue
		}
		dc := char
		if line == prevLine {
			dc = char - prevChar
		}
		out = append(out, uint32(line-prevLine), uint32(dc), uint32(n), uint32(t.typ), uint32(t.mods))
		prevLine, prevChar = line, char
	}
	return out
}

// semanticResult is the last full answer for a document, for a delta.
type semanticResult struct {
	id   string
	data []uint32
}

func (s *server) semanticTokensLegend() *protocol.SemanticTokensOptions {
	return &protocol.SemanticTokensOptions{
		Legend: protocol.SemanticTokensLegend{TokenTypes: semanticTokenTypes, TokenModifiers: semanticTokenModifiers},
		Full:   &protocol.SemanticTokensFullDelta{Delta: true},
		Range:  true,
	}
}

func (s *server) documentTokens(dc *docContext) []semTok {
	return fileTokens(dc.file, dc.tree, dc.pr.res.Index)
}

// semanticTokensFull answers textDocument/semanticTokens/full, keeping the
// answer so a later delta can be sent against it.
func (s *server) semanticTokensFull(dc *docContext) (any, error) {
	data := encodeTokens(dc.file, s.documentTokens(dc))
	return protocol.SemanticTokens{ResultID: s.keepTokens(dc, data), Data: data}, nil
}

func (s *server) keepTokens(dc *docContext, data []uint32) string {
	if s.semantic == nil {
		s.semantic = map[string]semanticResult{}
	}
	s.semanticSeq++
	id := strconv.Itoa(s.semanticSeq)
	s.semantic[dc.pr.abs(dc.path)] = semanticResult{id: id, data: data}
	return id
}

// semanticTokensDelta answers textDocument/semanticTokens/full/delta: one
// edit, the integers between the common start and the common end of the
// last answer and this one; the whole answer when the editor's previous
// result is not the one kept.
func (s *server) semanticTokensDelta(dc *docContext) (any, error) {
	var p protocol.SemanticTokensDeltaParams
	_ = json.Unmarshal(dc.raw, &p)
	prev, ok := s.semantic[dc.pr.abs(dc.path)]
	data := encodeTokens(dc.file, s.documentTokens(dc))
	id := s.keepTokens(dc, data)
	if !ok || prev.id != p.PreviousResultID {
		return protocol.SemanticTokens{ResultID: id, Data: data}, nil
	}
	old := prev.data
	pre := 0
	for pre < len(old) && pre < len(data) && old[pre] == data[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(data)-pre && old[len(old)-1-suf] == data[len(data)-1-suf] {
		suf++
	}
	edits := []protocol.SemanticTokensEdit{}
	if pre != len(old) || pre != len(data) {
		edits = append(edits, protocol.SemanticTokensEdit{Start: pre, DeleteCount: len(old) - pre - suf, Data: data[pre : len(data)-suf]})
	}
	return protocol.SemanticTokensDelta{ResultID: id, Edits: edits}, nil
}

// semanticTokensRange answers textDocument/semanticTokens/range: the
// tokens that start in the range.
func (s *server) semanticTokensRange(dc *docContext) (any, error) {
	var p protocol.SemanticTokensRangeParams
	if err := json.Unmarshal(dc.raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	from, to := rangeOffsets(dc.file, p.Range)
	var in []semTok
	for _, t := range s.documentTokens(dc) {
		if t.start >= from && t.start < to {
			in = append(in, t)
		}
	}
	return protocol.SemanticTokens{Data: encodeTokens(dc.file, in)}, nil
}
