package diag

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// table is the one file that spells the codes as text: their constants.
const table = "lang/diag/codes.go"

// rawCodes lists the string literals of a Go file that spell a diagnostic
// code: one equal to a code of the table, or shaped like one
// (group.lower_snake with an underscore, its group one the table has, which
// a file name such as "package.jadpo" is not), so that a new code spelled in
// place of a constant is caught as well as an old one.
func rawCodes(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, r := range rawCodeLits(fset, f) {
		out = append(out, fset.Position(r.Pos()).String()+": "+r.Value)
	}
	return out
}

func rawCodeLits(fset *token.FileSet, f *ast.File) []*ast.BasicLit {
	groups := map[string]bool{}
	for c := range Catalogue {
		g, _, _ := strings.Cut(string(c), ".")
		groups[g] = true
	}
	shape := regexp.MustCompile(`^([a-z]+)\.[a-z0-9]+(_[a-z0-9]+)+$`)
	var out []*ast.BasicLit
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		_, known := Catalogue[Code(s)]
		if m := shape.FindStringSubmatch(s); known || m != nil && groups[m[1]] {
			out = append(out, lit)
		}
		return true
	})
	return out
}

var fixRaw = flag.Bool("fix", false, "rewrite each code of the table spelled as a string to its constant (go test ./lang/diag -run NoRaw -fix)")

// fixRawCodes rewrites, in the file at path, each literal that is a code of
// the table to the code's constant (diag.X, or X inside package diag), adds
// the import of lang/diag when it is missing, and formats the file.
func fixRawCodes(fset *token.FileSet, f *ast.File, path string) error {
	names := constNames()
	var lits []*ast.BasicLit
	for _, lit := range rawCodeLits(fset, f) {
		if s, _ := strconv.Unquote(lit.Value); names[s] != "" {
			lits = append(lits, lit)
		}
	}
	if len(lits) == 0 {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	qual := "diag."
	if f.Name.Name == "diag" {
		qual = ""
	}
	for i := len(lits) - 1; i >= 0; i-- {
		lit := lits[i]
		s, _ := strconv.Unquote(lit.Value)
		start, end := fset.Position(lit.Pos()).Offset, fset.Position(lit.End()).Offset
		src = append(src[:start], append([]byte(qual+names[s]), src[end:]...)...)
	}
	const imp = `"github.com/jadpo/jadpo/lang/diag"`
	if qual != "" && !bytes.Contains(src, []byte(imp)) {
		text := string(src)
		if open := strings.Index(text, "\nimport (\n"); open >= 0 {
			// Beside the module's other imports, else as a group of its own.
			closing := open + strings.Index(text[open:], "\n)")
			at, line := closing, "\n\n\t"+imp
			if last := strings.LastIndex(text[open:closing], "\n\t\"github.com/jadpo/jadpo/"); last >= 0 {
				at, line = open+last+1+strings.Index(text[open+last+1:], "\n"), "\n\t"+imp
			}
			text = text[:at] + line + text[at:]
		} else {
			end := fset.Position(f.Name.End()).Offset
			text = text[:end] + "\n\nimport " + imp + "\n" + text[end:]
		}
		src = []byte(text)
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("%s after the rewrite: %v", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// constNames maps each code to its constant's name, read from the table.
func constNames() map[string]string {
	root, err := reporoot.Find(".")
	if err != nil {
		panic(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, table), nil, 0)
	if err != nil {
		panic(err)
	}
	names := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Values) != 1 {
				continue
			}
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				names[s] = vs.Names[0].Name
			}
		}
	}
	return names
}

// TestNoRawCodeOutsideTheTable holds every diagnostic code to its constant:
// no Go source of the toolchain outside lang/diag/codes.go (tests aside)
// spells a code as a string, so a code is renamed, found and documented in
// one place, and a new code cannot be emitted without a row of the table.
func TestNoRawCodeOutsideTheTable(t *testing.T) {
	root := reporoot.Dir(t)
	fset := token.NewFileSet()
	var bad []string
	inTable := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, path); filepath.ToSlash(rel) == table {
			inTable = len(rawCodes(fset, f))
			return nil
		}
		if *fixRaw {
			if err := fixRawCodes(fset, f, path); err != nil {
				return err
			}
			if f, err = parser.ParseFile(fset, path, nil, parser.SkipObjectResolution); err != nil {
				return err
			}
		}
		bad = append(bad, rawCodes(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: a diagnostic code spelled as a string; name it by its constant in %s (diag.PackageProviderInvalid for \"package.provider_invalid\"; `go test ./lang/diag -run NoRaw -fix` rewrites the table's codes), adding a row to the table for a new code", b, table)
	}
	// Every code of the table has its constant, by the name the code spells.
	names := constNames()
	for c := range Catalogue {
		if names[string(c)] == "" {
			t.Errorf("code %s has no constant in %s", c, table)
		}
	}
	// The table's constants are every code, once each: the walk read them.
	if inTable != len(Catalogue) {
		t.Errorf("%s spells %d codes, the catalogue has %d: each code is one constant and one row", table, inTable, len(Catalogue))
	}
}

// A planted violation proves the scan catches a code spelled as a string,
// known or new, wherever it is passed, and lets the constants be.
func TestRawCodeScanCatchesAPlantedCode(t *testing.T) {
	const src = `package planted

import "github.com/jadpo/jadpo/lang/diag"

func f(l *diag.List, c checker) {
	l.Add("package.provider_invalid", rng, "x")
	c.add("receiving.brand_new", rng, "a code with no row")
	_ = diag.Diagnostic{Code: ` + "`module.cycle`" + `}
	l.Add(diag.PackageProviderInvalid, rng, "the constant is fine")
	_ = "http.500"
	_ = "syntax."
	_ = "package.jadpo"
	_ = "jadpo explain receiving.invalid"
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rawCodes(fset, f), "\n")
	want := strings.Join([]string{
		`planted.go:6:8: "package.provider_invalid"`,
		`planted.go:7:8: "receiving.brand_new"`,
		"planted.go:8:28: `module.cycle`",
	}, "\n")
	if got != want {
		t.Errorf("the scan found\n%s\nwant\n%s", got, want)
	}
}
