package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/jadpo/jadpo/internal/jsonstring"
)

// An answer is read by a JSON parser of this package's own rather than
// encoding/json, because encoding/json rewrites text: invalid UTF-8 and
// escaped lone surrogates (`\ud800`) become U+FFFD, so two bodies that differ
// only there would read as one (and one message be dropped as a repeat of
// the other). Here a string is its exact bytes:
//
//   - raw bytes are kept as they are, valid UTF-8 or not;
//   - an escaped surrogate pair is the UTF-8 of the character it makes;
//   - an escaped lone surrogate is the three bytes of UTF-8's scheme applied
//     to the surrogate (`\ud800` is ED A0 80, as raw ED A0 80 is kept):
//     not valid UTF-8, so a strict reader (runtime/reading) refuses it,
//     and distinct surrogates stay distinct.
//
// The structure is read as strictly as encoding/json does (RFC 8259; a raw
// control character in a string is refused); a member named twice takes the
// last value, as encoding/json does.

// maxAnswerDepth bounds the nesting of arrays and objects in an answer, as
// encoding/json does; it also bounds the parser's recursion.
const maxAnswerDepth = 10000

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonFalse
	jsonTrue
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// node is one parsed JSON value and its span in the answer.
type node struct {
	kind       jsonKind
	text       string // a string's bytes; a number's text
	start, end int
	keys       []string // an object's member names, in order
	kids       []node   // an array's elements; an object's values
}

type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

func parseAnswer(data []byte) (node, bool) {
	p := &jsonParser{data: data}
	p.space()
	n, ok := p.value()
	if !ok {
		return node{}, false
	}
	p.space()
	return n, p.pos == len(p.data)
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (node, bool) {
	if p.pos >= len(p.data) {
		return node{}, false
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, ok := p.str()
		return node{kind: jsonString, text: s, start: start, end: p.pos}, ok
	case c == '-' || (c >= '0' && c <= '9'):
		if !p.number() {
			return node{}, false
		}
		return node{kind: jsonNumber, text: string(p.data[start:p.pos]), start: start, end: p.pos}, true
	}
	for _, lit := range [...]struct {
		word string
		kind jsonKind
	}{{"null", jsonNull}, {"true", jsonTrue}, {"false", jsonFalse}} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit.word)) {
			p.pos += len(lit.word)
			return node{kind: lit.kind, start: start, end: p.pos}, true
		}
	}
	return node{}, false
}

func (p *jsonParser) object() (node, bool) {
	n := node{kind: jsonObject, start: p.pos}
	if p.depth++; p.depth > maxAnswerDepth {
		return n, false
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		return n, true
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return n, false
		}
		key, ok := p.str()
		if !ok {
			return n, false
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return n, false
		}
		p.pos++
		p.space()
		v, ok := p.value()
		if !ok {
			return n, false
		}
		n.keys = append(n.keys, key)
		n.kids = append(n.kids, v)
		p.space()
		if p.pos >= len(p.data) {
			return n, false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case '}':
			p.pos++
			n.end = p.pos
			return n, true
		default:
			return n, false
		}
	}
}

func (p *jsonParser) array() (node, bool) {
	n := node{kind: jsonArray, start: p.pos}
	if p.depth++; p.depth > maxAnswerDepth {
		return n, false
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		return n, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return n, false
		}
		n.kids = append(n.kids, v)
		p.space()
		if p.pos >= len(p.data) {
			return n, false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case ']':
			p.pos++
			n.end = p.pos
			return n, true
		default:
			return n, false
		}
	}
}

// number reads a number by RFC 8259's grammar.
func (p *jsonParser) number() bool {
	d := p.data
	digits := func() int {
		s := p.pos
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
		return p.pos - s
	}
	if d[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(d) && d[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return false
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return false
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// str reads a string at p.pos (its opening quote) into its exact bytes (see
// the comment at the top of this file).
func (p *jsonParser) str() (string, bool) {
	d := p.data
	p.pos++
	start := p.pos
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := string(d[start:p.pos])
			p.pos++
			return s, true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		p.pos++
	}
	buf := append([]byte(nil), d[start:p.pos]...)
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(d) {
			return "", false
		}
		e := d[p.pos+1]
		p.pos += 2
		if u, ok := jsonstring.Unescape(e); ok {
			buf = append(buf, u)
			continue
		}
		if e != 'u' {
			return "", false
		}
		r, ok := p.hex4()
		if !ok {
			return "", false
		}
		if utf16.IsSurrogate(r) {
			if r < 0xDC00 && p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				lo, ok := p.hex4()
				if !ok {
					return "", false
				}
				if lo >= 0xDC00 && lo <= 0xDFFF {
					buf = utf8.AppendRune(buf, utf16.DecodeRune(r, lo))
					continue
				}
				p.pos = save // a lone high surrogate; the escape after it is read on its own
			}
			buf = appendSurrogate(buf, r)
			continue
		}
		buf = utf8.AppendRune(buf, r)
	}
	return "", false
}

func (p *jsonParser) hex4() (rune, bool) {
	r, ok := jsonstring.Hex4(p.data[p.pos:])
	if ok {
		p.pos += 4
	}
	return r, ok
}

