package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/jadpo/jadpo/internal/jsonstring"
)

// Naming gives the member name a protocol uses on its wire for a field that
// has no WireName (aws_json: UpperCamelCase; json_http: the field name).
type Naming func(fieldName string) string

// MemberName is the member name of f on a wire named by naming.
func MemberName(f *Field, naming Naming) string {
	if f.WireName != "" {
		return f.WireName
	}
	if naming == nil {
		return f.Name
	}
	return naming(f.Name)
}

// pathElem is one step of a field path, kept on the stack and only turned into
// text when a problem is reported.
type pathElem struct {
	parent *pathElem
	name   string
	index  int // used when isIndex
	isIdx  bool
}

func (p *pathElem) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	for e := p; e != nil; e = e.parent {
		if e.isIdx {
			parts = append(parts, strconv.Itoa(e.index))
		} else {
			parts = append(parts, e.name)
		}
	}
	slices.Reverse(parts)
	var b bytes.Buffer
	for i, s := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func problem(input bool, p *pathElem, rule string) error {
	return &DecodeError{Input: input, Path: p.String(), Rule: rule}
}

// Encode writes value as JSON by shape, members named by naming unless a field
// gives WireName. Record fields are written in declaration order; an optional
// field whose value is nil or absent is left out; a key the shape does not
// declare is refused (rule "unknown"), as is a value of the wrong Go type
// (rule "type") or a required field without a value (rule "required").
// Problems are *DecodeError with Input set; they name the field path, never
// the value.
func Encode(shape *Shape, value any, naming Naming) ([]byte, error) {
	buf := make([]byte, 0, 256)
	buf, err := encodeValue(buf, shape, value, naming, nil)
	if err != nil {
		return nil, err
	}
	return buf, nil
}

func encodeValue(buf []byte, s *Shape, v any, naming Naming, path *pathElem) ([]byte, error) {
	if v == nil {
		if s.Optional {
			return append(buf, "null"...), nil
		}
		return nil, problem(true, path, "required")
	}
	switch s.Kind {
	case Text:
		str, ok := v.(string)
		if !ok {
			return nil, problem(true, path, "type")
		}
		return jsonstring.Append(buf, str), nil
	case Int:
		n, ok := asInt(v)
		if !ok {
			return nil, problem(true, path, "type")
		}
		return strconv.AppendInt(buf, n, 10), nil
	case Decimal:
		switch d := v.(type) {
		case float64:
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return nil, problem(true, path, "type")
			}
			return strconv.AppendFloat(buf, d, 'g', -1, 64), nil
		case json.Number:
			if !validNumber(string(d)) {
				return nil, problem(true, path, "type")
			}
			return append(buf, d...), nil
		case int64:
			return strconv.AppendInt(buf, d, 10), nil
		case int:
			return strconv.AppendInt(buf, int64(d), 10), nil
		}
		return nil, problem(true, path, "type")
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, problem(true, path, "type")
		}
		return strconv.AppendBool(buf, b), nil
	case List:
		if s.Elem == nil {
			return nil, problem(true, path, "type")
		}
		buf = append(buf, '[')
		var err error
		switch l := v.(type) {
		case []any:
			for i, e := range l {
				if i > 0 {
					buf = append(buf, ',')
				}
				if buf, err = encodeValue(buf, s.Elem, e, naming, &pathElem{parent: path, index: i, isIdx: true}); err != nil {
					return nil, err
				}
			}
		case []string:
			for i, e := range l {
				if i > 0 {
					buf = append(buf, ',')
				}
				if buf, err = encodeValue(buf, s.Elem, e, naming, &pathElem{parent: path, index: i, isIdx: true}); err != nil {
					return nil, err
				}
			}
		case []map[string]any:
			for i, e := range l {
				if i > 0 {
					buf = append(buf, ',')
				}
				var ev any
				if e != nil {
					ev = e
				}
				if buf, err = encodeValue(buf, s.Elem, ev, naming, &pathElem{parent: path, index: i, isIdx: true}); err != nil {
					return nil, err
				}
			}
		default:
			return nil, problem(true, path, "type")
		}
		return append(buf, ']'), nil
	case Map:
		if s.Elem == nil {
			return nil, problem(true, path, "type")
		}
		var keys []string
		var get func(string) any
		switch m := v.(type) {
		case map[string]any:
			keys = sortedKeys(m)
			get = func(k string) any { return m[k] }
		case map[string]string:
			keys = sortedKeys(m)
			get = func(k string) any { return m[k] }
		default:
			return nil, problem(true, path, "type")
		}
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = jsonstring.Append(buf, k)
			buf = append(buf, ':')
			var err error
			if buf, err = encodeValue(buf, s.Elem, get(k), naming, &pathElem{parent: path, name: k}); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case Record:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, problem(true, path, "type")
		}
		for k := range m {
			if !hasField(s.Fields, k) {
				return nil, problem(true, &pathElem{parent: path, name: k}, "unknown")
			}
		}
		buf = append(buf, '{')
		first := true
		for i := range s.Fields {
			f := &s.Fields[i]
			fv := m[f.Name]
			if fv == nil {
				if f.Shape.Optional {
					continue
				}
				return nil, problem(true, &pathElem{parent: path, name: f.Name}, "required")
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = jsonstring.Append(buf, MemberName(f, naming))
			buf = append(buf, ':')
			var err error
			if buf, err = encodeValue(buf, &f.Shape, fv, naming, &pathElem{parent: path, name: f.Name}); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case Any:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, problem(true, path, "type")
		}
		return append(buf, b...), nil
	}
	return nil, problem(true, path, "type")
}

