package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/source"
)

// rangeText is the text an LSP range covers.
func rangeText(text string, r any) string {
	f := source.NewFile("x", []byte(text))
	m := r.(map[string]any)
	pos := func(p any) int {
		pm := p.(map[string]any)
		return offsetAt(f, int(pm["line"].(float64)), int(pm["character"].(float64)))
	}
	return text[pos(m["start"]):pos(m["end"])]
}

// Issue 29: every request of this file is advertised.
func TestInitializeAdvertisesTheEditorFeatures(t *testing.T) {
	caps := startServer(t, Options{}).Call("initialize", map[string]any{}).(map[string]any)["capabilities"].(map[string]any)
	for _, k := range []string{"semanticTokensProvider", "signatureHelpProvider", "foldingRangeProvider", "selectionRangeProvider",
		"documentHighlightProvider", "inlayHintProvider"} {
		if caps[k] == nil {
			t.Errorf("initialize does not advertise %s", k)
		}
	}
	for method := range editorRequests {
		if !strings.HasPrefix(method, "textDocument/") {
			t.Errorf("%s", method)
		}
	}
}

func signatureAt(t *testing.T, c *testClient, path string, pos map[string]any) (string, []string, int) {
	t.Helper()
	r, _ := c.Call("textDocument/signatureHelp", docPos(path, pos)).(map[string]any)
	if r == nil {
		return "", nil, -1
	}
	sig := r["signatures"].([]any)[0].(map[string]any)
	label := sig["label"].(string)
	var params []string
	for _, p := range sig["parameters"].([]any) {
		off := p.(map[string]any)["label"].([]any)
		params = append(params, label[int(off[0].(float64)):int(off[1].(float64))])
	}
	active := -1
	if a, ok := sig["activeParameter"].(float64); ok {
		active = int(a)
	}
	return label, params, active
}

// Issue 29: signature help inside a call: the operation's inputs, the one
// at the cursor marked, also while the call is being typed.
func TestSignatureHelp(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	label, params, active := signatureAt(t, c, app, at(text, "priority: 2", 0, 10))
	if label != "packing.jobs.create_job(order_id: Text, carrier: Text, priority: Int?, label: Packing.Label?, tags: List<Text>?, payload: Text)" {
		t.Errorf("label: %s", label)
	}
	if len(params) != 6 || params[2] != "priority: Int?" || active != 2 {
		t.Errorf("params %q, active %d", params, active)
	}
	// Inside an argument's record: that argument.
	if _, _, active := signatureAt(t, c, app, at(text, "reference: shipment", 0, 11)); active != 3 {
		t.Errorf("inside label's record, active %d", active)
	}
	// json(...)
	if label, _, active := signatureAt(t, c, app, at(text, "json(shipment)", 0, 5)); label != "json(binding)" || active != 0 {
		t.Errorf("json: %s %d", label, active)
	}
	// Outside a call: nothing.
	if label, _, _ := signatureAt(t, c, app, at(text, "retry:", 0, 2)); label != "" {
		t.Errorf("outside a call: %s", label)
	}
	// Being typed (the file does not parse): after two arguments, the
	// third input is the active one; typing a name marks the one it starts.
	typing := strings.Replace(text, `attempt packing.jobs.create_job(
            order_id: shipment.order_id,
            carrier: shipment.carrier,`, `attempt packing.jobs.create_job(order_id: shipment.order_id carrier: shipment.carrier `, 1)
	typing = strings.Replace(typing, `            priority: 2,
            label: { reference: shipment.order_id account: config.packing_account },
            tags: ["shipped", "warehouse"],
            payload: json(shipment)
        )`, ``, 1)
	c.change(app, typing, 2)
	pos := at(typing, "carrier: shipment.carrier ", 0, len("carrier: shipment.carrier "))
	// The check read no call of create_job, so the resource's file says
	// what its input is, types as written.
	if label, _, active := signatureAt(t, c, app, pos); active != 2 || label != "packing.jobs.create_job(order_id: Text, carrier: Text, priority: Int?, label: Label?, tags: List<Text>?, payload: Text)" {
		t.Errorf("after two arguments, active %d, label %s", active, label)
	}
	typed := strings.Replace(typing, "carrier: shipment.carrier ", "carrier: shipment.carrier pay", 1)
	c.change(app, typed, 3)
	if _, _, active := signatureAt(t, c, app, at(typed, "carrier pay", 0, len("carrier pay"))); active != 5 {
		t.Errorf("typing pay, active %d", active)
	}
}

