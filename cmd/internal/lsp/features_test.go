package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jadpo/jadpo/check/checktest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
)

// warehouse starts a server on a copy of examples/warehouse with app.jadpo
// open, its diagnostics read.
func warehouse(t *testing.T, opts Options) (c *testClient, dir, app, text string) {
	t.Helper()
	dir = copyExample(t, "warehouse")
	if opts.Debounce == 0 {
		opts.Debounce = -1
	}
	if opts.Catalogue == nil {
		opts.Catalogue = func() []string { return []string{"AmazonSqs.v2012_11_05", "Resend.v1"} }
	}
	c = startServer(t, opts)
	c.initialize(dir)
	app = filepath.Join(dir, "app.jadpo")
	text = read(t, app)
	c.open(app, text)
	if ds := c.Published(pathURI(app), 0); len(ds) != 0 {
		t.Fatalf("the warehouse has problems: %v", ds)
	}
	return c, dir, app, text
}

func hoverText(t *testing.T, c *testClient, path string, pos map[string]any) string {
	t.Helper()
	r, _ := c.Call("textDocument/hover", docPos(path, pos)).(map[string]any)
	if r == nil {
		t.Fatalf("no hover at %v", pos)
	}
	return r["contents"].(map[string]any)["value"].(string)
}

func TestInitializeAdvertisesEveryFeature(t *testing.T) {
	c := startServer(t, Options{Format: func(_ string, b []byte) ([]byte, error) { return b, nil }, InstallPackage: func(string, string) error { return nil }})
	r := c.Call("initialize", map[string]any{"capabilities": map[string]any{}}).(map[string]any)
	caps := r["capabilities"].(map[string]any)
	for _, k := range []string{"hoverProvider", "definitionProvider", "referencesProvider", "completionProvider", "documentSymbolProvider",
		"workspaceSymbolProvider", "codeActionProvider", "documentFormattingProvider", "renameProvider", "executeCommandProvider", "textDocumentSync"} {
		if caps[k] == nil {
			t.Errorf("initialize does not advertise %s: %v", k, caps)
		}
	}
	// Without a formatter wired in, formatting is not advertised.
	c2 := startServer(t, Options{})
	caps2 := c2.Call("initialize", map[string]any{}).(map[string]any)["capabilities"].(map[string]any)
	if caps2["documentFormattingProvider"] != nil {
		t.Errorf("formatting advertised without a formatter")
	}
}

func TestHover(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	// A secret in .env.local is never read, let alone shown.
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte("AWS_SECRET_ACCESS_KEY=hunter2-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at   map[string]any
		want []string
	}{
		{at(text, "on OrderShipped", 0, 4), []string{"public event OrderShipped", "`order_id: OrderId`", "`lines: List<OrderLine>`", "`note: Text?`"}},
		{at(text, "config.aws_secret_access_key", 0, 8), []string{"config field aws_secret_access_key: Text", "`AWS_SECRET_ACCESS_KEY`", "secret: its value is never shown"}},
		{at(text, "config.sqs_host", 0, 8), []string{"config field sqs_host: Url", "`SQS_HOST`", "not secret", "has a default"}},
		{at(text, "create_job", 0, 2), []string{"operation jobs.create_job", "input `CreateJobInput`", "- `priority: Int?`", "output `Job`", "POST `/accounts/{account_id}/jobs`"}},
		{at(text, "shipment.order_id", 0, 10), []string{"field order_id: OrderId", "at least 1 character", "at most 64 characters", "in event `OrderShipped`"}},
		{at(text, "wait_time_seconds: 0", 0, 2), []string{"setting wait_time_seconds: AmazonSqs.WaitTimeSeconds", "an Int", "at least 0", "at most 20", "default: `0`",
			"in package `AmazonSqs.v2012_11_05`"}},
		{at(text, "queue returns_queue", 0, 8), []string{"connection returns_queue", "uses package `AmazonSqs.v2012_11_05`"}},
		{at(text, "Packing.ParcelLost", 0, 10), []string{"public event ParcelLost"}},
	}
	for _, cs := range cases {
		got := hoverText(t, c, app, cs.at)
		for _, w := range cs.want {
			if !strings.Contains(got, w) {
				t.Errorf("hover at %v: %q lacks %q", cs.at, got, w)
			}
		}
		if strings.Contains(got, "hunter2") {
			t.Errorf("hover shows a secret's value: %s", got)
		}
	}
	// A declaration's own comment.
	events := filepath.Join(dir, "stock", "events.jadpo")
	etext := read(t, events)
	if got := hoverText(t, c, events, at(etext, "OrderId", 0, 1)); !strings.Contains(got, "Events the warehouse publishes about orders.") {
		t.Errorf("hover lacks the declaration's comment: %s", got)
	}
	pkg := filepath.Join(dir, "packages", "AmazonSqs.v2012_11_05", "package.jadpo")
	ptext := read(t, pkg)
	if got := hoverText(t, c, pkg, at(ptext, "WaitTimeSeconds", 1, 1)); !strings.Contains(got, "Seconds a receive waits for a message") || !strings.Contains(got, "at most 20") {
		t.Errorf("a package type's hover: %s", got)
	}
	// Nothing to say on a keyword.
	if r := c.Call("textDocument/hover", docPos(app, at(text, "subscriber", 0, 2))); r != nil {
		t.Errorf("hover on a keyword: %v", r)
	}
}

