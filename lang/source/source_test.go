package source

import "testing"

// Columns count Unicode code points; bytes are 0-based, lines 1-based.
func TestPositionCountsCodePoints(t *testing.T) {
	f := NewFile("app.jadpo", []byte("type Café = Text\r\n  note: \"naïve ☕\" x\nlast"))
	cases := []struct {
		offset, line, col int
	}{
		{0, 1, 1},
		{5, 1, 6},   // C
		{10, 1, 10}, // the space after é (2 bytes, 1 column)
		{21, 2, 3},  // n of note, after CRLF
		{len("type Café = Text\r\n  note: \"naïve ☕\" "), 2, 19}, // x, after ï and ☕
		{len(f.Content), 3, 5}, // end of file
	}
	for _, c := range cases {
		p := f.Position(c.offset)
		if p.Byte != c.offset || p.Line != c.line || p.Column != c.col {
			t.Errorf("offset %d: %+v, want line %d column %d", c.offset, p, c.line, c.col)
		}
	}
	if got := f.Line(1); got != "type Café = Text" {
		t.Errorf("line 1 %q (CR must not be part of it)", got)
	}
	if got := f.Line(4); got != "" {
		t.Errorf("line past the end %q", got)
	}
}

// A leading byte order mark is not a column, nor part of line 1's text.
func TestPositionSkipsLeadingBOM(t *testing.T) {
	f := NewFile("app.jadpo", []byte("\uFEFFstore x {}\nnext"))
	if p := f.Position(3); p.Line != 1 || p.Column != 1 {
		t.Errorf("first character: %+v, want 1:1", p)
	}
	if p := f.Position(9); p.Column != 7 {
		t.Errorf("x: %+v, want column 7", p)
	}
	if p := f.Position(0); p.Column != 1 {
		t.Errorf("the mark itself: %+v, want column 1", p)
	}
	if got := f.Line(1); got != "store x {}" {
		t.Errorf("line 1 %q", got)
	}
}
