package reading

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// pattern is one `pattern` rule: RE2, matching the whole text. A pattern
// that is a single character class repeated, as most identifier rules are
// (`[A-Z0-9-]+`, `\d*`, `[^ ]+`), is matched by a table instead of the
// regexp engine, with the same result: the class's runes, as
// regexp/syntax parses them (case folding and negation already applied),
// at least once for `+`.
type pattern struct {
	re *regexp.Regexp

	class  bool
	plus   bool      // at least one rune
	ascii  [128]bool // the class's ASCII members
	ranges []rune    // the class as lo, hi pairs, for runes past ASCII
}

// The pattern must parse on its own before it is anchored: wrapped blindly,
// an unbalanced `a)|(b` would compile as `^(?:a)|(b)$`, which matches any
// text that starts with an a.
func newPattern(src string) (*pattern, error) {
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("^(?:" + src + ")$")
	if err != nil {
		return nil, err
	}
	p := &pattern{re: re}
	parsed = parsed.Simplify()
	if (parsed.Op != syntax.OpPlus && parsed.Op != syntax.OpStar) || len(parsed.Sub) != 1 {
		return p, nil
	}
	var ranges []rune
	switch sub := parsed.Sub[0]; sub.Op {
	case syntax.OpCharClass:
		ranges = sub.Rune
	case syntax.OpAnyCharNotNL:
		ranges = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpAnyChar:
		ranges = []rune{0, utf8.MaxRune}
	default:
		return p, nil
	}
	p.class, p.plus, p.ranges = true, parsed.Op == syntax.OpPlus, ranges
	for c := range rune(utf8.RuneSelf) {
		p.ascii[c] = p.inRanges(c)
	}
	return p, nil
}

func (p *pattern) inRanges(r rune) bool {
	for i := 0; i+1 < len(p.ranges); i += 2 {
		if r < p.ranges[i] {
			return false // ranges are sorted
		}
		if r <= p.ranges[i+1] {
			return true
		}
	}
	return false
}

func (p *pattern) match(s []byte) bool {
	if !p.class {
		return p.re.Match(s)
	}
	if len(s) == 0 {
		return !p.plus
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !p.ascii[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:]) // invalid UTF-8 reads as U+FFFD, as regexp reads it
		if !p.inRanges(r) {
			return false
		}
		i += size
	}
	return true
}