// Issue 29: folding ranges: brackets over lines (also in a file with a
// syntax error), comment runs and the use lines.
func TestFoldingRanges(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	folds := func(text string) map[string]bool {
		r := c.Call("textDocument/foldingRange", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}}).([]any)
		lines := strings.Split(text, "\n")
		out := map[string]bool{}
		for _, x := range r {
			m := x.(map[string]any)
			s, e := int(m["startLine"].(float64)), int(m["endLine"].(float64))
			kind, _ := m["kind"].(string)
			out[fmt.Sprintf("%s|%s|%s", kind, strings.TrimSpace(lines[s]), strings.TrimSpace(lines[e]))] = true
		}
		return out
	}
	got := folds(text)
	for _, w := range []string{
		"comment|// The warehouse app: receives shipping events from two SQS queues, keeps each|// once in its events' store, and asks the packing service to pack each order.",
		"imports|use stock/events { OrderShipped, OrderCancelled }|use stock/returns { ReturnRequested }",
		"|config ShopConfig {|packing_host: Url { binding: \"PACKING_HOST\" default: \"https://packing.example.com\" }",
		"|subscriber pack_order {|retry: { max_attempts: 8 first_delay: 10s max_delay: 1h }",
		"|attempt packing.jobs.create_job(|payload: json(shipment)",
	} {
		if !got[w] {
			t.Errorf("no fold %q in %v", w, got)
		}
	}
	// "store primary {\n}" is two lines: nothing to fold.
	for k := range got {
		if strings.Contains(k, "store primary") {
			t.Errorf("a fold of nothing: %s", k)
		}
	}
	broken := strings.Replace(text, "max_attempts: 8", "max_attempts: = 8", 1)
	c.change(app, broken, 2)
	if !folds(broken)["|subscriber pack_order {|retry: { max_attempts: = 8 first_delay: 10s max_delay: 1h }"] {
		t.Errorf("a declaration with a syntax error does not fold")
	}
}

// Issue 29: expand selection from a word out to the file.
func TestSelectionRanges(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	pos := at(text, "carrier: shipment.carrier", 0, len("carrier: shipment.ca"))
	r := c.Call("textDocument/selectionRange", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}, "positions": []any{pos}}).([]any)
	var chain []string
	for sel := r[0]; sel != nil; {
		m := sel.(map[string]any)
		chain = append(chain, rangeText(text, m["range"]))
		sel = m["parent"]
	}
	want := []string{"carrier", "shipment.carrier", "carrier: shipment.carrier"}
	if len(chain) < 6 || fmt.Sprint(chain[:3]) != fmt.Sprint(want) {
		t.Fatalf("chain starts %q", chain)
	}
	if !strings.HasPrefix(chain[len(chain)-1], "// The warehouse app") || len(chain[len(chain)-1]) != len(text) {
		t.Errorf("the last step is not the file: %.40q", chain[len(chain)-1])
	}
	steps := strings.Join(chain, "\n----\n")
	for _, w := range []string{"packing.jobs.create_job(\n", "on OrderShipped(shipment) {", "subscriber pack_order {"} {
		if !strings.Contains(steps, w) {
			t.Errorf("no step holding %q", w)
		}
	}
	for i := 1; i < len(chain); i++ {
		if len(chain[i]) <= len(chain[i-1]) {
			t.Errorf("step %d (%q) is not wider than the one before", i, chain[i])
		}
	}
}

