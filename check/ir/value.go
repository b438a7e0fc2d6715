package ir

import (
	"fmt"
	"math/big"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ValueProblem says why text, a single value written as text (a config
// value from the environment, a default's literal), does not fit t: its
// kind (a whole number, a number, a flag, a URL, an email address, a UUID, an
// instant, a duration, an enum's variant) and every rule of t (min, max,
// min_length, max_length, each pattern, format). It is "" when the value
// fits. The one place these rules are applied to a single value: the checker
// applies it to defaults and literals, the runtime to config values at start
// (docs/reference/language.md, "config"); the Worker's codegen/workers/config.mjs
// applies the same rules, held equal by testdata/config/table.json.
//
// The sentence follows a subject ("config field x (environment variable X)
// ", "the text ") and never repeats the value, which may be a secret; it
// says what would fit.
func ValueProblem(t Type, text string) string {
	switch t.Kind {
	case Int:
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return "is not a whole number: write digits, such as 10, from -9223372036854775808 to 9223372036854775807"
		}
		return boundsProblem(t.Rules, text)
	case Decimal:
		if !decimalRE.MatchString(text) {
			return "is not a number: write digits with an optional fraction, such as 12.50"
		}
		return boundsProblem(t.Rules, text)
	case Bool:
		// One spelling everywhere: the language's, the checker's, the
		// Worker's (whose config reads "true" as true and nothing else).
		if text != "true" && text != "false" {
			return "is not true or false"
		}
		return ""
	case Duration:
		if _, err := ParseDuration(text); err != nil {
			return "is not a duration: write " + DurationGrammar
		}
		return ""
	case Enum:
		for _, v := range t.Variants {
			if text == v {
				return ""
			}
		}
		return "is not one of " + strings.Join(t.Variants, ", ")
	case Url:
		u, err := url.Parse(text)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return "is not an absolute URL (scheme and host, such as https://example.com)"
		}
	case Email:
		if !ValidEmail(text) {
			return "is not an email address (a bare address such as ann@example.com, without control or bidirectional characters)"
		}
	case Uuid:
		if !uuidRE.MatchString(text) {
			return "is not a UUID (8-4-4-4-12 hexadecimal digits)"
		}
	case Instant:
		if _, err := time.Parse(time.RFC3339Nano, text); err != nil {
			return "is not an RFC 3339 instant (such as 2026-01-31T09:30:00Z)"
		}
	}
	return textProblem(t.Rules, text)
}

var (
	decimalRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func boundsProblem(r *Rules, text string) string {
	if r == nil || r.Min == nil && r.Max == nil {
		return ""
	}
	v, ok := new(big.Rat).SetString(text)
	if !ok {
		return "is not a number"
	}
	if r.Min != nil {
		if m, ok := new(big.Rat).SetString(*r.Min); ok && v.Cmp(m) < 0 {
			return fmt.Sprintf("is below the minimum %s", *r.Min)
		}
	}
	if r.Max != nil {
		if m, ok := new(big.Rat).SetString(*r.Max); ok && v.Cmp(m) > 0 {
			return fmt.Sprintf("is above the maximum %s", *r.Max)
		}
	}
	return ""
}

func textProblem(r *Rules, text string) string {
	if r == nil {
		return ""
	}
	n := utf8.RuneCountInString(text)
	if r.MinLength != nil && n < *r.MinLength {
		return fmt.Sprintf("is shorter than the minimum length %d", *r.MinLength)
	}
	if r.MaxLength != nil && n > *r.MaxLength {
		return fmt.Sprintf("is longer than the maximum length %d", *r.MaxLength)
	}
	for _, p := range r.Patterns {
		re, err := wholePattern(p)
		if err != nil {
			return fmt.Sprintf("cannot be checked: the pattern `%s` does not compile", p)
		}
		if !re.MatchString(text) {
			return fmt.Sprintf("does not match the pattern `%s`", p)
		}
	}
	if r.Format == "email" && !ValidEmail(text) {
		return "is not an email address (a bare address such as ann@example.com, without control or bidirectional characters)"
	}
	return ""
}

// patterns caches each pattern compiled to match a whole text: the checker
// applies one to every literal of its type. Patterns come from source and
// plans, so there are few.
var patterns sync.Map // string -> *regexp.Regexp or error

func wholePattern(p string) (*regexp.Regexp, error) {
	if v, ok := patterns.Load(p); ok {
		if re, ok := v.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, v.(error)
	}
	re, err := regexp.Compile("^(?:" + p + ")$")
	if err != nil {
		patterns.Store(p, err)
		return nil, err
	}
	patterns.Store(p, re)
	return re, nil
}

// ValidEmail accepts a bare address as net/mail reads it into itself (no
// display name, angle brackets or comment) that holds no character a
// terminal would act on instead of showing: no C0 or C1 control, DEL,
// bidirectional control (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069) or line or paragraph separator, the set lang/termtext
// escapes. `\u202emoc.live@ann` shows as `ann@evil.com`; it is no address.
func ValidEmail(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if EmailRefuses(r) {
			return false
		}
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// EmailRefuses reports whether r may not stand in an email address: the
// characters lang/termtext escapes.
func EmailRefuses(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}
