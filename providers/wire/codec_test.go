package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func upper(name string) string {
	var b strings.Builder
	up := true
	for _, c := range name {
		if c == '_' {
			up = true
			continue
		}
		if up {
			c = []rune(strings.ToUpper(string(c)))[0]
		}
		up = false
		b.WriteRune(c)
	}
	return b.String()
}

var messageShape = Shape{Kind: Record, Fields: []Field{
	{Name: "message_id", Shape: Shape{Kind: Text}},
	{Name: "receipt_handle", Shape: Shape{Kind: Text}},
	{Name: "body", Shape: Shape{Kind: Text}},
	{Name: "md5_of_body", WireName: "MD5OfBody", Shape: Shape{Kind: Text}},
	{Name: "attributes", Shape: Shape{Kind: Map, Optional: true, Elem: &Shape{Kind: Text}}},
}}

var receiveOutput = Shape{Kind: Record, Fields: []Field{
	{Name: "messages", Shape: Shape{Kind: List, Optional: true, Elem: &messageShape}},
}}

var receiveInput = Shape{Kind: Record, Fields: []Field{
	{Name: "queue_url", Shape: Shape{Kind: Text}},
	{Name: "max_number_of_messages", Shape: Shape{Kind: Int, Optional: true}},
	{Name: "wait_time_seconds", Shape: Shape{Kind: Int, Optional: true}},
	{Name: "message_system_attribute_names", Shape: Shape{Kind: List, Optional: true, Elem: &Shape{Kind: Text}}},
	{Name: "ratio", Shape: Shape{Kind: Decimal, Optional: true}},
	{Name: "flag", Shape: Shape{Kind: Bool, Optional: true}},
	{Name: "extra", Shape: Shape{Kind: Any, Optional: true}},
	{Name: "tags", Shape: Shape{Kind: Map, Optional: true, Elem: &Shape{Kind: Text}}},
}}