func locations(v any) []string {
	var out []string
	var one func(any)
	one = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				one(e)
			}
		case map[string]any:
			uri := x["uri"].(string)
			start := x["range"].(map[string]any)["start"].(map[string]any)
			out = append(out, fmt.Sprintf("%s:%v:%v", uri[strings.LastIndex(uri, "/001/")+5:], start["line"], start["character"]))
		}
	}
	one(v)
	sort.Strings(out)
	return out
}

func TestDefinitionAndReferences(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	def := func(pos map[string]any) string {
		l := locations(c.Call("textDocument/definition", docPos(app, pos)))
		if len(l) != 1 {
			t.Fatalf("definition at %v: %v", pos, l)
		}
		return l[0]
	}
	for _, cs := range []struct {
		pos  map[string]any
		want string
	}{
		{at(text, "OrderShipped {", 0, 1), "stock/events.jadpo:13:13"},                                 // an event in a queue, through a use line
		{at(text, "OrderShipped,", 0, 1), "stock/events.jadpo:13:13"},                                  // the use line's name
		{at(text, "on OrderShipped", 0, 4), "stock/events.jadpo:13:13"},                                // a handler's event
		{at(text, "ParcelLost", 0, 1), "packages/Packing.v1/package.jadpo:14:13"},                      // Package.Event
		{at(text, "config.packing_token", 0, 8), "app.jadpo:11:4"},                                     // a config field
		{at(text, "packing.jobs", 0, 1), "app.jadpo:39:11"},                                            // a connection
		{at(text, "jobs.create_job", 0, 6), "packages/Packing.v1/resources/jobs.jadpo:1:14"},           // an operation in a package
		{at(text, "queue_url: config.ret", 0, 1), "packages/AmazonSqs.v2012_11_05/package.jadpo:12:4"}, // a setting
		{at(text, "use stock/returns", 0, 6), "stock/returns.jadpo:0:0"},                               // a module
	} {
		if got := def(cs.pos); got != cs.want {
			t.Errorf("definition at %v: %s, want %s", cs.pos, got, cs.want)
		}
	}
	refs := locations(c.Call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)},
		"position": at(text, "OrderShipped {", 0, 1), "context": map[string]any{"includeDeclaration": true}}))
	if got := strings.Join(refs, " "); got != "app.jadpo:2:19 app.jadpo:50:8 app.jadpo:62:7 stock/events.jadpo:13:13" {
		t.Errorf("references of OrderShipped: %s", got)
	}
	// A setting's uses: the connections that give it, the mapping that reads it.
	recv := filepath.Join(dir, "packages", "AmazonSqs.v2012_11_05", "provides", "receiving.jadpo")
	rtext := read(t, recv)
	refs = locations(c.Call("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": pathURI(recv)},
		"position": at(rtext, "settings.queue_url", 0, 10), "context": map[string]any{"includeDeclaration": false}}))
	if len(refs) != 5 || !strings.HasPrefix(refs[0], "app.jadpo:") || !strings.HasPrefix(refs[4], "packages/AmazonSqs.v2012_11_05/provides/receiving.jadpo") {
		t.Errorf("references of setting queue_url: %v", refs)
	}
}

