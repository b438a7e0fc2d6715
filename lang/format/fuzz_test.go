package format

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/internal/repofiles"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// maxFuzzInput bounds an input: the printer is linear but for measuring
// brackets, and a longer input only slows the fuzzer down.
const maxFuzzInput = 16 << 10

// FuzzFormat: for every input that parses, formatting it again changes
// nothing, the result parses to the same tree (positions aside), and every
// comment is kept, in order.
func FuzzFormat(f *testing.F) {
	for _, b := range repofiles.Sources(f, maxFuzzInput) {
		f.Add(b)
	}
	for _, c := range layoutCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			t.Skip()
		}
		checkFormat(t, src)
	})
}

// TestFormatRepositorySources runs the fuzz body on every seed.
func TestFormatRepositorySources(t *testing.T) {
	seeds := repofiles.Sources(t, maxFuzzInput)
	if len(seeds) < 40 {
		t.Fatalf("only %d .jadpo files found in the repository", len(seeds))
	}
	for path, b := range seeds {
		t.Run(path, func(t *testing.T) { checkFormat(t, b) })
	}
}

func checkFormat(t *testing.T, src []byte) {
	t.Helper()
	tree, diags := parser.ParseFile(source.NewFile("fuzz.jadpo", src))
	out, err := Source("fuzz.jadpo", src)
	if len(diags) > 0 {
		if err == nil || out != nil {
			t.Fatalf("a file with syntax errors was formatted (err %v)", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("a file that parses was not formatted: %v\n%s", err, src)
	}
	tree2, diags2 := parser.ParseFile(source.NewFile("fuzz.jadpo", out))
	if len(diags2) > 0 {
		t.Fatalf("the formatted file does not parse: %v\nsource:\n%s\nformatted:\n%s", diags2, src, out)
	}
	if a, b := dump(tree), dump(tree2); a != b {
		t.Fatalf("the formatted file parses to another tree\nsource:\n%s\nformatted:\n%s\ntrees:\n%s\n---\n%s", src, out, a, b)
	}
	again, err := Source("fuzz.jadpo", out)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("formatting is not idempotent (err %v)\nsource:\n%q\nonce:\n%q\ntwice:\n%q", err, src, out, again)
	}
	if a, b := commentTexts(src), commentTexts(out); a != b {
		t.Fatalf("comments changed\nsource:\n%s\nformatted:\n%s", src, out)
	}
	if len(out) > 0 && (out[len(out)-1] != '\n' || bytes.HasSuffix(out, []byte("\n\n"))) {
		t.Fatalf("the file does not end in exactly one line break: %q", out)
	}
	for i, line := range strings.Split(string(out), "\n") {
		if strings.TrimRight(line, " \t\r") != line {
			t.Fatalf("line %d has trailing white space: %q", i+1, line)
		}
	}
}

// commentTexts lists the comments as the printer reads them.
func commentTexts(src []byte) string {
	var b strings.Builder
	toks, _ := lexer.Lex(string(src))
	for _, c := range newPrinter(src, toks).comments {
		b.WriteString(c.text)
		b.WriteByte('\n')
	}
	return b.String()
}

var (
	nodeType  = reflect.TypeFor[ast.Node]()
	identType = reflect.TypeFor[ast.Ident]()
)

// dump writes a tree without its positions.
func dump(f *ast.File) string {
	var b strings.Builder
	for _, d := range f.Decls {
		dumpValue(&b, reflect.ValueOf(d))
		b.WriteByte('\n')
	}
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpValue(b, v.Elem())
	case reflect.Slice:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			dumpValue(b, v.Index(i))
			b.WriteByte(' ')
		}
		b.WriteByte(']')
	case reflect.Struct:
		if v.Type() == identType {
			fmt.Fprintf(b, "%q", v.FieldByName("Name").String())
			return
		}
		b.WriteString(v.Type().Name() + "{")
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Type == nodeType {
				continue
			}
			b.WriteString(v.Type().Field(i).Name + ":")
			dumpValue(b, v.Field(i))
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}

// TestFormatRelaidSources lays every repository source out at random (its
// white space replaced, comments put between tokens) and checks the
// formatter's properties on each; the fuzzer mostly makes files that do not
// parse, and these all do (or nearly all).
func TestFormatRelaidSources(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spaces := []string{" ", "  ", "\n", "\n\n", "\t", "\n    ", " // note\n", "\n// own line\n", "\n\n// after a blank\n\n"}
	parsed := 0
	for path, src := range repofiles.Sources(t, maxFuzzInput) {
		toks, probs := lexer.Lex(string(src))
		if len(probs) > 0 {
			continue
		}
		for variant := range 20 {
			var b []byte
			for i, tok := range toks {
				if tok.EOF() {
					break
				}
				if i > 0 && variant == 0 {
					b = append(b, ' ') // all on one line: the width rule lays it out
				} else if i > 0 {
					b = append(b, spaces[rng.IntN(len(spaces))]...)
				}
				b = append(b, tok.Value...)
			}
			b = append(b, '\n')
			if _, diags := parser.ParseFile(source.NewFile("x.jadpo", b)); len(diags) == 0 {
				parsed++
			}
			t.Run(fmt.Sprintf("%s#%d", path, variant), func(t *testing.T) { checkFormat(t, b) })
		}
	}
	if parsed < 200 {
		t.Fatalf("only %d relaid sources parse", parsed)
	}
}
