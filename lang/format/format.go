// Package format prints .jadpo source in its one canonical layout, the one
// `jadpo fmt` writes and the language server's formatting answers with
// (docs/reference/formatting.md describes it for users).
//
// It prints the syntax tree, not the text: the tree says where each member,
// field and item begins and ends, and the layout follows from that alone.
// The tree holds no comments, so they are read from the source between the
// tokens and put back before the token they preceded, on their own line or
// after the code of their line as they stood. Which of a bracket's layouts
// to use (all on one line, or one item a line) is the author's: a `{ }`,
// `[ ]` or `( )` written on one line stays on one line while it fits in
// MaxWidth columns. So formatting is idempotent, and a formatted file parses
// to the same tree as its source; FuzzFormat checks both.
package format

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// MaxWidth is the column past which a bracket written on one line is broken
// into one item a line.
const MaxWidth = 100

// Indent is one level of indentation.
const Indent = "    "

// Source returns src in the canonical layout. A file with a syntax error is
// not formatted: the error is the parser's diagnostics (a diag.List), so the
// caller can show them as `jadpo check` does.
func Source(filename string, src []byte) ([]byte, error) {
	f := source.NewFile(filename, src)
	tree, diags := parser.ParseFile(f)
	if len(diags) > 0 {
		return nil, diags
	}
	return print(tree)
}

// internalError is a token the printer did not expect where it stood: a
// printer bug, never the author's, and never a reason to write a file.
type internalError struct{ msg string }

func (e internalError) Error() string { return "jadpo fmt cannot format this file (a bug): " + e.msg }

func print(tree *ast.File) (out []byte, err error) {
	src := tree.Source.Content
	toks, probs := lexer.Lex(unsafe.String(unsafe.SliceData(src), len(src)))
	if len(probs) > 0 {
		return nil, internalError{"the file has lexical problems the parser did not report"}
	}
	p := newPrinter(src, toks)
	defer func() {
		if r := recover(); r != nil {
			ie, ok := r.(internalError)
			if !ok {
				panic(r)
			}
			out, err = nil, ie
		}
	}()
	p.file(tree)
	return p.out, nil
}

// ws is the whitespace the layout asks for before the next token.
type ws int

const (
	wsNone  ws = iota
	wsSpace    // one space
	wsLine     // a line break; a blank line of the source is dropped (after `{`, before `}`)
	wsItem     // a line break between items: a blank line of the source is kept
	wsBlank    // a blank line, whatever the source had
)

// comment is one `//` comment of the source.
type comment struct {
	start int
	text  string // from `//` to the line's end, trailing spaces dropped
	// ownLine: no token precedes it on its line; otherwise it trails the
	// code before it.
	ownLine bool
	// blankBefore: a blank line stands between it and what precedes it.
	blankBefore bool
}

type printer struct {
	src      []byte
	toks     []plexer.Token // the source's tokens, EOF last
	blank    []bool         // blank[i]: a blank line stands right before toks[i]
	match    []int          // match[i]: the index of the bracket closing toks[i]
	comments []comment

	out       []byte
	col       int  // the current line's width in characters, indentation included
	lines     int  // line breaks written
	lineEmpty bool // nothing but indentation written on the current line (or the file's start)
	ended     bool // a comment ends the current line: what follows starts a new one
	indent    int
	pending   ws
	ti        int // the next source token to print
	ci        int // the next comment to print
	// flat > 0 while measuring a bracket's one-line form; overflow is set
	// when that form would need a line break.
	flat     int
	overflow bool
	// watchLines is the line count once toks[watch] is written.
	watch, watchLines int
}

