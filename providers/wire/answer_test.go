package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

var bodyOnly = Shape{Kind: Record, Fields: []Field{{Name: "body", Shape: Shape{Kind: Text}}}}

// TestDecodeKeepsTextExactly: issue 11 point 1. encoding/json turned each of
// these into U+FFFD, so bodies differing only there read as one.
func TestDecodeKeepsTextExactly(t *testing.T) {
	cases := []struct{ answer, body string }{
		{`{"Body":"RID\ud800"}`, "RID\xed\xa0\x80"},
		{`{"Body":"RID\udfff"}`, "RID\xed\xbf\xbf"},
		{`{"Body":"RID\uDBFF\u0041"}`, "RID\xed\xaf\xbfA"},            // a lone high surrogate, then a letter
		{`{"Body":"RID\ud800\ud800"}`, "RID\xed\xa0\x80\xed\xa0\x80"}, // two high surrogates
		{`{"Body":"RID\udc00\ud800"}`, "RID\xed\xb0\x80\xed\xa0\x80"}, // low before high is no pair
		{`{"Body":"RID\ud83d\ude00"}`, "RID\U0001F600"},               // a pair is its character
		{"{\"Body\":\"RID\xff\"}", "RID\xff"},
		{"{\"Body\":\"RID\xfe\"}", "RID\xfe"},
		{"{\"Body\":\"RID\xed\xa0\x80\"}", "RID\xed\xa0\x80"}, // raw UTF-8 of a surrogate: as \ud800 reads
		{"{\"Body\":\"RID\xc0\xaf\"}", "RID\xc0\xaf"},         // an overlong form
		{`{"Body":"a\"\\\/\b\f\n\r\t\u00e9\u2028"}`, "a\"\\/\b\f\n\r\t\u00e9\u2028"},
	}
	seen := map[string]string{}
	for _, c := range cases {
		v, err := Decode(&bodyOnly, []byte(c.answer), upper)
		if err != nil {
			t.Fatalf("%q: %v", c.answer, err)
		}
		got := v.(map[string]any)["body"].(string)
		if got != c.body {
			t.Errorf("%q: body %q, want %q", c.answer, got, c.body)
		}
		if other, ok := seen[got]; ok && other != c.answer && got != "RID\xed\xa0\x80" {
			t.Errorf("%q and %q read as the same body", other, c.answer)
		}
		seen[got] = c.answer
	}
	// Any keeps text exactly too.
	anyShape := Shape{Kind: Record, Fields: []Field{{Name: "x", Shape: Shape{Kind: Any}}}}
	v, err := Decode(&anyShape, []byte("{\"X\":{\"k\\ud800\":[\"\xff\",1.50,true,null]}}"), upper)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": map[string]any{"k\xed\xa0\x80": []any{"\xff", json.Number("1.50"), true, nil}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("any: %#v", v)
	}
}

// TestDecodeAgreesWithEncodingJSON: on answers whose text is valid, the
// decoder reads what encoding/json reads, and refuses what it refuses.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[1,-0,0.5,1e3,-2E-2,{"b":null}],"c":"\u00e9\ud83d\ude00"}`, ` {"a" : true , "b":false} `,
		`{"a":1,"a":2}`, `"x"`, `12`, `null`,
		`{`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`, "\"a\tb\"", `{"a" 1}`,
		`[1 2]`, `{} x`, `'a'`, `{"a":1}}`, `[`, `"abc`, "\"\\ud800\\u12\"",
	} {
		var want any
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		_ = dec.Decode(&want)
		root, ok := parseAnswer([]byte(s))
		if ok != json.Valid([]byte(s)) {
			t.Errorf("%q: parsed %v, encoding/json's Valid %v", s, ok, !ok)
			continue
		}
		if !ok {
			continue
		}
		if got := toAny(&root); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, encoding/json %#v", s, got, want)
		}
	}
	// Nesting is bounded, as encoding/json bounds it.
	deep := bytes.Repeat([]byte("["), maxAnswerDepth+1)
	if _, err := Decode(&Shape{Kind: Any}, append(deep, bytes.Repeat([]byte("]"), maxAnswerDepth+1)...), upper); err == nil {
		t.Error("nesting deeper than the limit is read")
	}
}

