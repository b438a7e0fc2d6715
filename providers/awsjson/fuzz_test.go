package awsjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// fuzzShape has nested optional lists and records, a map, numbers and Any.
var fuzzShape = func() *wire.Shape {
	item := wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "a", Shape: wire.Shape{Kind: wire.Text, Optional: true}},
		{Name: "b", Shape: wire.Shape{Kind: wire.Bool}},
	}}
	nested := wire.Shape{Kind: wire.Record, Optional: true, Fields: []wire.Field{
		{Name: "items", Shape: wire.Shape{Kind: wire.List, Optional: true,
			Elem: &wire.Shape{Kind: wire.List, Optional: true, Elem: &item}}},
		{Name: "tags", Shape: wire.Shape{Kind: wire.Map, Optional: true, Elem: &wire.Shape{Kind: wire.Int}}},
	}}
	message := wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "message_id", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "receipt_handle", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "body", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "md5_of_body", WireName: "MD5OfBody", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "attributes", Shape: wire.Shape{Kind: wire.Map, Optional: true, Elem: &wire.Shape{Kind: wire.Text}}},
	}}
	return &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "messages", Shape: wire.Shape{Kind: wire.List, Optional: true, Elem: &message}},
		{Name: "count", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
		{Name: "ratio", Shape: wire.Shape{Kind: wire.Decimal, Optional: true}},
		{Name: "nested", Shape: nested},
		{Name: "extra", Shape: wire.Shape{Kind: wire.Any, Optional: true}},
	}}
}()

// FuzzDecodeAnswer reads arbitrary bytes as an aws_json answer: a 2xx one by
// the shape, any other as a refusal. Nothing may panic; a decoded answer must
// fit its shape (it encodes again and decodes to the same value, when its
// text is valid: Encode writes invalid text as U+FFFD, as a request's JSON
// must); a refusal's code must be lower_snake_case or http_<status>.
func FuzzDecodeAnswer(f *testing.F) {
	seeds := []string{
		`{}`,
		``,
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"{\"id\":1}","MD5OfBody":"x","Attributes":{"ApproximateReceiveCount":"1"}}]}`,
		`{"Messages":null,"Count":3,"Ratio":1.5e3,"Nested":{"Items":[[{"A":"x","B":true}],null,[]],"Tags":{"k":1}},"Extra":[1,{"a":null}]}`,
		`{"Messages":[{"MessageId":"m"}]}`,
		`{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`,
		`{"__type":"AWS.SimpleQueueService.NonExistentQueue;Sender"}`,
		`{"Count":9223372036854775808}`,
		`[1,2]`,
		`{"Nested":{"Items":[[{"B":"no"}]]}}`,
		"\xff\xfe",
		// Issue 11: invalid text read byte for byte, malformed items one by one.
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"RID\ud800","MD5OfBody":"x"},{"MessageId":"n","ReceiptHandle":"h","Body":"RID\udfff","MD5OfBody":"x"}]}`,
		"{\"Messages\":[{\"MessageId\":\"m\",\"ReceiptHandle\":\"h\",\"Body\":\"RID\xff\",\"MD5OfBody\":\"x\"}]}",
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"b","MD5OfBody":"x"},{"MessageId":"m","Body":42},7]}`,
	}
	for _, s := range seeds {
		f.Add(uint16(200), []byte(s))
		f.Add(uint16(400), []byte(s))
	}
	f.Fuzz(func(t *testing.T, status uint16, body []byte) {
		if status >= 200 && status <= 299 {
			v, err := wire.Decode(fuzzShape, body, ir.UpperCamel)
			if err != nil {
				var de *wire.DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("not a DecodeError: %v", err)
				}
				switch de.Rule {
				case "required", "type", "json":
				default:
					t.Fatalf("rule %q", de.Rule)
				}
				return
			}
			if !validText(v) {
				return
			}
			again, err := wire.Encode(fuzzShape, v, ir.UpperCamel)
			if err != nil {
				t.Fatalf("decoded answer does not encode: %v (%#v)", err, v)
			}
			back, err := wire.Decode(fuzzShape, again, ir.UpperCamel)
			if err != nil {
				t.Fatalf("re-encoded answer does not decode: %v (%s)", err, again)
			}
			if !reflect.DeepEqual(v, back) {
				t.Fatalf("round trip differs:\n%#v\n%#v", v, back)
			}
			return
		}
		code, _ := ReadRefusal("__type", body)
		r := wire.NewRefusal("messages.receive_message", int(status), code, "")
		if r.Code == "" {
			t.Fatal("empty code")
		}
		if strings.Trim(r.Code, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" ||
			strings.HasPrefix(r.Code, "_") || strings.HasSuffix(r.Code, "_") || strings.Contains(r.Code, "__") {
			t.Fatalf("code %q is not lower_snake_case", r.Code)
		}
	})
}

// validText reports whether every string in v (map keys too) is valid UTF-8.
func validText(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if !validText(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !validText(e) {
				return false
			}
		}
	}
	return true
}