func newPrinter(src []byte, toks []plexer.Token) *printer {
	p := &printer{watch: -1, src: src, toks: toks, blank: make([]bool, len(toks)), match: make([]int, len(toks)), lineEmpty: true}
	pos := 0
	if bytes.HasPrefix(src, []byte(source.BOM)) {
		pos = len(source.BOM)
	}
	first := true // no token yet: a comment stands on its own line
	for i, t := range toks {
		newlines := 0
		for pos < t.Pos.Offset {
			switch c := src[pos]; {
			case c == '\n':
				newlines++
				pos++
			case c == '/':
				end := pos
				for end < len(src) && src[end] != '\n' {
					end++
				}
				p.comments = append(p.comments, comment{
					start:       pos,
					text:        strings.TrimRight(string(src[pos:end]), " \t\r"),
					ownLine:     first || newlines > 0,
					blankBefore: newlines > 1,
				})
				newlines = 0
				pos = end
			default:
				pos++
			}
		}
		p.blank[i] = newlines > 1
		pos = t.Pos.Offset + len(t.Value)
		first = false
	}
	var open []int
	for i, t := range toks {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "[", "(", "<":
			open = append(open, i)
		case "}", "]", ")", ">":
			if len(open) > 0 {
				p.match[open[len(open)-1]] = i
				open = open[:len(open)-1]
			}
		}
	}
	return p
}

func (p *printer) fail(format string, args ...any) {
	panic(internalError{fmt.Sprintf(format, args...)})
}

// ask records the whitespace wanted before the next token (the most of
// what was asked).
func (p *printer) ask(w ws) {
	if w > p.pending {
		p.pending = w
	}
}

// lineBreak starts a new line. Where the layout wants no line break (w
// below wsLine) but a comment forces one, the line continues one level in.
func (p *printer) lineBreak(w ws, srcBlank bool) {
	if p.flat > 0 {
		p.overflow = true
		return
	}
	p.ended = false
	if len(p.out) == 0 {
		return // nothing before it: no line to end
	}
	if w == wsBlank || w >= wsItem && srcBlank {
		p.out = append(p.out, '\n')
		p.lines++
	}
	p.out = append(p.out, '\n')
	p.lines++
	level := p.indent
	if w < wsLine {
		level++
	}
	for range level {
		p.out = append(p.out, Indent...)
	}
	p.col = level * len(Indent)
	p.lineEmpty = true
}

func (p *printer) write(s string) {
	p.out = append(p.out, s...)
	p.col += utf8.RuneCountInString(s)
	p.lineEmpty = false
}

// space resolves the pending whitespace w before a token or comment;
// srcBlank: the source has a blank line there.
func (p *printer) space(w ws, srcBlank bool) {
	switch {
	case p.ended || w >= wsLine:
		p.lineBreak(w, srcBlank)
	case w == wsSpace && !p.lineEmpty:
		p.write(" ")
	}
}

// flushComments prints the comments that stand before offset off, and
// returns the whitespace still wanted before what follows them.
func (p *printer) flushComments(off int, w ws) ws {
	for p.ci < len(p.comments) && p.comments[p.ci].start < off {
		c := p.comments[p.ci]
		p.ci++
		// A comment goes on a line of its own where it stood on one and
		// the layout breaks the line there; otherwise it trails the code.
		ownLine := p.ended || p.lineEmpty || c.ownLine && w >= wsLine
		if ownLine {
			p.space(w, c.blankBefore)
		} else {
			p.write(" ")
		}
		if p.flat > 0 {
			p.overflow = true
			continue
		}
		p.write(c.text)
		p.ended = true
		// A blank line between a comment and the item it comes before is
		// the author's, as between items.
		if ownLine && (w == wsLine || w == wsBlank) {
			w = wsItem
		}
	}
	return w
}

// token prints the next source token, which must be want (any, if empty),
// after the comments before it.
func (p *printer) token(want string) {
	t := p.toks[p.ti]
	if t.EOF() || want != "" && t.Value != want {
		p.fail("expected %q at byte %d, found %q", want, t.Pos.Offset, t.Value)
	}
	w := p.flushComments(t.Pos.Offset, p.pending)
	p.pending = wsNone
	p.space(w, p.blank[p.ti])
	p.write(t.Value)
	if p.ti == p.watch {
		p.watchLines = p.lines
	}
	p.ti++
}

