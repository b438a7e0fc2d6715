package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// legacyDecode is how answers were read before issue 11: encoding/json,
// then DecodeValue. On answers whose text is valid it is the oracle.
func legacyDecode(shape *Shape, data []byte, naming Naming) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &DecodeError{Rule: "json"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &DecodeError{Rule: "json"}
	}
	return DecodeValue(shape, v, naming)
}

// validText reports whether every string in v (keys too) is valid UTF-8.
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
	case *Unfit:
		return false
	}
	return true
}

var fuzzItemsShape = &Shape{Kind: Record, Fields: []Field{
	{Name: "messages", Shape: Shape{Kind: List, Optional: true, Elem: &messageShape}},
	{Name: "next", Shape: Shape{Kind: Text, Optional: true}},
	{Name: "extra", Shape: Shape{Kind: Any, Optional: true}},
}}

// FuzzDecodeItems reads arbitrary bytes as an SQS-like answer whose
// messages are read one at a time. Nothing may panic; the answer is
// refused as JSON exactly when encoding/json refuses it; an answer the old
// decoder read is read; an unfit item carries its raw JSON and at least one
// problem, and none of its fields is also a problem; and where every text
// is valid UTF-8 and every item fits, the value is the old decoder's.
func FuzzDecodeItems(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `null`, `[]`,
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"{\"id\":1}","MD5OfBody":"x","Attributes":{"A":"1"}}]}`,
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"RID\ud800","MD5OfBody":"x"},{"MessageId":"n","ReceiptHandle":"h","Body":"RID\udfff","MD5OfBody":"x"}]}`,
		"{\"Messages\":[{\"MessageId\":\"m\",\"ReceiptHandle\":\"h\",\"Body\":\"RID\xff\",\"MD5OfBody\":\"x\"}]}",
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"b"},{"MessageId":"m","Body":42,"MD5OfBody":"x"},7,null]}`,
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"a","Body":"b","MD5OfBody":"x"}]}`,
		`{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"\ud83d\ude00\u0000","MD5OfBody":"x","Attributes":{"k":1}}],"Next":5}`,
		`{"Messages":{},"Extra":[1,{"a":null}]}`,
		`{"Messages":[[[[[[]]]]]]}`,
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeAnswer(fuzzItemsShape, data, upper, "messages")
		old, oldErr := legacyDecode(fuzzItemsShape, data, upper)
		var de, oldDe *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("not a DecodeError: %v", err)
		}
		errors.As(oldErr, &oldDe)
		if (de != nil && de.Rule == "json") != (oldDe != nil && oldDe.Rule == "json") {
			t.Fatalf("JSON refused: %v; by encoding/json: %v", err, oldErr)
		}
		if oldErr == nil && err != nil {
			t.Fatalf("the old decoder read it, the new one says %v", err)
		}
		if err != nil {
			if de.Rule != "required" && de.Rule != "type" && de.Rule != "json" {
				t.Fatalf("rule %q", de.Rule)
			}
			return
		}
		items, _ := v.(map[string]any)["messages"].([]any)
		for i, it := range items {
			u, ok := it.(*Unfit)
			if !ok {
				continue
			}
			if len(u.Problems) == 0 || len(u.Raw) == 0 || !json.Valid(u.Raw) {
				t.Fatalf("item %d: unfit without problems or raw JSON: %+v", i, u)
			}
			for _, p := range u.Problems {
				if _, ok := u.Fields[strings.SplitN(p.Path, ".", 2)[0]]; ok && p.Path != "" {
					t.Fatalf("item %d: %q is both a field and a problem", i, p.Path)
				}
			}
			if _, err := Decode(&messageShape, u.Raw, upper); err == nil {
				t.Fatalf("item %d: its raw JSON %q fits alone", i, u.Raw)
			}
		}
		if validText(v) && !reflect.DeepEqual(v, old) {
			t.Fatalf("differs from encoding/json:\n%#v\n%#v", v, old)
		}
	})
}
