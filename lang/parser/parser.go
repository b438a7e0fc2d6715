// Package parser turns a .jadpo file into its syntax tree and reports every
// independent syntax error in one run.
//
// Recovery works the way a reader does: the token stream is cut at each
// top-level declaration keyword, and each declaration is parsed on its own.
// A declaration that fails yields one diagnostic at its first offending token
// and is left out of the tree; the next one parses as if nothing happened.
//
// The grammar is written twice, on purpose. The reference is lang/ast's
// struct tags, read by participle, which reports every syntax error. Each
// declaration is first tried by a hand-written recursive descent (fast.go),
// the same grammar again without reflection, several times faster; it only
// accepts, and on anything it does not expect participle parses the
// declaration instead. FuzzParse and TestFastPathTakesRealProjects hold the
// two equal: what the fast path accepts, participle accepts with the same
// tree. A grammar change is made in both, and those tests say where they
// part.
package parser

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/alecthomas/participle/v2"
	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/source"
)

// declParser parses one declaration. Lookahead 1 is all the grammar needs
// (its alternatives part at their first or second token), and it makes a
// branch that got two tokens in commit to its error: `database: =` is
// reported at `=`, not at `:` after a backtrack to `database` as an entry.
var declParser = participle.MustBuild[gDecl](
	participle.Lexer(tokenDefinition{}),
	participle.UseLookahead(1),
)

// declKeywords start a top-level declaration.
var declKeywords = map[string]bool{
	"use": true, "public": true, "type": true, "enum": true, "value": true, "event": true,
	"config": true, "store": true, "connection": true, "queue": true, "subscriber": true,
	"package": true, "provider": true, "settings": true, "resource": true, "provide": true,
}

// ParseFile parses one file. Its diagnostics are syntax problems only; a
// declaration that did not parse is absent from the returned tree.
func ParseFile(f *source.File) (*ast.File, diag.List) { return parseFile(f, false) }

// ParseFileLean is ParseFile for a check, which reads each record's fields
// once: a file without a syntax problem keeps no record's fields in its
// tree (File.FieldsDeferred is set, and a FieldReader reads them again
// from the file when asked). Its fields are parsed all the same, so the
// diagnostics are ParseFile's. A record's fields are most of a tree (some
// 3x the source's bytes); a check holding every file's tree while it holds
// its own results peaked at 10x the source, the trees alone 7x
// (docs/performance.md). A file with a syntax problem is parsed as
// ParseFile parses it, its fields in the tree.
func ParseFileLean(f *source.File) (*ast.File, diag.List) { return parseFile(f, true) }

