// Package lexer turns a .jadpo file into tokens for the parser.
//
// It is hand-written rather than participle's regexp lexer because it is the
// hot loop of every check and because each lexical mistake (text left open,
// an escape text may not use, a character that cannot appear) needs its own
// diagnostic at its exact byte range. It never stops at a mistake: it reports
// it, steps over it and goes on, so one run shows every problem.
package lexer

import (
	"strings"
	"unicode/utf8"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// Token types, as participle sees them.
const (
	Ident plexer.TokenType = iota + 1
	String
	Number
	Duration
	Punct
)

// Symbols names the token types for participle's grammar tags.
var Symbols = map[string]plexer.TokenType{
	"EOF":      plexer.EOF,
	"Ident":    Ident,
	"String":   String,
	"Number":   Number,
	"Duration": Duration,
	"Punct":    Punct,
}

// Problem is a lexical mistake at its byte range.
type Problem struct {
	Code   diag.Code // syntax.unterminated_string, syntax.invalid_escape, ...
	Span   source.Span
	Detail string // the offending text, for the summary
}

// Tok is the parser's token: its text (a slice of the source), its byte
// offset and its type, 24 bytes where participle's lexer.Token, which also
// carries a file name and a line and column, takes 64. Positions come from
// the offset and the file's line table (source.File) when a diagnostic
// needs them.
type Tok struct {
	Value string
	Off   int32
	Type  uint8 // Ident, String, Number, Duration, Punct; 0 is EOF
}

// Lex splits src into tokens, ending with an EOF token. Token values are
// slices of src (no copies); a token's byte range is
// [Pos.Offset, Pos.Offset+len(Value)).
func Lex(src string) ([]plexer.Token, []Problem) {
	toks, probs := LexTokens(src, nil)
	out := make([]plexer.Token, len(toks))
	for i, t := range toks {
		out[i] = plexer.Token{Type: plexer.TokenType(t.Type), Value: t.Value, Pos: plexer.Position{Offset: int(t.Off)}}
	}
	out[len(out)-1].Type = plexer.EOF
	return out, probs
}

// LexTokens is Lex into compact tokens, appended to buf[:0] (a caller that
// lexes many files passes the slice back to reuse it); the final EOF token
// has type 0. The source must be under 2 GB (source.MaxFileSize is far less).
func LexTokens(src string, buf []Tok) ([]Tok, []Problem) {
	if need := len(src)/7 + 16; cap(buf) < need {
		buf = make([]Tok, 0, need)
	}
	l := lexState{src: src, toks: buf[:0]}
	if strings.HasPrefix(src, source.BOM) {
		l.i = len(source.BOM) // a leading byte order mark is not text
	}
	l.run()
	l.toks = append(l.toks, Tok{Off: int32(len(src))})
	return l.toks, l.probs
}

type lexState struct {
	src   string
	i     int
	toks  []Tok
	probs []Problem
}

func (l *lexState) emit(t plexer.TokenType, start int) {
	l.toks = append(l.toks, Tok{Type: uint8(t), Value: l.src[start:l.i], Off: int32(start)})
}

func (l *lexState) problem(code diag.Code, start, end int) {
	l.probs = append(l.probs, Problem{Code: code, Span: source.Span{Start: start, End: end}, Detail: l.src[start:end]})
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// identByte[c] is isLetter(c) || isDigit(c).
var identByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isLetter(byte(c)) || isDigit(byte(c))
	}
	return t
}()

