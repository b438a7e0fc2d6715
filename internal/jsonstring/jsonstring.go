// Package jsonstring writes a JSON string the way encoding/json does with
// SetEscapeHTML(false), without its allocations: `"` and `\` escaped; \b, \f,
// \n, \r and \t by name; other control bytes as \u00XX; U+2028 and U+2029 as
// \u2028 and \u2029 (JavaScript reads them as line ends); invalid UTF-8 as
// \ufffd; everything else, `<`, `>` and `&` included, as it is.
//
// It is the one JSON string writer of the toolchain: the body reader's
// canonical bytes (runtime/reading), the provider requests (providers/wire)
// and the SQL inbox's row bodies (providers/sqlinbox) all write strings with
// it. It also says once what a string's escapes stand for (Unescape, Hex4),
// for the body reader's and the answer reader's parsers. It imports nothing of
// the module, so the runtime and every provider may use it without an edge
// back up the flow.
package jsonstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to dst as a JSON string, quotes included.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		// At most 4 bytes are converted: no allocation for a []byte.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
