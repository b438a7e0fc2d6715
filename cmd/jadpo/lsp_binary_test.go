package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/format"
)

// binClient is a small LSP client driving the built `jadpo lsp` over its
// stdin and stdout, as an editor does.
type binClient struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	nextID  int
	diags   map[string][]any
	pubs    map[string]int
	server  []map[string]any // the server's own requests
	answers map[int]map[string]any
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &binClient{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), diags: map[string][]any{}, pubs: map[string]int{}, answers: map[int]map[string]any{}}
}

func (c *binClient) write(m map[string]any) {
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *binClient) notify(method string, params any) {
	c.write(map[string]any{"method": method, "params": params})
}

func (c *binClient) request(method string, params any) int {
	c.nextID++
	c.write(map[string]any{"id": c.nextID, "method": method, "params": params})
	return c.nextID
}

func (c *binClient) readOne() {
	c.t.Helper()
	// A server that stops answering fails the test instead of hanging it.
	timer := time.AfterFunc(60*time.Second, func() { _ = c.cmd.Process.Kill() })
	defer timer.Stop()
	length := -1
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading jadpo lsp: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.out, body); err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("%v: %s", err, body)
	}
	switch {
	case m["method"] == "textDocument/publishDiagnostics":
		p := m["params"].(map[string]any)
		c.diags[p["uri"].(string)] = p["diagnostics"].([]any)
		c.pubs[p["uri"].(string)]++
	case m["method"] != nil:
		c.server = append(c.server, m)
	default:
		id, _ := m["id"].(float64)
		c.answers[int(id)] = m
	}
}

func (c *binClient) answer(id int) map[string]any {
	c.t.Helper()
	for {
		if m, ok := c.answers[id]; ok {
			delete(c.answers, id)
			return m
		}
		c.readOne()
	}
}

func (c *binClient) call(method string, params any) any {
	c.t.Helper()
	m := c.answer(c.request(method, params))
	if m["error"] != nil {
		c.t.Fatalf("%s: %v", method, m["error"])
	}
	return m["result"]
}

func (c *binClient) published(uri string, before int) []any {
	c.t.Helper()
	for c.pubs[uri] <= before {
		c.readOne()
	}
	return c.diags[uri]
}

// pos is the LSP position of the n-th occurrence of needle in text, plus
// delta bytes (ASCII text).
func pos(text, needle string, n, delta int) map[string]any {
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[off+1:], needle)
		if j < 0 {
			panic("no " + needle)
		}
		off += 1 + j
	}
	off += delta
	return map[string]any{"line": strings.Count(text[:off], "\n"), "character": off - (strings.LastIndex(text[:off], "\n") + 1)}
}

func docAt(path string, p map[string]any) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}, "position": p}
}

// applyEdits applies a file's text edits (LSP ranges, ASCII text).
func applyEdits(text string, edits []any) string {
	offset := func(p map[string]any) int {
		lines := strings.SplitAfter(text, "\n")
		off := 0
		for i := 0; i < int(p["line"].(float64)); i++ {
			off += len(lines[i])
		}
		return off + int(p["character"].(float64))
	}
	type e struct {
		start, end int
		text       string
	}
	var es []e
	for _, x := range edits {
		m := x.(map[string]any)
		r := m["range"].(map[string]any)
		es = append(es, e{offset(r["start"].(map[string]any)), offset(r["end"].(map[string]any)), m["newText"].(string)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].start > es[j].start })
	for _, x := range es {
		text = text[:x.start] + x.text + text[x.end:]
	}
	return text
}

