package parser_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

func parse(src string) (*ast.File, diag.List) {
	return parser.ParseFile(source.NewFile("test.jadpo", []byte(src)))
}

func parseOK(t *testing.T, src string) *ast.File {
	t.Helper()
	f, diags := parse(src)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v\nin:\n%s", diags, src)
	}
	return f
}

func one(t *testing.T, src string) *ast.Decl {
	t.Helper()
	f := parseOK(t, src)
	if len(f.Decls) != 1 {
		t.Fatalf("%d declarations, want 1", len(f.Decls))
	}
	return f.Decls[0]
}

// text is the source a node covers.
func text(src string, n interface{ Span() source.Span }) string {
	s := n.Span()
	return src[s.Start:s.End]
}

func names(ids []*ast.Ident) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Name
	}
	return strings.Join(out, " ")
}

// typeString renders a type expression back as written: List<Map<Text, X>>?
func typeString(t *ast.TypeExpr) string {
	s := t.Name.String()
	if len(t.Args) > 0 {
		args := make([]string, len(t.Args))
		for i, a := range t.Args {
			args[i] = typeString(a)
		}
		s += "<" + strings.Join(args, ", ") + ">"
	}
	if t.Optional {
		s += "?"
	}
	return s
}

// exprString renders an expression in a compact, unambiguous form.
func exprString(e *ast.Expr) string {
	switch {
	case e == nil:
		return "<nil>"
	case e.Text != nil:
		return *e.Text
	case e.Duration != nil:
		return "dur:" + *e.Duration
	case e.Number != nil:
		return "num:" + *e.Number
	case e.List != nil:
		items := make([]string, len(e.List.Items))
		for i, it := range e.List.Items {
			items[i] = exprString(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case e.Record != nil:
		return blockString(e.Record)
	case e.Ref != nil:
		s := e.Ref.Path.String()
		if e.Ref.Call != nil {
			args := make([]string, len(e.Ref.Call.Items))
			for i, a := range e.Ref.Call.Items {
				if a.Name != nil {
					args[i] = a.Name.Name + ": "
				}
				args[i] += exprString(a.Value)
			}
			s += "(" + strings.Join(args, ", ") + ")"
		}
		return s
	}
	return "<empty>"
}

func blockString(b *ast.Block) string {
	if b == nil {
		return "<nil>"
	}
	parts := make([]string, len(b.Members))
	for i, m := range b.Members {
		parts[i] = memberString(m)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func memberString(m *ast.Member) string {
	if m.Key != nil {
		return m.Key.Name + ": " + exprString(m.Value)
	}
	s := m.Entry.String()
	if m.EntryBody != nil {
		s += " " + blockString(m.EntryBody)
	}
	return s
}

func fieldString(f *ast.Field) string {
	s := f.Name.Name + ": " + typeString(&f.Type)
	if f.Options != nil {
		s += " " + blockString(f.Options)
	}
	return s
}

func fieldsString(fs []*ast.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fieldString(f)
	}
	return out
}

func eq(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s\n got %s\nwant %s", what, got, want)
	}
}

func eqList(t *testing.T, what string, got, want []string) {
	t.Helper()
	eq(t, what, strings.Join(got, "\n"), strings.Join(want, "\n"))
}

// use lines.
func TestUse(t *testing.T) {
	src := "use stock/events { OrderShipped, OrderCancelled }\nuse common { Money }\nuse a/b/c { X, }\n"
	f := parseOK(t, src)
	if len(f.Decls) != 3 {
		t.Fatalf("%d declarations", len(f.Decls))
	}
	u := f.Decls[0].Use
	if u == nil {
		t.Fatal("not a use")
	}
	eq(t, "path", strings.Join(u.Path.Parts, "/"), "stock/events")
	eq(t, "names", names(u.Names), "OrderShipped OrderCancelled")
	eq(t, "use text", text(src, f.Decls[0].Node), "use stock/events { OrderShipped, OrderCancelled }")
	eq(t, "single part", strings.Join(f.Decls[1].Use.Path.Parts, "/"), "common")
	eq(t, "trailing comma", names(f.Decls[2].Use.Names), "X")
	if f.Decls[0].Name() != nil {
		t.Error("a use has no name")
	}
}

// scalar types.
func TestTypeDecl(t *testing.T) {
	src := `type OrderId = Text { min_length: 1 max_length: 64 }
type Quantity = Int { min: 1 max: 1000 }
type Sku = Text { pattern: "[A-Z0-9-]+" }
type ShippedAt = Instant
public type Price = Billing.Money { min: -7 max: 3.25 }
`
	f := parseOK(t, src)
	var got []string
	for _, d := range f.Decls {
		n := d.Named
		if n == nil || n.Type == nil {
			t.Fatalf("not a type: %s", text(src, d.Node))
		}
		s := fmt.Sprintf("public=%v %s = %s", n.Public, n.Type.Name.Name, typeString(n.Type.Base))
		if n.Type.Rules != nil {
			s += " " + blockString(n.Type.Rules)
		}
		got = append(got, s)
		if d.Name() != n.Type.Name {
			t.Errorf("Decl.Name() of %s", n.Type.Name.Name)
		}
	}
	eqList(t, "types", got, []string{
		"public=false OrderId = Text {min_length: num:1 max_length: num:64}",
		"public=false Quantity = Int {min: num:1 max: num:1000}",
		`public=false Sku = Text {pattern: "[A-Z0-9-]+"}`,
		"public=false ShippedAt = Instant",
		"public=true Price = Billing.Money {min: num:-7 max: num:3.25}",
	})
	id := f.Decls[0].Named.Type.Name
	eq(t, "ident span", text(src, id), "OrderId")
	eq(t, "decl span", text(src, f.Decls[3].Node), "type ShippedAt = Instant")
}

func TestEnum(t *testing.T) {
	src := "enum Carrier { dhl ups royal_mail }\npublic enum Empty {}\nenum Lines {\n  a\n  b\n}"
	f := parseOK(t, src)
	e := f.Decls[0].Named.Enum
	eq(t, "name", e.Name.Name, "Carrier")
	eq(t, "variants", names(e.Variants), "dhl ups royal_mail")
	eq(t, "royal_mail span", text(src, e.Variants[2]), "royal_mail")
	if !f.Decls[1].Named.Public || len(f.Decls[1].Named.Enum.Variants) != 0 {
		t.Error("public enum Empty {}")
	}
	eq(t, "multi-line", names(f.Decls[2].Named.Enum.Variants), "a b")
}

func TestValueAndEvent(t *testing.T) {
	src := `value OrderLine {
    sku: Sku
    quantity: Quantity
}

public event OrderShipped {
    order_id: OrderId
    shipped_at: ShippedAt
    carrier: Carrier
    lines: List<OrderLine>
    note: Text? { max_length: 500 }
    items: Map<Text, Int>
    nested: List<Map<Text, Billing.Money>>?
    md5: Text { wire_name: "MD5OfBody" }
    value: Int  event: Text
}
`
	f := parseOK(t, src)
	v := f.Decls[0].Named
	if v.Public || v.Record == nil || v.Record.IsEvent() || v.Record.Kind != "value" {
		t.Fatalf("value: %+v", v)
	}
	eqList(t, "value fields", fieldsString(v.Record.Fields), []string{"sku: Sku", "quantity: Quantity"})
	e := f.Decls[1].Named
	if !e.Public || !e.Record.IsEvent() {
		t.Fatal("want a public event")
	}
	eq(t, "event name", e.Record.Name.Name, "OrderShipped")
	eqList(t, "event fields", fieldsString(e.Record.Fields), []string{
		"order_id: OrderId",
		"shipped_at: ShippedAt",
		"carrier: Carrier",
		"lines: List<OrderLine>",
		"note: Text? {max_length: num:500}",
		"items: Map<Text, Int>",
		"nested: List<Map<Text, Billing.Money>>?",
		`md5: Text {wire_name: "MD5OfBody"}`,
		"value: Int",
		"event: Text",
	})
	note := e.Record.Fields[4]
	eq(t, "field span", text(src, note.Node), "note: Text? { max_length: 500 }")
	eq(t, "type span", text(src, note.Type.Node), "Text?")
	eq(t, "public event span starts at public", text(src, f.Decls[1].Node)[:19], "public event OrderS")
}

// config and store.
func TestConfigAndStore(t *testing.T) {
	src := `config ShopConfig {
    aws_access_key_id: Text { binding: "AWS_ACCESS_KEY_ID" }
    aws_secret_access_key: Text { binding: "AWS_SECRET_ACCESS_KEY" secret: true }
    sqs_host: Url { binding: "SQS_HOST" default: "https://sqs.eu-west-1.amazonaws.com" }
}

store primary {
    database: config.database_url      // optional
}
store other {}
`
	f := parseOK(t, src)
	c := f.Decls[0].Named.Config
	if c == nil {
		t.Fatal("not a config")
	}
	eq(t, "name", c.Name.Name, "ShopConfig")
	eqList(t, "fields", fieldsString(c.Fields), []string{
		`aws_access_key_id: Text {binding: "AWS_ACCESS_KEY_ID"}`,
		`aws_secret_access_key: Text {binding: "AWS_SECRET_ACCESS_KEY" secret: true}`,
		`sqs_host: Url {binding: "SQS_HOST" default: "https://sqs.eu-west-1.amazonaws.com"}`,
	})
	s := f.Decls[1].Named.BlockDecl
	eq(t, "store", s.Kind+" "+s.Name.Name+" "+blockString(s.Body), "store primary {database: config.database_url}")
	eq(t, "empty store", blockString(f.Decls[2].Named.BlockDecl.Body), "{}")
	if f.Decls[1].Name().Name != "primary" {
		t.Error("Decl.Name() of a store")
	}
}

// connections; several members may share a line.
func TestConnection(t *testing.T) {
	src := `connection warehouse_queue {
    package: AmazonSqs.v2012_11_05
    host: config.sqs_host
    credential: {
        key_id: config.aws_access_key_id
        secret: config.aws_secret_access_key
    }
    settings: { queue_url: config.warehouse_queue_url wait_time_seconds: 0 }
}
`
	b := one(t, src).Named.BlockDecl
	eq(t, "kind", b.Kind, "connection")
	eq(t, "body", blockString(b.Body), "{package: AmazonSqs.v2012_11_05 host: config.sqs_host "+
		"credential: {key_id: config.aws_access_key_id secret: config.aws_secret_access_key} "+
		"settings: {queue_url: config.warehouse_queue_url wait_time_seconds: num:0}}")
	cred := b.Body.Get("credential")
	if cred == nil || cred.Value.Record == nil || cred.Value.Record.Get("secret") == nil {
		t.Fatal("Get(credential).secret")
	}
	eq(t, "member span", text(src, cred.Node)[:13], "credential: {")
	if b.Body.Get("nope") != nil {
		t.Error("Get of a missing key")
	}
}

// queues, their event entries with and without bodies.
func TestQueue(t *testing.T) {
	src := `use stock/events { OrderShipped }

queue warehouse_queue {
    id_at: "id"
    type_at: "type"
    events: {
        OrderShipped { wire_name: "order_shipped" }
        Billing.InvoicePaid { wire_name: "invoice_paid" }
    }
}

queue returns_queue {          // a queue of one kind: no type_at, one event, no wire_name
    id_at: "meta.return_id"
    events: { ReturnRequested }
}
`
	f := parseOK(t, src)
	if len(f.Decls) != 3 {
		t.Fatalf("%d declarations", len(f.Decls))
	}
	q := f.Decls[1].Named.BlockDecl
	eq(t, "queue", q.Kind+" "+q.Name.Name+" "+blockString(q.Body),
		`queue warehouse_queue {id_at: "id" type_at: "type" events: {OrderShipped {wire_name: "order_shipped"} Billing.InvoicePaid {wire_name: "invoice_paid"}}}`)
	entries := q.Body.Get("events").Value.Record.Members
	eq(t, "entry span", text(src, entries[1].Entry.Node), "Billing.InvoicePaid")
	r := f.Decls[2].Named.BlockDecl
	eq(t, "one kind", blockString(r.Body), `{id_at: "meta.return_id" events: {ReturnRequested}}`)
}

// subscribers, handlers, attempts, expressions and durations.
func TestSubscriber(t *testing.T) {
	src := `subscriber pack_order {
    on OrderShipped(shipment) {
        attempt packing.jobs.create_job(order_id: shipment.order_id)
        attempt packing.jobs.note(
            label: { reference: shipment.order_id account: config.packing_account },
            tags: ["shipped", "warehouse"],
            payload: json(shipment)
            count: 2 flag: true gone: none
        )
    }
    on Billing.InvoicePaid(paid) {}
    retry: { max_attempts: 8 first_delay: 10s max_delay: 1h }
}
`
	s := one(t, src).Subscriber
	if s == nil {
		t.Fatal("not a subscriber")
	}
	eq(t, "name", s.Name.Name, "pack_order")
	if len(s.Items) != 3 {
		t.Fatalf("%d items", len(s.Items))
	}
	h := s.Items[0].Handler
	eq(t, "handler", h.Event.String()+"("+h.Binding.Name+")", "OrderShipped(shipment)")
	if len(h.Steps) != 2 {
		t.Fatalf("%d steps", len(h.Steps))
	}
	eq(t, "attempt 1", exprString(h.Steps[0].Call), "packing.jobs.create_job(order_id: shipment.order_id)")
	eq(t, "attempt 2", exprString(h.Steps[1].Call), `packing.jobs.note(label: {reference: shipment.order_id account: config.packing_account}, `+
		`tags: ["shipped", "warehouse"], payload: json(shipment), count: num:2, flag: true, gone: none)`)
	eq(t, "attempt span", text(src, h.Steps[0].Node), "attempt packing.jobs.create_job(order_id: shipment.order_id)")
	h2 := s.Items[1].Handler
	eq(t, "qualified handler", h2.Event.String(), "Billing.InvoicePaid")
	if len(h2.Steps) != 0 {
		t.Error("empty handler has steps")
	}
	m := s.Items[2].Member
	eq(t, "retry", memberString(m), "retry: {max_attempts: num:8 first_delay: dur:10s max_delay: dur:1h}")
}

// package files.
func TestPackageFiles(t *testing.T) {
	header := `package AmazonSqs.v2012_11_05

provider {
    protocol: Protocol.aws_json
    credential: CredentialScheme.aws_sigv4
    aws: { service: "sqs" target: "AmazonSQS" }
    error_code: "__type"
}

settings {
    queue_url: Url
    wait_time_seconds: WaitTimeSeconds { default: 0 }
}

type WaitTimeSeconds = Int { min: 0 max: 20 }
`
	f := parseOK(t, header)
	if len(f.Decls) != 4 {
		t.Fatalf("%d declarations", len(f.Decls))
	}
	eq(t, "package", f.Decls[0].Package.Name.String(), "AmazonSqs.v2012_11_05")
	eq(t, "provider", blockString(f.Decls[1].Provider.Body),
		`{protocol: Protocol.aws_json credential: CredentialScheme.aws_sigv4 aws: {service: "sqs" target: "AmazonSQS"} error_code: "__type"}`)
	eqList(t, "settings", fieldsString(f.Decls[2].Settings.Fields), []string{
		"queue_url: Url", "wait_time_seconds: WaitTimeSeconds {default: num:0}",
	})
	if f.Decls[3].Named.Type == nil {
		t.Error("type after settings")
	}

	resource := `resource messages {
    operation receive_message {
        input: ReceiveMessageInput
        output: ReceiveMessageOutput
        retry_safe: true
    }
    operation delete_message {
        input: DeleteMessageInput
        decode: "sqs_delete"
        method: "POST" path: "/accounts/{account_id}/jobs"
    }
}
`
	r := one(t, resource).Resource
	eq(t, "resource", r.Name.Name, "messages")
	if len(r.Operations) != 2 {
		t.Fatalf("%d operations", len(r.Operations))
	}
	eq(t, "op 1", r.Operations[0].Name.Name+" "+blockString(r.Operations[0].Body),
		"receive_message {input: ReceiveMessageInput output: ReceiveMessageOutput retry_safe: true}")
	eq(t, "op 2", r.Operations[1].Name.Name+" "+blockString(r.Operations[1].Body),
		`delete_message {input: DeleteMessageInput decode: "sqs_delete" method: "POST" path: "/accounts/{account_id}/jobs"}`)

	provides := `provide receiving {
    receive: {
        call: messages.receive_message
        input: {
            queue_url: settings.queue_url
            max_number_of_messages: 10
        }
        messages: response.messages
        body: item.body
        handle: item.receipt_handle
    }
    acknowledge: {
        call: messages.delete_message
        input: { queue_url: settings.queue_url receipt_handle: message.handle }
    }
}
provide cloudflare { driver: cloudflare_queues }
`
	f = parseOK(t, provides)
	p := f.Decls[0].Named.BlockDecl
	eq(t, "provide", p.Kind+" "+p.Name.Name, "provide receiving")
	eq(t, "receive", memberString(p.Body.Get("receive")),
		"receive: {call: messages.receive_message input: {queue_url: settings.queue_url max_number_of_messages: num:10} "+
			"messages: response.messages body: item.body handle: item.receipt_handle}")
	eq(t, "acknowledge", memberString(p.Body.Get("acknowledge")),
		"acknowledge: {call: messages.delete_message input: {queue_url: settings.queue_url receipt_handle: message.handle}}")
	eq(t, "driver", blockString(f.Decls[1].Named.BlockDecl.Body), "{driver: cloudflare_queues}")
}

// comments, one-line blocks, lists with trailing commas, no newline rules.
func TestConventions(t *testing.T) {
	src := `// a comment
store s { a: { service: "sqs" target: "AmazonSQS" } l: [1, 2, 3,] e: [] d: -7 f: 3.25 t: 30d n: none } // trailing
connection c { x: "a \"quoted\" \\ text" }`
	f := parseOK(t, src)
	eq(t, "store", blockString(f.Decls[0].Named.BlockDecl.Body),
		`{a: {service: "sqs" target: "AmazonSQS"} l: [num:1, num:2, num:3] e: [] d: num:-7 f: num:3.25 t: dur:30d n: none}`)
	x := f.Decls[1].Named.BlockDecl.Body.Get("x").Value
	eq(t, "unquoted", x.TextValue(), `a "quoted" \ text`)

	// Declarations may share a line, and one may spread over many.
	f = parseOK(t, "type A = Int type B = Text\nenum\nC\n{\na\n}")
	if len(f.Decls) != 3 {
		t.Errorf("%d declarations, want 3", len(f.Decls))
	}
	// An empty file, or one of comments only, has no declarations and no problems.
	for _, src := range []string{"", "// nothing\n", "\n\n  \t\n"} {
		if f := parseOK(t, src); len(f.Decls) != 0 {
			t.Errorf("%q has declarations", src)
		}
	}
}

// diagString is a diagnostic as code [start,end) `text` label.
func diagString(d *diag.Diagnostic) string {
	s := fmt.Sprintf("%s [%d,%d) `%s`", d.Code, d.Subject.Span.Start, d.Subject.Span.End, d.Subject.Text())
	if d.Label != "" {
		s += " " + d.Label
	}
	return s
}

func diagStrings(l diag.List) []string {
	out := make([]string, len(l))
	for i, d := range l {
		out[i] = diagString(d)
	}
	return out
}

func TestThreeIndependentErrors(t *testing.T) {
	src := `type Quantity = Int { min 1 }
enum Carrier { dhl ups }
value OrderLine { sku Sku }
event OrderShipped { order_id: OrderId }
store primary { database: = }
`
	f, diags := parse(src)
	eqList(t, "diagnostics", diagStrings(diags), []string{
		"syntax.unexpected_token [26,27) `1` expected `:` between `min` and its value",
		"syntax.unexpected_token [77,80) `Sku` expected `:` between `sku` and its type",
		"syntax.unexpected_token [150,151) `=`",
	})
	for _, d := range diags {
		if d.Subject.File == nil || d.Subject.File.Path != "test.jadpo" {
			t.Errorf("diagnostic without its file: %v", d)
		}
	}
	// The declarations between the mistakes are whole.
	var got []string
	for _, d := range f.Decls {
		got = append(got, d.Name().Name)
	}
	eq(t, "declarations kept", strings.Join(got, " "), "Carrier OrderShipped")
}

func TestMissingBraceCostsOneDeclaration(t *testing.T) {
	src := `value OrderLine {
    sku: Sku
    quantity: Quantity

public event OrderShipped {
    lines: List<OrderLine>
}

enum Carrier { dhl ups }
`
	f, diags := parse(src)
	eqList(t, "diagnostics", diagStrings(diags), []string{
		"syntax.unexpected_token [16,17) `{` no matching `}` before the next declaration",
	})
	var got []string
	for _, d := range f.Decls {
		got = append(got, d.Name().Name)
	}
	eq(t, "declarations kept", strings.Join(got, " "), "OrderShipped Carrier")

	// An unclosed `(` or `[` too.
	_, diags = parse("subscriber s { on A(x { } }\ntype B = Int\n")
	if len(diags) != 1 {
		t.Errorf("unclosed paren: %v", diags)
	}
	f, diags = parse("store s { l: [1, 2 }\ntype B = Int\n")
	if len(diags) != 1 || len(f.Decls) != 1 {
		t.Errorf("unclosed bracket: %v, %d declarations", diags, len(f.Decls))
	}
}

func TestEndsTooEarly(t *testing.T) {
	_, diags := parse("type A =\n")
	eqList(t, "diagnostics", diagStrings(diags), []string{
		"syntax.unexpected_token [7,8) `=`",
	})
	if !strings.Contains(diags[0].Summary, "ends after `=`") {
		t.Errorf("summary %q", diags[0].Summary)
	}
}

func TestNumberWithUnknownUnit(t *testing.T) {
	src := "subscriber s { retry: { first_delay: 30x } }\ntype A = Int { min: 1 }\nstore p { a: 5sec b: 1 }\n"
	f, diags := parse(src)
	eqList(t, "diagnostics", diagStrings(diags), []string{
		"syntax.unexpected_token [39,40) `x` a number's unit is one of ms, s, m, h, d",
		"syntax.unexpected_token [83,86) `sec` a number's unit is one of ms, s, m, h, d",
	})
	if len(f.Decls) != 1 || f.Decls[0].Name().Name != "A" {
		t.Errorf("declarations: %d", len(f.Decls))
	}
	// Apart, `30 x` is a number and an entry, which the checker judges.
	parseOK(t, "store p { a: 30 x }")
}

func TestCommasBetweenMembers(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"type A = Int { min: 1, max: 2 }", "syntax.unexpected_token [21,22) `,` members are separated by whitespace, not commas"},
		{"enum B { a, b }", "syntax.unexpected_token [10,11) `,` members are separated by whitespace, not commas"},
		{"value C { a: Int, b: Text }", "syntax.unexpected_token [16,17) `,` members are separated by whitespace, not commas"},
		{"connection c { credential: { key_id: config.a, secret: config.b } }", "syntax.unexpected_token [45,46) `,` members are separated by whitespace, not commas"},
	}
	for _, tt := range tests {
		_, diags := parse(tt.src)
		eqList(t, tt.src, diagStrings(diags), []string{tt.want})
	}
	// Commas belong in lists, use lines, argument lists and generic arguments.
	parseOK(t, `use a { X, Y }
value V { m: Map<Text, Int> }
store s { l: [1, 2] }
subscriber x { on E(e) { attempt a.b.c(x: 1, y: [1, 2], z: f(e)) } }`)
}

