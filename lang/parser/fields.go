package parser

import (
	"fmt"
	"unsafe"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
)

// FieldReader reads the fields of a record whose file ParseFileLean parsed
// (File.FieldsDeferred): it lexes the record's body again and parses its
// fields into a slab of its own, recycled call after call. So a check
// holds one record's field nodes at a time, not every record's.
//
// What Fields returns is valid until the reader's next call: a caller that
// reads one record's fields while another's are in use (resolving a field's
// type may resolve another record) takes a reader of its own. The names in
// the nodes are slices of the file's bytes, as in any tree, and outlive it.
// A FieldReader is not safe for concurrent use; its zero value is ready.
type FieldReader struct {
	slab identSlab
	toks []lexer.Tok
}

// Fields is rec's fields: its tree's own when the file keeps them, else
// parsed again from f's bytes.
func (r *FieldReader) Fields(f *ast.File, rec *ast.Record) []*ast.Field {
	if !f.FieldsDeferred || rec.Name == nil {
		return rec.Fields
	}
	src := unsafe.String(unsafe.SliceData(f.Source.Content), len(f.Source.Content))
	// The body runs from the end of the record's name to its closing brace:
	// the lexer starts afresh at any token's boundary.
	start := int(rec.Name.Start) + len(rec.Name.Name)
	toks, _ := lexer.LexTokens(src[start:rec.SpanEnd], r.toks[:0])
	toks = toks[:len(toks)-1] // the end-of-input token
	for i := range toks {
		toks[i].Off += int32(start)
	}
	r.toks = toks
	r.slab.bind()
	r.slab.recycle()
	p := fastParser{toks: toks, slab: &r.slab}
	fields := p.fields()
	if p.failed || p.i != len(toks) {
		// ParseFileLean parsed these very tokens: they parse.
		panic(fmt.Sprintf("parser: the fields of %s in %s did not parse again", rec.Name.Name, f.Source.Path))
	}
	return fields
}