func completionLabels(t *testing.T, c *testClient, path, text string, pos map[string]any) []string {
	t.Helper()
	r := c.Call("textDocument/completion", docPos(path, pos)).(map[string]any)
	var out []string
	for _, it := range r["items"].([]any) {
		out = append(out, it.(map[string]any)["label"].(string))
	}
	return out
}

func TestCompletion(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	current := text
	version := 1
	edit := func(text string) {
		if text == current {
			return
		}
		current = text
		version++
		c.change(app, text, version)
		c.Published(pathURI(app), c.Pubs(pathURI(app)))
	}
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				return false
			}
		}
		return true
	}
	check := func(name, text string, pos map[string]any, want ...string) {
		t.Helper()
		edit(text)
		if got := completionLabels(t, c, app, text, pos); !has(got, want...) {
			t.Errorf("%s: %v, want %v among them", name, got, want)
		}
	}
	// Declaration keywords at the top level.
	check("keywords", text, at(text, "store primary", 0, 0), "connection", "queue", "subscriber", "use", "config")
	// A connection's member keys, partly typed.
	typed := strings.Replace(text, "    host: config.packing_host\n", "    host: config.packing_host\n    cre\n", 1)
	edit(typed)
	if got := completionLabels(t, c, app, typed, at(typed, "    cre\n", 0, 7)); fmt.Sprint(got) != "[credential]" {
		t.Errorf("a connection's keys after `cre`: %v", got)
	}
	// config. fields, even while the line does not parse.
	typed = strings.Replace(text, "host: config.sqs_host\n    credential: {\n", "host: config.\n    credential: {\n", 1)
	edit(typed)
	check("config.", typed, at(typed, "host: config.\n", 0, len("host: config.")), "sqs_host", "packing_host", "aws_secret_access_key")
	// Events in a queue's events.
	check("events", text, at(text, "        OrderCancelled {", 0, 8), "OrderShipped", "OrderCancelled", "ReturnRequested", "Packing.ParcelLost")
	check("Package.", text, at(text, "Packing.ParcelLost", 0, len("Packing.")), "ParcelLost")
	// A connection's settings and credential keys.
	check("settings", text, at(text, "wait_time_seconds: 0", 0, 0), "queue_url", "wait_time_seconds", "visibility_timeout")
	check("credential", text, at(text, "key_id: config.aws_access_key_id\n", 0, 0), "key_id", "secret", "session_token")
	// package: catalogue and installed names.
	check("package:", text, at(text, "package: Packing.v1", 0, len("package: ")), "AmazonSqs.v2012_11_05", "Resend.v1", "Packing.v1")
	// After a connection, its resources; after a resource, its operations; in the call, its input.
	typed = strings.Replace(text, "attempt packing.jobs.create_job(", "attempt packing.jobs.create_job(\n            x: packing.\n", 1)
	edit(typed)
	check("connection.", typed, at(typed, "x: packing.", 0, len("x: packing.")), "jobs")
	check("resource.", text, at(text, "jobs.create_job", 0, len("jobs.")), "create_job", "cancel_job")
	check("arguments", text, at(text, "            carrier: shipment", 0, 12), "order_id", "carrier", "priority", "label", "payload")
	check("binding.", text, at(text, "shipment.carrier", 0, len("shipment.")), "order_id", "carrier", "lines", "note")
	// Inside the arguments: a record literal's fields, and at a value what its type takes.
	check("record literal", text, at(text, "reference: shipment.order_id", 0, 0), "reference", "account")
	check("value in a record", text, at(text, "account: config.packing_account", 0, len("account: ")), "shipment", "config", "json")
	check("list item", text, at(text, `"shipped", "warehouse"`, 0, 0), "shipment", "config", "json")
	check("optional value", text, at(text, "priority: 2", 0, len("priority: ")), "none", "shipment", "config")
	if got := completionLabels(t, c, app, text, at(text, "reference: shipment.order_id", 0, 0)); has(got, "order_id") {
		t.Errorf("a record literal offers the call's inputs: %v", got)
	}
	check("retry", text, at(text, "max_attempts: 8", 0, 0), "max_attempts", "first_delay", "max_delay")
	check("queue", text, at(text, "id_at: \"id\"", 0, 0), "id_at", "type_at", "events")
	check("config field options", text, at(text, "secret: true }\n    sqs_host", 0, 0), "binding", "secret", "default", "min_length")
	// Types in a field's place, and settings. in a package's mapping.
	events := filepath.Join(dir, "stock", "events.jadpo")
	etext := read(t, events)
	if got := completionLabels(t, c, events, etext, at(etext, "order_id: OrderId", 0, len("order_id: "))); !has(got, "OrderId", "Carrier", "Text", "List") {
		t.Errorf("types: %v", got)
	}
	recv := filepath.Join(dir, "packages", "AmazonSqs.v2012_11_05", "provides", "receiving.jadpo")
	rtext := read(t, recv)
	if got := completionLabels(t, c, recv, rtext, at(rtext, "settings.queue_url", 0, len("settings."))); !has(got, "queue_url", "wait_time_seconds", "visibility_timeout") {
		t.Errorf("settings.: %v", got)
	}
	// In a mapping's input: the inputs of the operation its `call:` names.
	if got := completionLabels(t, c, recv, rtext, at(rtext, "receipt_handle: message.handle", 0, 0)); fmt.Sprint(got) != "[queue_url receipt_handle]" {
		t.Errorf("acknowledge's input: %v", got)
	}
	if got := completionLabels(t, c, recv, rtext, at(rtext, "max_number_of_messages: 10", 0, 0)); !has(got, "queue_url", "max_number_of_messages", "wait_time_seconds", "visibility_timeout") {
		t.Errorf("receive's input: %v", got)
	}
	if got := completionLabels(t, c, recv, rtext, at(rtext, "queue_url: settings.queue_url", 2, 0)); fmt.Sprint(got) != "[entries queue_url]" {
		t.Errorf("acknowledge_batch's input: %v", got)
	}
	// acknowledge_batch's own keys.
	if got := completionLabels(t, c, recv, rtext, at(rtext, "entries: input.entries", 0, 0)); fmt.Sprint(got) != "[call entries entry failed failed_id input succeeded succeeded_id]" {
		t.Errorf("acknowledge_batch's keys: %v", got)
	}
}