func TestLexicalProblemIsTheDeclarationsOnlyDiagnostic(t *testing.T) {
	src := "type A = Text { pattern: \"a\\qb\" max_length: }\ntype B = Int\nstore s { a: \"open\n}\nenum C { @ }\n"
	f, diags := parse(src)
	eqList(t, "diagnostics", diagStrings(diags), []string{
		"syntax.invalid_escape [27,29) `\\q`",
		"syntax.unterminated_string [72,77) `\"open` this text has no closing `\"`",
		"syntax.stray_character [89,90) `@`",
	})
	if len(f.Decls) != 1 || f.Decls[0].Name().Name != "B" {
		t.Errorf("declarations: %d", len(f.Decls))
	}
}

func TestInvalidUTF8(t *testing.T) {
	_, diags := parse("type A = Int\nenum B { \xff \xfe }\n")
	eqList(t, "diagnostics", diagStrings(diags), []string{"syntax.invalid_encoding [22,23) `\xff`"})
}

func TestStrayClosers(t *testing.T) {
	_, diags := parse("}\ntype A = Int\n")
	if len(diags) != 1 || diags[0].Subject.Span != (source.Span{Start: 0, End: 1}) {
		t.Errorf("stray `}`: %v", diagStrings(diags))
	}
}

func TestEveryDiagnosticIsCatalogued(t *testing.T) {
	srcs := []string{
		"type A = Int { min 1 }", "value C {\n", "\"open", "a @", "\xff", "store s { a: 3x }",
		"type A = Int { min: 1, max: 2 }", "type", "}", "use a { X Y }",
	}
	for _, src := range srcs {
		_, diags := parse(src)
		if len(diags) == 0 {
			t.Errorf("%q: no diagnostic", src)
		}
		for _, d := range diags {
			if _, ok := diag.Catalogue[d.Code]; !ok {
				t.Errorf("%q: code %s not in the catalogue", src, d.Code)
			}
		}
	}
}