func parseFile(f *source.File, lean bool) (*ast.File, diag.List) {
	out := &ast.File{Source: f}
	var diags diag.List
	if !utf8.Valid(f.Content) {
		// Report the first bad byte once; the lexer would flag each.
		off := firstInvalidUTF8(f.Content)
		diags.Add(diag.SyntaxInvalidEncoding, source.Range{File: f, Span: source.Span{Start: off, End: off + 1}},
			"the file is not valid UTF-8")
		return out, diags
	}
	if clean := parseClean(f, lean); clean != nil && cleanPath {
		return clean, nil // no syntax problem: the fast path alone (clean.go)
	}
	// The tokens' values, and so the tree's names, are slices of the
	// file's own bytes, not of a copy: a source.File's content never changes.
	toks, probs := lexer.Lex(unsafe.String(unsafe.SliceData(f.Content), len(f.Content)))
	probs = append(probs, gluedToNumber(toks)...)
	for _, p := range probs {
		rng := source.Range{File: f, Span: p.Span}
		switch p.Code {
		case diag.SyntaxUnterminatedString:
			diags.Add(p.Code, rng, "text is not closed before the end of the line").WithLabel("this text has no closing `\"`")
		case diag.SyntaxInvalidEscape:
			d := diags.Addf(p.Code, rng, "`%s` is not an escape text may use", p.Detail)
			if p.Detail == `\u` || p.Detail == `\x` || p.Detail == `\U` {
				d.WithHelp("write the character itself: files are UTF-8; text may use only the escapes \\\" \\\\ \\n \\r \\t")
			}
		case diag.SyntaxStrayCharacter:
			if len(p.Detail) >= 2 && p.Detail[0] == '\'' && p.Detail[len(p.Detail)-1] == '\'' {
				inner := p.Detail[1 : len(p.Detail)-1]
				diags.Add(p.Code, rng, "text is written in double quotes, not single ones").
					WithLabel("write \"" + inner + "\"").WithFix("\"" + inner + "\"").
					WithHelp("text takes double quotes: \"" + inner + "\"")
				break
			}
			if p.Detail == "|" {
				if d := nullUnion(f, toks, p.Span); d != nil {
					diags = append(diags, d)
					break
				}
			}
			d := diags.Addf(p.Code, rng, "`%s` cannot appear here", p.Detail)
			if p.Detail == "#" {
				d.WithLabel("comments start with `//`").WithFix("//").
					WithHelp("write the comment as `// ...`: comments start with `//` and run to the end of the line")
			}
			if p.Detail == "'" {
				d.WithHelp("text takes double quotes (\"like this\"), on one line")
			}
		case diag.SyntaxUnexpectedToken:
			diags.Addf(p.Code, rng, "unexpected `%s`", p.Detail).WithLabel("a number's unit is one of ms, s, m, h, d")
		default:
			diags.Add(p.Code, rng, diag.Catalogue[p.Code].Title)
		}
	}
	probStarts := make([]int, len(probs))
	for i, p := range probs {
		probStarts[i] = p.Span.Start
	}
	slices.Sort(probStarts)
	var slab identSlab
	loneWord := false // the chunk before was one word: a misspelt `public`, perhaps
	for _, chunk := range splitDecls(f.Content, toks) {
		afterLoneWord := loneWord
		loneWord = false
		if lexicalProblemIn(probStarts, chunk) {
			// The lexical problem is this declaration's one diagnostic.
			out.Unparsed += countsAsDecl(chunk)
			out.Failed = append(out.Failed, failedDecl(chunk))
			continue
		}
		if open, ok := tooDeep(chunk); ok {
			// Participle's time grows with the square of the depth, and
			// its stack without bound: no real declaration nests so deep.
			diags = append(diags, (&diag.List{}).Addf(diag.SyntaxUnexpectedToken, tokenRange(f, open),
				"`%s` nests more than %d levels deep", open.Value, maxNesting).
				WithLabel("a declaration nests at most "+fmt.Sprint(maxNesting)+" brackets"))
			out.Unparsed += countsAsDecl(chunk)
			out.Failed = append(out.Failed, failedDecl(chunk))
			continue
		}
		decl, err := parseDecl(chunk, &slab)
		if err != nil {
			diags = append(diags, syntaxDiag(f, chunk, err))
			out.Unparsed += countsAsDecl(chunk)
			out.Failed = append(out.Failed, failedDecl(chunk))
			loneWord = len(chunk) == 1 && chunk[0].Type == lexer.Ident
			continue
		}
		if afterLoneWord {
			// `pubic event X { }`: the word's one diagnostic stands for
			// what it meant; X is not reported again as not public.
			out.Failed = append(out.Failed, failedDecl(chunk))
		}
		out.Decls = append(out.Decls, decl)
	}
	return out, diags
}

// nullUnion answers `Text | null`, another language's optional type, with
// this one's `Text?`; nil when the `|` stands elsewhere.
func nullUnion(f *source.File, toks []plexer.Token, at source.Span) *diag.Diagnostic {
	i, _ := slices.BinarySearchFunc(toks, at.Start, func(t plexer.Token, off int) int { return t.Pos.Offset - off })
	if i == 0 || i >= len(toks) {
		return nil
	}
	prev, next := toks[i-1], toks[i]
	if prev.Type != lexer.Ident || next.Type != lexer.Ident {
		return nil
	}
	switch next.Value {
	case "null", "nil", "None", "none", "undefined", "Null", "Nil", "NULL":
	default:
		return nil
	}
	fix := prev.Value + "?"
	var l diag.List
	return l.Addf(diag.SyntaxStrayCharacter, source.Range{File: f, Span: source.Span{Start: prev.Pos.Offset, End: next.Pos.Offset + len(next.Value)}},
		"`%s | %s` is another language's optional type", prev.Value, next.Value).
		Suggest(fix).WithFix(fix).
		WithHelp("a type that may be none is written with `?`: `" + fix + "`")
}

