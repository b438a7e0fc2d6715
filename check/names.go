package check

import (
	"fmt"
	"github.com/jadpo/jadpo/lang/ast"
	"strings"

	"github.com/jadpo/jadpo/lang/diag"
)

// isUpperCamel: types, enums, values, events, config declarations, packages.
func isUpperCamel(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isLowerSnake: fields, settings, connections, queues, subscribers,
// resources, operations, enum variants.
func isLowerSnake(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// toLowerSnake suggests a lower_snake spelling: OrderId -> order_id.
func toLowerSnake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 && s[i-1] != '_' && !(s[i-1] >= 'A' && s[i-1] <= 'Z') {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// suggest returns the candidate nearest to name, if near enough to be a
// likely typo, else "".
func suggest(name string, candidates []string) string { return diag.Nearest(name, candidates) }

// few names the candidates of an unknown name for a help text: all of them
// when they are few (`operations `a`, `b` and `c“), else how many there
// are and the first few. Every rule that reports an unknown name suggests
// the nearest candidate with suggest and lists them with few.
func few(what string, names []string) string {
	switch len(names) {
	case 0:
		return "no " + what + "s"
	case 1:
		return "one " + what + ", `" + names[0] + "`"
	}
	if len(names) <= fewMax {
		return what + "s " + keyList(names)
	}
	return fmt.Sprintf("%d %ss, among them %s", len(names), what, keyList(names[:fewMax]))
}

// fewMax is how many candidates a help lists in full.
const fewMax = 8

// nearHead is a dotted reference with its first part, a misspelling of one
// of heads, spelt right (`settngs.queue_url` -> `settings.queue_url`), or "".
func nearHead(e *ast.Expr, heads ...string) string {
	if e == nil || e.Ref == nil || e.Ref.Call != nil || len(e.Ref.Path.Parts) < 2 {
		return ""
	}
	head := e.Ref.Path.Parts[0].Name
	near := suggest(head, heads)
	if near == "" {
		return ""
	}
	rest := make([]string, 0, len(e.Ref.Path.Parts))
	rest = append(rest, near)
	for _, p := range e.Ref.Path.Parts[1:] {
		rest = append(rest, p.Name)
	}
	return strings.Join(rest, ".")
}