func TestMissingColonAmongFields(t *testing.T) {
	tests := []struct{ src, want string }{
		{"config C { a: Text b Url }", "syntax.unexpected_token [21,24) `Url` expected `:` between `b` and its type"},
		{"settings { q Url }", "syntax.unexpected_token [13,16) `Url` expected `:` between `q` and its type"},
		{"public event E { a: Int b }", "syntax.unexpected_token [26,27) `}` expected `:` between `b` and its type"},
		// Elsewhere a bare name is an entry, and the `:` is asked for after it.
		{"store s { a: 1 b 2 }", "syntax.unexpected_token [17,18) `2` expected `:` between `b` and its value"},
		// A member whose value cannot start is reported at the value.
		{"connection c { host: ) }", "syntax.unexpected_token [21,22) `)`"},
	}
	for _, tt := range tests {
		_, diags := parse(tt.src)
		eqList(t, tt.src, diagStrings(diags), []string{tt.want})
	}
}

// Nesting deeper than any real declaration is one diagnostic at the bracket
// that goes too deep, and costs linear time (participle's grows with the
// square of the depth, and its stack without bound).
func TestNestingTooDeep(t *testing.T) {
	src := "store s { k: " + strings.Repeat("[", 5000) + " }\ntype A = Int\n"
	f, diags := parse(src)
	open := len("store s { k: ") + 99 // the 101st bracket, counting the `{`
	eqList(t, "diagnostics", diagStrings(diags), []string{
		fmt.Sprintf("syntax.unexpected_token [%d,%d) `[` a declaration nests at most 100 brackets", open, open+1),
	})
	if len(f.Decls) != 1 {
		t.Errorf("%d declarations, want 1", len(f.Decls))
	}
	// 100 levels are fine.
	ok := "store s { k: " + strings.Repeat("[", 99) + strings.Repeat("]", 99) + " }"
	parseOK(t, ok)
}
