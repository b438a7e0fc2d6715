package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// decodeTokens turns semantic tokens' integers back into "text type
// modifiers" lines, for a test to read.
func decodeTokens(t *testing.T, text string, data []any) []string {
	t.Helper()
	f := source.NewFile("x.jadpo", []byte(text))
	var out []string
	line, char := 0, 0
	for i := 0; i+4 < len(data); i += 5 {
		dl, dc, n, typ, mods := int(data[i].(float64)), int(data[i+1].(float64)), int(data[i+2].(float64)), int(data[i+3].(float64)), int(data[i+4].(float64))
		if dl > 0 {
			line, char = line+dl, dc
		} else {
			char += dc
		}
		start := offsetAt(f, line, char)
		end := offsetAt(f, line, char+n)
		s := text[start:end] + " " + semanticTokenTypes[typ]
		for b, m := range semanticTokenModifiers {
			if mods&(1<<b) != 0 {
				s += "." + m
			}
		}
		out = append(out, s)
	}
	return out
}

func semanticFull(t *testing.T, c *testClient, path string) (string, []any) {
	t.Helper()
	r := c.Call("textDocument/semanticTokens/full", map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}}).(map[string]any)
	return r["resultId"].(string), r["data"].([]any)
}

func containsAll(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s: no token %q in\n%s", what, w, strings.Join(got, "\n"))
		}
	}
}

// Issue 29: semantic tokens from the lexer, the tree and the index.
func TestSemanticTokens(t *testing.T) {
	c, dir, app, text := warehouse(t, Options{})
	_, data := semanticFull(t, c, app)
	got := decodeTokens(t, text, data)
	containsAll(t, "app.jadpo", got,
		"// The warehouse app: receives shipping events from two SQS queues, keeps each comment",
		"use keyword", "stock namespace", "OrderShipped event",
		"config keyword", "ShopConfig config.declaration.readonly", "sqs_host property.declaration.readonly",
		"Text type.defaultLibrary", "binding property", `"SQS_HOST" string`, "true keyword",
		"store keyword", "primary store.declaration",
		"connection keyword", "warehouse_queue connection.declaration", "AmazonSqs namespace", "v2012_11_05 namespace",
		"config config.readonly", "sqs_host property.readonly", "0 number",
		"queue keyword", "warehouse_queue queue.declaration", "ParcelLost event",
		"subscriber keyword", "pack_order subscriber.declaration", "on keyword", "shipment parameter.declaration",
		"attempt keyword", "packing connection", "jobs namespace", "create_job method", "shipment parameter",
		"json function.defaultLibrary", "10s number", "1h number")
	events := filepath.Join(dir, "stock", "events.jadpo")
	etext := read(t, events)
	_, edata := semanticFull(t, c, events)
	containsAll(t, "stock/events.jadpo", decodeTokens(t, etext, edata),
		"public keyword", "event keyword", "OrderShipped event.declaration", "type keyword", "OrderId type.declaration",
		"enum keyword", "Carrier enum.declaration", "dhl enumMember.declaration", "List type.defaultLibrary",
		"value keyword", "OrderLine struct.declaration", "order_id property.declaration", "OrderLine struct", "min_length property")
	pkg := filepath.Join(dir, "packages", "AmazonSqs.v2012_11_05", "package.jadpo")
	ptext := read(t, pkg)
	_, pdata := semanticFull(t, c, pkg)
	containsAll(t, "a package", decodeTokens(t, ptext, pdata),
		"package keyword", "provider keyword", "Protocol enum.defaultLibrary", "aws_json enumMember.defaultLibrary",
		"settings keyword", "wait_time_seconds property.declaration.readonly")
	// The legend initialize advertises is the one the integers index.
	caps := startServer(t, Options{}).Call("initialize", map[string]any{}).(map[string]any)["capabilities"].(map[string]any)
	legend := caps["semanticTokensProvider"].(map[string]any)["legend"].(map[string]any)
	if fmt.Sprint(legend["tokenTypes"]) != fmt.Sprint(semanticTokenTypes) || fmt.Sprint(legend["tokenModifiers"]) != "[declaration readonly defaultLibrary]" {
		t.Errorf("legend: %v", legend)
	}
}

// A file with a syntax error keeps its tokens: the broken declaration's
// keyword, text, numbers and comments, and every declaration that parses.
func TestSemanticTokensAfterASyntaxError(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	broken := strings.Replace(text, "store primary {\n}", "store primary {\n    retention: { succeeded: 1d outbox: = } // half typed\n}", 1)
	before := c.Pubs(pathURI(app))
	c.change(app, broken, 2)
	if ds := c.Published(pathURI(app), before); len(ds) == 0 {
		t.Fatal("the broken store has no syntax error")
	}
	_, data := semanticFull(t, c, app)
	containsAll(t, "a broken store", decodeTokens(t, broken, data),
		"store keyword", "1d number", "// half typed comment",
		"subscriber keyword", "pack_order subscriber.declaration", "ShopConfig config.declaration.readonly")
	// Not even one declaration parses: the lexer's tokens remain.
	c.change(app, "queue q { id_at: \"id\" 30s = = }\n// note\n", 3)
	_, data = semanticFull(t, c, app)
	containsAll(t, "a file that does not parse", decodeTokens(t, "queue q { id_at: \"id\" 30s = = }\n// note\n", data),
		"queue keyword", `"id" string`, "30s number", "// note comment")
}

