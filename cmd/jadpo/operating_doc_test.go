package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Issue 30, item 7: every log message the runtime and the commands write, and every metric
// the runtime serves, is in docs/guide/operating.md's tables (a `msg` row, a metric row), so
// an operator can look each one up. It reads the non-test Go source: a call of Info, Warn,
// Error or Debug on a logger (a receiver named log or logger, or ending in .log) with a
// string literal message, and each prometheus Name: "jadpo_..." .
func TestOperatingDocumentsEveryLogLineAndMetric(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "guide", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	cell := regexp.MustCompile("^\\| `([^`]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		if m := cell.FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
			// A metric row may name several: `a`, `b`; with labels: `a{x}`.
			for _, n := range regexp.MustCompile("`([a-z_]+)(\\{[^}]*\\})?`").FindAllStringSubmatch(strings.SplitN(line, "|", 3)[1], -1) {
				rows[n[1]] = true
			}
		}
	}
	logs, metrics := map[string]string{}, map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{"runtime", "providers", "cmd/jadpo"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "internal" || n == "runtimetest" || n == "storetest" || n == "pgtest" || n == "testdata" {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			ast.Inspect(f, func(n ast.Node) bool {
				// One name per thing: a delivery is d4 and a parked message p7 in every log
				// line, as in every command (a bare number was logged as parked_id=7).
				// Only where a log line's attributes are written: a logger's call,
				// or a []any of attributes built for one (not a page's name, say).
				var list []ast.Expr
				switch x := n.(type) {
				case *ast.CallExpr:
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
						switch sel.Sel.Name {
						case "Info", "Warn", "Error", "Debug", "Log", "With":
							list = x.Args
						}
					}
				case *ast.CompositeLit:
					if at, ok := x.Type.(*ast.ArrayType); ok {
						if id, ok := at.Elt.(*ast.Ident); ok && id.Name == "any" {
							list = x.Elts
						}
					}
				}
				for i := 0; i+1 < len(list); i++ {
					lit, ok := list[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || (lit.Value != `"delivery"` && lit.Value != `"parked_id"`) {
						continue
					}
					if call, ok := list[i+1].(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "String" {
							continue
						}
					}
					t.Errorf("%s:%d logs %s without its id's name (d4, p7): give store.DeliveryID(n).String() or store.ParkedID(n).String()",
						rel, fset.Position(lit.Pos()).Line, lit.Value)
				}
				switch x := n.(type) {
				case *ast.CallExpr:
					sel, ok := x.Fun.(*ast.SelectorExpr)
					if !ok || len(x.Args) == 0 {
						return true
					}
					switch sel.Sel.Name {
					case "Info", "Warn", "Error", "Debug":
					default:
						return true
					}
					if !isLogger(sel.X) {
						return true
					}
					if lit, ok := x.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						msg, _ := strconv.Unquote(lit.Value)
						logs[msg] = rel + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
					}
				case *ast.KeyValueExpr:
					if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Name" {
						if lit, ok := x.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if name, _ := strconv.Unquote(lit.Value); strings.HasPrefix(name, "jadpo_") {
								metrics[name] = rel + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
							}
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(logs) < 10 || len(metrics) < 10 {
		t.Fatalf("found only %d log messages and %d metrics: the scan is broken", len(logs), len(metrics))
	}
	for msg, at := range logs {
		if !rows[msg] {
			t.Errorf("the log message %q (%s) is in no table of docs/guide/operating.md", msg, at)
		}
	}
	for name, at := range metrics {
		if !rows[name] {
			t.Errorf("the metric %s (%s) is in no table of docs/guide/operating.md", name, at)
		}
	}
}

// isLogger says whether x is a logger: log, logger, or something.log.
func isLogger(x ast.Expr) bool {
	switch v := x.(type) {
	case *ast.Ident:
		return v.Name == "log" || v.Name == "logger"
	case *ast.SelectorExpr:
		return v.Sel.Name == "log" || v.Sel.Name == "logger"
	}
	return false
}
