package jsonstring

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encodingJSON is the oracle: encoding/json with HTML escaping off, as every
// JSON the toolchain writes.
func encodingJSON(s string) string {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

func check(t *testing.T, s string) {
	t.Helper()
	want := encodingJSON(s)
	if got := string(Append(nil, s)); got != want {
		t.Errorf("Append(%q) = %s, want %s", s, got, want)
	}
	if got := string(Append([]byte("x"), []byte(s))); got != "x"+want {
		t.Errorf("Append(x, []byte(%q)) = %s, want x%s", s, got, want)
	}
}

// TestAsEncodingJSON: every ASCII byte, \b and \f by name, the JavaScript line
// ends, HTML characters kept, invalid UTF-8 replaced.
func TestAsEncodingJSON(t *testing.T) {
	var all []byte
	for c := range 0x80 {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", string(all), "\b\f", "quote\"back\\slash", "\x00\x1f\t\n\r",
		"é日本🙂", "é😀\u2028\u2029\u2027", "<&>'", "\x7f", "a\x00b", "bad\xffutf8", "\xe2\x80", "\xed\xa0\x80", "end\xf0\x9f"} {
		check(t, s)
	}
}

// TestBackspaceAndFormFeedByName pins the one spelling the toolchain's three
// writers used to disagree on: \b and \f, not \u0008 and \u000c.
func TestBackspaceAndFormFeedByName(t *testing.T) {
	if got := string(Append(nil, "a\bb\fc")); got != `"a\bb\fc"` {
		t.Errorf("got %s", got)
	}
}

func TestAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	in := []byte("é\u2028 a \"quoted\" text\x01 with \xff")
	if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], in) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// FuzzAppend holds Append to encoding/json on any bytes.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "\b\f\x00\x1f", "é\u2028\u2029", "<&>", "bad\xffutf8", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, s)
	})
}

func BenchmarkAppend(b *testing.B) {
	in := []byte(`Ada Lovelace <ada@example.com>, order "A-1042": 3 × widgets, shipped`)
	buf := make([]byte, 0, 256)
	b.Run("jsonstring", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			buf = Append(buf[:0], in)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		s := string(in)
		for b.Loop() {
			buf, _ = json.Marshal(s)
		}
	})
}
