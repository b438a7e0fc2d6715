package format

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/diag"
)

// Each case is a source and its canonical layout; the layout must also be
// its own (formatting is idempotent).
var layoutCases = []struct{ name, in, want string }{
	{"indentation and spacing",
		"value  OrderLine{\n  sku :Sku\n\t\tquantity:Quantity }\n",
		"value OrderLine {\n    sku: Sku\n    quantity: Quantity\n}\n"},
	{"one line stays one line",
		"type Quantity=Int{min:1   max:1000}\n",
		"type Quantity = Int { min: 1 max: 1000 }\n"},
	{"empty brackets as written",
		"store primary {\n\n}\nstore other {  }\nqueue q { events: {} }\n",
		"store primary {\n}\n\nstore other {}\nqueue q { events: {} }\n"},
	{"a bracket written across lines gets one item a line",
		"connection c {\n    credential: { key_id: config.a\n        secret: config.b }\n}\n",
		"connection c {\n    credential: {\n        key_id: config.a\n        secret: config.b\n    }\n}\n"},
	{"lists and calls: commas between items, none after the last",
		"subscriber s {\n    on A(x) {\n        attempt c.f(a: 1 b: [1,2,], c: x.y,)\n        attempt c.g(\n            a: 1\n            b: 2,\n        )\n    }\n}\n",
		"subscriber s {\n    on A(x) {\n        attempt c.f(a: 1, b: [1, 2], c: x.y)\n        attempt c.g(\n            a: 1,\n            b: 2\n        )\n    }\n}\n"},
	{"use lines",
		"use stock/events {OrderShipped,OrderCancelled,}\nuse common {\nMoney }\ntype A = Int\n",
		"use stock/events { OrderShipped, OrderCancelled }\n\nuse common {\n    Money\n}\n\ntype A = Int\n"},
	{"blank lines: around multi-line declarations, after uses and the package header, else the author's",
		"package P.v1\nprovider {\n    protocol: Protocol.sql\n}\nsettings { a: Text }\ntype A = Int\n\n\n\ntype B = Int\ntype C = Int\nvalue V {\n    a: A\n\n\n    b: B\n}\ntype D = Int\n",
		"package P.v1\n\nprovider {\n    protocol: Protocol.sql\n}\n\nsettings { a: Text }\ntype A = Int\n\ntype B = Int\ntype C = Int\n\nvalue V {\n    a: A\n\n    b: B\n}\n\ntype D = Int\n"},
	{"no blank line after an opening bracket or before a closing one",
		"value V {\n\n    a: A\n\n}\n",
		"value V {\n    a: A\n}\n"},
	{"a long line is broken at its outermost bracket",
		"config C {\n    sqs_host: Url { binding: \"SQS_HOST\" default: \"https://sqs.eu-west-1.amazonaws.com/000000000000/q\" }\n}\n",
		"config C {\n    sqs_host: Url {\n        binding: \"SQS_HOST\"\n        default: \"https://sqs.eu-west-1.amazonaws.com/000000000000/q\"\n    }\n}\n"},
	{"comments stay where they stand",
		"// The app.\n\n// Its config.\nconfig C { // trailing the brace\n    // before a\n    a: Text   // after a\n\n    // before b\n\n    b: Text\n    // after the last field\n}\n// at the end\n",
		"// The app.\n\n// Its config.\nconfig C { // trailing the brace\n    // before a\n    a: Text // after a\n\n    // before b\n\n    b: Text\n    // after the last field\n}\n// at the end\n"},
	{"a comment after a declaration keeps the blank line after it",
		"package P.v1 // the header\nprovider { protocol: Protocol.sql } // one line\nsettings {\n    a: Text\n} // done\ntype A = Int\n",
		"package P.v1 // the header\n\nprovider { protocol: Protocol.sql } // one line\n\nsettings {\n    a: Text\n} // done\n\ntype A = Int\n"},
	{"a comment inside a one-line bracket breaks it",
		"queue q { id_at: \"id\" // the id\n events: { A } }\n",
		"queue q {\n    id_at: \"id\" // the id\n    events: { A }\n}\n"},
	{"a comment where no line break goes continues the line one level in",
		"type A = // why\n  Int\nstore s { database: // which\n config.d }\n",
		"type A = // why\n    Int\n\nstore s {\n    database: // which\n        config.d\n}\n"},
	{"a comment before a comma stays after the item",
		"use m { A // first\n , B }\n",
		"use m {\n    A, // first\n    B\n}\n"},
	{"an empty bracket with a comment",
		"store s { // none yet\n}\nstore t {\n\n    // none\n\n}\n",
		"store s { // none yet\n}\n\nstore t {\n    // none\n}\n"},
	{"line endings, trailing spaces and a byte order mark",
		"\uFEFF// a  \r\ntype A = Int   \r\n\r\n\r\ntype B = Int\r\n",
		"// a\ntype A = Int\n\ntype B = Int\n"},
	{"public on a subscriber is kept (the checker warns of it)",
		"public   subscriber s { on E(e) { attempt c.f(a: 1) } }\n",
		"public subscriber s { on E(e) { attempt c.f(a: 1) } }\n"},
	{"only comments", "\n\n// just this\n\n\n// and this\n\n", "// just this\n\n// and this\n"},
	{"empty", " \n\n", ""},
	{"handlers, entries and types",
		"public   event E { m: Map< Text ,List<Int> > ? }\nqueue q {\n    events: {\n        E   { wire_name: \"e\" }\n        P.F\n    }\n}\nsubscriber s { on P.E ( e ) { attempt c.f( json( e ) ) } retry: { max_attempts: 2 } }\n",
		"public event E { m: Map<Text, List<Int>>? }\n\nqueue q {\n    events: {\n        E { wire_name: \"e\" }\n        P.F\n    }\n}\n\nsubscriber s { on P.E(e) { attempt c.f(json(e)) } retry: { max_attempts: 2 } }\n"},
}

func TestLayout(t *testing.T) {
	for _, c := range layoutCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Source("app.jadpo", []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
			again, err := Source("app.jadpo", got)
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != c.want {
				t.Fatalf("not idempotent; second pass:\n%s", again)
			}
		})
	}
}

func TestSyntaxErrorIsTheParsersDiagnostics(t *testing.T) {
	out, err := Source("app.jadpo", []byte("value V {\n    sku Sku\n}\n"))
	if out != nil {
		t.Fatalf("formatted a file with a syntax error: %q", out)
	}
	var l diag.List
	if !errors.As(err, &l) || len(l) != 1 || l[0].Code != "syntax.unexpected_token" {
		t.Fatalf("want the parser's one diagnostic, got %v", err)
	}
	if l[0].Subject.File == nil || l[0].Subject.File.Path != "app.jadpo" {
		t.Fatalf("the diagnostic is not in app.jadpo: %+v", l[0].Subject)
	}
	if !strings.Contains(err.Error(), "app.jadpo:2:") {
		t.Fatalf("the error does not say where: %v", err)
	}
}

// TestDocsExampleIsFormatted: the example of docs/reference/formatting.md
// is in the layout the page describes.
func TestDocsExampleIsFormatted(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(reporoot.Dir(t), "docs", "reference", "formatting.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "## The layout\n\n```text\n")
	example, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/reference/formatting.md has no example under \"The layout\"")
	}
	got, err := Source("example.jadpo", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != example {
		t.Fatalf("the example is not formatted; formatted it reads:\n%s", got)
	}
}
