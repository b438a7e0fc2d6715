package lsp

import (
	"encoding/json"
	"reflect"
	"sort"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/source"
)

// Selection ranges (textDocument/selectionRange, "expand selection"): from
// the word at the cursor outwards through every node of the tree that
// holds it (a dotted name, an argument, a call, a member, a block, a
// handler, the declaration), each bracket pair's inside and the pair, up
// to the whole file. Where the declaration does not parse, the brackets
// alone give the steps.

var (
	nodeType  = reflect.TypeOf(ast.Node{})
	identType = reflect.TypeOf(ast.Ident{})
)

// treeSpans adds the span of every node of v holding off.
func treeSpans(v reflect.Value, off int, add func(source.Span)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			treeSpans(v.Elem(), off, add)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			treeSpans(v.Index(i), off, add)
		}
	case reflect.Struct:
		switch v.Type() {
		case identType:
			id := v.Interface().(ast.Ident)
			if sp := id.Span(); sp.Start <= off && off <= sp.End && sp.Len() > 0 {
				add(sp)
			}
			return
		case reflect.TypeOf(source.File{}):
			return
		}
		if n := v.FieldByName("Node"); n.IsValid() && n.Type() == nodeType {
			sp := n.Interface().(ast.Node).Span()
			if !(sp.Start <= off && off <= sp.End) {
				return // nothing inside holds off either
			}
			add(sp)
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && v.Type().Field(i).Name != "Node" && v.Type().Field(i).Name != "Source" {
				treeSpans(v.Field(i), off, add)
			}
		}
	}
}

// selectionChain is the nested ranges holding off, innermost first.
func selectionChain(f *source.File, tree *ast.File, off int) []source.Span {
	seen := map[source.Span]bool{}
	var spans []source.Span
	add := func(sp source.Span) {
		if !seen[sp] {
			seen[sp] = true
			spans = append(spans, sp)
		}
	}
	toks, _ := lexer.Lex(string(f.Content))
	for _, t := range toks {
		if t.Value != "" && t.Pos.Offset <= off && off <= t.Pos.Offset+len(t.Value) && t.Type != lexer.Punct {
			add(source.Span{Start: t.Pos.Offset, End: t.Pos.Offset + len(t.Value)})
		}
	}
	for _, p := range bracketPairs(toks) {
		if p.open < off && off <= p.close {
			if p.close > p.open+1 {
				add(trimSpace(f.Content, source.Span{Start: p.open + 1, End: p.close}))
			}
			add(source.Span{Start: p.open, End: p.close + 1})
		}
	}
	if tree != nil {
		treeSpans(reflect.ValueOf(tree.Decls), off, add)
	}
	add(source.Span{Start: f.BOMLen(), End: len(f.Content)})
	// Innermost first; a step must hold the one before it.
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Len() < spans[j].Len() })
	var chain []source.Span
	for _, sp := range spans {
		if sp.Len() == 0 && len(spans) > 1 {
			continue
		}
		if n := len(chain); n > 0 && !(sp.Start <= chain[n-1].Start && chain[n-1].End <= sp.End) {
			continue
		}
		chain = append(chain, sp)
	}
	return chain
}

// trimSpace narrows a span to its text without the blanks around it.
func trimSpace(src []byte, sp source.Span) source.Span {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for sp.Start < sp.End && isSpace(src[sp.Start]) {
		sp.Start++
	}
	for sp.End > sp.Start && isSpace(src[sp.End-1]) {
		sp.End--
	}
	return sp
}

func (s *server) selectionRanges(dc *docContext) (any, error) {
	var p protocol.SelectionRangeParams
	if err := json.Unmarshal(dc.raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	out := make([]*protocol.SelectionRange, 0, len(p.Positions))
	for _, pos := range p.Positions {
		chain := selectionChain(dc.file, dc.tree, positionOffset(dc.file, pos))
		var sel *protocol.SelectionRange
		for i := len(chain) - 1; i >= 0; i-- {
			sel = &protocol.SelectionRange{Range: lspRange(source.Range{File: dc.file, Span: chain[i]}), Parent: sel}
		}
		out = append(out, sel)
	}
	return out, nil
}