// ident prints the next source token, which must be id.
func (p *printer) ident(id *ast.Ident) {
	if t := p.toks[p.ti]; t.Pos.Offset != int(id.Start) {
		p.fail("expected %q at byte %d, found %q at %d", id.Name, id.Start, t.Value, t.Pos.Offset)
	}
	p.token(id.Name)
}

// comma prints a comma the layout puts after an item: the source's own, if
// it wrote one, is taken without printing the comments around it, which
// stay before the next token.
func (p *printer) comma() {
	if t := p.toks[p.ti]; t.Type == lexer.Punct && t.Value == "," {
		p.ti++
	}
	p.pending = wsNone
	if p.ended {
		p.fail("a comma after a comment")
	}
	p.write(",")
}

// skipComma takes a comma the source wrote where the layout has none.
func (p *printer) skipComma() {
	if t := p.toks[p.ti]; t.Type == lexer.Punct && t.Value == "," {
		p.ti++
	}
}

type state struct {
	outLen, col, lines, indent, ti, ci int
	lineEmpty, ended, overflow         bool
	pending                            ws
}

func (p *printer) save() state {
	return state{len(p.out), p.col, p.lines, p.indent, p.ti, p.ci, p.lineEmpty, p.ended, p.overflow, p.pending}
}

func (p *printer) restore(s state) {
	p.out = p.out[:s.outLen]
	p.col, p.lines, p.indent, p.ti, p.ci = s.col, s.lines, s.indent, s.ti, s.ci
	p.lineEmpty, p.ended, p.overflow, p.pending = s.lineEmpty, s.ended, s.overflow, s.pending
}

// bracket is a list of items between brackets: a block's members, a
// record's fields, a list's items, a call's arguments.
type bracket struct {
	pad   bool // one-line form has spaces inside: `{ a b }`, not `[a, b]`
	comma bool // items are separated by commas
	n     int
	item  func(i int)
}

// list prints a bracket whose opening token is the next one: on one line
// if it was written on one line, holds no comment and fits; otherwise one
// item a line, commas (where the list takes them) after each but the last.
func (p *printer) list(b bracket) {
	open := p.ti
	close := p.match[open]
	if close <= open {
		p.fail("an unmatched %q at byte %d", p.toks[open].Value, p.toks[open].Pos.Offset)
	}
	p.token("")
	broken := false
	if p.flat == 0 {
		broken = p.hasComment(open, close) || p.hasNewline(open, close) ||
			b.n > 0 && !p.fits(func() { p.oneLine(b) })
	}
	if !broken {
		p.oneLine(b)
		return
	}
	p.indent++
	for i := range b.n {
		if i == 0 {
			p.ask(wsLine)
		} else {
			p.ask(wsItem)
		}
		b.item(i)
		if b.comma && i < b.n-1 {
			p.comma()
		}
	}
	if b.comma {
		p.skipComma()
	}
	// Comments after the last item stand at its indentation.
	w := wsItem
	if b.n == 0 {
		w = wsLine
	}
	p.flushComments(p.toks[p.ti].Pos.Offset, max(p.pending, w))
	p.indent--
	p.pending = wsLine
	p.token("")
}

func (p *printer) oneLine(b bracket) {
	for i := range b.n {
		if i > 0 || b.pad {
			p.ask(wsSpace)
		}
		b.item(i)
		if b.comma && i < b.n-1 {
			p.comma()
		}
	}
	if b.comma {
		p.skipComma()
	}
	if b.pad && b.n > 0 {
		p.ask(wsSpace)
	}
	p.token("")
}

// fits reports whether the rest of the line, printed by print in its
// one-line form, ends within MaxWidth.
func (p *printer) fits(print func()) bool {
	s := p.save()
	p.flat++
	p.overflow = false
	print()
	ok := !p.overflow && p.col <= MaxWidth
	p.flat--
	p.restore(s)
	return ok
}

func (p *printer) hasNewline(open, close int) bool {
	return bytes.IndexByte(p.src[p.toks[open].Pos.Offset:p.toks[close].Pos.Offset], '\n') >= 0
}

