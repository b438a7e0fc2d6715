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
}

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
	col := utf8.RuneCount(f.Content[start:offset]) + 1
	return Position{Byte: offset, Line: line + 1, Column: col}
}

// Line returns the text of a 1-based line without its line break.
func (f *File) Line(n int) string {
	lines := f.lineStarts()
	if n < 1 || n > len(lines) {
		return ""
	}
	start := lines[n-1]
	if n == 1 {
		start = f.BOMLen()
	}
	end := len(f.Content)
	if n < len(lines) {
		end = lines[n] - 1
	}
	if end > start && f.Content[end-1] == '\r' {
		end--
	}
	return string(f.Content[start:end])
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
