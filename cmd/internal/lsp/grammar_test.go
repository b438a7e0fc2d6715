package lsp

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// grammarSources are the .jadpo sources the TextMate grammar
// (editors/vscode/syntaxes) is tested against: every file under
// examples/, testdata/ and the catalogue's packages, and each ```jadpo
// block of the language reference, so a construct the reference shows
// is tried too.
func grammarSources(t *testing.T) map[string][]byte {
	t.Helper()
	root := reporoot.Dir(t)
	out := map[string][]byte{}
	for _, dir := range []string{"examples", "testdata", filepath.Join("providers", "catalog", "packages")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jadpo") {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ref, err := os.ReadFile(filepath.Join(root, "docs", "reference", "language.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```jadpo\n(.*?)```").FindAllSubmatch(ref, -1)
	if len(blocks) < 10 {
		t.Fatalf("only %d jadpo blocks in the language reference", len(blocks))
	}
	for i, b := range blocks {
		out[fmt.Sprintf("docs/reference/language.md#%02d", i)] = b[1]
	}
	// Words the sources above do not happen to hold: keywords as names, a
	// declaration over lines, text left open, escapes, durations.
	for i, src := range grammarEdgeCases {
		out[fmt.Sprintf("edge#%02d", i)] = []byte(src)
	}
	return out
}

var grammarEdgeCases = []string{
	"value Keywords {\n    type: Text\n    event: Text\n    queue: Int?\n    on: Bool\n    config: Text\n}\n",
	"enum Mode { fast slow }\ntype Limit = Int { min: -5 max: 10 }\nvalue A { a: Text } value B { b: List<Map<Text, A>>? }\n",
	"public\nevent Split {\n    at: Instant\n}\n",
	"store main { retention: { succeeded: 250ms outbox: 30d } }\nsubscriber s {\n    on Split(x) { }\n    retry: { max_attempts: 3 first_delay: 1.5s max_delay: 1h }\n}\n",
	"config C {\n    a: Text { binding: \"A\\n\\t\\\"q\\\"\" default: \"x\\qy\" }  // an escape text may not use\n    b: Text { binding: \"B\n}\n",
	"queue q {\n    id_at: 'id'\n    events: { Split }\n}\n// trailing comment\r\n",
	"provide receiving { driver: sql_inbox }\nprovider { protocol: Protocol.json_http credential: CredentialScheme.bearer }\n",
}

// grammarToken is one word of a source as the Go side classifies it, for
// the grammar test to compare with the TextMate scopes.
type grammarToken struct {
	Line int    `json:"line"` // 0-based
	Char int    `json:"char"` // UTF-16 units
	Len  int    `json:"len"`
	Text string `json:"text"`
	// Kind: keyword, string, number, comment, builtinType (a scalar base
	// or List/Map), declaration (a declared type, enum, value, event,
	// config, store, connection, queue, subscriber, resource or
	// operation's name), or name (any other word).
	Kind string `json:"kind"`
}

func grammarTokens(path string, src []byte) []grammarToken {
	f := source.NewFile(path, src)
	classified := map[int]semTok{}
	for _, t := range fileTokens(f, nil, nil) {
		classified[t.start] = t
	}
	var out []grammarToken
	add := func(start, end int, kind string) {
		n := 0
		for _, r := range string(src[start:end]) {
			n += utf16Len(r)
		}
		out = append(out, grammarToken{Line: f.Position(start).Line - 1, Char: f.UTF16Column(start), Len: n, Text: string(src[start:end]), Kind: kind})
	}
	toks, _ := lexer.Lex(string(src))
	prevEnd := f.BOMLen()
	for _, t := range toks {
		for _, c := range appendComments(nil, string(src), prevEnd, t.Pos.Offset) {
			add(c.start, c.end, "comment")
		}
		if t.Value == "" {
			break
		}
		start, end := t.Pos.Offset, t.Pos.Offset+len(t.Value)
		prevEnd = end
		switch t.Type {
		case lexer.String:
			add(start, end, "string")
		case lexer.Number, lexer.Duration:
			add(start, end, "number")
		case lexer.Ident:
			kind := "name"
			if c, ok := classified[start]; ok {
				switch {
				case c.typ == ttKeyword:
					kind = "keyword"
				case c.typ == ttType && c.mods&modDefaultLibrary != 0:
					kind = "builtinType"
				case c.mods&modDeclaration != 0 && c.typ != ttProperty && c.typ != ttParameter && c.typ != ttEnumMember:
					kind = "declaration"
				}
			}
			add(start, end, kind)
		}
	}
	return out
}

// Issue 29: the words of every source, classified by the lexer and the
// parser, for editors/vscode/test/grammar.test.js; with
// JADPO_GRAMMAR_TOKENS=<file> they are written there as JSON.
func TestGrammarTokens(t *testing.T) {
	srcs := grammarSources(t)
	type fileTokens struct {
		Path   string         `json:"path"`
		Text   string         `json:"text"`
		Tokens []grammarToken `json:"tokens"`
	}
	var all []fileTokens
	kinds := map[string]int{}
	for _, p := range slices.Sorted(maps.Keys(srcs)) {
		toks := grammarTokens(p, srcs[p])
		// Every declaration the parser takes starts with a keyword (after
		// `public`), and so does each handler and step: a declaration kind
		// the classifier does not know fails here.
		starts := map[int]bool{}
		tree, _ := parser.ParseFile(source.NewFile(p, srcs[p]))
		for _, d := range tree.Decls {
			starts[d.Span().Start] = true
			if d.Subscriber != nil {
				for _, it := range d.Subscriber.Items {
					if h := it.Handler; h != nil {
						starts[h.Span().Start] = true
						for _, st := range h.Steps {
							starts[st.Span().Start] = true
						}
					}
				}
			}
		}
		f := source.NewFile(p, srcs[p])
		for _, tk := range toks {
			if off := offsetAt(f, tk.Line, tk.Char); starts[off] && tk.Kind != "keyword" {
				t.Errorf("%s:%d:%d: %q starts a declaration, a handler or a step but is a %s", p, tk.Line+1, tk.Char+1, tk.Text, tk.Kind)
			}
		}
		for _, tk := range toks {
			kinds[tk.Kind]++
		}
		all = append(all, fileTokens{p, string(srcs[p]), toks})
	}
	for _, k := range []string{"keyword", "string", "number", "comment", "builtinType", "declaration", "name"} {
		if kinds[k] == 0 {
			t.Errorf("no %s token in any source: %v", k, kinds)
		}
	}
	if out := os.Getenv("JADPO_GRAMMAR_TOKENS"); out != "" {
		b, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