func (p *printer) hasComment(open, close int) bool {
	from, to := p.toks[open].Pos.Offset, p.toks[close].Pos.Offset
	for i := p.ci; i < len(p.comments) && p.comments[i].start < to; i++ {
		if p.comments[i].start > from {
			return true
		}
	}
	return false
}

// file prints the declarations: each from the first column, a blank line
// around any that takes more than one line, after the `use` lines and after
// the package header; elsewhere the author's blank line, at most one.
func (p *printer) file(f *ast.File) {
	prevMulti := false
	for i, d := range f.Decls {
		multi := p.multiLine(d)
		w := wsItem
		if i > 0 {
			prev := f.Decls[i-1]
			if prevMulti || multi || prev.Package != nil || prev.Use != nil && d.Use == nil {
				w = wsBlank
			}
		}
		p.ask(w)
		p.decl(d)
		prevMulti = multi
	}
	eof := p.toks[p.ti]
	if !eof.EOF() {
		p.fail("%q at byte %d is in no declaration", eof.Value, eof.Pos.Offset)
	}
	p.flushComments(eof.Pos.Offset, max(p.pending, wsItem))
	if len(p.out) > 0 {
		p.out = append(p.out, '\n')
	}
}

// multiLine prints d to see whether it takes more than one line (the
// comments before it aside), and takes the printing back.
func (p *printer) multiLine(d *ast.Decl) bool {
	s := p.save()
	p.ask(wsItem)
	p.watch, p.watchLines = p.ti, -1
	p.decl(d)
	multi := p.lines > p.watchLines
	p.watch = -1
	p.restore(s)
	return multi
}

func (p *printer) decl(d *ast.Decl) {
	switch {
	case d.Use != nil:
		p.token("use")
		p.ask(wsSpace)
		for i := range d.Use.Path.Parts {
			if i > 0 {
				p.token("/")
			}
			p.token("")
		}
		p.ask(wsSpace)
		names := d.Use.Names
		p.list(bracket{pad: true, comma: true, n: len(names), item: func(i int) { p.ident(names[i]) }})
	case d.Package != nil:
		p.token("package")
		p.ask(wsSpace)
		p.qualName(d.Package.Name)
	case d.Provider != nil:
		p.token("provider")
		p.ask(wsSpace)
		p.block(d.Provider.Body)
	case d.Settings != nil:
		p.token("settings")
		p.ask(wsSpace)
		p.fields(d.Settings.Fields)
	case d.Resource != nil:
		r := d.Resource
		p.token("resource")
		p.ask(wsSpace)
		p.ident(r.Name)
		p.ask(wsSpace)
		p.list(bracket{pad: true, n: len(r.Operations), item: func(i int) {
			op := r.Operations[i]
			p.token("operation")
			p.ask(wsSpace)
			p.ident(op.Name)
			p.ask(wsSpace)
			p.block(op.Body)
		}})
	case d.Subscriber != nil:
		s := d.Subscriber
		if s.Public {
			p.token("public")
			p.ask(wsSpace)
		}
		p.token("subscriber")
		p.ask(wsSpace)
		p.ident(s.Name)
		p.ask(wsSpace)
		p.list(bracket{pad: true, n: len(s.Items), item: func(i int) {
			if h := s.Items[i].Handler; h != nil {
				p.handler(h)
			} else {
				p.member(s.Items[i].Member)
			}
		}})
	case d.Named != nil:
		p.named(d.Named)
	default:
		p.fail("an empty declaration")
	}
}

