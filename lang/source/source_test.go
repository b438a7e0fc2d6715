package source

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
	"unicode/utf16"
	"unicode/utf8"
)

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

// On lines longer than the marks' spacing, positions come from marks; they
// must be those of counting from the line's start, for every offset,
// including invalid bytes and text needing two UTF-16 units.
func TestPositionOnLongLinesMatchesCountingFromLineStart(t *testing.T) {
	var b []byte
	for i := 0; i < 3000; i++ {
		switch i % 7 {
		case 0:
			b = append(b, "é"...)
		case 1:
			b = append(b, "☕"...)
		case 2:
			b = append(b, "𝄞"...) // two UTF-16 units
		case 3:
			b = append(b, 0xff)
		case 4:
			if i%700 == 4 {
				b = append(b, '\n')
			}
		default:
			b = append(b, "- "...)
		}
	}
	f := NewFile("app.jadpo", b)
	for off := 0; off <= len(b); off++ {
		lineStart := 0
		line := 1
		for i := 0; i < off; i++ {
			if b[i] == '\n' {
				lineStart, line = i+1, line+1
			}
		}
		want := Position{Byte: off, Line: line, Column: utf8.RuneCount(b[lineStart:off]) + 1}
		if got := f.Position(off); got != want {
			t.Fatalf("offset %d: %+v, want %+v", off, got, want)
		}
		units := 0
		for _, r := range string(b[lineStart:off]) {
			units += len(utf16.Encode([]rune{r}))
		}
		if got := f.UTF16Column(off); got != units {
			t.Fatalf("offset %d: UTF-16 column %d, want %d", off, got, units)
		}
	}
}

// bytesFS holds its files in memory and hands them out (source.BytesFS).
type bytesFS struct{ fstest.MapFS }

func (b bytesFS) FileBytes(name string) ([]byte, fs.FileInfo, bool) {
	f, ok := b.MapFS[name]
	if !ok {
		return nil, nil, false
	}
	info, err := fs.Stat(b.MapFS, name)
	return f.Data, info, err == nil
}

// ReadFile takes a BytesFS's bytes as they are, within the same limit.
func TestReadFileTakesHeldBytes(t *testing.T) {
	data := []byte("type Sku = Text\n")
	fsys := bytesFS{fstest.MapFS{"a.jadpo": {Data: data}, "big.jadpo": {Data: make([]byte, 100)}}}
	got, err := ReadFile(fsys, "a.jadpo", 1000)
	if err != nil || &got[0] != &data[0] {
		t.Fatalf("ReadFile copied or failed: %v", err)
	}
	if _, err := ReadFile(fsys, "big.jadpo", 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
}
