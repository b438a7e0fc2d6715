package lsp

import (
	"encoding/json"
	"fmt"

	"github.com/jadpo/jadpo/check"
)

// LSP DocumentHighlightKind numbers.
const (
	highlightRead  = 2
	highlightWrite = 3
)

// documentHighlights (textDocument/documentHighlight) marks, in this
// file, the name under the cursor where it is declared (write) and every
// use of it (read), as the checker resolved them: `shipment` in one
// handler is not `shipment` in another.
func (s *server) documentHighlights(dc *docContext, off int) (any, error) {
	ix := dc.pr.res.Index
	sym, _ := ix.At(dc.path, off)
	if sym == nil {
		return nil, nil
	}
	out := []any{}
	if sym.Ident.File != nil && sym.Ident.File.Path == dc.path && sym.Ident.Span.Len() > 0 {
		out = append(out, map[string]any{"range": lspRange(sym.Ident), "kind": highlightWrite})
	}
	for _, r := range ix.RefsIn(dc.path) {
		if r.Target == sym {
			out = append(out, map[string]any{"range": lspRange(r.At), "kind": highlightRead})
		}
	}
	return out, nil
}

// inlayHints (textDocument/inlayHint) shows, after each `config.x` in the
// range, the environment variable the field is read from (never a value),
// and that it is secret when it is.
func (s *server) inlayHints(dc *docContext) (any, error) {
	var p struct {
		Range lspRangeParam `json:"range"`
	}
	if err := json.Unmarshal(dc.raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	from, to := p.Range.offsets(dc.file)
	if to <= from {
		to = len(dc.file.Content)
	}
	out := []any{}
	for _, r := range dc.pr.res.Index.RefsIn(dc.path) {
		sym := r.Target
		if sym == nil || sym.Kind != check.SymConfigField || sym.Config == nil || sym.Config.Binding == "" {
			continue
		}
		if r.At.Span.End < from || r.At.Span.Start > to {
			continue
		}
		label := "$" + sym.Config.Binding
		tip := fmt.Sprintf("config field `%s` is read from the environment variable `%s`", sym.Name, sym.Config.Binding)
		if sym.Config.Secret {
			label += " (secret)"
			tip += "; it is secret: its value is never shown"
		}
		out = append(out, map[string]any{
			"position":    lspPos(r.At.File, r.At.Span.End),
			"label":       label,
			"paddingLeft": true,
			"tooltip":     map[string]any{"kind": "markdown", "value": tip},
		})
	}
	return out, nil
}
