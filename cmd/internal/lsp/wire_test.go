package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
)

var updateWire = flag.Bool("update", false, "rewrite testdata/wire.golden")

// TestWireGolden drives one session through every request the server
// answers and compares what it writes, byte for byte, with
// testdata/wire.golden (the project's folder written $ROOT): the other
// tests read answers as decoded JSON, so a field written where it was
// left out, null where it was [], or in another order shows only here.
// `go test ./cmd/internal/lsp -run WireGolden -update` rewrites it;
// review the diff as a client would.
func TestWireGolden(t *testing.T) {
	dir := copyExample(t, "warehouse")
	app := filepath.Join(dir, "app.jadpo")
	text := read(t, app)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts := Options{
		Version:        "test",
		Debounce:       -1,
		Format:         func(_ string, b []byte) ([]byte, error) { return append(bytes.TrimRight(b, "\n"), "\n\n"...), nil },
		Catalogue:      func() []string { return []string{"AmazonSqs.v2012_11_05", "Resend.v1"} },
		InstallPackage: func(string, string) error { return nil },
	}
	done := make(chan error, 1)
	go func() {
		s := newServer(context.Background(), outW, opts)
		s.checkSent = checkSentTyped
		err := s.run(inR)
		outW.Close()
		done <- err
	}()
	var frames []string
	readDone := make(chan error, 1)
	go func() {
		r := bufio.NewReader(outR)
		for {
			var n int
			if _, err := fmt.Fscanf(r, "Content-Length: %d\r\n\r\n", &n); err != nil {
				readDone <- nil
				return
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				readDone <- err
				return
			}
			frames = append(frames, string(body))
		}
	}()
	id := 0
	send := func(method string, params any) {
		t.Helper()
		m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if method != "initialized" && !strings.Contains(method, "/did") && method != "exit" {
			id++
			m["id"] = id
		}
		b, _ := json.Marshal(m)
		if _, err := fmt.Fprintf(inW, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
			t.Fatal(err)
		}
	}
	pos := func(needle string, n, delta int) map[string]any {
		return docPos(app, lsptest.At(text, needle, n, delta))
	}
	with := func(p map[string]any, k string, v any) map[string]any { p[k] = v; return p }
	doc := map[string]any{"uri": pathURI(app)}
	whole := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 200, "character": 0}}

	send("initialize", map[string]any{"rootUri": pathURI(dir), "capabilities": map[string]any{"workspace": map[string]any{
		"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true},
		"workspaceEdit":         map[string]any{"documentChanges": true, "changeAnnotationSupport": map[string]any{}}}}})
	send("initialized", map[string]any{})
	send("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": pathURI(app), "languageId": "jadpo", "version": 1, "text": text}})
	send("textDocument/hover", pos("on OrderShipped", 0, 4))
	send("textDocument/hover", pos("subscriber", 0, 2))
	send("textDocument/definition", pos("on OrderShipped", 0, 4))
	send("textDocument/references", with(pos("config.sqs_host", 0, 8), "context", map[string]any{"includeDeclaration": true}))
	send("textDocument/completion", pos("config.sqs_host", 0, 7))
	send("textDocument/completion", pos("max_attempts", 0, 0))
	send("textDocument/documentSymbol", map[string]any{"textDocument": doc})
	send("workspace/symbol", map[string]any{"query": "ship"})
	send("textDocument/codeAction", map[string]any{"textDocument": doc, "range": whole, "context": map[string]any{"diagnostics": []any{}}})
	send("textDocument/formatting", map[string]any{"textDocument": doc, "options": map[string]any{"tabSize": 4, "insertSpaces": true}})
	send("textDocument/prepareRename", pos("shipment.order_id", 0, 2))
	send("textDocument/rename", with(pos("shipment.order_id", 0, 2), "newName", "parcel"))
	send("textDocument/rename", with(pos("subscriber pack_order", 0, 12), "newName", "pack"))
	send("textDocument/semanticTokens/full", map[string]any{"textDocument": doc})
	send("textDocument/semanticTokens/range", map[string]any{"textDocument": doc, "range": map[string]any{
		"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 8, "character": 0}}})
	send("textDocument/signatureHelp", pos("create_job(", 0, len("create_job(")))
	send("textDocument/foldingRange", map[string]any{"textDocument": doc})
	send("textDocument/selectionRange", map[string]any{"textDocument": doc, "positions": []any{lsptest.At(text, "shipment.order_id", 0, 10)}})
	send("textDocument/documentHighlight", pos("shipment.order_id", 0, 2))
	send("textDocument/inlayHint", map[string]any{"textDocument": doc, "range": whole})
	// An edit with a problem: its diagnostic, the quick fix, the delta.
	broken := strings.Replace(text, "config.sqs_host", "config.sqs_hots", 1)
	send("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": pathURI(app), "version": 2},
		"contentChanges": []any{map[string]any{"text": broken}}})
	send("textDocument/codeAction", map[string]any{"textDocument": doc, "range": whole, "context": map[string]any{"diagnostics": []any{}, "only": []string{"quickfix"}}})
	send("textDocument/semanticTokens/full/delta", map[string]any{"textDocument": doc, "previousResultId": "1"})
	send("textDocument/hover", map[string]any{"textDocument": doc, "position": map[string]any{"line": "one", "character": 0}})
	send("textDocument/nope", map[string]any{})
	send("workspace/executeCommand", map[string]any{"command": "jadpo.installPackage", "arguments": []any{1}})
	send("shutdown", nil)
	send("exit", nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
	inW.Close()

	got := strings.Join(frames, "\n") + "\n"
	root := filepath.ToSlash(dir)
	got = strings.ReplaceAll(got, root, "$ROOT")
	golden := filepath.Join("testdata", "wire.golden")
	if *updateWire {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(g), len(w)); i++ {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Fatalf("message %d is not the golden one (rerun with -update and review the diff):\ngot  %s\nwant %s", i+1, gl, wl)
			}
		}
	}
}
