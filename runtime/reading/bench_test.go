package reading

import (
	"fmt"
	"strings"
	"testing"
)

// typicalBody is a ~1 KB OrderShipped message: a score of lines, a note and a
// few members the event doesn't declare.
func typicalBody() []byte {
	var b strings.Builder
	b.WriteString(`{"id":"6f1c2a1e-8d1b-4a52-9a55-0c6e1d3f9b21","type":"order_shipped","sent_by":"warehouse-7",`)
	b.WriteString(`"order_id":"ORD-2024-000123","shipped_at":"2024-05-01T10:00:00.250+02:00","carrier":"royal_mail","lines":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%05d","quantity":%d,"bin":"A%d"}`, i*37, i%9+1, i)
	}
	b.WriteString(`],"note":"Left with the neighbour at number 12, signed for by J. Smith.","trace":{"hops":3,"dc":"LHR"}}`)
	return []byte(b.String())
}

func BenchmarkRead(b *testing.B) {
	r := readers(b)["warehouse_queue"]
	body := typicalBody()
	if o := r.Read(body); o.Park {
		b.Fatalf("%+v", o)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if o := r.Read(body); o.Park {
			b.Fatal(o.Reason)
		}
	}
}

// BenchmarkReadParked is a body as large refused at every line.
func BenchmarkReadParked(b *testing.B) {
	r := readers(b)["warehouse_queue"]
	body := []byte(strings.ReplaceAll(string(typicalBody()), `"quantity":`, `"quantity":-`))
	if o := r.Read(body); o.Reason != Unreadable {
		b.Fatalf("%+v", o)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r.Read(body)
	}
}