// countsAsDecl is 1 for a chunk that is a declaration, 0 for a `use` line, which
// the summary does not count.
func countsAsDecl(chunk []plexer.Token) int {
	if len(chunk) > 0 && chunk[0].Type == lexer.Ident && chunk[0].Value == "use" {
		return 0
	}
	return 1
}

// failedDecl reads what a declaration that did not parse declares: the
// keyword (after `public`) and the name after it, or a `use` line's names.
func failedDecl(chunk []plexer.Token) ast.FailedDecl {
	i := 0
	if i < len(chunk) && chunk[i].Type == lexer.Ident && chunk[i].Value == "public" {
		i++
	}
	var fd ast.FailedDecl
	if i >= len(chunk) || chunk[i].Type != lexer.Ident {
		return fd
	}
	fd.Keyword = chunk[i].Value
	useShaped := i+2 < len(chunk) && chunk[i+1].Type == lexer.Ident && (chunk[i+2].Value == "/" || chunk[i+2].Value == "{")
	if strings.EqualFold(fd.Keyword, "use") || useShaped && diag.Nearest(fd.Keyword, []string{"use"}) != "" {
		depth := 0
		for _, t := range chunk[i+1:] {
			switch {
			case t.Type == lexer.Punct && t.Value == "{":
				depth++
			case t.Type == lexer.Punct && t.Value == "}":
				depth--
			case t.Type == lexer.Ident && depth > 0:
				fd.Names = append(fd.Names, t.Value)
			}
		}
		return fd
	}
	if i+1 < len(chunk) && chunk[i+1].Type == lexer.Ident {
		fd.Names = []string{chunk[i+1].Value}
	}
	return fd
}

// maxNesting bounds how deep brackets ({ [ ( <) may nest in a declaration.
const maxNesting = 100

// tooDeep returns the first bracket that opens level maxNesting+1.
func tooDeep(chunk []plexer.Token) (plexer.Token, bool) {
	depth := 0
	for _, t := range chunk {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "[", "(", "<":
			depth++
			if depth > maxNesting {
				return t, true
			}
		case "}", "]", ")", ">":
			if depth > 0 {
				depth--
			}
		}
	}
	return plexer.Token{}, false
}

// gluedToNumber finds letters written straight after a number that are no
// duration unit (30x): the lexer leaves them as the next token, which most
// blocks would take for a member of their own, so they are reported here, as
// the declaration's one problem.
func gluedToNumber(toks []plexer.Token) []lexer.Problem {
	var out []lexer.Problem
	for i := 1; i < len(toks); i++ {
		t, prev := toks[i], toks[i-1]
		if t.Type == lexer.Ident && prev.Type == lexer.Number && prev.Pos.Offset+len(prev.Value) == t.Pos.Offset {
			out = append(out, lexer.Problem{Code: diag.SyntaxUnexpectedToken,
				Span: source.Span{Start: t.Pos.Offset, End: t.Pos.Offset + len(t.Value)}, Detail: t.Value})
		}
	}
	return out
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return 0
}

// splitDecls cuts the tokens (without the final EOF) into one run per
// top-level declaration. A declaration keyword starts a run at brace depth 0,
// unless it stands in a name's place (queue settings { ... }) or after
// `public`. A keyword at the start of an unindented line also starts one when
// braces are left open, so a missing `}` costs one declaration, not the file.
func splitDecls(src []byte, toks []plexer.Token) [][]plexer.Token {
	var chunks [][]plexer.Token
	start, depth := 0, 0
	for i := 0; i < len(toks)-1; i++ {
		t := toks[i]
		if t.Type == lexer.Punct {
			switch t.Value {
			case "{", "(", "[":
				depth++
			case "}", ")", "]":
				if depth > 0 {
					depth--
				}
			}
			continue
		}
		if t.Type == lexer.Ident && !declKeywords[t.Value] && i != start && misspeltDecl(src, toks, i, depth) {
			// `Store main {` after a complete declaration: its own chunk, so
			// that the one before parses and the mistake is reported alone.
			chunks = append(chunks, toks[start:i])
			start, depth = i, 0
			continue
		}
		if t.Type != lexer.Ident || !declKeywords[t.Value] || i == start {
			continue
		}
		prev := toks[i-1]
		if prev.Type == lexer.Ident && declKeywords[prev.Value] {
			continue // a name in a keyword's place, or `public event`
		}
		if prev.Type == lexer.Punct && strings.Contains("/.:=,<", prev.Value) {
			continue // part of a path or a value: use stock/event { ... }
		}
		if depth > 0 && !(atLineStart(src, toks[i]) && startsDeclaration(toks, i)) {
			continue
		}
		chunks = append(chunks, toks[start:i])
		start, depth = i, 0
	}
	if start < len(toks)-1 {
		chunks = append(chunks, toks[start:len(toks)-1])
	}
	return chunks
}