func TestSymbols(t *testing.T) {
	c, _, app, _ := warehouse(t, Options{})
	doc := c.Call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}}).([]any)
	var names []string
	for _, s := range doc {
		m := s.(map[string]any)
		names = append(names, fmt.Sprintf("%s/%v/%d", m["name"], m["kind"], len(m["children"].([]any))))
	}
	want := "ShopConfig/19/8 primary/19/0 warehouse_queue/11/4 returns_queue/11/4 packing/11/4 warehouse_queue/11/3 returns_queue/11/2 pack_order/12/2"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("outline: %s, want %s", got, want)
	}
	// A module the check read lean (no record's fields in its tree): the
	// outline still lists each record's fields.
	events := filepath.Join(filepath.Dir(app), "stock", "events.jadpo")
	c.open(events, read(t, events))
	names = nil
	for _, s := range c.Call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": pathURI(events)}}).([]any) {
		m := s.(map[string]any)
		names = append(names, fmt.Sprintf("%s/%d", m["name"], len(m["children"].([]any))))
	}
	if got, want := strings.Join(names, " "), "OrderId/0 Quantity/0 Sku/0 ShippedAt/0 Carrier/3 OrderLine/2 OrderShipped/5 OrderCancelled/3"; got != want {
		t.Errorf("the events module's outline: %s, want %s", got, want)
	}
	ws := c.Call("workspace/symbol", map[string]any{"query": "ordship"}).([]any)
	if len(ws) == 0 || ws[0].(map[string]any)["name"] != "OrderShipped" {
		t.Errorf("workspace symbols for ordship: %v", ws)
	}
}

