package reading

import (
	"bytes"
	"math"
	"unicode/utf8"

	"github.com/jadpo/jadpo/internal/jsonstring"
)

// maxDepth caps how deeply arrays and objects may nest in a body. A deeper
// body is not JSON this reader reads (rule "json"); the cap keeps the
// recursive parser's stack small whatever a sender puts on a queue.
const maxDepth = 128

// kind is a JSON value's kind.
type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNum
	kStr
	kArr
	kObj
)

// node is one parsed JSON value. The children of an array or object are
// p.nodes[first : first+n], in document order; an object's children carry
// their member name. Texts are spans of the body, or of p.esc for a string
// that held an escape: a node holds no pointer, so the garbage collector
// never looks at the tree and appending to it costs no write barrier.
type node struct {
	key   span // the member's name, unescaped, when the node is an object member
	val   span // a string's unescaped bytes, or a number's text
	first int32
	n     int32
	kind  kind
}

// span is a text in the body, or in the escape buffer when esc is set.
type span struct {
	off, len int32
	esc      bool
}

// parser is a strict JSON parser (RFC 8259) that builds a flat tree of
// nodes. Beyond the grammar it refuses what encoding/json lets through
// quietly: invalid UTF-8, escaped lone surrogates, member names given twice
// in one object, and nesting deeper than maxDepth. Strings without escapes
// alias the body; numbers are kept as their text and never converted to
// float64.
//
// Children are gathered on stack while their container is open and copied
// into nodes, contiguous, when it closes; both slices are reused between
// bodies.
type parser struct {
	b     []byte
	esc   []byte // unescaped strings that held an escape
	i     int
	depth int
	nodes []node
	stack []node
	seen  map[string]struct{}
}

// text gives a span's bytes.
func (p *parser) text(s span) []byte {
	if s.esc {
		return p.esc[s.off : s.off+s.len]
	}
	return p.b[s.off : s.off+s.len]
}

// parse reads a whole body. ok is false when the body is not one JSON value
// in the sense above.
func (p *parser) parse(b []byte) (root node, ok bool) {
	if len(b) > math.MaxInt32 {
		return node{}, false
	}
	p.b, p.i, p.depth = b, 0, 0
	p.nodes = p.nodes[:0]
	p.stack = p.stack[:0]
	p.esc = p.esc[:0]
	p.ws()
	root, ok = p.value()
	if !ok {
		return node{}, false
	}
	p.ws()
	if p.i != len(p.b) {
		return node{}, false
	}
	return root, true
}

func (p *parser) children(n *node) []node {
	return p.nodes[n.first : n.first+n.n]
}

// member finds an object's member by name.
func (p *parser) member(obj *node, name string) *node {
	cs := p.children(obj)
	for i := range cs {
		if string(p.text(cs[i].key)) == name {
			return &cs[i]
		}
	}
	return nil
}

func (p *parser) ws() {
	b, i := p.b, p.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	p.i = i
}

func (p *parser) value() (node, bool) {
	if p.i >= len(p.b) {
		return node{}, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.container(kObj, '}')
	case c == '[':
		return p.container(kArr, ']')
	case c == '"':
		s, ok := p.str()
		return node{kind: kStr, val: s}, ok
	case c == 't':
		return p.lit("true", kTrue)
	case c == 'f':
		return p.lit("false", kFalse)
	case c == 'n':
		return p.lit("null", kNull)
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		end := scanNumber(p.b, start)
		if end < 0 {
			return node{}, false
		}
		p.i = end
		return node{kind: kNum, val: span{off: int32(start), len: int32(end - start)}}, true
	}
	return node{}, false
}

func (p *parser) lit(word string, k kind) (node, bool) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return node{}, false
	}
	p.i += len(word)
	return node{kind: k}, true
}