// misspeltDecl: toks[i], in column 1 after a complete declaration's `}`, is followed
// by a name and `{` or `=` as a declaration is, or by a declaration keyword
// and a name as `public` is: a misspelt keyword.
func misspeltDecl(src []byte, toks []plexer.Token, i, depth int) bool {
	if !(depth == 0 && toks[i-1].Type == lexer.Punct && toks[i-1].Value == "}" && atLineStart(src, toks[i]) &&
		i+2 < len(toks) && toks[i+1].Type == lexer.Ident) {
		return false
	}
	// `evnt X {`, `tye X = Int`, or `pubic event X`.
	return toks[i+2].Value == "{" || toks[i+2].Value == "=" || declKeywords[toks[i+1].Value] && toks[i+2].Type == lexer.Ident
}

// atLineStart reports whether the token stands in column 1.
func atLineStart(src []byte, t plexer.Token) bool {
	return t.Pos.Offset == 0 || src[t.Pos.Offset-1] == '\n'
}

// startsDeclaration: the keyword is followed by a name or a `{`, not a `:`.
func startsDeclaration(toks []plexer.Token, i int) bool {
	next := toks[i+1]
	return next.Type == lexer.Ident || next.Value == "{"
}

func parseDecl(chunk []plexer.Token, slab *identSlab) (*ast.Decl, error) {
	if d, ok := fastDecl(chunk, slab); ok {
		return d, nil
	}
	return slowDecl(chunk)
}

// slowDecl is participle's parse of a declaration, and its error; the tree
// keeps ranges, not participle's tokens, as the fast path's does.
func slowDecl(chunk []plexer.Token) (*ast.Decl, error) {
	lex, err := plexer.Upgrade(&sliceLexer{toks: chunk, eof: endOf(chunk)})
	if err != nil {
		return nil, err
	}
	g, err := declParser.ParseFromLexer(lex)
	if err != nil {
		return nil, err
	}
	return toTree(g), nil
}

func endOf(chunk []plexer.Token) int {
	last := chunk[len(chunk)-1]
	return last.Pos.Offset + len(last.Value)
}

// lexicalProblemIn reports whether a problem starts in the chunk; starts
// are sorted, so a file of many declarations and many problems stays linear.
func lexicalProblemIn(starts []int, chunk []plexer.Token) bool {
	if len(starts) == 0 {
		return false
	}
	lo, hi := chunk[0].Pos.Offset, endOf(chunk)
	i, _ := slices.BinarySearch(starts, lo)
	return i < len(starts) && starts[i] < hi
}

