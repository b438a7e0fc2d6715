package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
)

// paramMethods are the methods FuzzRequestParams sends params to (all
// but the lifecycle: initialize, shutdown, exit).
var paramMethods = []string{
	"textDocument/didOpen", "textDocument/didChange", "textDocument/didSave", "textDocument/didClose",
	"workspace/didChangeWatchedFiles",
	"textDocument/hover", "textDocument/definition", "textDocument/references", "textDocument/completion",
	"textDocument/prepareRename", "textDocument/rename", "textDocument/documentSymbol", "textDocument/formatting",
	"textDocument/codeAction", "workspace/symbol", "workspace/executeCommand",
	"textDocument/semanticTokens/full", "textDocument/semanticTokens/full/delta", "textDocument/semanticTokens/range",
	"textDocument/signatureHelp", "textDocument/foldingRange", "textDocument/selectionRange",
	"textDocument/documentHighlight", "textDocument/inlayHint",
}

// FuzzRequestParams sends any params to each method of an initialized
// server on the warehouse: decoding them into protocol's types and
// answering must never panic, and every message the server sends must be
// typed (untyped). Seeded with each method's params as an editor sends
// them, and with the odd values a client may send instead.
func FuzzRequestParams(f *testing.F) {
	dir := copyExample(f, "warehouse")
	app := filepath.Join(dir, "app.jadpo")
	text := read(f, app)
	uri := pathURI(app)
	pos := func(needle string, delta int) string {
		b, _ := json.Marshal(lsptest.At(text, needle, 0, delta))
		return string(b)
	}
	doc := fmt.Sprintf(`{"uri":%q}`, uri)
	rng := `{"start":{"line":0,"character":0},"end":{"line":90,"character":0}}`
	seeds := map[string]string{
		"textDocument/didOpen":                   fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"jadpo","version":1,"text":%q}}`, uri, text),
		"textDocument/didChange":                 fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":2}},"text":"//"}]}`, uri),
		"textDocument/didSave":                   fmt.Sprintf(`{"textDocument":%s}`, doc),
		"textDocument/didClose":                  fmt.Sprintf(`{"textDocument":%s}`, doc),
		"workspace/didChangeWatchedFiles":        fmt.Sprintf(`{"changes":[{"uri":%q,"type":2}]}`, uri),
		"textDocument/references":                fmt.Sprintf(`{"textDocument":%s,"position":%s,"context":{"includeDeclaration":true}}`, doc, pos("config.sqs_host", 8)),
		"textDocument/rename":                    fmt.Sprintf(`{"textDocument":%s,"position":%s,"newName":"parcel"}`, doc, pos("shipment.order_id", 2)),
		"textDocument/codeAction":                fmt.Sprintf(`{"textDocument":%s,"range":%s,"context":{"diagnostics":[],"only":["quickfix"]}}`, doc, rng),
		"workspace/symbol":                       `{"query":"ship"}`,
		"workspace/executeCommand":               fmt.Sprintf(`{"command":"jadpo.installPackage","arguments":[%q,"Resend.v1"]}`, pathURI(dir)),
		"textDocument/semanticTokens/full/delta": fmt.Sprintf(`{"textDocument":%s,"previousResultId":"1"}`, doc),
		"textDocument/semanticTokens/range":      fmt.Sprintf(`{"textDocument":%s,"range":%s}`, doc, rng),
		"textDocument/selectionRange":            fmt.Sprintf(`{"textDocument":%s,"positions":[%s]}`, doc, pos("shipment.order_id", 10)),
		"textDocument/inlayHint":                 fmt.Sprintf(`{"textDocument":%s,"range":%s}`, doc, rng),
		"textDocument/signatureHelp":             fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos("create_job(", len("create_job("))),
	}
	odd := []string{`null`, `[]`, `{}`, `""`, `{"textDocument":null}`, `{"textDocument":{"uri":7}}`,
		fmt.Sprintf(`{"textDocument":%s,"position":{"line":-1,"character":-5}}`, doc),
		fmt.Sprintf(`{"textDocument":%s,"position":{"line":1e9,"character":2147483647}}`, doc),
		fmt.Sprintf(`{"textDocument":%s,"range":{"start":{"line":9,"character":0},"end":{"line":-3,"character":0}},"positions":[null,{}]}`, doc),
		fmt.Sprintf(`{"textDocument":{"uri":%q},"contentChanges":[{"range":null,"text":"x"},{"text":null}]}`, uri),
		`{"command":"jadpo.installPackage","arguments":[null,{"a":1}]}`, `{"changes":[{"uri":"file:///dev/null"},null]}`,
	}
	for i, m := range paramMethods {
		p, ok := seeds[m]
		if !ok {
			p = fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos("on OrderShipped", 4))
		}
		f.Add(uint8(i), []byte(p))
		f.Add(uint8(i), []byte(odd[i%len(odd)]))
	}
	for i, o := range odd {
		f.Add(uint8(i*7), []byte(o))
	}
	init := json.RawMessage(fmt.Sprintf(`{"rootUri":%q,"capabilities":{"workspace":{"workspaceEdit":{"documentChanges":true,"changeAnnotationSupport":{}}}}}`, pathURI(dir)))
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		// A fresh session each time, so that a failing input fails alone.
		s := newServer(context.Background(), io.Discard, Options{
			Debounce:  -1,
			Format:    func(_ string, b []byte) ([]byte, error) { return b, nil },
			Catalogue: func() []string { return []string{"AmazonSqs.v2012_11_05", "Resend.v1"} },
		})
		s.checkSent = func(msg any) {
			if err := untyped(msg); err != nil {
				panic(err)
			}
		}
		s.serveOne(lspMessage{ID: json.RawMessage("0"), Method: "initialize", Params: init})
		s.serveOne(lspMessage{Method: "textDocument/didOpen", Params: json.RawMessage(seeds["textDocument/didOpen"])})
		m := paramMethods[int(which)%len(paramMethods)]
		msg := lspMessage{Method: m, Params: params}
		if !strings.Contains(m, "/did") {
			msg.ID = json.RawMessage("1")
		}
		if done, err := s.serveOne(msg); done || err != nil {
			t.Fatalf("%s %s: the session ended (%v)", m, params, err)
		}
	})
}

// A URI that names no file (the root folder, no path) is not a document:
// checked as a lone file it was a file named "/" or ".", and the check of
// it never ended (found by FuzzRequestParams).
func TestURIOfNoFileIsNoDocument(t *testing.T) {
	for _, uri := range []string{"file:/", "file:///", "file://", "file:", "file:.", "file:///.."} {
		if p := uriPath(uri); p != "" {
			t.Errorf("uriPath(%q) = %q, want none", uri, p)
		}
	}
	if p := uriPath("file:///tmp/app.jadpo"); p != "/tmp/app.jadpo" {
		t.Errorf("uriPath of a file: %q", p)
	}
	c := startServer(t, Options{Debounce: -1})
	c.initialize(t.TempDir())
	for _, uri := range []string{"file:/", "file://"} {
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "jadpo", "version": 1, "text": "x"}})
		c.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	}
	if r := c.Call("workspace/symbol", map[string]any{"query": "x"}); r == nil {
		t.Errorf("no answer after the edits of no file")
	}
}