// Issue 29: /full/delta sends the change against the last answer, and
// /range the tokens inside a range.
func TestSemanticTokensDeltaAndRange(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	id, before := semanticFull(t, c, app)
	edited := strings.Replace(text, "max_attempts: 8", "max_attempts: 12", 1)
	c.change(app, edited, 2)
	r := c.Call("textDocument/semanticTokens/full/delta", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}, "previousResultId": id}).(map[string]any)
	edits, ok := r["edits"].([]any)
	if !ok || len(edits) != 1 {
		t.Fatalf("delta: %v", r)
	}
	e := edits[0].(map[string]any)
	start, del := int(e["start"].(float64)), int(e["deleteCount"].(float64))
	patched := append(append(append([]any{}, before[:start]...), e["data"].([]any)...), before[start+del:]...)
	_, after := semanticFull(t, c, app)
	if fmt.Sprint(patched) != fmt.Sprint(after) {
		t.Errorf("the delta applied is not the full answer:\n%v\n%v", patched, after)
	}
	if len(e["data"].([]any)) > 5 {
		t.Errorf("a one-word edit sent %d integers", len(e["data"].([]any)))
	}
	// An unknown previous result: the whole answer.
	r = c.Call("textDocument/semanticTokens/full/delta", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)}, "previousResultId": "nope"}).(map[string]any)
	if r["data"] == nil {
		t.Errorf("a delta against an unknown result is not a full answer: %v", r)
	}
	// Range: the subscriber's lines only.
	from := at(edited, "subscriber pack_order", 0, 0)
	rr := c.Call("textDocument/semanticTokens/range", map[string]any{"textDocument": map[string]any{"uri": pathURI(app)},
		"range": map[string]any{"start": from, "end": map[string]any{"line": from["line"].(int) + 2, "character": 0}}}).(map[string]any)
	// Decoding a range answer starts at its first token's absolute line.
	rdata := rr["data"].([]any)
	if len(rdata) == 0 {
		t.Fatal("no tokens in the range")
	}
	lines := strings.Split(edited, "\n")
	sub := strings.Join(lines[from["line"].(int):], "\n")
	rdata[0] = float64(0)
	containsAll(t, "the range", decodeTokens(t, sub, rdata), "subscriber keyword", "pack_order subscriber.declaration", "shipment parameter.declaration")
	for _, g := range decodeTokens(t, sub, rdata) {
		if strings.HasPrefix(g, "attempt ") {
			t.Errorf("a token outside the range: %s", g)
		}
	}
}

// FuzzEditorTokens feeds any text as an app.jadpo and reads what the
// editor requests of this package's editor.go compute from it: semantic
// tokens (in order, none overlapping, inside the text, whole tokens of the
// legend), the selection chain at offsets across it (each step holds the
// one before), folding's bracket pairs and a call's given arguments. None
// may panic. Seeded with every .jadpo file of the examples.
func FuzzEditorTokens(f *testing.F) {
	addExampleSeeds(f)
	f.Add([]byte("\ufeffqueue q { id_at: \"id\\q 30s = } // x\r\npublic event E { a: Text? ]\n'x' \xff"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		res := check.CheckIndexed(project.LoadFS(fstest.MapFS{"app.jadpo": {Data: src}}))
		file := source.NewFile("app.jadpo", src)
		toks := fileTokens(file, nil, res.Index)
		prev := 0
		for _, tk := range toks {
			if tk.start < prev || tk.end <= tk.start || tk.end > len(src) || tk.typ < 0 || tk.typ >= len(semanticTokenTypes) || tk.mods >= 1<<len(semanticTokenModifiers) {
				t.Fatalf("token %+v after offset %d in %d bytes", tk, prev, len(src))
			}
			prev = tk.end
		}
		if data := encodeTokens(file, toks); len(data)%5 != 0 {
			t.Fatalf("%d integers", len(data))
		}
		tree, _ := parser.ParseFile(file)
		step := len(src)/16 + 1
		for off := 0; off <= len(src); off += step {
			chain := selectionChain(file, tree, off)
			for i := 1; i < len(chain); i++ {
				if chain[i].Start > chain[i-1].Start || chain[i].End < chain[i-1].End {
					t.Fatalf("selection step %v does not hold %v", chain[i], chain[i-1])
				}
			}
			_ = givenArguments(src, off)
		}
	})
}

// BenchmarkSemanticTokens is textDocument/semanticTokens/full of one
// module of the generated 50,000-line project: the lexer's tokens, the
// tree's and the index's classes (every symbol of the project is looked
// at), encoded; /peer is the module's lexing alone, the least any answer
// does.
func BenchmarkSemanticTokens(b *testing.B) {
	bs := newBenchSession(b)
	params := map[string]any{"textDocument": map[string]any{"uri": pathURI(bs.path)}}
	b.Run("full", func(b *testing.B) {
		cpu, n := cpuTime(), 0
		for b.Loop() {
			r := bs.c.Call("textDocument/semanticTokens/full", params).(map[string]any)
			if len(r["data"].([]any)) == 0 {
				b.Fatal("no tokens")
			}
			n++
		}
		reportCPU(b, cpu, n)
		b.ReportMetric(float64(strings.Count(bs.text, "\n")), "lines")
	})
	b.Run("peer", func(b *testing.B) {
		for b.Loop() {
			lexer.Lex(bs.text)
		}
	})
}
