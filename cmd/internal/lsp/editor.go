package lsp

import "encoding/json"

// editorRequests are the requests that colour, fold and annotate a
// document (semantic tokens, signature help, folding and selection
// ranges, document highlights, inlay hints), each answered from the
// document's tokens, its tree and the project's index like the others.
var editorRequests = map[string]func(*server, json.RawMessage) (any, error){
	"textDocument/semanticTokens/full":       func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.semanticTokensFull) },
	"textDocument/semanticTokens/full/delta": func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.semanticTokensDelta) },
	"textDocument/semanticTokens/range":      func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.semanticTokensRange) },
	"textDocument/signatureHelp":             func(s *server, p json.RawMessage) (any, error) { return s.withPosition(p, s.signatureHelp) },
	"textDocument/foldingRange":              func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.foldingRanges) },
	"textDocument/selectionRange":            func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.selectionRanges) },
	"textDocument/documentHighlight":         func(s *server, p json.RawMessage) (any, error) { return s.withPosition(p, s.documentHighlights) },
	"textDocument/inlayHint":                 func(s *server, p json.RawMessage) (any, error) { return s.withDocument(p, s.inlayHints) },
}

// addEditorCapabilities advertises editorRequests in initialize's answer.
func addEditorCapabilities(s *server, caps map[string]any) {
	caps["semanticTokensProvider"] = s.semanticTokensLegend()
	caps["signatureHelpProvider"] = map[string]any{"triggerCharacters": []string{"(", ","}, "retriggerCharacters": []string{":", " "}}
	caps["foldingRangeProvider"] = true
	caps["selectionRangeProvider"] = true
	caps["documentHighlightProvider"] = true
	caps["inlayHintProvider"] = true
}
