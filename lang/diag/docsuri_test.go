package diag

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/source"
)

// Every code's page address is absolute and names an existing page under
// docs/diagnostics/; the JSON report carries it beside the relative docs.
func TestDocsURIMapsToAPage(t *testing.T) {
	root := reporoot.Dir(t)
	for code := range Catalogue {
		uri := DocsURI(code)
		u, err := url.Parse(uri)
		if err != nil || !u.IsAbs() || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: %q is not an absolute https URI", code, uri)
			continue
		}
		rel, ok := strings.CutPrefix(uri, DocsBase)
		if !ok || !strings.HasPrefix(rel, "docs/diagnostics/") || rel != DocsPath(code) {
			t.Errorf("%s: %q is not %s followed by its page's path", code, uri, DocsBase)
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Errorf("%s: %q names no page: %v", code, uri, err)
		}
	}
	l := List{}
	l.Add("receiving.invalid", source.Range{}, "x")
	rep := NewReport("check", "p", 1, 1, l)
	if rep.SchemaMinor < 1 || rep.Diagnostics[0].Docs != "docs/diagnostics/receiving.invalid.md" ||
		rep.Diagnostics[0].DocsURI != "https://github.com/jadpo/jadpo/blob/main/docs/diagnostics/receiving.invalid.md" {
		t.Fatalf("report: minor %d, docs %q, docsUri %q", rep.SchemaMinor, rep.Diagnostics[0].Docs, rep.Diagnostics[0].DocsURI)
	}
}

// A name cut short suggests the one candidate it starts, before a nearer edit.
func TestNearestPrefersTheNameItStarts(t *testing.T) {
	opts := []string{"binding", "secret", "default", "min", "max", "min_length", "max_length", "pattern", "format"}
	if got := Nearest("bind", opts); got != "binding" {
		t.Fatalf("bind: %q, want binding", got)
	}
	if got := Nearest("mi", opts); got != "" && got != "min" {
		t.Fatalf("mi: %q", got)
	}
	if got := Nearest("max_len", opts); got != "max_length" {
		t.Fatalf("max_len: %q", got)
	}
}
