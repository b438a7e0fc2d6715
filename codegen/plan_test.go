package codegen

import (
	"bytes"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

func TestPlanRoundTrip(t *testing.T) {
	p := &ir.Program{Version: ir.Version, Config: []ir.ConfigField{{Name: "a", Binding: "A", Type: ir.Type{Kind: ir.Text}}},
		Records: []ir.Record{}, Connections: []ir.Connection{}, Queues: []ir.Queue{}, Subscribers: []ir.Subscriber{}}
	b, err := EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodePlan(back)
	if !bytes.Equal(b, again) {
		t.Fatalf("a plan does not survive a round trip:\n%s\n%s", b, again)
	}
	if _, err := DecodePlan([]byte(`{"version": 99}`)); err == nil {
		t.Fatal("a plan of another version was read")
	}
	if _, err := DecodePlan([]byte(`{"version": 1, "surprise": true}`)); err == nil {
		t.Fatal("a plan with an unknown member was read")
	}
}

// FuzzDecodePlan: a plan file that is not what build wrote is refused with
// an error, never a panic; one that decodes encodes back to a plan that
// decodes to the same bytes.
func FuzzDecodePlan(f *testing.F) {
	f.Add([]byte(`{"version":1,"config":[],"records":[],"connections":[],"queues":[],"subscribers":[]}`))
	f.Add([]byte(`{"version":1,"queues":[{"name":"q","connection":"q","source":"queue q","id_at":["id"],"events":[{"event":"m.E","name":"E"}]}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePlan(data)
		if err != nil {
			return
		}
		b, err := EncodePlan(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := DecodePlan(b)
		if err != nil {
			t.Fatalf("an encoded plan does not decode: %v", err)
		}
		b2, _ := EncodePlan(p2)
		if !bytes.Equal(b, b2) {
			t.Fatal("encode/decode is not stable")
		}
	})
}
