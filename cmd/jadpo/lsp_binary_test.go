package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
	"github.com/jadpo/jadpo/internal/jadpoproc"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/format"
)

// binClient drives the built `jadpo lsp` over its stdin and stdout, as an
// editor does.
type binClient struct {
	*lsptest.Client
	proc *jadpoproc.Proc
}

func startBinaryLSP(t *testing.T, bin string) *binClient {
	t.Helper()
	cmd := exec.Command(bin, "lsp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	p := jadpoproc.Start(t, cmd, nil)
	t.Cleanup(func() { in.Close() })
	c := &binClient{Client: lsptest.New(t, out, in), proc: p}
	// A server that stops answering fails the test instead of hanging it.
	c.StallAfter, c.OnStall = 60*time.Second, func() { _ = cmd.Process.Kill() }
	return c
}

func docAt(path string, p map[string]any) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}, "position": p}
}

// Issue 15: the built `jadpo lsp`, driven over its stdio on a copy of
// examples/warehouse through every feature it advertises.
func TestLanguageServerBinaryFeatures(t *testing.T) {
	bin := jadpoproc.Binary(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	c := startBinaryLSP(t, bin)
	init := c.Call("initialize", map[string]any{"rootUri": pathURI(dir), "capabilities": map[string]any{
		"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}}).(map[string]any)
	caps := init["capabilities"].(map[string]any)
	for _, k := range []string{"hoverProvider", "definitionProvider", "referencesProvider", "completionProvider", "documentSymbolProvider",
		"workspaceSymbolProvider", "codeActionProvider", "documentFormattingProvider", "renameProvider"} {
		if caps[k] == nil {
			t.Errorf("initialize does not advertise %s", k)
		}
	}
	c.Notify("initialized", map[string]any{})
	app := filepath.Join(dir, "app.jadpo")
	uri := pathURI(app)
	text := readFile(t, app)

	// Diagnostics, with the page's absolute address.
	broken := strings.Replace(text, "OrderShipped { wire_name", "OrderShiped { wire_name", 1)
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "jadpo", "version": 1, "text": broken}})
	ds := c.Published(uri, 0)
	if len(ds) != 1 {
		t.Fatalf("diagnostics: %v", ds)
	}
	d := ds[0].(map[string]any)
	if href := d["codeDescription"].(map[string]any)["href"]; href != diag.DocsURI("receiving.invalid") {
		t.Errorf("codeDescription.href %v", href)
	}
	// Code action: the did-you-mean.
	acts := c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": d["range"], "context": map[string]any{"diagnostics": ds}}).([]any)
	fixed := ""
	for _, a := range acts {
		a := a.(map[string]any)
		if a["title"] == "Change to `OrderShipped`" {
			fixed = lsptest.ApplyEdits(broken, a["edit"].(map[string]any)["changes"].(map[string]any)[uri].([]any))
		}
	}
	if fixed != text {
		t.Fatalf("the quick fix gives:\n%s\nactions: %v", fixed, acts)
	}
	before := c.Pubs(uri)
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{map[string]any{"text": text}}})
	if ds := c.Published(uri, before); len(ds) != 0 {
		t.Fatalf("after the fix: %v", ds)
	}

	// Hover: an event's members; a config field's binding, secret, never a value.
	h := c.Call("textDocument/hover", docAt(app, lsptest.At(text, "on OrderShipped", 0, 5))).(map[string]any)
	if v := h["contents"].(map[string]any)["value"].(string); !strings.Contains(v, "public event OrderShipped") || !strings.Contains(v, "`order_id: OrderId`") {
		t.Errorf("hover on an event: %s", v)
	}
	h = c.Call("textDocument/hover", docAt(app, lsptest.At(text, "config.packing_token", 0, 9))).(map[string]any)
	if v := h["contents"].(map[string]any)["value"].(string); !strings.Contains(v, "`PACKING_TOKEN`") || !strings.Contains(v, "secret") {
		t.Errorf("hover on a secret config field: %s", v)
	}
	// Definition across a use line into the module; references.
	def := c.Call("textDocument/definition", docAt(app, lsptest.At(text, "on OrderShipped", 0, 5))).(map[string]any)
	if !strings.HasSuffix(def["uri"].(string), "/stock/events.jadpo") {
		t.Errorf("definition: %v", def)
	}
	refs := c.Call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": lsptest.At(text, "on OrderShipped", 0, 5), "context": map[string]any{"includeDeclaration": true}}).([]any)
	if len(refs) != 4 {
		t.Errorf("references of OrderShipped: %v", refs)
	}
	// Completion of config. fields.
	comp := c.Call("textDocument/completion", docAt(app, lsptest.At(text, "config.sqs_host", 0, len("config.")))).(map[string]any)
	if !strings.Contains(fmt.Sprint(comp["items"]), "label:aws_secret_access_key") {
		t.Errorf("completion after config.: %v", comp)
	}
	// Document and workspace symbols.
	syms := c.Call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}}).([]any)
	if len(syms) != 8 || syms[0].(map[string]any)["name"] != "ShopConfig" {
		t.Errorf("document symbols: %v", syms)
	}
	ws := c.Call("workspace/symbol", map[string]any{"query": "ParcelLost"}).([]any)
	if len(ws) != 1 || !strings.HasSuffix(ws[0].(map[string]any)["location"].(map[string]any)["uri"].(string), "/packages/Packing.v1/package.jadpo") {
		t.Errorf("workspace symbols: %v", ws)
	}
	// Rename of an event across files; a queue refused with the reason.
	ren := c.Call("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": lsptest.At(text, "on OrderShipped", 0, 5), "newName": "OrderDispatched"}).(map[string]any)
	changes := ren["changes"].(map[string]any)
	if got := lsptest.ApplyEdits(text, changes[uri].([]any)); strings.Count(got, "OrderDispatched") != 3 || len(changes) != 2 {
		t.Errorf("rename: %v", changes)
	}
	r := c.Answer(c.Request("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": lsptest.At(text, "queue returns_queue", 0, 7), "newName": "returns"}))
	if e, _ := r["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "would be kept again") {
		t.Errorf("rename of a queue: %v", r)
	}
	// Formatting: the jadpo fmt layout.
	messy := strings.Replace(text, "store primary {", "store   primary   {", 1)
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 3}, "contentChanges": []any{map[string]any{"text": messy}}})
	edits := c.Call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 4, "insertSpaces": true}}).([]any)
	want, err := format.Source("app.jadpo", []byte(messy))
	if err != nil {
		t.Fatal(err)
	}
	if got := lsptest.ApplyEdits(messy, edits); got != string(want) {
		t.Errorf("formatting:\n%s", got)
	}
	// A file changed outside the editor is checked again.
	events := filepath.Join(dir, "stock", "events.jadpo")
	if err := os.WriteFile(events, []byte(strings.Replace(readFile(t, events), "public event OrderShipped", "event OrderShipped", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before = c.Pubs(uri)
	c.Notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": pathURI(events), "type": 2}}})
	if ds := c.Published(uri, before); !strings.Contains(fmt.Sprint(ds), "module.name_not_public") {
		t.Errorf("after a change on disk: %v", ds)
	}
	// Code action: install a catalogue package that is not installed.
	noPkg := strings.Replace(text, "package: Packing.v1", "package: Resend.v1", 1)
	before = c.Pubs(uri)
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 4}, "contentChanges": []any{map[string]any{"text": noPkg}}})
	ds = c.Published(uri, before)
	var install map[string]any
	for _, d := range ds {
		if d := d.(map[string]any); d["code"] == "package.not_installed" {
			acts := c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
				"range": d["range"], "context": map[string]any{"diagnostics": []any{d}}}).([]any)
			for _, a := range acts {
				if cmd, ok := a.(map[string]any)["command"].(map[string]any); ok {
					install = cmd
				}
			}
		}
	}
	if install == nil {
		t.Fatalf("no install action for %v", ds)
	}
	before = c.Pubs(uri)
	c.Call("workspace/executeCommand", map[string]any{"command": install["command"], "arguments": install["arguments"]})
	if _, err := os.Stat(filepath.Join(dir, "packages", "Resend.v1", "package.jadpo")); err != nil {
		t.Errorf("the package is not installed: %v", err)
	}
	if ds := c.Published(uri, before); strings.Contains(fmt.Sprint(ds), "package.not_installed") {
		t.Errorf("after installing: %v", ds)
	}
	// A cancelled request is still answered, as the protocol says: with its
	// result when the cancel came too late (a hover's result may be null),
	// or with RequestCancelled.
	id := c.Request("textDocument/hover", docAt(app, lsptest.At(text, "on OrderShipped", 0, 5)))
	c.Notify("$/cancelRequest", map[string]any{"id": id})
	a := c.Answer(id)
	_, answered := a["result"]
	if e, _ := a["error"].(map[string]any); e != nil {
		answered = e["code"] == float64(-32800)
	}
	if !answered {
		t.Errorf("a cancelled hover got no result and no RequestCancelled: %v", a)
	}
	// shutdown, a request after it refused, exit 0.
	c.Call("shutdown", nil)
	r = c.Answer(c.Request("textDocument/hover", docAt(app, lsptest.At(text, "on OrderShipped", 0, 5))))
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(lspInvalidRequest) {
		t.Errorf("a request after shutdown: %v", r)
	}
	c.Notify("exit", nil)
	if code := c.proc.ExitCode(t, "jadpo lsp after shutdown and exit", exitWithin); code != 0 {
		t.Errorf("exit after shutdown: %d", code)
	}
}

// LSP 3.17: exit without shutdown exits 1.
func TestLanguageServerBinaryExitWithoutShutdown(t *testing.T) {
	c := startBinaryLSP(t, jadpoproc.Binary(t))
	c.Call("initialize", map[string]any{})
	c.Notify("exit", nil)
	if code := c.proc.ExitCode(t, "jadpo lsp after exit", exitWithin); code != 1 {
		t.Errorf("exit without shutdown: %d, want 1", code)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
