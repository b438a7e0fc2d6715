// Package source holds the files a project is read from and turns byte offsets
// into the line and column positions people and editors see.
//
// Every position in the toolchain is a byte offset into one File; lines and
// columns are derived only when a diagnostic is rendered, so the lexer and
// parser never pay for them.
package source

import (
	"sort"
	"unicode/utf8"
)

// File is one source file: its path relative to the project directory and its bytes.
type File struct {
	Path    string // relative to the project directory, '/'-separated
	Content []byte
	lines   []int // byte offset of the start of each line, built on first use
	// marks are rune-boundary checkpoints on long lines, built on first use,
	// so a column costs at most markEvery bytes of counting: without them a
	// line of a million diagnostics costs a million counts from its start.
	marks []mark
}

// mark is a byte offset on a rune boundary with its 0-based column in
// code points and in UTF-16 units.
type mark struct {
	off, col, col16 int
}

// markEvery is the distance between marks, and the shortest line given any.
const markEvery = 512

// NewFile makes a File; the content is not copied.
func NewFile(path string, content []byte) *File {
	return &File{Path: path, Content: content}
}

// Span is a half-open byte range [Start, End) in one file.
type Span struct {
	Start, End int
}

// Len is the span's length in bytes.
func (s Span) Len() int { return s.End - s.Start }

// Cover is the smallest span holding both s and o.
func (s Span) Cover(o Span) Span {
	if o.Start < s.Start {
		s.Start = o.Start
	}
	if o.End > s.End {
		s.End = o.End
	}
	return s
}

// Range is a span in a named file, the unit every diagnostic points at.
type Range struct {
	File *File
	Span Span
}

// Text is the source text the range covers.
func (r Range) Text() string {
	if r.File == nil {
		return ""
	}
	s, e := clamp(r.Span.Start, len(r.File.Content)), clamp(r.Span.End, len(r.File.Content))
	return string(r.File.Content[s:e])
}

// Position is a byte offset with its 1-based line and 1-based column counted
// in Unicode code points.
type Position struct {
	Byte   int `json:"byte"`
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Position converts a byte offset into a line and a column.
func (f *File) Position(offset int) Position {
	offset = clamp(offset, len(f.Content))
	lines := f.lineStarts()
	line := sort.Search(len(lines), func(i int) bool { return lines[i] > offset }) - 1
	start := lines[line]
	if line == 0 {
		start = min(f.BOMLen(), offset)
	}
	m := f.markBefore(start, offset)
	col := m.col + utf8.RuneCount(f.Content[m.off:offset]) + 1
	return Position{Byte: offset, Line: line + 1, Column: col}
}

// UTF16Column is the 0-based column of offset counted in UTF-16 code units,
// as the language server protocol counts them.
func (f *File) UTF16Column(offset int) int {
	offset = clamp(offset, len(f.Content))
	lines := f.lineStarts()
	line := sort.Search(len(lines), func(i int) bool { return lines[i] > offset }) - 1
	start := lines[line]
	if line == 0 {
		start = min(f.BOMLen(), offset)
	}
	m := f.markBefore(start, offset)
	col := m.col16
	for _, r := range string(f.Content[m.off:offset]) {
		col += utf16Len(r)
	}
	return col
}

func utf16Len(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// markBefore is the last mark at or before offset on the line starting at
// lineStart, or the line's start.
func (f *File) markBefore(lineStart, offset int) mark {
	if offset-lineStart < markEvery {
		return mark{off: lineStart}
	}
	if f.marks == nil {
		f.buildMarks()
	}
	i := sort.Search(len(f.marks), func(i int) bool { return f.marks[i].off > offset }) - 1
	if i < 0 || f.marks[i].off < lineStart {
		return mark{off: lineStart}
	}
	return f.marks[i]
}

// buildMarks walks every line of markEvery bytes or more once, decoding as
// utf8.RuneCount does, and records a mark every markEvery bytes.
func (f *File) buildMarks() {
	f.marks = []mark{}
	lines := f.lineStarts()
	for n, start := range lines {
		if n == 0 {
			start = f.BOMLen()
		}
		end := len(f.Content)
		if n+1 < len(lines) {
			end = lines[n+1]
		}
		if end-start < markEvery {
			continue
		}
		col, col16, next := 0, 0, start+markEvery
		for i := start; i < end; {
			if i >= next {
				f.marks = append(f.marks, mark{off: i, col: col, col16: col16})
				next = i + markEvery
			}
			r, size := utf8.DecodeRune(f.Content[i:end])
			i += size
			col++
			col16 += utf16Len(r)
		}
	}
}

// Line returns the text of a 1-based line without its line break.
func (f *File) Line(n int) string {
	start, end := f.LineBounds(n)
	return string(f.Content[start:end])
}

// LineBounds is the byte range of a 1-based line without its line break
// (and a CR before it); 0, 0 for a line past the end.
func (f *File) LineBounds(n int) (start, end int) {
	lines := f.lineStarts()
	if n < 1 || n > len(lines) {
		return 0, 0
	}
	start = lines[n-1]
	if n == 1 {
		start = f.BOMLen()
	}
	end = len(f.Content)
	if n < len(lines) {
		end = lines[n] - 1
	}
	if end > start && f.Content[end-1] == '\r' {
		end--
	}
	return start, end
}

// BOM is the UTF-8 byte order mark. Some editors start every file with it;
// at the start of a file it is not text: the lexer skips it, and columns and
// echoed lines leave it out. Byte offsets still count it, as the file does.
const BOM = "\xef\xbb\xbf"

// BOMLen is the length of the file's leading byte order mark, 0 without one.
func (f *File) BOMLen() int {
	if len(f.Content) >= len(BOM) && string(f.Content[:len(BOM)]) == BOM {
		return len(BOM)
	}
	return 0
}

func (f *File) lineStarts() []int {
	if f.lines == nil {
		f.lines = []int{0}
		for i, b := range f.Content {
			if b == '\n' {
				f.lines = append(f.lines, i+1)
			}
		}
	}
	return f.lines
}

func clamp(v, max int) int {
	if v < 0 {
		return 0
	}
	if v > max {
		return max
	}
	return v
}