func (p *printer) named(n *ast.Named) {
	if n.Public {
		p.token("public")
		p.ask(wsSpace)
	}
	switch {
	case n.Type != nil:
		p.token("type")
		p.ask(wsSpace)
		p.ident(n.Type.Name)
		p.ask(wsSpace)
		p.token("=")
		p.ask(wsSpace)
		p.typeExpr(n.Type.Base)
		if n.Type.Rules != nil {
			p.ask(wsSpace)
			p.block(n.Type.Rules)
		}
	case n.Enum != nil:
		p.token("enum")
		p.ask(wsSpace)
		p.ident(n.Enum.Name)
		p.ask(wsSpace)
		vs := n.Enum.Variants
		p.list(bracket{pad: true, n: len(vs), item: func(i int) { p.ident(vs[i]) }})
	case n.Record != nil:
		p.token(n.Record.Kind)
		p.ask(wsSpace)
		p.ident(n.Record.Name)
		p.ask(wsSpace)
		p.fields(n.Record.Fields)
	case n.Config != nil:
		p.token("config")
		p.ask(wsSpace)
		p.ident(n.Config.Name)
		p.ask(wsSpace)
		p.fields(n.Config.Fields)
	case n.BlockDecl != nil:
		p.token(n.BlockDecl.Kind)
		p.ask(wsSpace)
		p.ident(n.BlockDecl.Name)
		p.ask(wsSpace)
		p.block(n.BlockDecl.Body)
	default:
		p.fail("an empty named declaration")
	}
}

func (p *printer) fields(fs []*ast.Field) {
	p.list(bracket{pad: true, n: len(fs), item: func(i int) {
		f := fs[i]
		p.ident(&f.Name)
		p.token(":")
		p.ask(wsSpace)
		p.typeExpr(&f.Type)
		if f.Options != nil {
			p.ask(wsSpace)
			p.block(f.Options)
		}
	}})
}

func (p *printer) handler(h *ast.Handler) {
	p.token("on")
	p.ask(wsSpace)
	p.qualName(h.Event)
	p.token("(")
	p.ident(h.Binding)
	p.token(")")
	p.ask(wsSpace)
	p.list(bracket{pad: true, n: len(h.Steps), item: func(i int) {
		p.token("attempt")
		p.ask(wsSpace)
		p.expr(h.Steps[i].Call)
	}})
}

// typeExpr prints Sku, List<OrderLine>, Map<Text, Int>, Text?: never broken.
func (p *printer) typeExpr(t *ast.TypeExpr) {
	p.qualName(&t.Name)
	if len(t.Args) > 0 {
		p.token("<")
		for i, a := range t.Args {
			if i > 0 {
				p.token(",")
				p.ask(wsSpace)
			}
			p.typeExpr(a)
		}
		p.token(">")
	}
	if t.Optional {
		p.token("?")
	}
}

func (p *printer) block(b *ast.Block) {
	p.list(bracket{pad: true, n: len(b.Members), item: func(i int) { p.member(b.Members[i]) }})
}

func (p *printer) member(m *ast.Member) {
	if m.Key != nil {
		p.ident(m.Key)
		p.token(":")
		p.ask(wsSpace)
		p.expr(m.Value)
		return
	}
	p.qualName(m.Entry)
	if m.EntryBody != nil {
		p.ask(wsSpace)
		p.block(m.EntryBody)
	}
}

func (p *printer) expr(e *ast.Expr) {
	switch {
	case e.Text != nil, e.Duration != nil, e.Number != nil:
		p.token("")
	case e.List != nil:
		items := e.List.Items
		p.list(bracket{comma: true, n: len(items), item: func(i int) { p.expr(items[i]) }})
	case e.Record != nil:
		p.block(e.Record)
	case e.Ref != nil:
		p.qualName(e.Ref.Path)
		if c := e.Ref.Call; c != nil {
			p.list(bracket{comma: true, n: len(c.Items), item: func(i int) {
				a := c.Items[i]
				if a.Name != nil {
					p.ident(a.Name)
					p.token(":")
					p.ask(wsSpace)
				}
				p.expr(a.Value)
			}})
		}
	default:
		p.fail("an empty value")
	}
}

func (p *printer) qualName(q *ast.QualName) {
	for i := range q.Parts {
		if i > 0 {
			p.token(".")
		}
		p.ident(&q.Parts[i])
	}
}

// Diagnostics returns the syntax diagnostics in an error from Source, or
// nil for an error of another kind.
func Diagnostics(err error) diag.List {
	if l, ok := err.(diag.List); ok {
		return l
	}
	return nil
}