// Issue 29: document highlights are the checker's: a binding's uses in
// its handler, not a same-named binding's in another.
func TestDocumentHighlights(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	text += "\nsubscriber audit {\n    on OrderCancelled(shipment) {\n        attempt packing.jobs.cancel_job(job_id: shipment.order_id)\n    }\n}\n"
	c.change(app, text, 2)
	r := c.Call("textDocument/documentHighlight", docPos(app, at(text, "shipment.carrier", 0, 2))).([]any)
	kinds := map[int]int{}
	for _, h := range r {
		m := h.(map[string]any)
		if got := rangeText(text, m["range"]); got != "shipment" {
			t.Errorf("highlight of %q", got)
		}
		kinds[int(m["kind"].(float64))]++
	}
	if kinds[int(protocol.DocumentHighlightKindWrite)] != 1 || kinds[int(protocol.DocumentHighlightKindRead)] != 4 {
		t.Errorf("highlights by kind: %v (want 1 declaration, 4 uses)", kinds)
	}
	// A config field: its uses in this file, its declaration too.
	r = c.Call("textDocument/documentHighlight", docPos(app, at(text, "config.sqs_host", 0, 8))).([]any)
	if len(r) != 3 {
		t.Errorf("sqs_host: %d highlights, want the declaration and two uses", len(r))
	}
}

// Issue 29: inlay hints name the environment variable beside config.x,
// never a value.
func TestInlayHints(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("AWS_SECRET_ACCESS_KEY=hunter2-secret\nSQS_HOST=http://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(text, "\n")
	r := c.Call("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": lines + 1, "character": 0}}}).([]any)
	f := source.NewFile("app.jadpo", []byte(text))
	got := map[string]bool{}
	for _, h := range r {
		m := h.(map[string]any)
		p := m["position"].(map[string]any)
		off := offsetAt(f, int(p["line"].(float64)), int(p["character"].(float64)))
		start := strings.LastIndex(text[:off], "config.")
		got[text[start:off]+" "+m["label"].(string)] = true
		if strings.Contains(fmt.Sprint(m), "hunter2") || strings.Contains(fmt.Sprint(m), "http://x") {
			t.Errorf("a hint shows a value: %v", m)
		}
	}
	for _, w := range []string{"config.sqs_host $SQS_HOST", "config.aws_secret_access_key $AWS_SECRET_ACCESS_KEY (secret)", "config.packing_account $PACKING_ACCOUNT"} {
		if !got[w] {
			t.Errorf("no hint %q in %v", w, got)
		}
	}
	// A range: only the hints inside it.
	from := at(text, "connection packing", 0, 0)
	r = c.Call("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)},
		"range": map[string]any{"start": from, "end": map[string]any{"line": from["line"].(int) + 5, "character": 0}}}).([]any)
	if len(r) != 3 { // packing_host, packing_token, packing_account
		t.Errorf("%d hints in connection packing, want 3: %v", len(r), r)
	}
}

// A .jadpo file in no project has no check, but its tokens, folds and
// selection steps are its own: the lexer's and the parser's.
func TestEditorRequestsOnALoneFile(t *testing.T) {
	dir := t.TempDir()
	c := startServer(t, Options{Debounce: -1})
	c.initialize(dir)
	path := filepath.Join(dir, "notes.jadpo")
	text := "// a scratch file\nvalue Note {\n    body: Text { max_length: 10 }\n    at: Instant\n}\n"
	c.open(path, text)
	_, data := semanticFull(t, c, path)
	containsAll(t, "a lone file", decodeTokens(t, text, data),
		"// a scratch file comment", "value keyword", "Note struct.declaration", "body property.declaration", "Text type.defaultLibrary", "10 number")
	if r, _ := c.Call("textDocument/foldingRange", map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}}).([]any); len(r) != 1 {
		t.Errorf("folds of a lone file: %v", r)
	}
	// A file neither open nor in a project: nothing.
	if r := c.Call("textDocument/semanticTokens/full", map[string]any{"textDocument": map[string]any{"uri": pathURI(filepath.Join(dir, "gone.jadpo"))}}); r != nil {
		t.Errorf("tokens of a file never opened: %v", r)
	}
}
