package reading

import (
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

func ip(n int) *int          { return &n }
func sp(s string) *string    { return &s }
func opt(t ir.Type) ir.Type  { t.Optional = true; return t }
func list(t ir.Type) ir.Type { return ir.Type{Kind: ir.List, Elem: &t} }
func dict(t ir.Type) ir.Type { return ir.Type{Kind: ir.Map, Elem: &t} }
func rec(id string) ir.Type  { return ir.Type{Kind: ir.RecordK, Name: id} }
func kindT(k ir.Kind) ir.Type {
	return ir.Type{Kind: k}
}
func ruled(k ir.Kind, r ir.Rules) ir.Type { return ir.Type{Kind: k, Rules: &r} }

var carrier = ir.Type{Kind: ir.Enum, Name: "stock/events.Carrier", Variants: []string{"dhl", "ups", "royal_mail"}}

// program is the shop of docs/reference/language.md ("Types", "queue"), built by hand: the
// warehouse queue (type_at) lists OrderShipped, Billing.InvoicePaid and
// AllKinds, an event holding every type and rule of its "Types", each optional; the
// returns queue is a queue of one kind with a nested id_at; the audit queue's
// event declares the member its id is at.
func program() *ir.Program {
	return &ir.Program{
		Version: ir.Version,
		Records: []ir.Record{
			{ID: "Billing.InvoicePaid", Name: "Billing.InvoicePaid", Event: true, Fields: []ir.Field{
				{Name: "invoice_id", Type: kindT(ir.Uuid)},
				{Name: "amount", Type: ruled(ir.Decimal, ir.Rules{Min: sp("0"), Max: sp("1000000.00")})},
				{Name: "attributes", Type: opt(dict(kindT(ir.Text)))},
			}},
			{ID: "audit.Audit", Name: "Audit", Event: true, Fields: []ir.Field{
				{Name: "id", Type: kindT(ir.Text)},
				{Name: "what", Type: kindT(ir.Text)},
			}},
			{ID: "kinds.AllKinds", Name: "AllKinds", Event: true, Fields: []ir.Field{
				{Name: "text", Type: opt(ruled(ir.Text, ir.Rules{MinLength: ip(2), MaxLength: ip(5), Patterns: []string{"[a-zé]+", "[^q]*"}}))},
				{Name: "alt", Type: opt(ruled(ir.Text, ir.Rules{Patterns: []string{"a|b"}}))},
				{Name: "email_text", Type: opt(ruled(ir.Text, ir.Rules{Format: "email"}))},
				{Name: "email", Type: opt(ruled(ir.Email, ir.Rules{MaxLength: ip(20)}))},
				{Name: "url", Type: opt(ruled(ir.Url, ir.Rules{MinLength: ip(8)}))},
				{Name: "uuid", Type: opt(kindT(ir.Uuid))},
				{Name: "int", Type: opt(ruled(ir.Int, ir.Rules{Min: sp("-5"), Max: sp("1000")}))},
				{Name: "big", Type: opt(kindT(ir.Int))},
				{Name: "decimal", Type: opt(ruled(ir.Decimal, ir.Rules{Min: sp("-0.5"), Max: sp("1000000.00")}))},
				{Name: "flag", Type: opt(kindT(ir.Bool))},
				{Name: "at", Type: opt(kindT(ir.Instant))},
				{Name: "wait", Type: opt(kindT(ir.Duration))},
				{Name: "carrier", Type: opt(carrier)},
				{Name: "tags", Type: opt(list(kindT(ir.Text)))},
				{Name: "maybes", Type: opt(list(opt(kindT(ir.Int))))},
				{Name: "counts", Type: opt(dict(ruled(ir.Int, ir.Rules{Min: sp("0")})))},
				{Name: "address", Type: opt(rec("kinds.Address"))},
				{Name: "tree", Type: opt(rec("kinds.Tree"))},
			}},
			{ID: "kinds.Address", Name: "Address", Fields: []ir.Field{
				{Name: "city", Type: ruled(ir.Text, ir.Rules{MinLength: ip(1)})},
				{Name: "zip", Type: opt(kindT(ir.Text))},
			}},
			{ID: "kinds.Tree", Name: "Tree", Fields: []ir.Field{
				{Name: "name", Type: kindT(ir.Text)},
				{Name: "children", Type: opt(list(rec("kinds.Tree")))},
			}},
			{ID: "returns/events.ReturnRequested", Name: "ReturnRequested", Event: true, Fields: []ir.Field{
				{Name: "order_id", Type: kindT(ir.Text)},
				{Name: "reason", Type: opt(kindT(ir.Text))},
			}},
			{ID: "stock/events.OrderLine", Name: "OrderLine", Fields: []ir.Field{
				{Name: "sku", Type: ruled(ir.Text, ir.Rules{Patterns: []string{"[A-Z0-9-]+"}})},
				{Name: "quantity", Type: ruled(ir.Int, ir.Rules{Min: sp("1"), Max: sp("1000")})},
			}},
			{ID: "stock/events.OrderShipped", Name: "OrderShipped", Event: true, Fields: []ir.Field{
				{Name: "order_id", Type: ruled(ir.Text, ir.Rules{MinLength: ip(1), MaxLength: ip(64)})},
				{Name: "shipped_at", Type: kindT(ir.Instant)},
				{Name: "carrier", Type: carrier},
				{Name: "lines", Type: list(rec("stock/events.OrderLine"))},
				{Name: "note", Type: opt(ruled(ir.Text, ir.Rules{MaxLength: ip(500)}))},
			}},
		},
		Queues: []ir.Queue{
			{Name: "audit_queue", Connection: "audit_queue", Source: "queue audit_queue", IDAt: []string{"id"},
				Events: []ir.QueueEvent{{Event: "audit.Audit", Name: "Audit"}}},
			{Name: "returns_queue", Connection: "returns_queue", Source: "queue returns_queue", IDAt: []string{"meta", "return_id"},
				Events: []ir.QueueEvent{{Event: "returns/events.ReturnRequested", Name: "ReturnRequested"}}},
			{Name: "warehouse_queue", Connection: "warehouse_queue", Source: "queue warehouse_queue",
				IDAt: []string{"id"}, TypeAt: []string{"type"},
				Events: []ir.QueueEvent{
					{Event: "stock/events.OrderShipped", Name: "OrderShipped", WireName: "order_shipped"},
					{Event: "Billing.InvoicePaid", Name: "Billing.InvoicePaid", WireName: "invoice_paid"},
					{Event: "kinds.AllKinds", Name: "AllKinds", WireName: "all_kinds"},
				}},
		},
	}
}

// readers builds a Reader for each of the program's queues, by queue name.
func readers(t testing.TB) map[string]*Reader {
	t.Helper()
	p := program()
	out := map[string]*Reader{}
	for i := range p.Queues {
		r, err := NewReader(p, &p.Queues[i])
		if err != nil {
			t.Fatalf("NewReader(%s): %v", p.Queues[i].Name, err)
		}
		out[p.Queues[i].Name] = r
	}
	return out
}
