package console

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzBodyText: what the message page shows of a body is valid UTF-8 with no character that
// would not show as itself (no control character but newline and tab, no bidirectional
// override); text without such characters shows unchanged; and a JSON body's indented
// text is the same JSON value.
func FuzzBodyText(f *testing.F) {
	for _, s := range []string{
		`{"note":"<script>alert(1)</script>"}`, "\x1b[2J", `{"a":"\u202e\u2028"}`, "{\"a\":\"\u202e\u2028\x7f\u0085\"}",
		"not json \xff\xfe", `[1, 2, {"b": null}]`, "line\r\nnext\ttab", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		text, isJSON := prettyBody(body)
		if !utf8.ValidString(text) {
			t.Fatalf("shown text is not UTF-8: %q", text)
		}
		for _, r := range text {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 ||
				(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff {
				t.Fatalf("shown text holds %U: %q", r, text)
			}
		}
		if !isJSON && utf8.Valid(body) && !strings.ContainsFunc(string(body), func(r rune) bool {
			return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 ||
				(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff
		}) && text != string(body) {
			t.Fatalf("plain text changed: %q -> %q", body, text)
		}
		if isJSON && utf8.Valid(body) {
			var a, b any
			if err := json.Unmarshal(body, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(text), &b); err != nil {
				t.Fatalf("the indented JSON does not parse: %v\n%s", err, text)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("the indented JSON is another value:\n%s\n%s", body, text)
			}
		}
		if v := visible(string(body), false); strings.ContainsAny(v, "\n\t") {
			t.Fatalf("a one-line field keeps a newline or tab: %q", v)
		}
	})
}
