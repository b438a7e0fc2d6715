package jsonstring

// Reading a JSON string's escapes, for the toolchain's two JSON parsers (the
// body reader's in runtime/reading, the answer reader's in providers/wire).
// What each does with a surrogate or with invalid UTF-8 is its own (the body
// reader refuses them, the answer reader keeps them distinct); what an escape
// stands for is JSON's, written here once.

// Unescape is the byte a one-letter escape stands for: \" \\ \/ \b \f \n \r
// \t (e is the letter after the backslash). false for any other letter,
// `u` included: Hex4 reads what follows \u.
func Unescape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// Hex4 reads the four hex digits of a \u escape at the start of b, either
// case; false when b has fewer than four or another byte among them.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
