package lsp

import (
	"strings"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/source"
)

// Folding ranges (textDocument/foldingRange): every bracket pair that spans
// lines — a declaration's body, a handler, a block, a list, a call's
// arguments — from the lexer's tokens, so a file with a syntax error still
// folds; a run of two or more comment lines ("comment"); and the `use`
// lines at the top ("imports"). The closing bracket's line stays shown.

type bracketPair struct{ open, close int } // byte offsets of the brackets

// bracketPairs matches the file's brackets by the lexer's tokens; an
// unclosed one pairs with nothing.
func bracketPairs(toks []plexer.Token) []bracketPair {
	var stack []plexer.Token
	var out []bracketPair
	for _, t := range toks {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{", "[", "(":
			stack = append(stack, t)
		case "}", "]", ")":
			if n := len(stack); n > 0 && closer(stack[n-1].Value) == t.Value {
				out = append(out, bracketPair{stack[n-1].Pos.Offset, t.Pos.Offset})
				stack = stack[:n-1]
			}
		}
	}
	return out
}

func closer(open string) string {
	return map[string]string{"{": "}", "[": "]", "(": ")"}[open]
}

func lineOf(f *source.File, off int) int { return f.Position(off).Line - 1 }

func (s *server) foldingRanges(dc *docContext) (any, error) {
	f := dc.file
	src := string(f.Content)
	toks, _ := lexer.Lex(src)
	out := []protocol.FoldingRange{}
	for _, p := range bracketPairs(toks) {
		start, end := lineOf(f, p.open), lineOf(f, p.close)-1
		if end > start {
			out = append(out, protocol.FoldingRange{StartLine: start, EndLine: end})
		}
	}
	// Comment runs and the use lines, line by line.
	lines := strings.Split(src, "\n")
	flush := func(kind protocol.FoldingRangeKind, from, to int) {
		if to > from {
			out = append(out, protocol.FoldingRange{StartLine: from, EndLine: to, Kind: kind})
		}
	}
	commentFrom, useFrom := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "//") {
			if commentFrom < 0 {
				commentFrom = i
			}
		} else {
			if commentFrom >= 0 {
				flush(protocol.FoldingRangeKindComment, commentFrom, i-1)
			}
			commentFrom = -1
		}
		switch {
		case strings.HasPrefix(t, "use ") || t == "use":
			if useFrom < 0 {
				useFrom = i
			}
			continue
		case t == "" || strings.HasPrefix(t, "//"):
			continue // a blank or comment line inside the run keeps it going
		}
		if useFrom >= 0 {
			flush(protocol.FoldingRangeKindImports, useFrom, lastNonBlank(lines, useFrom, i))
			useFrom = -1
		}
	}
	if commentFrom >= 0 {
		flush(protocol.FoldingRangeKindComment, commentFrom, len(lines)-1)
	}
	return out, nil
}

// lastNonBlank is the last line before `before` (from `from` on) holding a
// use line.
func lastNonBlank(lines []string, from, before int) int {
	for i := before - 1; i > from; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "use") {
			return i
		}
	}
	return from
}
