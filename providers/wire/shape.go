// Package wire is the protocol-neutral description of a provider call that the
// runtime hands to the providers: the shape of a value, an operation, the
// provider's protocol and credential scheme, and the Client that sends a call
// and reads its answer.
//
// Values exchanged with a Client are field-named Go values:
//
//	Record   map[string]any, keyed by lower_snake field names
//	List     []any (input also takes []string and []map[string]any)
//	Map      map[string]any (input also takes map[string]string)
//	Text     string (an answer's byte for byte: see DecodeAnswer)
//	Int      int64 (input also takes int, int32 and whole float64)
//	Decimal  json.Number on output; float64, json.Number, int64 or int on input
//	Bool     bool
//	Any      what encoding/json produces with UseNumber (text byte for byte)
//	none     nil
//
// A protocol only decides how members are named on its wire, how a request is
// framed and where a refusal's code is read; the rest (encoding, decoding,
// refusals, retries) lives here so every protocol behaves the same way.
package wire

import "strings"

// Kind is the kind of value a Shape describes.
type Kind uint8

// The kinds of value. The zero Kind is invalid so that a Shape left unset is
// caught instead of silently accepting anything.
const (
	Text Kind = iota + 1
	Int
	Decimal
	Bool
	List
	Map
	Record
	Any
)

var kindNames = [...]string{"invalid", "text", "int", "decimal", "bool", "list", "map", "record", "any"}

// String names the kind in lower case ("text", "list", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Shape describes a value on a provider's wire. Scalar types of the language
// (Uuid, Instant, Email, Url, Duration, enums) travel as Text.
type Shape struct {
	Kind Kind
	// Optional means the value may be none: on input a nil or absent member is
	// left out; on output a member the provider leaves out (or sends as null)
	// reads as nil.
	Optional bool
	// Fields of a Record, in declaration order (the order members are written).
	Fields []Field
	// Elem is the element shape of a List and the value shape of a Map.
	Elem *Shape
}

// Field is one member of a Record.
type Field struct {
	// Name is the field's lower_snake name; values are keyed by it.
	Name string
	// WireName is the member name on the wire when the package gives
	// `wire_name:`; "" means the protocol's own naming of Name.
	WireName string
	Shape    Shape
}

// Operation is one operation of a package's resource, as the runtime calls it.
type Operation struct {
	Resource string // lower_snake resource name, e.g. "messages"
	Name     string // lower_snake operation name, e.g. "receive_message"
	Input    *Shape // nil: the operation takes no input
	Output   *Shape // nil: the answer is not read
	// RetrySafe marks an operation that may be sent again after a transport
	// failure (`retry_safe: true`).
	RetrySafe bool
	// Method and Path are json_http's `method:` and `path:`; Path placeholders
	// `{name}` are filled from the connection's settings.
	Method string
	Path   string
	// Items is the dotted field path, through records, of a list in the
	// answer whose elements are read each on its own ("messages",
	// "result.messages"): an element that does not fit its shape is a
	// *Unfit in its place, and the rest of the answer is read. "" for none.
	Items string
}

// FullName is "resource.operation", the name used in errors.
func (o *Operation) FullName() string {
	if o.Resource == "" {
		return o.Name
	}
	return o.Resource + "." + o.Name
}

// ToLowerSnake turns a provider's error name into lower_snake_case:
// "QueueDoesNotExist" -> "queue_does_not_exist", "KMSAccessDenied" ->
// "kms_access_denied", "rate-limited" -> "rate_limited". A run of capitals is
// one word (its last capital starts the next word when a lower-case letter
// follows); any character that is not an ASCII letter or digit separates
// words. The result holds only [a-z0-9_], with no leading, trailing or double
// underscores; it is "" when the input has no letter or digit.
func ToLowerSnake(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	pendingSep := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if b.Len() > 0 && i > 0 {
				prev := s[i-1]
				nextLower := i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z'
				if (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') ||
					(prev >= 'A' && prev <= 'Z' && nextLower) {
					pendingSep = true
				}
			}
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteByte(c + ('a' - 'A'))
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteByte(c)
		default:
			pendingSep = true
		}
	}
	return b.String()
}