func TestEncode(t *testing.T) {
	got, err := Encode(&receiveInput, map[string]any{
		"queue_url":                      "http://127.0.0.1/000000000000/q\n\"<&>\"",
		"max_number_of_messages":         10,
		"wait_time_seconds":              int64(0),
		"message_system_attribute_names": []string{"ApproximateReceiveCount"},
		"ratio":                          json.Number("2.50"),
		"flag":                           false,
		"extra":                          map[string]any{"a": []any{1, "x"}},
		"tags":                           map[string]string{"b": "2", "a": "1"},
	}, upper)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"QueueUrl":"http://127.0.0.1/000000000000/q\n\"<&>\"","MaxNumberOfMessages":10,"WaitTimeSeconds":0,` +
		`"MessageSystemAttributeNames":["ApproximateReceiveCount"],"Ratio":2.50,"Flag":false,"Extra":{"a":[1,"x"]},"Tags":{"a":"1","b":"2"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Optional fields left out or nil are not written.
	got, err = Encode(&receiveInput, map[string]any{"queue_url": "u", "wait_time_seconds": nil}, upper)
	if err != nil || string(got) != `{"QueueUrl":"u"}` {
		t.Errorf("got %s, %v", got, err)
	}
	var out any
	if err := json.Unmarshal([]byte(want), &out); err != nil {
		t.Errorf("not JSON: %v", err)
	}
}

func TestEncodeProblems(t *testing.T) {
	lines := Shape{Kind: Record, Fields: []Field{
		{Name: "lines", Shape: Shape{Kind: List, Elem: &Shape{Kind: Record, Fields: []Field{
			{Name: "quantity", Shape: Shape{Kind: Int}},
		}}}},
	}}
	cases := []struct {
		name  string
		shape *Shape
		value any
		path  string
		rule  string
	}{
		{"required", &receiveInput, map[string]any{}, "queue_url", "required"},
		{"type", &receiveInput, map[string]any{"queue_url": 7}, "queue_url", "type"},
		{"fraction", &receiveInput, map[string]any{"queue_url": "u", "wait_time_seconds": 1.5}, "wait_time_seconds", "type"},
		{"unknown", &receiveInput, map[string]any{"queue_url": "u", "queue_name": "x"}, "queue_name", "unknown"},
		{"nested", &lines, map[string]any{"lines": []any{map[string]any{"quantity": 1}, map[string]any{"quantity": "secret-value"}}}, "lines.1.quantity", "type"},
		{"nested required", &lines, map[string]any{"lines": []map[string]any{{}}}, "lines.0.quantity", "required"},
		{"bad decimal", &receiveInput, map[string]any{"queue_url": "u", "ratio": json.Number("1e")}, "ratio", "type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Encode(c.shape, c.value, upper)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v", err)
			}
			if de.Path != c.path || de.Rule != c.rule || !de.Input {
				t.Errorf("got %+v, want %s %s", de, c.path, c.rule)
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Errorf("error shows the value: %v", err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	answer := `{"Messages":[{"MessageId":"m1","ReceiptHandle":"h1","Body":"{\"id\":1}","MD5OfBody":"abc",
		"Attributes":{"ApproximateReceiveCount":"2"},"Unknown":[1,2]},
		{"MessageId":"m2","ReceiptHandle":"h2","Body":"b","MD5OfBody":"def"}],"Other":true}`
	v, err := Decode(&receiveOutput, []byte(answer), upper)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"messages": []any{
		map[string]any{"message_id": "m1", "receipt_handle": "h1", "body": `{"id":1}`, "md5_of_body": "abc",
			"attributes": map[string]any{"ApproximateReceiveCount": "2"}},
		map[string]any{"message_id": "m2", "receipt_handle": "h2", "body": "b", "md5_of_body": "def", "attributes": nil},
	}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got  %#v\nwant %#v", v, want)
	}

	// SQS leaves Messages out of an empty receive: it reads as none.
	for _, empty := range []string{`{}`, ``, `  `, `{"Messages":null}`} {
		v, err := Decode(&receiveOutput, []byte(empty), upper)
		if err != nil {
			t.Fatalf("%q: %v", empty, err)
		}
		m := v.(map[string]any)
		if x, ok := m["messages"]; !ok || x != nil {
			t.Errorf("%q: messages = %v, %v", empty, x, ok)
		}
	}
}

func TestDecodeProblems(t *testing.T) {
	numbers := Shape{Kind: Record, Fields: []Field{
		{Name: "count", Shape: Shape{Kind: Int}},
		{Name: "price", Shape: Shape{Kind: Decimal, Optional: true}},
	}}
	cases := []struct {
		name, answer string
		shape        *Shape
		path, rule   string
	}{
		{"required member", `{"Messages":[{"MessageId":"m","ReceiptHandle":"h","MD5OfBody":"x"}]}`, &receiveOutput, "messages.0.body", "required"},
		{"null required", `{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":null,"MD5OfBody":"x"}]}`, &receiveOutput, "messages.0.body", "required"},
		{"wrong type", `{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"top-secret","MD5OfBody":5}]}`, &receiveOutput, "messages.0.md5_of_body", "type"},
		{"map value", `{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"b","MD5OfBody":"x","Attributes":{"SentTimestamp":1}}]}`, &receiveOutput, "messages.0.attributes.SentTimestamp", "type"},
		{"not a list", `{"Messages":{}}`, &receiveOutput, "messages", "type"},
		{"not an object", `[]`, &receiveOutput, "", "type"},
		{"null root", `null`, &receiveOutput, "", "required"},
		{"syntax", `{"Messages":[}`, &receiveOutput, "", "json"},
		{"trailing", `{} {}`, &receiveOutput, "", "json"},
		{"trailing garbage", `{}x`, &receiveOutput, "", "json"},
		{"fraction", `{"Count":1.5}`, &numbers, "count", "type"},
		{"overflow", `{"Count":9223372036854775808}`, &numbers, "count", "type"},
		{"text for int", `{"Count":"1"}`, &numbers, "count", "type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.shape, []byte(c.answer), upper)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v", err)
			}
			if de.Path != c.path || de.Rule != c.rule || de.Input {
				t.Errorf("got %+v, want %q %q", de, c.path, c.rule)
			}
			if strings.Contains(err.Error(), "top-secret") {
				t.Errorf("error shows the value: %v", err)
			}
		})
	}
	// Numbers are exact.
	v, err := Decode(&numbers, []byte(`{"Count":9223372036854775807,"Price":0.10000000000000000001}`), upper)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["count"] != int64(9223372036854775807) || m["price"] != json.Number("0.10000000000000000001") {
		t.Errorf("got %#v", m)
	}
}

