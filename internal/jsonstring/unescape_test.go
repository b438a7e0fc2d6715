package jsonstring

import (
	"encoding/json"
	"testing"
)

// TestUnescapeAsEncodingJSON: every letter after a backslash means to
// Unescape what it means to encoding/json, and Hex4 reads what \u takes.
func TestUnescapeAsEncodingJSON(t *testing.T) {
	for e := range 256 {
		var want string
		err := json.Unmarshal([]byte(`"\`+string(rune(e))+`"`), &want)
		got, ok := Unescape(byte(e))
		if e == 'u' {
			if ok {
				t.Errorf(`Unescape('u') = %q, true; \u is Hex4's`, got)
			}
			continue
		}
		if ok != (err == nil) || ok && string(rune(got)) != want {
			t.Errorf("Unescape(%q) = %q, %v; encoding/json: %q, %v", rune(e), got, ok, want, err)
		}
	}
	for in, want := range map[string]rune{"0041": 'A', "00e9": 'é', "00E9": 'é', "d83D": 0xD83D, "ffff": 0xFFFF, "12345": 0x1234} {
		if r, ok := Hex4([]byte(in)); !ok || r != want {
			t.Errorf("Hex4(%q) = %U, %v; want %U", in, r, ok, want)
		}
	}
	for _, in := range []string{"", "123", "12g4", "-123", " 123", "12\x004"} {
		if r, ok := Hex4([]byte(in)); ok {
			t.Errorf("Hex4(%q) = %U, want false", in, r)
		}
	}
}