// appendSurrogate appends the three bytes UTF-8's scheme gives a surrogate
// (which UTF-8 itself forbids): a lone surrogate kept distinct.
func appendSurrogate(buf []byte, r rune) []byte {
	return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// Unfit stands in an operation's Items list (Operation.Items) for an
// element that does not fit its shape: the rest of the answer is read, and
// the caller decides what to do with this one.
type Unfit struct {
	// Raw is the element's JSON, byte for byte as the answer held it.
	Raw []byte
	// Problems say where the element does not fit: one per field of a
	// record element, its path within the element ("md5_of_body"; "" for
	// the element itself, when it is not an object), sorted by path.
	Problems []ItemProblem
	// Fields are the members of a record element that fit their fields'
	// shapes, keyed by field name; nil when the element is not an object.
	Fields map[string]any
	// Members are the raw JSON of the record element's declared members
	// that are present, keyed by field name.
	Members map[string][]byte
}

// ItemProblem is where an Unfit element does not fit, and the rule
// ("required", "type").
type ItemProblem struct {
	Path, Rule string
}

// DecodeAnswer reads a JSON answer by shape as Decode does, but keeping
// every string's exact bytes (see above), and, when items names a list (a
// dotted path of field names through records: "messages",
// "result.messages"), reading that list's elements each on its own: an
// element that does not fit its shape is an *Unfit in its place instead of
// a problem of the whole answer.
func DecodeAnswer(shape *Shape, data []byte, naming Naming, items string) (any, error) {
	root, ok := parseAnswer(data)
	if !ok {
		if len(bytes.TrimSpace(data)) == 0 { // as the old decoder had it
			root = node{kind: jsonObject}
		} else {
			return nil, &DecodeError{Rule: "json"}
		}
	}
	d := &answerDecoder{data: data, naming: naming}
	if items != "" {
		d.items = strings.Split(items, ".")
	}
	return d.decode(shape, &root, nil, d.items != nil, 0)
}

type answerDecoder struct {
	data   []byte
	naming Naming
	items  []string
}

// member is the last member of obj named name (nil when there is none).
func member(obj *node, name string) *node {
	for i := len(obj.keys) - 1; i >= 0; i-- {
		if obj.keys[i] == name {
			return &obj.kids[i]
		}
	}
	return nil
}

// decode converts n (nil: absent) by s. onItems says the Items path is
// still being followed; depth is how far along it is.
func (d *answerDecoder) decode(s *Shape, n *node, path *pathElem, onItems bool, depth int) (any, error) {
	if n == nil || n.kind == jsonNull {
		if s.Optional {
			return nil, nil
		}
		return nil, problem(false, path, "required")
	}
	switch s.Kind {
	case Text:
		if n.kind == jsonString {
			return n.text, nil
		}
	case Int:
		if n.kind == jsonNumber {
			if i, err := strconv.ParseInt(n.text, 10, 64); err == nil {
				return i, nil
			}
		}
	case Decimal:
		if n.kind == jsonNumber {
			return json.Number(n.text), nil
		}
	case Bool:
		if n.kind == jsonTrue || n.kind == jsonFalse {
			return n.kind == jsonTrue, nil
		}
	case List:
		if n.kind != jsonArray || s.Elem == nil {
			break
		}
		perItem := onItems && depth == len(d.items)
		out := make([]any, len(n.kids))
		for i := range n.kids {
			ep := &pathElem{parent: path, index: i, isIdx: true}
			if perItem {
				out[i] = d.item(s.Elem, &n.kids[i])
				continue
			}
			v, err := d.decode(s.Elem, &n.kids[i], ep, false, 0)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case Map:
		if n.kind != jsonObject || s.Elem == nil {
			break
		}
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			v, err := d.decode(s.Elem, &n.kids[i], &pathElem{parent: path, name: k}, false, 0)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case Record:
		if n.kind != jsonObject {
			break
		}
		out := make(map[string]any, len(s.Fields))
		for i := range s.Fields {
			f := &s.Fields[i]
			follow := onItems && depth < len(d.items) && d.items[depth] == f.Name
			v, err := d.decode(&f.Shape, member(n, MemberName(f, d.naming)), &pathElem{parent: path, name: f.Name}, follow, depth+1)
			if err != nil {
				return nil, err
			}
			out[f.Name] = v
		}
		return out, nil
	case Any:
		return toAny(n), nil
	}
	return nil, problem(false, path, "type")
}

// item reads one element of the Items list: its value, or an *Unfit.
func (d *answerDecoder) item(s *Shape, n *node) any {
	v, err := d.decode(s, n, nil, false, 0)
	if err == nil {
		return v
	}
	u := &Unfit{Raw: d.data[n.start:n.end]}
	if s.Kind != Record || n.kind != jsonObject {
		de := err.(*DecodeError)
		u.Problems = []ItemProblem{{Path: de.Path, Rule: de.Rule}}
		return u
	}
	u.Fields = map[string]any{}
	u.Members = map[string][]byte{}
	for i := range s.Fields {
		f := &s.Fields[i]
		m := member(n, MemberName(f, d.naming))
		if m != nil {
			u.Members[f.Name] = d.data[m.start:m.end]
		}
		v, err := d.decode(&f.Shape, m, &pathElem{name: f.Name}, false, 0)
		if err != nil {
			de := err.(*DecodeError)
			u.Problems = append(u.Problems, ItemProblem{Path: de.Path, Rule: de.Rule})
			continue
		}
		u.Fields[f.Name] = v
	}
	slices.SortFunc(u.Problems, func(a, b ItemProblem) int { return strings.Compare(a.Path, b.Path) })
	return u
}

// toAny is n as encoding/json (with UseNumber) gives it, strings as their
// exact bytes.
func toAny(n *node) any {
	switch n.kind {
	case jsonFalse:
		return false
	case jsonTrue:
		return true
	case jsonNumber:
		return json.Number(n.text)
	case jsonString:
		return n.text
	case jsonArray:
		out := make([]any, len(n.kids))
		for i := range n.kids {
			out[i] = toAny(&n.kids[i])
		}
		return out
	case jsonObject:
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			out[k] = toAny(&n.kids[i])
		}
		return out
	}
	return nil
}
