package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/source"
)

// lspRange converts byte offsets to LSP positions: 0-based lines, and
// characters counted in UTF-16 code units.
func lspRange(r source.Range) protocol.Range {
	return protocol.Range{Start: lspPos(r.File, r.Span.Start), End: lspPos(r.File, r.Span.End)}
}

func lspPos(f *source.File, offset int) protocol.Position {
	p := f.Position(offset)
	return protocol.Position{Line: p.Line - 1, Character: f.UTF16Column(offset)}
}

func location(root string, r source.Range) protocol.Location {
	return protocol.Location{URI: pathURI(filepath.Join(root, filepath.FromSlash(r.File.Path))), Range: lspRange(r)}
}

// rangeOffsets is a request's range as byte offsets in the file.
func rangeOffsets(f *source.File, r protocol.Range) (int, int) {
	return positionOffset(f, r.Start), positionOffset(f, r.End)
}

func positionOffset(f *source.File, p protocol.Position) int {
	return offsetAt(f, p.Line, p.Character)
}

// offsetAt is the byte offset of an LSP position (a 0-based line and a
// UTF-16 character on it), clamped to the line.
func offsetAt(f *source.File, line, char int) int {
	start, end := f.LineBounds(line + 1)
	if line+1 > 1 && start == 0 && end == 0 {
		return len(f.Content)
	}
	off, units := start, 0
	for off < end && units < char {
		r, size := utf8.DecodeRune(f.Content[off:end])
		units += utf16Len(r)
		off += size
	}
	return off
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// docContext is a request's document: its project (checked up to the
// editor's text), its path in the project and its file.
type docContext struct {
	pr     *proj
	path   string // in the project, '/'-separated
	file   *source.File
	tree   *ast.File // nil when the check did not parse the file
	raw    json.RawMessage
	cursor int // the request's position as a byte offset, when it has one
}

func (s *server) document(uri string, raw json.RawMessage) (*docContext, error) {
	abs := uriPath(uri)
	if abs == "" {
		return nil, &lspError{lspInvalidParams, "the document's uri is not a file: URI"}
	}
	pr := s.ws.ready(abs)
	if pr == nil {
		return nil, nil // a file in no project: nothing to say about it
	}
	dc := &docContext{pr: pr, path: pr.rel(abs), raw: raw}
	if t := pr.files[dc.path]; t != nil {
		dc.tree, dc.file = pr.fullTree(dc.path, t), t.Source
	} else {
		b, ok := s.ws.docs[abs]
		if !ok {
			b, _ = os.ReadFile(abs)
		}
		dc.file = source.NewFile(dc.path, b)
	}
	return dc, nil
}

// withPosition answers a request at a position in a document.
func (s *server) withPosition(raw json.RawMessage, fn func(*docContext, int) (any, error)) (any, error) {
	return s.withDocument(raw, func(dc *docContext) (any, error) { return fn(dc, dc.cursor) })
}

// withDocument answers a request about a document; a position in it, when
// the request has one, is dc.cursor (the file's start without one).
func (s *server) withDocument(raw json.RawMessage, fn func(*docContext) (any, error)) (any, error) {
	var p protocol.TextDocumentPositionParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	dc, err := s.document(p.TextDocument.URI, raw)
	if dc == nil || err != nil {
		return nil, err
	}
	dc.cursor = positionOffset(dc.file, p.Position)
	return fn(dc)
}

// applyChanges applies didChange's changes to a document's text, in order:
// each the whole text (no range), or the text that replaces a range of the
// document as it stands after the changes before it.
// It never writes into text: the trees parsed from it may still hold it.
// false: a ranged change came for a document that is not open (text nil).
func applyChanges(text []byte, changes []protocol.TextDocumentContentChangePartial) ([]byte, bool) {
	for _, ch := range changes {
		if ch.Range == nil {
			text = []byte(ch.Text)
			continue
		}
		if text == nil {
			return nil, false
		}
		f := source.NewFile("", text)
		start, end := rangeOffsets(f, *ch.Range)
		end = max(end, start)
		out := make([]byte, 0, len(text)-(end-start)+len(ch.Text))
		out = append(append(append(out, text[:start]...), ch.Text...), text[end:]...)
		text = out
	}
	return text, true
}