// container reads an array or an object, the opening byte at p.i.
func (p *parser) container(k kind, closer byte) (node, bool) {
	p.depth++
	if p.depth > maxDepth {
		return node{}, false
	}
	p.i++
	mark := len(p.stack)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == closer {
		p.i++
	} else {
		for {
			var key span
			if k == kObj {
				if p.i >= len(p.b) || p.b[p.i] != '"' {
					return node{}, false
				}
				var ok bool
				if key, ok = p.str(); !ok {
					return node{}, false
				}
				p.ws()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return node{}, false
				}
				p.i++
				p.ws()
			}
			v, ok := p.value()
			if !ok {
				return node{}, false
			}
			v.key = key
			p.stack = append(p.stack, v)
			p.ws()
			if p.i >= len(p.b) {
				return node{}, false
			}
			if c := p.b[p.i]; c == ',' {
				p.i++
				p.ws()
				continue
			} else if c == closer {
				p.i++
				break
			}
			return node{}, false
		}
	}
	first := len(p.nodes)
	p.nodes = append(p.nodes, p.stack[mark:]...)
	p.stack = p.stack[:mark]
	n := node{kind: k, first: int32(first), n: int32(len(p.nodes) - first)}
	if k == kObj && p.hasDuplicate(p.nodes[first:]) {
		return node{}, false
	}
	p.depth--
	return n, true
}

// hasDuplicate reports whether two members share a name.
func (p *parser) hasDuplicate(ms []node) bool {
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ {
			for j := 0; j < i; j++ {
				if ms[i].key.len == ms[j].key.len && bytes.Equal(p.text(ms[i].key), p.text(ms[j].key)) {
					return true
				}
			}
		}
		return false
	}
	if p.seen == nil {
		p.seen = make(map[string]struct{}, len(ms))
	} else {
		clear(p.seen)
	}
	for i := range ms {
		k := p.text(ms[i].key)
		if _, dup := p.seen[string(k)]; dup {
			return true
		}
		p.seen[string(k)] = struct{}{}
	}
	return false
}

// str reads a string, the opening quote at p.i, and returns its unescaped
// bytes: a span of the body when it holds no escape.
func (p *parser) str() (span, bool) {
	b := p.b
	start := p.i + 1
	for i := start; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return span{off: int32(start), len: int32(i - start)}, true
		case c == '\\':
			p.i = i
			return p.strEscaped(start)
		case c < 0x20:
			return span{}, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return span{}, false
			}
			i += size
		}
	}
	return span{}, false
}

// strEscaped finishes a string holding an escape, p.i at the first
// backslash, unescaping it onto p.esc.
func (p *parser) strEscaped(start int) (span, bool) {
	off := len(p.esc)
	buf, ok := p.unescape(p.esc, start)
	p.esc = buf
	if !ok || len(p.esc) > math.MaxInt32 {
		return span{}, false
	}
	return span{off: int32(off), len: int32(len(p.esc) - off), esc: true}, true
}

func (p *parser) unescape(buf []byte, start int) ([]byte, bool) {
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return buf, true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return buf, false
			}
			e := p.b[p.i+1]
			p.i += 2
			if u, ok := jsonstring.Unescape(e); ok {
				buf = append(buf, u)
				break
			}
			if e != 'u' {
				return buf, false
			}
			r, ok := p.hex4()
			if !ok {
				return buf, false
			}
			if r >= 0xD800 && r < 0xDC00 {
				// a high surrogate must be followed by an escaped low one
				if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return buf, false
				}
				p.i += 2
				lo, ok := p.hex4()
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return buf, false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			} else if r >= 0xDC00 && r < 0xE000 {
				return buf, false
			}
			buf = utf8.AppendRune(buf, r)
		case c < 0x20:
			return buf, false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return buf, false
			}
			buf = append(buf, p.b[p.i:p.i+size]...)
			p.i += size
		}
	}
	return buf, false
}

func (p *parser) hex4() (rune, bool) {
	r, ok := jsonstring.Hex4(p.b[p.i:])
	if ok {
		p.i += 4
	}
	return r, ok
}

// scanNumber reads a JSON number starting at i and returns the index after
// it, or -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNumber reports whether s is exactly one JSON number.
func isNumber(s []byte) bool { return len(s) > 0 && scanNumber(s, 0) == len(s) }
