package lsp

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// The language server's codeDescription.href is the page's absolute address, the
// JSON report's docsUri (lang/diag's TestDocsURIMapsToAPage checks it names a page).
func TestLSPHrefIsTheDocsURI(t *testing.T) {
	for code := range diag.Catalogue {
		d := &diag.Diagnostic{Code: code, Severity: diag.Catalogue[code].Severity, Summary: "x", Subject: source.Range{File: source.NewFile("app.jadpo", []byte("x"))}}
		href := lspDiagnostic(d, "").CodeDescription.Href
		u, err := url.Parse(href)
		if err != nil || !u.IsAbs() || href != diag.DocsURI(code) || !strings.HasSuffix(href, "/docs/diagnostics/"+string(code)+".md") {
			t.Errorf("%s: href %q, want %q", code, href, diag.DocsURI(code))
		}
	}
}