// Issue 15: the built `jadpo lsp`, driven over its stdio on a copy of
// examples/warehouse through every feature it advertises.
func TestLanguageServerBinaryFeatures(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	c := startBinaryLSP(t, bin)
	init := c.call("initialize", map[string]any{"rootUri": pathURI(dir), "capabilities": map[string]any{
		"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}}).(map[string]any)
	caps := init["capabilities"].(map[string]any)
	for _, k := range []string{"hoverProvider", "definitionProvider", "referencesProvider", "completionProvider", "documentSymbolProvider",
		"workspaceSymbolProvider", "codeActionProvider", "documentFormattingProvider", "renameProvider"} {
		if caps[k] == nil {
			t.Errorf("initialize does not advertise %s", k)
		}
	}
	c.notify("initialized", map[string]any{})
	app := filepath.Join(dir, "app.jadpo")
	uri := pathURI(app)
	text := readFile(t, app)

	// Diagnostics, with the page's absolute address.
	broken := strings.Replace(text, "OrderShipped { wire_name", "OrderShiped { wire_name", 1)
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "jadpo", "version": 1, "text": broken}})
	ds := c.published(uri, 0)
	if len(ds) != 1 {
		t.Fatalf("diagnostics: %v", ds)
	}
	d := ds[0].(map[string]any)
	if href := d["codeDescription"].(map[string]any)["href"]; href != diag.DocsURI("receiving.invalid") {
		t.Errorf("codeDescription.href %v", href)
	}
	// Code action: the did-you-mean.
	acts := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": d["range"], "context": map[string]any{"diagnostics": ds}}).([]any)
	fixed := ""
	for _, a := range acts {
		a := a.(map[string]any)
		if a["title"] == "Change to `OrderShipped`" {
			fixed = applyEdits(broken, a["edit"].(map[string]any)["changes"].(map[string]any)[uri].([]any))
		}
	}
	if fixed != text {
		t.Fatalf("the quick fix gives:\n%s\nactions: %v", fixed, acts)
	}
	before := c.pubs[uri]
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{map[string]any{"text": text}}})
	if ds := c.published(uri, before); len(ds) != 0 {
		t.Fatalf("after the fix: %v", ds)
	}

	// Hover: an event's members; a config field's binding, secret, never a value.
	h := c.call("textDocument/hover", docAt(app, pos(text, "on OrderShipped", 0, 5))).(map[string]any)
	if v := h["contents"].(map[string]any)["value"].(string); !strings.Contains(v, "public event OrderShipped") || !strings.Contains(v, "`order_id: OrderId`") {
		t.Errorf("hover on an event: %s", v)
	}
	h = c.call("textDocument/hover", docAt(app, pos(text, "config.packing_token", 0, 9))).(map[string]any)
	if v := h["contents"].(map[string]any)["value"].(string); !strings.Contains(v, "`PACKING_TOKEN`") || !strings.Contains(v, "secret") {
		t.Errorf("hover on a secret config field: %s", v)
	}
	// Definition across a use line into the module; references.
	def := c.call("textDocument/definition", docAt(app, pos(text, "on OrderShipped", 0, 5))).(map[string]any)
	if !strings.HasSuffix(def["uri"].(string), "/stock/events.jadpo") {
		t.Errorf("definition: %v", def)
	}
	refs := c.call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": pos(text, "on OrderShipped", 0, 5), "context": map[string]any{"includeDeclaration": true}}).([]any)
	if len(refs) != 4 {
		t.Errorf("references of OrderShipped: %v", refs)
	}
	// Completion of config. fields.
	comp := c.call("textDocument/completion", docAt(app, pos(text, "config.sqs_host", 0, len("config.")))).(map[string]any)
	if !strings.Contains(fmt.Sprint(comp["items"]), "label:aws_secret_access_key") {
		t.Errorf("completion after config.: %v", comp)
	}
	// Document and workspace symbols.
	syms := c.call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}}).([]any)
	if len(syms) != 8 || syms[0].(map[string]any)["name"] != "ShopConfig" {
		t.Errorf("document symbols: %v", syms)
	}
	ws := c.call("workspace/symbol", map[string]any{"query": "ParcelLost"}).([]any)
	if len(ws) != 1 || !strings.HasSuffix(ws[0].(map[string]any)["location"].(map[string]any)["uri"].(string), "/packages/Packing.v1/package.jadpo") {
		t.Errorf("workspace symbols: %v", ws)
	}
	// Rename of an event across files; a queue refused with the reason.
	ren := c.call("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": pos(text, "on OrderShipped", 0, 5), "newName": "OrderDispatched"}).(map[string]any)
	changes := ren["changes"].(map[string]any)
	if got := applyEdits(text, changes[uri].([]any)); strings.Count(got, "OrderDispatched") != 3 || len(changes) != 2 {
		t.Errorf("rename: %v", changes)
	}
	r := c.answer(c.request("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": pos(text, "queue returns_queue", 0, 7), "newName": "returns"}))
	if e, _ := r["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "would be kept again") {
		t.Errorf("rename of a queue: %v", r)
	}
	// Formatting: the jadpo fmt layout.
	messy := strings.Replace(text, "store primary {", "store   primary   {", 1)
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 3}, "contentChanges": []any{map[string]any{"text": messy}}})
	edits := c.call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 4, "insertSpaces": true}}).([]any)
	want, err := format.Source("app.jadpo", []byte(messy))
	if err != nil {
		t.Fatal(err)
	}
	if got := applyEdits(messy, edits); got != string(want) {
		t.Errorf("formatting:\n%s", got)
	}
	// A file changed outside the editor is checked again.
	events := filepath.Join(dir, "stock", "events.jadpo")
	if err := os.WriteFile(events, []byte(strings.Replace(readFile(t, events), "public event OrderShipped", "event OrderShipped", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before = c.pubs[uri]
	c.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": pathURI(events), "type": 2}}})
	if ds := c.published(uri, before); !strings.Contains(fmt.Sprint(ds), "module.name_not_public") {
		t.Errorf("after a change on disk: %v", ds)
	}
	// Code action: install a catalogue package that is not installed.
	noPkg := strings.Replace(text, "package: Packing.v1", "package: Resend.v1", 1)
	before = c.pubs[uri]
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 4}, "contentChanges": []any{map[string]any{"text": noPkg}}})
	ds = c.published(uri, before)
	var install map[string]any
	for _, d := range ds {
		if d := d.(map[string]any); d["code"] == "package.not_installed" {
			acts := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
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
	before = c.pubs[uri]
	c.call("workspace/executeCommand", map[string]any{"command": install["command"], "arguments": install["arguments"]})
	if _, err := os.Stat(filepath.Join(dir, "packages", "Resend.v1", "package.jadpo")); err != nil {
		t.Errorf("the package is not installed: %v", err)
	}
	if ds := c.published(uri, before); strings.Contains(fmt.Sprint(ds), "package.not_installed") {
		t.Errorf("after installing: %v", ds)
	}
	// A cancelled request is still answered, as the protocol says: with its
	// result when the cancel came too late (a hover's result may be null),
	// or with RequestCancelled.
	id := c.request("textDocument/hover", docAt(app, pos(text, "on OrderShipped", 0, 5)))
	c.notify("$/cancelRequest", map[string]any{"id": id})
	a := c.answer(id)
	_, answered := a["result"]
	if e, _ := a["error"].(map[string]any); e != nil {
		answered = e["code"] == float64(-32800)
	}
	if !answered {
		t.Errorf("a cancelled hover got no result and no RequestCancelled: %v", a)
	}
	// shutdown, a request after it refused, exit 0.
	c.call("shutdown", nil)
	r = c.answer(c.request("textDocument/hover", docAt(app, pos(text, "on OrderShipped", 0, 5))))
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(lspInvalidRequest) {
		t.Errorf("a request after shutdown: %v", r)
	}
	c.notify("exit", nil)
	if code := waitExit(t, c.cmd, "jadpo lsp after shutdown and exit"); code != 0 {
		t.Errorf("exit after shutdown: %d", code)
	}
}

// LSP 3.17: exit without shutdown exits 1.
func TestLanguageServerBinaryExitWithoutShutdown(t *testing.T) {
	c := startBinaryLSP(t, buildBinary(t))
	c.call("initialize", map[string]any{})
	c.notify("exit", nil)
	if code := waitExit(t, c.cmd, "jadpo lsp after exit"); code != 1 {
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
