package lsp

import (
	"encoding/json"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// editorRequests are the requests that colour, fold and annotate a
// document (semantic tokens, signature help, folding and selection
// ranges, document highlights, inlay hints), each answered from the
// document's tokens, its tree and the project's index like the others.
var editorRequests = map[string]func(*server, json.RawMessage) (any, error){
	"textDocument/semanticTokens/full":       func(s *server, p json.RawMessage) (any, error) { return s.orLone(p, s.semanticTokensFull) },
	"textDocument/semanticTokens/full/delta": func(s *server, p json.RawMessage) (any, error) { return s.orLone(p, s.semanticTokensDelta) },
	"textDocument/semanticTokens/range":      func(s *server, p json.RawMessage) (any, error) { return s.orLone(p, s.semanticTokensRange) },
	"textDocument/signatureHelp":             func(s *server, p json.RawMessage) (any, error) { return s.withPosition(p, s.signatureHelp) },
	"textDocument/foldingRange":              func(s *server, p json.RawMessage) (any, error) { return s.orLone(p, s.foldingRanges) },
	"textDocument/selectionRange":            func(s *server, p json.RawMessage) (any, error) { return s.orLone(p, s.selectionRanges) },
	"textDocument/documentHighlight":         func(s *server, p json.RawMessage) (any, error) { return s.withPosition(p, s.documentHighlights) },
	"textDocument/inlayHint":                 func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.inlayHints) },
}

// addEditorCapabilities advertises editorRequests in initialize's answer.
func addEditorCapabilities(s *server, caps *protocol.ServerCapabilities) {
	caps.SemanticTokensProvider = s.semanticTokensLegend()
	caps.SignatureHelpProvider = &protocol.SignatureHelpOptions{TriggerCharacters: []string{"(", ","}, RetriggerCharacters: []string{":", " "}}
	caps.FoldingRangeProvider = true
	caps.SelectionRangeProvider = true
	caps.DocumentHighlightProvider = true
	caps.InlayHintProvider = true
}

// orLone answers a request that needs only the file itself (its tokens and
// tree) also for an open file in no project, which has no check to read:
// its answer is the lexer's and the parser's alone.
func (s *server) orLone(raw json.RawMessage, fn func(*docContext) (any, error)) (any, error) {
	var p protocol.TextDocumentPositionParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	abs := uriPath(p.TextDocument.URI)
	if abs == "" || s.ws.projectOf(abs) != nil {
		return s.withDocument(raw, fn)
	}
	text, open := s.ws.docs[abs]
	if !open {
		return nil, nil
	}
	f := source.NewFile(abs, text)
	tree, _ := parser.ParseFile(f)
	lone := &proj{root: "/", parsed: map[string]*parseEntry{}}
	return fn(&docContext{pr: lone, path: abs, file: f, tree: tree, raw: raw, cursor: positionOffset(f, p.Position)})
}