// TestDecodeItemsOneAtATime: issue 11 point 6. One malformed item failed the
// whole answer; now it is an *Unfit in its place, the rest read.
func TestDecodeItemsOneAtATime(t *testing.T) {
	answer := `{"Messages":[
		{"MessageId":"m1","ReceiptHandle":"h1","Body":"b1","MD5OfBody":"x"},
		{"MessageId":"m2","ReceiptHandle":"h2","Body":42,"Attributes":{"k":1}},
		7,
		{"MessageId":"m4","ReceiptHandle":"h4","Body":"b4","MD5OfBody":"y"}]}`
	if _, err := Decode(&receiveOutput, []byte(answer), upper); err == nil {
		t.Fatal("without Items, a malformed item is a problem of the whole answer")
	}
	v, err := DecodeAnswer(&receiveOutput, []byte(answer), upper, "messages")
	if err != nil {
		t.Fatal(err)
	}
	items := v.(map[string]any)["messages"].([]any)
	if len(items) != 4 {
		t.Fatalf("%d items", len(items))
	}
	if m, ok := items[0].(map[string]any); !ok || m["body"] != "b1" {
		t.Errorf("item 0: %#v", items[0])
	}
	if m, ok := items[3].(map[string]any); !ok || m["body"] != "b4" {
		t.Errorf("item 3: %#v", items[3])
	}
	u, ok := items[1].(*Unfit)
	if !ok {
		t.Fatalf("item 1: %#v", items[1])
	}
	wantProblems := []ItemProblem{{"attributes.k", "type"}, {"body", "type"}, {"md5_of_body", "required"}}
	if !reflect.DeepEqual(u.Problems, wantProblems) {
		t.Errorf("item 1 problems %+v, want %+v", u.Problems, wantProblems)
	}
	if u.Fields["message_id"] != "m2" || u.Fields["receipt_handle"] != "h2" || string(u.Members["body"]) != "42" {
		t.Errorf("item 1: fields %#v members %q", u.Fields, u.Members)
	}
	if string(u.Raw) != `{"MessageId":"m2","ReceiptHandle":"h2","Body":42,"Attributes":{"k":1}}` {
		t.Errorf("item 1 raw %q", u.Raw)
	}
	u, ok = items[2].(*Unfit)
	if !ok || string(u.Raw) != "7" || !reflect.DeepEqual(u.Problems, []ItemProblem{{"", "type"}}) || u.Fields != nil {
		t.Errorf("item 2: %#v", items[2])
	}

	// A nested path; what is not the list's elements is read as before.
	nested := Shape{Kind: Record, Fields: []Field{{Name: "result", Shape: Shape{Kind: Record, Optional: true, Fields: []Field{
		{Name: "messages", Shape: Shape{Kind: List, Optional: true, Elem: &bodyOnly}},
		{Name: "count", Shape: Shape{Kind: Int, Optional: true}},
	}}}}}
	v, err = DecodeAnswer(&nested, []byte(`{"result":{"messages":[{"body":"a"},{"body":1}]}}`), func(s string) string { return s }, "result.messages")
	if err != nil {
		t.Fatal(err)
	}
	items = v.(map[string]any)["result"].(map[string]any)["messages"].([]any)
	if _, ok := items[1].(*Unfit); !ok || items[0].(map[string]any)["body"] != "a" {
		t.Errorf("nested items %#v", items)
	}
	_, err = DecodeAnswer(&nested, []byte(`{"result":{"messages":[],"count":"x"}}`), func(s string) string { return s }, "result.messages")
	var de *DecodeError
	if !errors.As(err, &de) || de.Path != "result.count" {
		t.Errorf("a problem outside the items: %v", err)
	}
	// The list itself of the wrong kind is the whole answer's problem.
	if _, err := DecodeAnswer(&receiveOutput, []byte(`{"Messages":{}}`), upper, "messages"); err == nil {
		t.Error("Messages as an object is read")
	}
}
