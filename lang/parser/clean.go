package parser

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/source"
)

// The clean-file path: most files a check reads have no syntax error, and
// for those the whole parse runs on the lexer's compact tokens (24 bytes
// each, from a pool, garbage as soon as the tree is built) and the fast
// path alone. The first thing that is not clean (a lexical problem, a
// number glued to letters, a declaration nested too deep, a declaration the
// fast path gives up on) makes it return nil, and ParseFile parses the file
// again the full way, with participle's tokens and diagnostics. So a
// clean file's tree is the one the full way builds (FuzzParse checks it on
// every input), and an erroneous file's diagnostics come from the full way
// alone, as before.

// cleanPath is false only in tests that compare the two ways.
var cleanPath = true

// tokPool holds token buffers between files: a check's token memory is
// a buffer per parsing goroutine, not a slice per file.
var tokPool = sync.Pool{New: func() any { return new([]lexer.Tok) }}

// parseClean parses a file that has no syntax problem, or returns nil.
// The content is valid UTF-8 (ParseFile has checked). When lean, its
// records' fields are parsed into a scratch slab reused record after
// record and left out of the tree (ParseFileLean).
func parseClean(f *source.File, lean bool) *ast.File {
	buf := tokPool.Get().(*[]lexer.Tok)
	defer tokPool.Put(buf)
	src := unsafe.String(unsafe.SliceData(f.Content), len(f.Content))
	toks, probs := lexer.LexTokens(src, *buf)
	*buf = toks[:0]
	// The values point into the source: clear them, so that the pool does
	// not keep this file's bytes alive.
	defer clear(toks)
	if len(probs) > 0 || gluedNumber(toks) {
		return nil
	}
	out := &ast.File{Source: f, FieldsDeferred: lean}
	var slab identSlab
	if lean {
		slab.scratch = &identSlab{}
		slab.scratch.bind()
	}
	ok := true
	splitTokens(src, toks, func(chunk []lexer.Tok) bool {
		if deeperThanMax(chunk) {
			ok = false
			return false
		}
		slab.file = tokensLeft(toks, chunk)
		d, parsed := fastTokens(chunk, &slab)
		if !parsed {
			ok = false
			return false
		}
		out.Decls = append(out.Decls, d)
		return true
	})
	if !ok {
		return nil
	}
	return out
}

// tokensLeft is the file's tokens and those left from chunk, toks[i:j], on.
func tokensLeft(toks, chunk []lexer.Tok) fileLeft {
	return fileLeft{tokens: len(toks), left: len(toks) - (cap(toks) - cap(chunk))}
}

// gluedNumber is gluedToNumber's question: letters straight after a number.
func gluedNumber(toks []lexer.Tok) bool {
	for i := 1; i < len(toks); i++ {
		t, prev := &toks[i], &toks[i-1]
		if t.Type == uint8(lexer.Ident) && prev.Type == uint8(lexer.Number) && prev.Off+int32(len(prev.Value)) == t.Off {
			return true
		}
	}
	return false
}

// deeperThanMax is tooDeep's question on compact tokens.
func deeperThanMax(chunk []lexer.Tok) bool {
	depth := 0
	for i := range chunk {
		t := &chunk[i]
		if t.Type != uint8(lexer.Punct) {
			continue
		}
		switch t.Value {
		case "{", "[", "(", "<":
			depth++
			if depth > maxNesting {
				return true
			}
		case "}", "]", ")", ">":
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// splitTokens is splitDecls on compact tokens, handing each chunk to yield
// until it returns false. It cuts where splitDecls cuts (TestCleanPath
// checks they agree); on a file that is not clean they may differ, and
// then a chunk fails and the full way parses the file.
func splitTokens(src string, toks []lexer.Tok, yield func([]lexer.Tok) bool) {
	const ident, punct = uint8(lexer.Ident), uint8(lexer.Punct)
	atLineStart := func(t *lexer.Tok) bool { return t.Off == 0 || src[t.Off-1] == '\n' }
	start, depth := 0, 0
	for i := 0; i < len(toks)-1; i++ {
		t := &toks[i]
		if t.Type == punct {
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
		if t.Type != ident || i == start {
			continue
		}
		if !isDeclKeyword(t.Value) {
			// misspeltDecl: a word in column 1 after a complete
			// declaration's `}`, followed by a name and `{` or `=`, or by a
			// keyword and a name.
			prev := &toks[i-1]
			if depth == 0 && prev.Type == punct && prev.Value == "}" && atLineStart(t) &&
				i+2 < len(toks) && toks[i+1].Type == ident &&
				(toks[i+2].Value == "{" || toks[i+2].Value == "=" || isDeclKeyword(toks[i+1].Value) && toks[i+2].Type == ident) {
				if !yield(toks[start:i]) {
					return
				}
				start, depth = i, 0
			}
			continue
		}
		prev := &toks[i-1]
		if prev.Type == ident && isDeclKeyword(prev.Value) {
			continue
		}
		if prev.Type == punct && strings.Contains("/.:=,<", prev.Value) {
			continue
		}
		if depth > 0 && !(atLineStart(t) && (toks[i+1].Type == ident || toks[i+1].Value == "{")) {
			continue
		}
		if !yield(toks[start:i]) {
			return
		}
		start, depth = i, 0
	}
	if start < len(toks)-1 {
		yield(toks[start : len(toks)-1])
	}
}

// toTree turns participle's tree (grammar.go's types, tokens in each node)
// into lang/ast's, each node's tokens into its range. The two sets of types
// have the same fields in the same order, but the first: Tokens there,
// Node here, and a node lang/ast holds by value is a pointer there
// (TestGrammarIsCurrent keeps them so).
func toTree(g *gDecl) *ast.Decl {
	d := &ast.Decl{}
	convertNode(reflect.ValueOf(d).Elem(), reflect.ValueOf(g).Elem())
	return d
}

func convertNode(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.Kind() != reflect.Pointer {
			convertNode(dst, src.Elem()) // a node lang/ast holds by value
			return
		}
		if src.Type() == dst.Type() {
			dst.Set(src) // *ast.Ident, *string
			return
		}
		n := reflect.New(dst.Type().Elem())
		convertNode(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		if src.Type() == dst.Type() {
			dst.Set(src) // []*ast.Ident, []string
			return
		}
		s := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			convertNode(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Struct:
		if src.Type() == dst.Type() {
			dst.Set(src)
			return
		}
		toks := src.Field(0).Interface().([]plexer.Token)
		dst.Field(0).Set(reflect.ValueOf(ast.SpanOf(toks)))
		for i := 1; i < src.NumField(); i++ {
			convertNode(dst.Field(i), src.Field(i))
		}
	default:
		dst.Set(src)
	}
}

// isDeclKeyword is declKeywords[s] without hashing every identifier of the
// file (TestDeclKeywordSwitch keeps the two the same).
func isDeclKeyword(s string) bool {
	switch s {
	case "use", "public", "type", "enum", "value", "event", "config", "store", "connection",
		"queue", "subscriber", "package", "provider", "settings", "resource", "provide":
		return true
	}
	return false
}
