package reading

import (
	"bytes"
	"math"
	"time"

	"github.com/jadpo/jadpo/check/ir"
)

// dec is a number as sign, significant digits and exponent: ±digits × 10^exp,
// digits without leading or trailing zeros (empty for zero). It compares
// exactly whatever the exponent, without building the number: 1e999999999
// costs what 1 costs.
type dec struct {
	neg    bool
	digits []byte
	exp    int64
}

// expCap bounds a number's exponent; far past any digit count a body can
// hold, so saturating there changes no comparison.
const expCap = 1 << 40

// parseDec splits a JSON number's text (already checked by scanNumber),
// appending its significant digits to buf.
func parseDec(buf []byte, s []byte) (dec, []byte) {
	var d dec
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	start := len(buf)
	var frac int64
	for ; i < len(s) && isDigit(s[i]); i++ {
		buf = append(buf, s[i])
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			buf = append(buf, s[i])
			frac++
		}
	}
	var e int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if s[i] == '+' || s[i] == '-' {
			eneg = s[i] == '-'
			i++
		}
		for ; i < len(s); i++ {
			if e < expCap {
				e = e*10 + int64(s[i]-'0')
			}
		}
		e = min(e, expCap)
		if eneg {
			e = -e
		}
	}
	digits := buf[start:]
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		e++
	}
	d.digits = digits
	d.exp = e - frac
	if len(digits) == 0 {
		d.neg, d.exp = false, 0
	}
	return d, buf
}

// cmpDec compares two numbers exactly: -1, 0 or +1.
func cmpDec(a, b dec) int {
	sa, sb := a.sign(), b.sign()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if sa == 0 {
		return 0
	}
	// same sign: compare magnitudes, by the leading digit's place first
	c := 0
	pa, pb := int64(len(a.digits))+a.exp, int64(len(b.digits))+b.exp
	switch {
	case pa < pb:
		c = -1
	case pa > pb:
		c = 1
	default:
		c = bytes.Compare(a.digits, b.digits)
	}
	if sa < 0 {
		c = -c
	}
	return c
}

func (d dec) sign() int {
	switch {
	case len(d.digits) == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// int64 gives the number when it is whole and within int64.
func (d dec) int64() (int64, bool) {
	if len(d.digits) == 0 {
		return 0, true
	}
	if d.exp < 0 || int64(len(d.digits))+d.exp > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range d.digits {
		u = u*10 + uint64(c-'0')
	}
	for range d.exp {
		u *= 10 // at most 19 digits: no uint64 overflow
	}
	return signed(u, d.neg)
}

func signed(u uint64, neg bool) (int64, bool) {
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// wholeNumber reads a JSON number's text as an int64: a whole value within
// int64, whether written 42, 42.0 or 4.2e1.
func wholeNumber(s []byte, scratch []byte) (int64, []byte, bool) {
	plain := true
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
			break
		}
	}
	if plain {
		neg := s[0] == '-'
		ds := s
		if neg {
			ds = s[1:]
		}
		if len(ds) > 20 {
			return 0, scratch, false
		}
		var u uint64
		for _, c := range ds {
			v := uint64(c - '0')
			if u > (math.MaxUint64-v)/10 {
				return 0, scratch, false
			}
			u = u*10 + v
		}
		n, ok := signed(u, neg)
		return n, scratch, ok
	}
	d, scratch := parseDec(scratch[:0], s)
	n, ok := d.int64()
	return n, scratch, ok
}

// bound is a min or max rule, precompiled.
type bound struct {
	d     dec
	i     int64
	isInt bool // the bound is whole and within int64: Int values compare fast
}

func newBound(text string) (*bound, bool) {
	s := []byte(text)
	if !isNumber(s) {
		return nil, false
	}
	d, _ := parseDec(nil, s)
	b := &bound{d: d}
	b.i, b.isInt = d.int64()
	return b, true
}

// validUUID accepts the canonical 8-4-4-4-12 form in either case.
func validUUID(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// appendLower appends an ASCII text in lower case.
func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// validEmail accepts a bare address as ir.ValidEmail does (the one rule,
// the checker's and the config's too): no display name, no angle brackets,
// no comment, nothing around it, no control or bidirectional character.
func validEmail(s []byte) bool { return ir.ValidEmail(string(s)) }

// appendInstant reads RFC 3339 text, YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
// with T and Z in either case and at most nine fractional digits, and
// appends it in UTC as time.RFC3339Nano writes it (trailing zeros of the
// fraction dropped, no fraction when it is zero). A year outside 0000–9999
// once in UTC is refused, since RFC 3339 can't write it.
func appendInstant(dst, s []byte) ([]byte, bool) {
	const minLen = len("2006-01-02T15:04:05Z")
	if len(s) < minLen || len(s) > len("2006-01-02T15:04:05.999999999+07:00") {
		return dst, false
	}
	var buf [40]byte
	b := buf[:len(s)]
	copy(b, s)
	// shape: digits and separators in their places
	for i, c := range b[:19] {
		switch i {
		case 4, 7:
			if c != '-' {
				return dst, false
			}
		case 10:
			if c != 'T' && c != 't' {
				return dst, false
			}
			b[i] = 'T'
		case 13, 16:
			if c != ':' {
				return dst, false
			}
		default:
			if !isDigit(c) {
				return dst, false
			}
		}
	}
	i := 19
	if b[i] == '.' {
		j := i + 1
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		if j == i+1 || j-i-1 > 9 {
			return dst, false
		}
		i = j
	}
	if i >= len(b) {
		return dst, false
	}
	switch rest := b[i:]; {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		rest[0] = 'Z'
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
		isDigit(rest[1]) && isDigit(rest[2]) && isDigit(rest[4]) && isDigit(rest[5]):
		if (rest[1]-'0')*10+rest[2]-'0' > 23 || (rest[4]-'0')*10+rest[5]-'0' > 59 {
			return dst, false
		}
	default:
		return dst, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return dst, false
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	return t.AppendFormat(dst, time.RFC3339Nano), true
}

// validDuration accepts a duration as the language writes it (ir.DurationOf:
// the one grammar the checker and the runtime share): "250ms", "30s",
// "10m", "1h", "30d", "0s".
func validDuration(s []byte) bool {
	_, ok := ir.DurationOf(s)
	return ok
}