// syntaxDiag turns participle's error into the declaration's one diagnostic,
// at the token the parser could not take, with a label in the author's
// terms where the shape of the mistake is clear.
func syntaxDiag(f *source.File, chunk []plexer.Token, err error) *diag.Diagnostic {
	var l diag.List
	var ute *participle.UnexpectedTokenError
	idx := 0
	expect := ""
	if errors.As(err, &ute) {
		idx = indexOf(chunk, ute.Unexpected.Pos.Offset, ute.Unexpected.EOF())
		expect = expectedLiteral(ute.Message())
	} else {
		var pe participle.Error
		if errors.As(err, &pe) {
			idx = indexOf(chunk, pe.Position().Offset, false)
		}
	}
	if idx >= len(chunk) {
		// The declaration ends before it is complete: an unclosed bracket is
		// the usual cause, and the place to point at.
		if open, ok := unclosed(chunk); ok {
			return l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, open),
				"this `%s` is not closed", open.Value).WithLabel("no matching `" + closer(open.Value) + "` before the next declaration").
				WithHelp("add the `" + closer(open.Value) + "` that closes it, before the next declaration starts")
		}
		last := chunk[len(chunk)-1]
		d := l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, last),
			"the declaration ends after `%s` before it is complete", last.Value)
		if expect != "" {
			d.WithLabel("expected `" + expect + "` after this").WithHelp("finish the declaration with `" + expect + "`, or remove it")
		} else {
			d.WithHelp("finish the declaration, or remove it")
		}
		return d
	}
	tok := chunk[idx]
	if expect == "}" && tok.Type == lexer.Ident && idx+1 < len(chunk) && chunk[idx+1].Value != ":" && inFieldList(chunk, idx) {
		// `sku Sku` among fields: the parser stops before `sku`, but the
		// mistake is the missing `:` after it.
		next := chunk[idx+1]
		return l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, next), "unexpected `%s`", next.Value).
			WithLabel("expected `:` between `" + tok.Value + "` and its type").
			WithHelp("a field is its name, `:` and its type: `" + tok.Value + ": " + next.Value + "`")
	}
	if d := fixableMistake(f, chunk, idx); d != nil {
		return d
	}
	if d := bracketTypeArgs(f, chunk, idx); d != nil {
		return d
	}
	d := l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, tok), "unexpected `%s`", tok.Value)
	switch {
	case tok.Value == "," && tok.Type == lexer.Punct && insideBraces(chunk, idx):
		d.WithLabel("members are separated by whitespace, not commas").
			WithHelp("remove the comma: inside `{ }` members stand apart by spaces or line breaks")
	case isValueStart(tok) && idx >= 1 && chunk[idx-1].Type == lexer.Ident && (idx < 2 || chunk[idx-2].Value != ":"):
		d.WithLabel("expected `:` between `" + chunk[idx-1].Value + "` and its value").
			WithHelp("a member is its name, `:` and its value: `" + chunk[idx-1].Value + ": " + tok.Value + "`")
	case tok.Type == lexer.Ident && keywordNear(chunk, idx) != "":
		// `public evnt X`, `attmpt conn.op(...)`: a misspelt keyword.
		near := keywordNear(chunk, idx)
		d.Suggest(near).WithFix(near).
			WithHelp("keywords are lower case and spelt as the language has them: `" + near + "`")
	case expect == "}":
		d.WithLabel("expected `}`").
			WithHelp("end the block with `}` here, or remove `" + tok.Value + "`, which does not belong in it")
	case expect != "":
		d.WithLabel("expected `" + expect + "`").WithHelp("write `" + expect + "` here")
	}
	return d
}

func tokenRange(f *source.File, t plexer.Token) source.Range {
	return source.Range{File: f, Span: source.Span{Start: t.Pos.Offset, End: t.Pos.Offset + len(t.Value)}}
}

// indexOf finds the token at offset; len(chunk) stands for the end.
func indexOf(chunk []plexer.Token, offset int, eof bool) int {
	if eof {
		return len(chunk)
	}
	for i, t := range chunk {
		if t.Pos.Offset >= offset {
			return i
		}
	}
	return len(chunk)
}

// expectedLiteral pulls a single expected literal out of participle's
// message ("... (expected \"}\")"); grammar-speak is not shown to users.
func expectedLiteral(msg string) string {
	const marker = "(expected \""
	i := strings.LastIndex(msg, marker)
	if i < 0 || !strings.HasSuffix(msg, "\")") {
		return ""
	}
	lit := msg[i+len(marker) : len(msg)-2]
	if strings.ContainsAny(lit, "\" ") || lit == "" {
		return ""
	}
	return lit
}

func isValueStart(t plexer.Token) bool {
	return t.Type == lexer.String || t.Type == lexer.Number || t.Type == lexer.Duration || t.Value == "["
}

func insideBraces(chunk []plexer.Token, idx int) bool {
	depth := 0
	for _, t := range chunk[:idx] {
		switch t.Value {
		case "{":
			depth++
		case "}":
			depth--
		case "(", "[", "<":
			depth += 1000 // a list or argument list: commas belong there
		case ")", "]", ">":
			depth -= 1000
		}
	}
	return depth > 0 && depth < 1000
}