func TestRoundTrip(t *testing.T) {
	in := map[string]any{"messages": []any{map[string]any{
		"message_id": "m", "receipt_handle": "h", "body": "é\u2028\x01\"", "md5_of_body": "x",
		"attributes": map[string]any{"k": "v"},
	}}}
	b, err := Encode(&receiveOutput, in, upper)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(&receiveOutput, b, upper)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: %#v -> %s -> %#v", in, b, out)
	}
}

// TestRequestTextAsEncodingJSON: a request's text is written as encoding/json
// writes it, \b and \f by name. This is the one output the shared JSON string
// writer (internal/jsonstring) changed: requests used to carry them as \u0008
// and \u000c, which means the same to every JSON reader.
func TestRequestTextAsEncodingJSON(t *testing.T) {
	text := "back\bspace, form\ffeed, \x01, <&>, \u2028"
	got, err := Encode(&receiveInput, map[string]any{"queue_url": text, "tags": map[string]string{"k\b": "v\f"}}, upper)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	e := json.NewEncoder(&want)
	e.SetEscapeHTML(false)
	if err := e.Encode(map[string]any{"QueueUrl": text, "Tags": map[string]string{"k\b": "v\f"}}); err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.TrimSuffix(want.String(), "\n") {
		t.Errorf("request body\n got %s\nwant %s", got, want.String())
	}
	if !strings.Contains(string(got), `back\bspace, form\ffeed`) {
		t.Errorf("request body %s: want \\b and \\f by name", got)
	}
}

func TestToLowerSnake(t *testing.T) {
	cases := map[string]string{
		"QueueDoesNotExist":         "queue_does_not_exist",
		"InvalidSignatureException": "invalid_signature_exception",
		"KMSAccessDeniedException":  "kms_access_denied_exception",
		"NonExistentQueue":          "non_existent_queue",
		"RequestThrottled":          "request_throttled",
		"ThrottlingException":       "throttling_exception",
		"InternalError":             "internal_error",
		"ServiceUnavailable":        "service_unavailable",
		"Http2Error":                "http2_error",
		"S3Bucket":                  "s3_bucket",
		"rate-limited":              "rate_limited",
		"already_snake":             "already_snake",
		"  Odd..Name  ":             "odd_name",
		"OverLimit":                 "over_limit",
		"ABC":                       "abc",
		"":                          "",
		"###":                       "",
	}
	for in, want := range cases {
		if got := ToLowerSnake(in); got != want {
			t.Errorf("ToLowerSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsTemporary(t *testing.T) {
	cases := []struct {
		status int
		code   string
		want   bool
	}{
		{500, "http_500", true},
		{503, "service_unavailable", true},
		{429, "http_429", true},
		{400, "request_throttled", true},
		{400, "throttling_exception", true},
		{400, "kms_throttled", true},
		{400, "internal_error", true},
		{400, "request_timeout", true},
		{400, "queue_does_not_exist", false},
		{403, "invalid_signature_exception", false},
		{404, "http_404", false},
	}
	for _, c := range cases {
		if got := IsTemporary(c.status, c.code); got != c.want {
			t.Errorf("IsTemporary(%d, %q) = %v", c.status, c.code, got)
		}
		r := NewRefusal("messages.receive_message", c.status, c.code, "")
		if r.Temporary != c.want || !IsTemporaryError(r) == c.want {
			t.Errorf("refusal %+v", r)
		}
	}
	if r := NewRefusal("x.y", 418, "", strings.Repeat("m", 600)); r.Code != "http_418" || len(r.Message) != 512 || strings.Contains(r.Error(), "mmm") {
		t.Errorf("refusal %+v / %s", r, r.Error())
	}
}