func (l *lexState) run() {
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		start := l.i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.i++
		case c == '/' && l.i+1 < len(src) && src[l.i+1] == '/':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case isLetter(c):
			j := l.i + 1 // a local index and a table: identifiers are most of a file
			for j < len(src) && identByte[src[j]] {
				j++
			}
			l.i = j
			l.emit(Ident, start)
		case isDigit(c) || c == '-' && l.i+1 < len(src) && isDigit(src[l.i+1]):
			l.number(start)
		case c == '"':
			l.text(start)
		case c == '\'':
			// 'id': text in single quotes is one mistake, not two stray
			// characters; the problem spans it, closing quote included.
			end := l.i + 1
			for end < len(src) && src[end] != '\'' && src[end] != '\n' && src[end] != '"' {
				end++
			}
			if end < len(src) && src[end] == '\'' {
				l.i = end + 1
			} else {
				l.i++
			}
			l.problem(diag.SyntaxStrayCharacter, start, l.i)
		case c == '#':
			// `# note`: a comment as other languages write it is one
			// mistake, the `#`; the rest of the line is read as a comment.
			l.i++
			l.problem(diag.SyntaxStrayCharacter, start, l.i)
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '{' || c == '}' || c == '[' || c == ']' || c == '(' || c == ')' || c == '<' ||
			c == '>' || c == ':' || c == ',' || c == '.' || c == '=' || c == '?' || c == '/':
			l.i++
			l.emit(Punct, start)
		default:
			r, size := utf8.DecodeRuneInString(src[l.i:])
			l.i += size
			if r == utf8.RuneError && size <= 1 {
				l.problem(diag.SyntaxInvalidEncoding, start, l.i)
			} else {
				l.problem(diag.SyntaxStrayCharacter, start, l.i)
			}
		}
	}
}

// number reads 42, -7, 3.25, and a duration: a number followed at once by
// ms, s, m, h or d.
func (l *lexState) number(start int) {
	src := l.src
	if src[l.i] == '-' {
		l.i++
	}
	for l.i < len(src) && isDigit(src[l.i]) {
		l.i++
	}
	if l.i+1 < len(src) && src[l.i] == '.' && isDigit(src[l.i+1]) {
		l.i++
		for l.i < len(src) && isDigit(src[l.i]) {
			l.i++
		}
	}
	unit := l.i
	for l.i < len(src) && isLetter(src[l.i]) {
		l.i++
	}
	switch src[unit:l.i] {
	case "":
		l.emit(Number, start)
	case "ms", "s", "m", "h", "d":
		l.emit(Duration, start)
	default:
		// 30x: the number stands, the letters become the next token, so the
		// parser names `x` as the unexpected token.
		l.i = unit
		l.emit(Number, start)
	}
}

// text reads a one-line text literal. An escape other than \" \\ \n \r \t is
// reported and kept; a text left open ends at the line's end.
func (l *lexState) text(start int) {
	src := l.src
	l.i++
	for l.i < len(src) {
		switch c := src[l.i]; c {
		case '"':
			l.i++
			l.emit(String, start)
			return
		case '\\':
			if l.i+1 >= len(src) || src[l.i+1] == '\n' || src[l.i+1] == '\r' {
				l.i++
				continue
			}
			switch src[l.i+1] {
			case '"', '\\', 'n', 'r', 't':
				l.i += 2
			default:
				_, size := utf8.DecodeRuneInString(src[l.i+1:])
				l.problem(diag.SyntaxInvalidEscape, l.i, l.i+1+size)
				l.i += 1 + size
			}
		case '\n', '\r':
			l.problem(diag.SyntaxUnterminatedString, start, l.i)
			l.emit(String, start)
			return
		default:
			l.i++
		}
	}
	l.problem(diag.SyntaxUnterminatedString, start, l.i)
	l.emit(String, start)
}

// Unquote returns a text literal's value. The lexer has already reported any
// mistake in it, so Unquote never fails: an unknown escape keeps its letter,
// and a text left open runs to the token's end.
func Unquote(lit string) string {
	if len(lit) > 0 && lit[0] == '"' {
		lit = lit[1:]
	}
	out := make([]byte, 0, len(lit))
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '"':
			return string(out)
		case c == '\\' && i+1 < len(lit):
			i++
			switch lit[i] {
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			default:
				out = append(out, lit[i])
			}
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