// inFieldList reports whether chunk[idx] stands directly in the body of a
// declaration made of fields: a value, an event, a config or settings.
func inFieldList(chunk []plexer.Token, idx int) bool {
	first := 0
	if chunk[0].Value == "public" {
		first = 1
	}
	if first >= len(chunk) {
		return false
	}
	switch chunk[first].Value {
	case "value", "event", "config", "settings":
	default:
		return false
	}
	depth := 0
	for _, t := range chunk[:idx] {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "(", "[":
			depth++
		case "}", ")", "]":
			depth--
		}
	}
	return depth == 1
}

// unclosed returns the innermost bracket left open at the chunk's end.
func unclosed(chunk []plexer.Token) (plexer.Token, bool) {
	var stack []plexer.Token
	for _, t := range chunk {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "(", "[":
			stack = append(stack, t)
		case "}", ")", "]":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return plexer.Token{}, false
	}
	return stack[len(stack)-1], true
}

func closer(open string) string {
	switch open {
	case "{":
		return "}"
	case "(":
		return ")"
	}
	return "]"
}

// sliceLexer hands participle a declaration's tokens, then EOF.
type sliceLexer struct {
	toks []plexer.Token
	i    int
	eof  int
}

func (s *sliceLexer) Next() (plexer.Token, error) {
	if s.i >= len(s.toks) {
		return plexer.EOFToken(plexer.Position{Offset: s.eof}), nil
	}
	t := s.toks[s.i]
	s.i++
	return t, nil
}

// tokenDefinition gives participle the token types; lexing itself is ours.
type tokenDefinition struct{}

func (tokenDefinition) Symbols() map[string]plexer.TokenType { return lexer.Symbols }

func (tokenDefinition) Lex(string, io.Reader) (plexer.Lexer, error) {
	return nil, fmt.Errorf("parser: lex through ParseFile")
}

// declKeywordList names the declaration keywords in the order a file uses them.
var declKeywordList = []string{"use", "public", "type", "enum", "value", "event", "config", "store",
	"connection", "queue", "subscriber", "package", "provider", "settings", "resource", "provide"}

// bracketTypeArgs answers `List[Text]`, another language's type arguments,
// with this one's `List<Text>`; nil when the `[` stands elsewhere.
func bracketTypeArgs(f *source.File, chunk []plexer.Token, idx int) *diag.Diagnostic {
	tok := chunk[idx]
	if tok.Type != lexer.Punct || tok.Value != "[" || idx < 2 || chunk[idx-1].Type != lexer.Ident ||
		!(chunk[idx-2].Value == ":" || chunk[idx-2].Value == "<" || chunk[idx-2].Value == "," || chunk[idx-2].Value == "=") {
		return nil
	}
	depth := 0
	for j := idx; j < len(chunk); j++ {
		switch chunk[j].Value {
		case "[":
			depth++
		case "]":
			depth--
			if depth == 0 {
				if j == idx+1 {
					return nil
				}
				name := chunk[idx-1]
				inner := string(f.Content[chunk[idx+1].Pos.Offset:chunk[j].Pos.Offset])
				inner = strings.NewReplacer("[", "<", "]", ">").Replace(inner)
				fix := name.Value + "<" + inner + ">"
				var l diag.List
				return l.Addf(diag.SyntaxUnexpectedToken, source.Range{File: f, Span: source.Span{Start: name.Pos.Offset, End: chunk[j].Pos.Offset + 1}},
					"unexpected `[`: type arguments go in `< >`").
					Suggest(fix).WithFix(fix).
					WithHelp("a generic type takes its arguments in angle brackets: `" + fix + "`")
			}
		}
	}
	return nil
}

// memberKeywords open a member of a block. A misspelt keyword is matched
// against what its position takes: after `public` or at a declaration's
// start, a declaration keyword; elsewhere one of these.
var memberKeywords = []string{"on", "attempt", "operation"}

// keywordNear is the keyword chunk[idx] is a misspelling of, or "".
func keywordNear(chunk []plexer.Token, idx int) string {
	tok := chunk[idx]
	if declKeywords[tok.Value] || len(tok.Value) < 2 {
		return ""
	}
	if idx == 0 || idx == 1 && chunk[0].Value == "public" {
		return diag.Nearest(tok.Value, declKeywordList)
	}
	if near := diag.Nearest(tok.Value, memberKeywords); near != "" && near != tok.Value {
		return near
	}
	return ""
}

