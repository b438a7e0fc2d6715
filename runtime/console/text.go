package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// visible returns s with every character that would not show as itself written as an
// escape: control characters (C0 but, in a body, newline and tab; DEL; C1), the line and
// paragraph separators, the bidirectional overrides and isolates, and bytes that are not
// UTF-8 (\xNN). html/template then escapes <, > and & : a field holding <script> or ESC
// shows as text.
func visible(s string, multiline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// prettyBody is a body as the message page shows it: indented when it is JSON, else as it
// is; either way through visible.
func prettyBody(body []byte) (text string, isJSON bool) {
	if json.Valid(body) {
		var out bytes.Buffer
		// Indent keeps whitespace around the value as it is (a \r would show as \u000d).
		if err := json.Indent(&out, bytes.Trim(body, " \t\r\n"), "", "  "); err == nil {
			return visible(out.String(), true), true
		}
	}
	return visible(string(body), true), false
}
