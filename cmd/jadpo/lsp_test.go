package main

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
)

// JSON-RPC and LSP error codes, as the protocol numbers them.
const (
	lspInvalidRequest       = -32600
	lspServerNotInitialized = -32002
)

func pathURI(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

// lspClient drives `jadpo lsp`, numbering its own requests (Send, Next);
// in is the server's input, for tests that write raw bytes.
type lspClient struct {
	*lsptest.Client
	t  *testing.T
	in io.Writer
}

func newLSPClient(t *testing.T, r io.Reader, w io.Writer) *lspClient {
	return &lspClient{Client: lsptest.New(t, r, w), t: t, in: w}
}

// diagnostics reads messages until the publication for uri.
func (c *lspClient) diagnostics(uri string) []any {
	c.t.Helper()
	for i := 0; i < 50; i++ {
		m := c.Next()
		if m["method"] == "textDocument/publishDiagnostics" {
			p := m["params"].(map[string]any)
			if p["uri"] == uri {
				return p["diagnostics"].([]any)
			}
		}
	}
	c.t.Fatalf("no diagnostics for %s", uri)
	return nil
}

// The language server publishes what `jadpo check` finds as the user types,
// with LSP's 0-based lines and UTF-16 columns, and clears them when fixed.
func TestLanguageServer(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(root, "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- runContext(context.Background(), []string{"lsp"}, inR, outW, io.Discard); outW.Close() }()
	c := newLSPClient(t, outR, inW)
	c.Send(1, "initialize", map[string]any{"rootUri": pathURI(dir)})
	if r := c.Next(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	app := filepath.Join(dir, "app.jadpo")
	text, _ := os.ReadFile(app)
	broken := strings.Replace(string(text), "OrderShipped { wire_name", "/* ☕ */ OrderShiped { wire_name", 1)
	broken = strings.Replace(broken, "/* ☕ */ ", "", 1) // keep it valid; the emoji goes in a comment below
	broken = strings.Replace(broken, "// The warehouse app", "// ☕ The warehouse app", 1)
	uri := pathURI(app)
	c.Send(0, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "jadpo", "version": 1, "text": broken}})
	ds := c.diagnostics(uri)
	if len(ds) != 1 {
		t.Fatalf("diagnostics %v", ds)
	}
	d := ds[0].(map[string]any)
	rng := d["range"].(map[string]any)["start"].(map[string]any)
	lines := strings.Split(broken, "\n")
	wantLine := -1
	for i, l := range lines {
		if strings.Contains(l, "OrderShiped {") {
			wantLine = i
		}
	}
	if d["code"] != "receiving.invalid" || int(rng["line"].(float64)) != wantLine || int(rng["character"].(float64)) != strings.Index(lines[wantLine], "OrderShiped") {
		t.Fatalf("diagnostic %v, want receiving.invalid at line %d", d, wantLine)
	}
	// A comment line with ☕ (one UTF-16 unit) does not shift columns; fix the typo: cleared.
	c.Send(0, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": strings.Replace(broken, "OrderShiped", "OrderShipped", 1)}}})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("after the fix: %v", ds)
	}
	c.Send(2, "shutdown", nil)
	c.Next()
	c.Send(0, "exit", nil)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
	}
}