// fixableMistake recognises the mistakes a first app makes, at the token the parser
// could not take, and says how to fix each in the author's terms; nil when it is
// none of them.
func fixableMistake(f *source.File, chunk []plexer.Token, idx int) *diag.Diagnostic {
	var l diag.List
	tok := chunk[idx]
	prev := func(n int) plexer.Token {
		if idx-n < 0 {
			return plexer.Token{}
		}
		return chunk[idx-n]
	}
	src := f.Content
	switch {
	case tok.Type == lexer.Punct && tok.Value == ":" && prev(1).Type == lexer.Ident &&
		bytesAt(src, tok.Pos.Offset+1, "//"):
		// host: https://sqs...: the `//` starts a comment, so the URL was cut at `:`.
		start := prev(1).Pos.Offset
		end := tok.Pos.Offset + 1
		for end < len(src) && src[end] != ' ' && src[end] != '\t' && src[end] != '\n' && src[end] != '\r' && src[end] != '}' {
			end++
		}
		url := string(src[start:end])
		return l.Add(diag.SyntaxUnexpectedToken, source.Range{File: f, Span: source.Span{Start: start, End: end}},
			"a URL must be quoted").
			WithLabel("write \"" + url + "\"").WithFix("\"" + url + "\"").
			WithHelp("a URL is text, written in double quotes: \"" + url + "\" (unquoted, its `//` starts a comment)")
	case tok.Type == lexer.Punct && tok.Value == "=" && prev(1).Type == lexer.Ident && prev(2).Value != ":" && !atTopLevel(chunk, idx):
		return l.Add(diag.SyntaxUnexpectedToken, tokenRange(f, tok), "unexpected `=`").
			WithLabel("members take `:`, not `=`").WithFix(":").
			WithHelp("write `" + prev(1).Value + ": ...`: a member's name and its value are separated by `:`")
	case tok.Type == lexer.Punct && tok.Value == "{" && prev(1).Type == lexer.Ident && prev(2).Type == lexer.Ident && prev(2).Value == "on":
		ev := prev(1).Value
		return l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, tok), "the handler of `%s` names no parameter", ev).
			WithLabel("expected `(` and the parameter's name").
			WithHelp("a handler names its parameter: `on " + ev + "(e) {`, then reads the event as `e`")
	case tok.Type == lexer.Punct && tok.Value == "." && idx+1 < len(chunk) && chunk[idx+1].Type == lexer.Ident &&
		chunk[idx+1].Value == "jadpo" && len(chunk) > 0 && chunk[0].Value == "use":
		path := string(src[chunk[1].Pos.Offset:tok.Pos.Offset])
		ext := chunk[idx+1]
		return l.Add(diag.SyntaxUnexpectedToken, source.Range{File: f, Span: source.Span{Start: tok.Pos.Offset, End: ext.Pos.Offset + len(ext.Value)}},
			"a module path has no `.jadpo`").
			WithLabel("remove `.jadpo`").WithFix("").
			WithHelp("a module path names the file without its extension: `use " + path + " { ... }`")
	case tok.Type == lexer.Ident && !declKeywords[tok.Value] && atTopLevel(chunk, idx) && atLineStart(src, tok):
		d := l.Addf(diag.SyntaxUnexpectedToken, tokenRange(f, tok), "`%s` does not start a declaration", tok.Value)
		if near := diag.Nearest(tok.Value, declKeywordList); near != "" {
			return d.Suggest(near).WithFix(near).
				WithHelp("declarations start with a lowercase keyword: `" + near + "`")
		}
		return d.WithHelp("a declaration starts with one of: " + strings.Join(declKeywordList, ", "))
	}
	return nil
}

func bytesAt(src []byte, at int, s string) bool {
	return at+len(s) <= len(src) && string(src[at:at+len(s)]) == s
}

// atTopLevel: chunk[idx] stands outside every bracket of its chunk.
func atTopLevel(chunk []plexer.Token, idx int) bool {
	depth := 0
	for _, t := range chunk[:idx] {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "(", "[":
			depth++
		case "}", ")", "]":
			depth--
		}
	}
	return depth == 0
}