func hasField(fields []Field, name string) bool {
	for i := range fields {
		if fields[i].Name == name {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || n < -(1<<63) || n >= 1<<63 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// Decode reads a JSON answer by shape: members named by naming unless a field
// gives WireName; a member the shape does not declare is left out; a member
// left out (or null) reads as nil when its shape is Optional and is a
// "required" problem otherwise. An empty body reads as an empty object. Numbers
// are read exactly: Int through strconv.ParseInt, Decimal kept as json.Number.
// Text is kept byte for byte, never rewritten (see DecodeAnswer). Problems are
// *DecodeError naming the field path, never the value.
func Decode(shape *Shape, data []byte, naming Naming) (any, error) {
	return DecodeAnswer(shape, data, naming, "")
}

// DecodeValue converts a value produced by encoding/json (with UseNumber) by
// shape, as Decode does (its text is encoding/json's: already rewritten).
func DecodeValue(shape *Shape, v any, naming Naming) (any, error) {
	return decodeValue(shape, v, naming, nil)
}

func decodeValue(s *Shape, v any, naming Naming, path *pathElem) (any, error) {
	if v == nil {
		if s.Optional {
			return nil, nil
		}
		return nil, problem(false, path, "required")
	}
	switch s.Kind {
	case Text:
		if str, ok := v.(string); ok {
			return str, nil
		}
	case Int:
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return i, nil
			}
		}
	case Decimal:
		if n, ok := v.(json.Number); ok {
			return n, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case List:
		l, ok := v.([]any)
		if !ok || s.Elem == nil {
			break
		}
		out := make([]any, len(l))
		for i, e := range l {
			d, err := decodeValue(s.Elem, e, naming, &pathElem{parent: path, index: i, isIdx: true})
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	case Map:
		m, ok := v.(map[string]any)
		if !ok || s.Elem == nil {
			break
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			d, err := decodeValue(s.Elem, e, naming, &pathElem{parent: path, name: k})
			if err != nil {
				return nil, err
			}
			out[k] = d
		}
		return out, nil
	case Record:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		out := make(map[string]any, len(s.Fields))
		for i := range s.Fields {
			f := &s.Fields[i]
			d, err := decodeValue(&f.Shape, m[MemberName(f, naming)], naming, &pathElem{parent: path, name: f.Name})
			if err != nil {
				return nil, err
			}
			out[f.Name] = d
		}
		return out, nil
	case Any:
		return v, nil
	}
	return nil, problem(false, path, "type")
}
