package lexer

import (
	"fmt"
	"strings"
	"testing"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/source"
)

var typeNames = map[plexer.TokenType]string{
	plexer.EOF: "EOF", Ident: "Ident", String: "String", Number: "Number", Duration: "Duration", Punct: "Punct",
}

// kinds renders tokens as "Kind:value" words, EOF included.
func kinds(toks []plexer.Token) string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = typeNames[t.Type] + ":" + t.Value
	}
	return strings.Join(out, " ")
}

func lexClean(t *testing.T, src string) []plexer.Token {
	t.Helper()
	toks, probs := Lex(src)
	if len(probs) > 0 {
		t.Fatalf("Lex(%q): unexpected problems %+v", src, probs)
	}
	return toks
}

func TestTokenKinds(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", "EOF:"},
		{"abc", "Ident:abc EOF:"},
		{"_a1 B_2 OrderShipped v2012_11_05", "Ident:_a1 Ident:B_2 Ident:OrderShipped Ident:v2012_11_05 EOF:"},
		{"type public event", "Ident:type Ident:public Ident:event EOF:"},
		{`"text" ""`, `String:"text" String:"" EOF:`},
		{`"a \" b \\ \n \r \t"`, `String:"a \" b \\ \n \r \t" EOF:`},
		{`"ünïcode ✓"`, `String:"ünïcode ✓" EOF:`},
		{"42 -7 3.25 0 -0.5", "Number:42 Number:-7 Number:3.25 Number:0 Number:-0.5 EOF:"},
		{"{ } [ ] ( ) < > : , . = ? /", "Punct:{ Punct:} Punct:[ Punct:] Punct:( Punct:) Punct:< Punct:> Punct:: Punct:, Punct:. Punct:= Punct:? Punct:/ EOF:"},
		{"a:{b:c}", "Ident:a Punct:: Punct:{ Ident:b Punct:: Ident:c Punct:} EOF:"},
		{"List<Map<Text, T>>?", "Ident:List Punct:< Ident:Map Punct:< Ident:Text Punct:, Ident:T Punct:> Punct:> Punct:? EOF:"},
		{"stock/events", "Ident:stock Punct:/ Ident:events EOF:"},
		{"AmazonSqs.v2012_11_05", "Ident:AmazonSqs Punct:. Ident:v2012_11_05 EOF:"},
		{"a // comment { \" \n b", "Ident:a Ident:b EOF:"},
		{"// only a comment", "EOF:"},
		{"a\r\n\tb", "Ident:a Ident:b EOF:"},
		{"x:1.", "Ident:x Punct:: Number:1 Punct:. EOF:"},
		{"a-1", "Ident:a Number:-1 EOF:"},
	}
	for _, tt := range tests {
		if got := kinds(lexClean(t, tt.src)); got != tt.want {
			t.Errorf("Lex(%q)\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestDurations(t *testing.T) {
	tests := []struct{ src, want string }{
		{"250ms", "Duration:250ms EOF:"},
		{"30s", "Duration:30s EOF:"},
		{"10m", "Duration:10m EOF:"},
		{"1h", "Duration:1h EOF:"},
		{"30d", "Duration:30d EOF:"},
		{"1.5h", "Duration:1.5h EOF:"},
		{"-5s", "Duration:-5s EOF:"},
		{"first_delay: 10s max_delay: 1h", "Ident:first_delay Punct:: Duration:10s Ident:max_delay Punct:: Duration:1h EOF:"},
		{"10s}", "Duration:10s Punct:} EOF:"},
		// Not units: the number stands and the letters are the next token.
		{"5mss", "Number:5 Ident:mss EOF:"},
		{"2H", "Number:2 Ident:H EOF:"},
		{"3sec", "Number:3 Ident:sec EOF:"},
	}
	for _, tt := range tests {
		if got := kinds(lexClean(t, tt.src)); got != tt.want {
			t.Errorf("Lex(%q)\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestNegativeNumbers(t *testing.T) {
	toks := lexClean(t, "min: -7 max: -3.25 d: -10m")
	if got, want := kinds(toks), "Ident:min Punct:: Number:-7 Ident:max Punct:: Number:-3.25 Ident:d Punct:: Duration:-10m EOF:"; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	// A minus not followed by a digit is no number.
	toks, probs := Lex("- 7")
	if got := kinds(toks); got != "Number:7 EOF:" {
		t.Errorf("Lex(\"- 7\") = %s", got)
	}
	if len(probs) != 1 || probs[0].Code != "syntax.stray_character" || probs[0].Span != (source.Span{Start: 0, End: 1}) {
		t.Errorf("Lex(\"- 7\") problems = %+v, want one stray_character at [0,1)", probs)
	}
}

// 30x is a number followed at once by an identifier: the lexer keeps the
// number and lets the parser name `x`.
func TestNumberWithUnknownUnit(t *testing.T) {
	toks := lexClean(t, "min: 30x")
	if got, want := kinds(toks), "Ident:min Punct:: Number:30 Ident:x EOF:"; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	x := toks[3]
	if x.Pos.Offset != 7 {
		t.Errorf("x at offset %d, want 7", x.Pos.Offset)
	}
}

func TestTokenOffsets(t *testing.T) {
	src := "type Sku = Text { pattern: \"[A-Z]+\" } // c\nenum E { a }"
	toks := lexClean(t, src)
	for _, tok := range toks {
		if tok.EOF() {
			if tok.Pos.Offset != len(src) {
				t.Errorf("EOF at %d, want %d", tok.Pos.Offset, len(src))
			}
			continue
		}
		if got := src[tok.Pos.Offset : tok.Pos.Offset+len(tok.Value)]; got != tok.Value {
			t.Errorf("token %q at %d covers %q", tok.Value, tok.Pos.Offset, got)
		}
	}
}

func TestProblems(t *testing.T) {
	tests := []struct {
		src        string
		code       string
		start, end int
		detail     string
		tokens     string // the tokens still produced
	}{
		{`a: "open`, "syntax.unterminated_string", 3, 8, `"open`, `Ident:a Punct:: String:"open EOF:`},
		{"a: \"open\nb", "syntax.unterminated_string", 3, 8, `"open`, `Ident:a Punct:: String:"open Ident:b EOF:`},
		{"a: \"open\r\nb", "syntax.unterminated_string", 3, 8, `"open`, `Ident:a Punct:: String:"open Ident:b EOF:`},
		{"\"", "syntax.unterminated_string", 0, 1, `"`, `String:" EOF:`},
		// A backslash at the end of a line escapes nothing: one problem, not two.
		{"\"open\\\nb", "syntax.unterminated_string", 0, 6, "\"open\\", "String:\"open\\ Ident:b EOF:"},
		{"\"open\\\r\nb", "syntax.unterminated_string", 0, 6, "\"open\\", "String:\"open\\ Ident:b EOF:"},
		{"\"ends in a backslash\\", "syntax.unterminated_string", 0, 21, "\"ends in a backslash\\", "String:\"ends in a backslash\\ EOF:"},
		{`p: "a\qb"`, "syntax.invalid_escape", 5, 7, `\q`, `Ident:p Punct:: String:"a\qb" EOF:`},
		{`"\x41"`, "syntax.invalid_escape", 1, 3, `\x`, `String:"\x41" EOF:`},
		{`"\é"`, "syntax.invalid_escape", 1, 4, `\é`, `String:"\é" EOF:`},
		{"a @ b", "syntax.stray_character", 2, 3, "@", "Ident:a Ident:b EOF:"},
		{"a;", "syntax.stray_character", 1, 2, ";", "Ident:a EOF:"},
		{"é", "syntax.stray_character", 0, 2, "é", "EOF:"},
		{"a ✓ b", "syntax.stray_character", 2, 5, "✓", "Ident:a Ident:b EOF:"},
		{"a # b", "syntax.stray_character", 2, 3, "#", "Ident:a EOF:"}, // a `#` comment runs to the end of its line
		{"a # b\nc", "syntax.stray_character", 2, 3, "#", "Ident:a Ident:c EOF:"},
		{"a \xff b", "syntax.invalid_encoding", 2, 3, "\xff", "Ident:a Ident:b EOF:"},
		{"\xc3", "syntax.invalid_encoding", 0, 1, "\xc3", "EOF:"},
	}
	for _, tt := range tests {
		toks, probs := Lex(tt.src)
		if len(probs) != 1 {
			t.Errorf("Lex(%q): %d problems %+v, want 1", tt.src, len(probs), probs)
			continue
		}
		p := probs[0]
		if p.Code != tt.code || p.Span != (source.Span{Start: tt.start, End: tt.end}) || p.Detail != tt.detail {
			t.Errorf("Lex(%q) = %s [%d,%d) %q, want %s [%d,%d) %q",
				tt.src, p.Code, p.Span.Start, p.Span.End, p.Detail, tt.code, tt.start, tt.end, tt.detail)
		}
		if got := kinds(toks); got != tt.tokens {
			t.Errorf("Lex(%q) tokens\n got %s\nwant %s", tt.src, got, tt.tokens)
		}
	}
}

// A text may hold several mistakes; each is reported and lexing goes on.
func TestSeveralProblems(t *testing.T) {
	src := "a: \"x\\qy\\z\" @\nb: \"open\nc: 1"
	toks, probs := Lex(src)
	var got []string
	for _, p := range probs {
		got = append(got, fmt.Sprintf("%s[%d,%d)", p.Code, p.Span.Start, p.Span.End))
	}
	want := []string{
		"syntax.invalid_escape[5,7)", "syntax.invalid_escape[8,10)",
		"syntax.stray_character[12,13)", "syntax.unterminated_string[17,22)",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems\n got %v\nwant %v", got, want)
	}
	if k := kinds(toks); k != `Ident:a Punct:: String:"x\qy\z" Ident:b Punct:: String:"open Ident:c Punct:: Number:1 EOF:` {
		t.Errorf("tokens %s", k)
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ lit, want string }{
		{`""`, ""},
		{`"abc"`, "abc"},
		{`"a\"b"`, `a"b`},
		{`"a\\b"`, `a\b`},
		{`"line\nnext"`, "line\nnext"},
		{`"\r\t"`, "\r\t"},
		{`"ünï ✓"`, "ünï ✓"},
		{`"\q"`, "q"},         // an unknown escape keeps its letter
		{`"open`, "open"},     // a text left open runs to the end
		{`"open\`, `open\`},   // a lone backslash at the end stays
		{`"a" trailing`, "a"}, // stops at the closing quote
		{`bare`, "bare"},      // no quote: taken as it is
		{`"\\\"`, `\"`},
	}
	for _, tt := range tests {
		if got := Unquote(tt.lit); got != tt.want {
			t.Errorf("Unquote(%s) = %q, want %q", tt.lit, got, tt.want)
		}
	}
}

func TestSymbolsNameEveryType(t *testing.T) {
	seen := map[plexer.TokenType]bool{}
	for _, tt := range Symbols {
		seen[tt] = true
	}
	for tt := range typeNames {
		if !seen[tt] {
			t.Errorf("token type %d missing from Symbols", tt)
		}
	}
}

func BenchmarkLex(b *testing.B) {
	src := strings.Repeat("public event OrderShipped {\n    order_id: OrderId { max_length: 64 }\n    note: Text? // c\n    retry: { first_delay: 10s price: -3.25 }\n}\n", 2000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Lex(src)
	}
}

// Issue 11, point 12: a file saved with a UTF-8 byte order mark was refused
// (`syntax.stray_character` at 1:1). A leading one is skipped; one further
// in is still a stray character.
func TestLexSkipsLeadingBOM(t *testing.T) {
	toks := lexClean(t, "\uFEFFstore primary {}")
	if got := kinds(toks); got != "Ident:store Ident:primary Punct:{ Punct:} EOF:" {
		t.Fatalf("tokens %s", got)
	}
	if toks[0].Pos.Offset != 3 {
		t.Fatalf("the first token is at byte %d, want 3 (offsets count the mark, as the file does)", toks[0].Pos.Offset)
	}
	_, probs := Lex("store \uFEFFprimary {}")
	if len(probs) != 1 || probs[0].Code != "syntax.stray_character" {
		t.Fatalf("a mark after the start: %+v", probs)
	}
}

// Text in single quotes is one problem spanning the quotes, not two stray
// characters; a lone quote stays one character's problem.
func TestSingleQuotedTextIsOneProblem(t *testing.T) {
	for src, want := range map[string][]Problem{
		`id_at: 'id'`:        {{Code: "syntax.stray_character", Span: source.Span{Start: 7, End: 11}, Detail: "'id'"}},
		`note: 'it`:          {{Code: "syntax.stray_character", Span: source.Span{Start: 6, End: 7}, Detail: "'"}},
		`a: "it's" // don't`: nil,
	} {
		_, probs := Lex(src)
		if fmt.Sprint(probs) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", src, probs, want)
		}
	}
}

// A declaration's own comment is the run of comment lines right above it;
// a blank line or code ends it, and a `//` inside text on a line above is
// not one.
func TestCommentAbove(t *testing.T) {
	src := "// far\n\n// The config.\n//   indented\nconfig C {\n    x: Text { binding: \"X\" } // trailing\n    url: Text { default: \"//a\" }\n    y: Text\n}\n"
	for _, c := range []struct{ at, want string }{
		{"config C", "The config.\n  indented"},
		{"x: Text", ""},
		{"y: Text", ""},
		{"url:", ""},
	} {
		if got := CommentAbove([]byte(src), strings.Index(src, c.at)); got != c.want {
			t.Errorf("above %q: %q, want %q", c.at, got, c.want)
		}
	}
	if got := CommentAbove([]byte("// a\n//b\nx"), 10); got != "a\nb" {
		t.Errorf("%q", got)
	}
}
