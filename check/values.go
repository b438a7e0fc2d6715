package check

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
)

// isLiteral: text, number, duration, true, false or none.
func isLiteral(e *ast.Expr) bool {
	if e == nil {
		return false
	}
	if e.Text != nil || e.Number != nil || e.Duration != nil {
		return true
	}
	switch refName(e) {
	case "true", "false", "none":
		return true
	}
	return false
}

// isLiteralOf reports whether e is written as a literal of type t: one of
// isLiteral's, or for an enum its bare variant (`dhl`), which is a name.
func isLiteralOf(e *ast.Expr, t ir.Type) bool {
	return isLiteral(e) || t.Kind == ir.Enum && refName(e) != ""
}

// refVariant records a bare enum variant written as a literal of t (`dhl`)
// as a use of that variant, for the editor's hover, definition and
// references.
func (c *checker) refVariant(f *ast.File, e *ast.Expr, t ir.Type) {
	if t.Kind != ir.Enum || refName(e) == "" {
		return
	}
	if d := c.recordDecl(t.Name); d != nil && d.kind == kindEnum {
		c.ref(f, e.Ref.Path.Parts[0].Span(), c.fieldOfSym(d, refName(e)))
	}
}

// literalValue checks that a literal fits t and returns it as JSON. problem
// is a sentence for the caller's diagnostic when it does not fit.
func literalValue(e *ast.Expr, t ir.Type) (raw json.RawMessage, problem string) {
	if refName(e) == "none" {
		if !t.Optional {
			return nil, "`none` does not fit: the value is required"
		}
		return json.RawMessage("null"), ""
	}
	wrong := litKind(e) + " does not fit"
	switch t.Kind {
	case ir.Text, ir.Email, ir.Url, ir.Uuid, ir.Instant:
		if e.Text == nil {
			return nil, wrong
		}
		v := e.TextValue()
		if p := textProblem(v, t); p != "" {
			return nil, p
		}
		b, _ := json.Marshal(v)
		return b, ""
	case ir.Duration:
		if e.Duration == nil {
			return nil, wrong + "; write a duration such as `30s`"
		}
		// The runtime reads it with the same grammar (ir.ParseDuration).
		if ir.ValueProblem(t, *e.Duration) != "" {
			if w := wholeDuration(*e.Duration); w != "" {
				return nil, fmt.Sprintf("`%s` is not a whole number of one unit: write `%s`", *e.Duration, w)
			}
			return nil, fmt.Sprintf("`%s` is not a duration the runtime can hold: write %s", *e.Duration, ir.DurationGrammar)
		}
		b, _ := json.Marshal(*e.Duration)
		return b, ""
	case ir.Int, ir.Decimal:
		num, ok := numberLiteral(e)
		if !ok {
			return nil, wrong
		}
		if t.Kind == ir.Int && (!num.IsInt() || !num.Num().IsInt64()) {
			return nil, "a whole number is expected"
		}
		text := ratText(num)
		if p := ir.ValueProblem(t, text); p != "" {
			return nil, *e.Number + " " + p
		}
		return json.RawMessage(text), ""
	case ir.Bool:
		switch refName(e) {
		case "true", "false":
			return json.RawMessage(refName(e)), ""
		}
		return nil, wrong + "; write `true` or `false`"
	case ir.Enum:
		if v := refName(e); v != "" && ir.ValueProblem(t, v) == "" {
			b, _ := json.Marshal(v)
			return b, ""
		}
		return nil, wrong + "; write one of " + keyList(t.Variants)
	}
	return nil, wrong + "; this type cannot be written as a literal"
}

// litKind names what a literal is, for a sentence.
func litKind(e *ast.Expr) string {
	switch {
	case e.Text != nil:
		return "a text"
	case e.Number != nil:
		return "a number"
	case e.Duration != nil:
		return "a duration"
	case refName(e) != "":
		return "`" + refName(e) + "`"
	}
	return "this value"
}

// textProblem checks a text value against its kind and rules
// (ir.ValueProblem, the one place they are applied). The sentence never
// repeats the value: it may be a secret's neighbour.
func textProblem(v string, t ir.Type) string {
	if p := ir.ValueProblem(t, v); p != "" {
		return "the text " + p
	}
	return ""
}

// describe names a type for a sentence: "`WaitTimeSeconds` (Int)".
func describe(t ir.Type) string {
	s := TypeText(t)
	return "`" + s + "`"
}

