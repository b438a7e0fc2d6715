package lsp

import (
	"encoding/json"
	"fmt"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
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
	out := []protocol.DocumentHighlight{}
	if sym.Ident.File != nil && sym.Ident.File.Path == dc.path && sym.Ident.Span.Len() > 0 {
		out = append(out, protocol.DocumentHighlight{Range: lspRange(sym.Ident), Kind: protocol.DocumentHighlightKindWrite})
	}
	for _, r := range ix.RefsIn(dc.path) {
		if r.Target == sym {
			out = append(out, protocol.DocumentHighlight{Range: lspRange(r.At), Kind: protocol.DocumentHighlightKindRead})
		}
	}
	return out, nil
}

// inlayHints (textDocument/inlayHint) shows, after each `config.x` in the
// range, the environment variable the field is read from (never a value),
// and that it is secret when it is.
func (s *server) inlayHints(dc *docContext) (any, error) {
	var p protocol.InlayHintParams
	if err := json.Unmarshal(dc.raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	from, to := rangeOffsets(dc.file, p.Range)
	if to <= from {
		to = len(dc.file.Content)
	}
	out := []protocol.InlayHint{}
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
		out = append(out, protocol.InlayHint{
			Position:    lspPos(r.At.File, r.At.Span.End),
			Label:       label,
			PaddingLeft: true,
			Tooltip:     &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: tip},
		})
	}
	return out, nil
}
