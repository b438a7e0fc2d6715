// Package termtext makes text from users, producers and packages safe to
// print on a terminal: every character a terminal would act on instead of
// showing is written as an escape a reader can see.
//
// One form throughout (docs/design/runtime.md, "Terminal output"): a C0 control or
// DEL as \x1b, a byte that is not UTF-8 as \xff (a lone 0x9b would be a CSI
// to an 8-bit terminal), a C1 control, a bidirectional control or a line or
// paragraph separator as \u202e. Backslashes are left alone, so the escaped
// text reads as its source; machine output (JSON, a body to a pipe) is never
// escaped and gives the exact text.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line escapes s for one line of output: tabs and line breaks too, since
// they would break a table or let a value pass for a line of its own.
func Line(s string) string { return escape(s, false) }

// Text escapes s for output that may span lines: tabs and newlines stay.
func Text(s string) string { return escape(s, true) }

// Rune is how r is shown: itself, or its escape (never for tab and newline).
func Rune(r rune) string {
	if !needsEscape(r) {
		return string(r)
	}
	return runeEscape(r)
}

func escape(s string, keepBreaks bool) string {
	if clean(s, keepBreaks) {
		return s // the common case allocates nothing
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepBreaks && (r == '\t' || r == '\n'):
			b.WriteRune(r)
		case needsEscape(r) || r == '\t' || r == '\n':
			b.WriteString(runeEscape(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func clean(s string, keepBreaks bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return cleanSlow(s[i:], keepBreaks)
		}
		if c < 0x20 || c == 0x7f {
			if keepBreaks && (c == '\t' || c == '\n') {
				continue
			}
			return false
		}
	}
	return true
}

func cleanSlow(s string, keepBreaks bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || needsEscape(r) || !keepBreaks && (r == '\t' || r == '\n') {
			return false
		}
		i += size
	}
	return true
}

// needsEscape: the characters a terminal acts on, except tab and newline
// (callers decide on those).
func needsEscape(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1: CSI, OSC, ... in their one-character forms
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true // bidirectional controls: they reorder what follows
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

func runeEscape(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