// TypeText writes a type as code names it: OrderId, List<OrderLine>,
// Text?, AmazonSqs.Message (the checker's messages and the language
// server's hovers both say types this way).
func TypeText(t ir.Type) string {
	var s string
	switch t.Kind {
	case ir.List:
		s = "List<" + TypeText(*t.Elem) + ">"
	case ir.Map:
		s = "Map<Text, " + TypeText(*t.Elem) + ">"
	case ir.RecordK, ir.Enum:
		s = ShortName(t.Name)
	default:
		if t.Name != "" {
			s = ShortName(t.Name)
		} else {
			s = kindName(t.Kind)
		}
	}
	if t.Optional {
		s += "?"
	}
	return s
}

// ShortName drops a module path from an id: stock/events.OrderLine -> OrderLine;
// a package's type keeps its package (AmazonSqs.Message).
func ShortName(id string) string {
	if i := strings.LastIndex(id, "."); i >= 0 && strings.Contains(id[:i], "/") || i >= 0 && !isUpperCamel(id[:i]) {
		return id[i+1:]
	}
	return id
}

// assignable reports whether a value of type src may be given where dst is
// expected. Text-like kinds flow into Text (an enum as its variant's name),
// an Int into a Decimal, a required value into an optional place.
func assignable(src, dst ir.Type) bool {
	if src.Optional && !dst.Optional {
		return false
	}
	switch dst.Kind {
	case ir.Text:
		switch src.Kind {
		case ir.Text, ir.Email, ir.Url, ir.Uuid, ir.Enum:
			return true
		}
		return false
	case ir.Decimal:
		return (src.Kind == ir.Decimal || src.Kind == ir.Int)
	case ir.List, ir.Map:
		return src.Kind == dst.Kind && assignable(*src.Elem, *dst.Elem)
	case ir.RecordK, ir.Enum:
		return src.Kind == dst.Kind && src.Name == dst.Name
	}
	return src.Kind == dst.Kind
}

// durationUnits, largest first, with how many of the next smaller unit each
// holds.
var durationUnits = []struct {
	name string
	next int64
}{{"d", 24}, {"h", 60}, {"m", 60}, {"s", 1000}, {"ms", 0}}

// wholeDuration writes a fractional duration (`1.5s`, another language's
// habit) as a whole number of a smaller unit (`1500ms`), or "" when it is
// not one or none fits.
func wholeDuration(text string) string {
	num := strings.TrimRight(text, "abcdefghijklmnopqrstuvwxyz")
	unit := text[len(num):]
	r, ok := new(big.Rat).SetString(num)
	if !ok || r.Sign() <= 0 || !strings.Contains(num, ".") {
		return ""
	}
	start := -1
	for i, u := range durationUnits {
		if u.name == unit {
			start = i
		}
	}
	if start < 0 {
		return ""
	}
	for i := start; i < len(durationUnits); i++ {
		if r.IsInt() {
			return r.Num().String() + durationUnits[i].name
		}
		if durationUnits[i].next == 0 {
			break
		}
		r.Mul(r, new(big.Rat).SetInt64(durationUnits[i].next))
	}
	return ""
}

// wayOut says how to pass a value of type src where dst is expected, for a
// type.mismatch: the language converts no value to another type, so the way
// out is a value declared of the right type (docs/design/language.md,
// "Types and values").
func wayOut(src, dst ir.Type, place string) string {
	base := src
	base.Optional = false
	if src.Optional && !dst.Optional && assignable(base, dst) {
		return "the value may be none and " + place + " requires one: nothing fills in a missing value, so declare the field required (" +
			describe(base) + ", without `?`), or pass a field that always has one"
	}
	switch dst.Kind {
	case ir.Text:
		return "there is no conversion to text: pass a field declared " + describe(dst) + " (text takes Text, Email, Url, Uuid and enums), or `json(...)` of the event; " + describe(src) + " is not text"
	case ir.Int:
		if src.Kind == ir.Decimal {
			return "a Decimal does not narrow to Int: declare the field Int, or give the operation's input a Decimal"
		}
	case ir.Decimal:
		return "Decimal takes Int and Decimal values; there is no conversion from " + describe(src) + ": pass a field declared Int or Decimal"
	}
	return "there is no conversion from " + describe(src) + " to " + describe(dst) + ": pass a field declared " + describe(dst)
}
