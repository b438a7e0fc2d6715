package lexer

import "strings"

// CommentAbove is the comment written on the lines right above offset's
// line, with its `//` markers and one space after each taken off: a
// declaration's or field's own comment, as an editor shows it. Only whole
// comment lines count (a blank line ends the run), and a line can hold a
// `//` comment only outside text, which never spans lines, so a line whose
// first non-blank characters are `//` is a comment line.
func CommentAbove(src []byte, offset int) string {
	if offset > len(src) {
		offset = len(src)
	}
	lineStart := strings.LastIndexByte(string(src[:offset]), '\n') + 1
	var lines []string
	for end := lineStart - 1; end > 0; {
		start := strings.LastIndexByte(string(src[:end]), '\n') + 1
		line := strings.TrimSpace(strings.TrimSuffix(string(src[start:end]), "\r"))
		text, ok := strings.CutPrefix(line, "//")
		if !ok {
			break
		}
		lines = append(lines, strings.TrimPrefix(text, " "))
		end = start - 1
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "\n")
}
