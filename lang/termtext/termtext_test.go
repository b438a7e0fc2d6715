package termtext

import "testing"

func TestEscapes(t *testing.T) {
	cases := []struct{ in, line, text string }{
		{"plain text", "plain text", "plain text"},
		{"café ☕ 𝄞", "café ☕ 𝄞", "café ☕ 𝄞"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`, `\x1b[2J\x1b]0;pwned\x07`},
		{"a\tb\nc\r", `a\x09b\x0ac\x0d`, "a\tb\nc\\x0d"},
		{"é\tb\n", `é\x09b\x0a`, "é\tb\n"},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"csi\u009b31m", `csi\u009b31m`, `csi\u009b31m`},
		{"raw \x9b byte \xff", `raw \x9b byte \xff`, `raw \x9b byte \xff`},
		{"abc\u202edcba\u2066", `abc\u202edcba\u2066`, `abc\u202edcba\u2066`},
		{`a \x1b stays`, `a \x1b stays`, `a \x1b stays`},
	}
	for _, c := range cases {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
	if Rune('\x1b') != `\x1b` || Rune('é') != "é" || Rune('\t') != "\t" {
		t.Errorf("Rune: %q %q %q", Rune('\x1b'), Rune('é'), Rune('\t'))
	}
}