func codeActions(t *testing.T, c *testClient, path string, pos map[string]any) []map[string]any {
	t.Helper()
	r := c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": pathURI(path)},
		"range": map[string]any{"start": pos, "end": pos}, "context": map[string]any{"diagnostics": []any{}}}).([]any)
	var out []map[string]any
	for _, a := range r {
		out = append(out, a.(map[string]any))
	}
	return out
}

// applyEdit applies a WorkspaceEdit's edits for one file to its text.
func applyEdit(t *testing.T, text string, edit map[string]any, uri string) string {
	t.Helper()
	edits, _ := edit["changes"].(map[string]any)[uri].([]any)
	return lsptest.ApplyEdits(text, edits)
}

func TestCodeActions(t *testing.T) {
	installed := ""
	c, dir, app, text := warehouse(t, Options{
		Format: func(_ string, b []byte) ([]byte, error) {
			return []byte(strings.ReplaceAll(string(b), "    ", "  ")), nil
		},
		InstallPackage: func(root, name string) error {
			installed = name
			return copyDir(filepath.Join(root, "packages", "AmazonSqs.v2012_11_05"), filepath.Join(root, "packages", name))
		},
	})
	uri := pathURI(app)
	fix := func(broken, wantTitle string, pos map[string]any) string {
		t.Helper()
		c.change(app, broken, 3)
		if ds := c.Published(uri, c.Pubs(uri)); len(ds) == 0 {
			t.Fatalf("no diagnostic for %q", wantTitle)
		}
		for _, a := range codeActions(t, c, app, pos) {
			if a["title"] == wantTitle {
				return applyEdit(t, broken, a["edit"].(map[string]any), uri)
			}
		}
		t.Fatalf("no action %q at %v: %v", wantTitle, pos, codeActions(t, c, app, pos))
		return ""
	}
	// Did you mean: a misspelt event.
	broken := strings.Replace(text, "OrderShipped { wire_name", "OrderShiped { wire_name", 1)
	if got := fix(broken, "Change to `OrderShipped`", at(broken, "OrderShiped", 0, 2)); got != text {
		t.Errorf("did-you-mean fix:\n%s", got)
	}
	// Only the misspelt part of a dotted name is replaced.
	broken = strings.Replace(text, "host: config.sqs_host", "host: config.sqs_hots", 1)
	if got := fix(broken, "Change to `sqs_host`", at(broken, "sqs_hots", 0, 2)); got != text {
		t.Errorf("config field fix:\n%s", got)
	}
	// Quote a URL.
	broken = strings.Replace(text, "host: config.sqs_host", "host: https://sqs.eu-west-1.amazonaws.com", 1)
	want := strings.Replace(text, "host: config.sqs_host", `host: "https://sqs.eu-west-1.amazonaws.com"`, 1)
	if got := fix(broken, `Replace with "https://sqs.eu-west-1.amazonaws.com"`, at(broken, "host: https:", 0, 8)); got != want {
		t.Errorf("quote a URL:\n%s", got)
	}
	// Take `public` off an app-wide declaration (a warning).
	broken = strings.Replace(text, "connection packing {", "public connection packing {", 1)
	if got := fix(broken, "Remove `public`", at(broken, "public connection", 0, 2)); got != text {
		t.Errorf("public on a connection:\n%s", got)
	}
	// Remove a config field nothing reads (a warning): its whole line.
	broken = strings.Replace(text, "host: config.packing_host", `host: "https://packing.example.com"`, 1)
	want = strings.Replace(broken, "    packing_host: Url { binding: \"PACKING_HOST\" default: \"https://packing.example.com\" }\n", "", 1)
	if got := fix(broken, "Remove unused `packing_host`", at(broken, "packing_host: Url", 0, 2)); got != want {
		t.Errorf("remove an unused config field:\n%s", got)
	}
	// Remove a name a `use` line brings in and never uses, with its comma.
	broken = strings.Replace(text, "use stock/events { OrderShipped, OrderCancelled }", "use stock/events { Carrier, OrderShipped, OrderCancelled }", 1)
	if got := fix(broken, "Remove unused `Carrier`", at(broken, "Carrier,", 0, 2)); got != text {
		t.Errorf("remove an unused name of a use line:\n%s", got)
	}
	// Install a package the catalogue has.
	broken = strings.Replace(text, "package: Packing.v1", "package: Resend.v1", 1)
	c.change(app, broken, 4)
	c.Published(uri, c.Pubs(uri))
	var cmd map[string]any
	for _, a := range codeActions(t, c, app, at(broken, "Resend.v1", 0, 2)) {
		if a["title"] == "Install package Resend.v1 (jadpo package add Resend.v1)" {
			cmd = a["command"].(map[string]any)
		}
	}
	if cmd == nil {
		t.Fatal("no install action")
	}
	before := c.Pubs(uri)
	c.Call("workspace/executeCommand", map[string]any{"command": cmd["command"], "arguments": cmd["arguments"]})
	if installed != "Resend.v1" {
		t.Fatalf("installed %q", installed)
	}
	ds := c.Published(uri, before)
	for _, d := range ds {
		if d.(map[string]any)["code"] == "package.not_installed" {
			t.Errorf("still not installed after the fix: %v", ds)
		}
	}
	// Format document, as an action and as formatting.
	c.change(app, text, 5)
	c.Published(uri, c.Pubs(uri))
	var formatted string
	for _, a := range codeActions(t, c, app, at(text, "store", 0, 0)) {
		if a["kind"] == "source.formatDocument" {
			formatted = applyEdit(t, text, a["edit"].(map[string]any), uri)
		}
	}
	if formatted != strings.ReplaceAll(text, "    ", "  ") {
		t.Errorf("format document action: %q", formatted)
	}
	edits := c.Call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 4, "insertSpaces": true}})
	if got := applyEdit(t, text, map[string]any{"changes": map[string]any{uri: edits}}, uri); got != formatted {
		t.Errorf("formatting: %q", got)
	}
	_ = dir
}

