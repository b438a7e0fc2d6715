package jsonhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jadpo/jadpo/providers/wire"
)

// pullOutput is CloudflareQueues.v4's PullOutput, as the runtime builds it.
var pullOutput = func() *wire.Shape {
	pulled := wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "id", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "body", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "lease_id", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "attempts", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
		{Name: "timestamp_ms", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
	}}
	result := wire.Shape{Kind: wire.Record, Optional: true, Fields: []wire.Field{
		{Name: "messages", Shape: wire.Shape{Kind: wire.List, Optional: true, Elem: &pulled}},
	}}
	return &wire.Shape{Kind: wire.Record, Fields: []wire.Field{{Name: "result", Shape: result}}}
}()

// FuzzDecodePullAnswer reads arbitrary bytes as a Cloudflare pull answer,
// its result.messages one at a time, as the cloudflare_queues driver does.
// Nothing may panic; it is refused as JSON exactly when encoding/json
// refuses it; when it is read, result.messages has one entry per element
// the answer holds there, each a message or a *wire.Unfit with problems.
func FuzzDecodePullAnswer(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `{"result":null}`, `{"success":true,"errors":[],"messages":[],"result":{"message_backlog_count":0,"messages":[]}}`,
		`{"result":{"messages":[{"id":"a","body":"{\"return_id\":\"RID\ud800\"}","lease_id":"l1","attempts":1,"timestamp_ms":1}]}}`,
		`{"result":{"messages":[{"id":"a","body":"{\"return_id\":\"RID\udfff\"}","lease_id":"l1"},{"id":"b","body":"x","lease_id":"l2"}]}}`,
		"{\"result\":{\"messages\":[{\"id\":\"a\",\"body\":\"RID\xff\",\"lease_id\":\"l\"}]}}",
		`{"result":{"messages":[{"id":"a","body":7,"lease_id":"l"},{"body":"b"},{"id":"c","body":"c","lease_id":"l","attempts":"one"},null,[]]}}`,
		`{"result":{"messages":{}}}`,
		`{"result":{"messages":[{"id":"a","body":"b","lease_id":"l","attempts":1.5}]}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := wire.DecodeAnswer(pullOutput, data, (&Protocol{}).Naming(), "result.messages")
		valid := json.Valid(data) || len(bytes.TrimSpace(data)) == 0
		var de *wire.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("not a DecodeError: %v", err)
		}
		if (de != nil && de.Rule == "json") == valid {
			t.Fatalf("JSON refused: %v; valid by encoding/json: %v", err, valid)
		}
		if err != nil {
			return
		}
		// encoding/json into maps (exact member names, the last one wins,
		// as the answer's reader has them) counts the elements.
		var raw map[string]any
		_ = json.Unmarshal(data, &raw)
		rawResult, _ := raw["result"].(map[string]any)
		rawItems, _ := rawResult["messages"].([]any)
		result, _ := v.(map[string]any)["result"].(map[string]any)
		items, _ := result["messages"].([]any)
		if len(items) != len(rawItems) {
			t.Fatalf("%d items read, the answer holds %d", len(items), len(rawItems))
		}
		for i, it := range items {
			switch x := it.(type) {
			case map[string]any:
				if _, ok := x["lease_id"].(string); !ok {
					t.Fatalf("item %d fits without a lease: %#v", i, x)
				}
			case *wire.Unfit:
				if len(x.Problems) == 0 || !json.Valid(x.Raw) {
					t.Fatalf("item %d: %+v", i, x)
				}
			default:
				t.Fatalf("item %d is a %T", i, it)
			}
		}
	})
}