func copyDir(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = []byte(strings.ReplaceAll(string(b), "AmazonSqs.v2012_11_05", "Resend.v1"))
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

func TestRename(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	rename := func(path string, pos map[string]any, name string) map[string]any {
		return c.Answer(c.Request("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}, "position": pos, "newName": name}))
	}
	// An event, across the module that declares it, the use line, the queue and the handler.
	r := rename(app, at(text, "on OrderShipped", 0, 5), "OrderDispatched")
	if r["error"] != nil {
		t.Fatal(r["error"])
	}
	edit := r["result"].(map[string]any)
	if got := applyEdit(t, text, edit, pathURI(app)); strings.Count(got, "OrderDispatched") != 3 || strings.Contains(got, "OrderShipped") {
		t.Errorf("app after the rename:\n%s", got)
	}
	events := filepath.Join(dir, "stock", "events.jadpo")
	if got := applyEdit(t, read(t, events), edit, pathURI(events)); !strings.Contains(got, "public event OrderDispatched {") {
		t.Errorf("events after the rename:\n%s", got)
	}
	// A config field.
	r = rename(app, at(text, "config.packing_account", 0, 9), "packing_account_id")
	if got := applyEdit(t, text, r["result"].(map[string]any), pathURI(app)); strings.Count(got, "packing_account_id") != 3 {
		t.Errorf("config field rename:\n%s", got)
	}
	// Refused: a queue, a queue's connection, a package's declaration, a name in the wrong case.
	for _, cs := range []struct {
		pos  map[string]any
		name string
		want string
	}{
		{at(text, "queue returns_queue", 0, 7), "returns", "received ids are recorded under `queue returns_queue`"},
		{at(text, "connection warehouse_queue", 0, 12), "wq", "queue `warehouse_queue` receives from it"},
		{at(text, "ParcelLost", 0, 1), "Lost", "declared in package `Packing.v1`"},
		{at(text, "on OrderShipped", 0, 5), "order_dispatched", "UpperCamelCase"},
		{at(text, "config.packing_token", 0, 9), "sqs_host", "`sqs_host` is taken"},
	} {
		r := rename(app, cs.pos, cs.name)
		e, _ := r["error"].(map[string]any)
		if e == nil || !strings.Contains(e["message"].(string), cs.want) {
			t.Errorf("rename at %v to %s: %v, want an error saying %q", cs.pos, cs.name, r, cs.want)
		}
	}
	// Refused: an enum variant, which is its name on the wire.
	etext := read(t, events)
	c.open(events, etext)
	if r := rename(events, at(etext, "dhl ups", 0, 1), "dhl_express"); r["error"] == nil ||
		!strings.Contains(r["error"].(map[string]any)["message"].(string), "variant `dhl` is not renamed") {
		t.Errorf("renaming a variant: %v", r)
	}
	// prepareRename says so before the editor asks for a name.
	r = c.Answer(c.Request("textDocument/prepareRename", docPos(app, at(text, "queue returns_queue", 0, 7))))
	if r["error"] == nil {
		t.Errorf("prepareRename of a queue: %v", r)
	}
	p := c.Call("textDocument/prepareRename", docPos(app, at(text, "config.packing_token", 0, 9))).(map[string]any)
	if p["placeholder"] != "packing_token" {
		t.Errorf("prepareRename: %v", p)
	}
}

// A file changed outside the editor is checked again when the client says so.
func TestWatchedFilesAreCheckedAgain(t *testing.T) {
	c, dir, _, _ := warehouse(t, Options{})
	if len(c.Requests()) == 0 {
		c.ReadOne() // the watcher registration may still be in flight
	}
	reg, _ := json.Marshal(c.Requests())
	if !strings.Contains(string(reg), "workspace/didChangeWatchedFiles") || !strings.Contains(string(reg), "**/*.jadpo") {
		t.Fatalf("no watcher registered: %s", reg)
	}
	events := filepath.Join(dir, "stock", "events.jadpo")
	if err := os.WriteFile(events, []byte(strings.Replace(read(t, events), "public event OrderShipped", "event OrderShipped", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := pathURI(filepath.Join(dir, "app.jadpo"))
	before := c.Pubs(uri)
	c.Notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": pathURI(events), "type": 2}}})
	ds := c.Published(uri, before)
	if len(ds) == 0 || !strings.Contains(fmt.Sprint(ds), "module.name_not_public") {
		t.Errorf("after the change on disk: %v", ds)
	}
}

func TestShutdownAndExit(t *testing.T) {
	c := startServer(t, Options{})
	c.Call("initialize", map[string]any{})
	c.Call("shutdown", nil)
	r := c.Answer(c.Request("textDocument/hover", docPos("/x/app.jadpo", map[string]any{"line": 0, "character": 0})))
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(lspInvalidRequest) {
		t.Errorf("a request after shutdown: %v", r)
	}
	c.Notify("exit", nil)
	if err := <-c.done; err != nil {
		t.Errorf("exit after shutdown: %v", err)
	}
	c = startServer(t, Options{})
	c.Call("initialize", map[string]any{})
	c.Notify("exit", nil)
	if err := <-c.done; !errors.Is(err, ErrExitWithoutShutdown) {
		t.Errorf("exit without shutdown: %v", err)
	}
}

// A request cancelled before the server gets to it is answered cancelled.
func TestCancelledRequest(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	s := c.server()
	hold := make(chan struct{})
	s.beforeRequest = func() { <-hold }
	id := c.Request("textDocument/hover", docPos(app, at(text, "on OrderShipped", 0, 4)))
	c.Notify("$/cancelRequest", map[string]any{"id": id})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, ok := s.cancelled.Load(fmt.Sprint(id)); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancellation was not read")
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	r := c.Answer(id)
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(lspRequestCancelled) {
		t.Errorf("a cancelled request: %v", r)
	}
	s.beforeRequest = nil
	if r := c.Call("textDocument/hover", docPos(app, at(text, "on OrderShipped", 0, 4))); r == nil {
		t.Error("the next request is not answered")
	}
}

// Renaming a subscriber, or an event a queue receives, changes a name the
// store keeps rows under: a client that can ask the user first gets the
// edit marked as needing confirmation, with the reason.
func TestRenameOfAStoredNameAsksFirst(t *testing.T) {
	dir := copyExample(t, "warehouse")
	c := startServer(t, Options{Debounce: -1})
	c.Call("initialize", map[string]any{"rootUri": pathURI(dir), "capabilities": map[string]any{"workspace": map[string]any{
		"workspaceEdit": map[string]any{"documentChanges": true, "changeAnnotationSupport": map[string]any{"groupsOnLabel": true}}}}})
	app := filepath.Join(dir, "app.jadpo")
	text := read(t, app)
	c.open(app, text)
	c.Published(pathURI(app), 0)
	rename := func(pos map[string]any, name string) map[string]any {
		return c.Call("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}, "position": pos, "newName": name}).(map[string]any)
	}
	for _, cs := range []struct {
		pos  map[string]any
		name string
		want string
	}{
		{at(text, "subscriber pack_order", 0, 12), "pack_orders", "deliveries are recorded under subscriber `pack_order`"},
		{at(text, "on OrderShipped", 0, 5), "OrderDispatched", "queue `warehouse_queue` receives `OrderShipped`"},
	} {
		r := rename(cs.pos, cs.name)
		ann, _ := r["changeAnnotations"].(map[string]any)["stored-name"].(map[string]any)
		if ann == nil || ann["needsConfirmation"] != true || !strings.Contains(ann["description"].(string), cs.want) {
			t.Errorf("rename to %s: %v", cs.name, r)
			continue
		}
		edits := r["documentChanges"].([]any)[0].(map[string]any)["edits"].([]any)
		if edits[0].(map[string]any)["annotationId"] != "stored-name" {
			t.Errorf("rename to %s: the edits are not annotated: %v", cs.name, edits)
		}
	}
	// A config field's name is nowhere in the store: a plain edit.
	if r := rename(at(text, "config.packing_token", 0, 9), "packing_secret"); r["changes"] == nil || r["changeAnnotations"] != nil {
		t.Errorf("config field rename: %v", r)
	}
}

// An enum input's value offers the enum's variants (written bare).
func TestCompletionOfEnumVariants(t *testing.T) {
	dir := checktest.CaseProject(t, "pass_enum_argument") // enum Service { standard express }
	c := startServer(t, Options{Debounce: -1})
	c.initialize(dir)
	app := filepath.Join(dir, "app.jadpo")
	text := read(t, app)
	c.open(app, text)
	if ds := c.Published(pathURI(app), 0); len(ds) != 0 {
		t.Fatalf("the edited warehouse has problems: %v", ds)
	}
	got := completionLabels(t, c, app, text, at(text, "carrier: express", 0, len("carrier: ")))
	if fmt.Sprint(got) != "[config express shipment standard]" {
		t.Errorf("at an enum input's value: %v, want its variants, the binding and config", got)
	}
	if got := completionLabels(t, c, app, text, at(text, "carrier: express", 0, len("carrier: ex"))); fmt.Sprint(got) != "[express]" {
		t.Errorf("after `ex`: %v", got)
	}
	// The bare variant is a use of it: its definition is the enum's variant.
	jobs := read(t, filepath.Join(dir, "packages", "Packing.v1", "resources", "jobs.jadpo"))
	want := at(jobs, "express }", 0, 0)
	l := locations(c.Call("textDocument/definition", docPos(app, at(text, "express,", 0, 2))))
	if wantLoc := fmt.Sprintf("pass_enum_argument/packages/Packing.v1/resources/jobs.jadpo:%v:%v", want["line"], want["character"]); len(l) != 1 || l[0] != wantLoc {
		t.Errorf("definition of the variant: %v, want %s", l, wantLoc)
	}
	if h := hoverText(t, c, app, at(text, "express,", 0, 2)); !strings.Contains(h, "variant express of enum Service") {
		t.Errorf("hover on the variant: %q", h)
	}
}
