package lsp

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
)

// The server speaks LSP through package protocol's types only: no message
// is built as a map or a list of anything, and no request is read into
// one. Two checks keep it so, one on the source and one on every message
// the tests make the server send.

// TestMain fails the package when any message a test made the server send
// was not typed (see untyped), whichever test sent it.
func TestMain(m *testing.M) {
	code := m.Run()
	sentMu.Lock()
	defer sentMu.Unlock()
	if len(sentUntyped) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the server sent %d messages not built from package protocol's types:\n", len(sentUntyped))
		for _, s := range sentUntyped[:min(len(sentUntyped), 10)] {
			fmt.Fprintln(os.Stderr, "  "+s)
		}
		code = 1
	}
	os.Exit(code)
}

var (
	sentMu      sync.Mutex
	sentUntyped []string
)

// checkSentTyped is every test server's checkSent (startServer).
func checkSentTyped(msg any) {
	if err := untyped(msg); err != nil {
		sentMu.Lock()
		sentUntyped = append(sentUntyped, err.Error())
		sentMu.Unlock()
	}
}

// envelopes are the JSON-RPC messages the server writes; their fields
// id may be the raw id of the request answered.
var envelopes = map[reflect.Type]bool{
	reflect.TypeFor[lspMessage](): true, reflect.TypeFor[lspReply](): true, reflect.TypeFor[lspRequest](): true,
	reflect.TypeFor[lspNotification](): true, reflect.TypeFor[lspError](): true,
}

var protocolPkg = reflect.TypeFor[protocol.Position]().PkgPath()

// untyped says where a message holds a value that is not typed: a map or
// list of interface values, a struct other than an envelope or a protocol
// type, a map not held by a protocol type, raw JSON but an envelope's id.
func untyped(msg any) error {
	return walkTyped(reflect.ValueOf(msg), "message", false, false)
}

func walkTyped(v reflect.Value, at string, inProtocol, inEnvelope bool) error {
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	if t == reflect.TypeFor[json.RawMessage]() {
		if !inEnvelope && v.Len() > 0 {
			return fmt.Errorf("%s: raw JSON (%s) outside the JSON-RPC envelope", at, t)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return walkTyped(v.Elem(), at, inProtocol, inEnvelope)
	case reflect.Struct:
		switch {
		case envelopes[t]:
		case t.PkgPath() == protocolPkg:
		default:
			return fmt.Errorf("%s: a %s, not a type of package protocol", at, typeName(t))
		}
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			if err := walkTyped(v.Field(i), at+"."+t.Field(i).Name, t.PkgPath() == protocolPkg, envelopes[t] && t.Field(i).Name == "ID"); err != nil {
				return err
			}
		}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface || !inProtocol {
			return fmt.Errorf("%s: a %s built as a message", at, typeName(t))
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			if err := walkTyped(v.MapIndex(k), fmt.Sprintf("%s[%q]", at, k), false, false); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Interface {
			return fmt.Errorf("%s: a %s built as a message", at, typeName(t))
		}
		for i := 0; i < v.Len(); i++ {
			if err := walkTyped(v.Index(i), fmt.Sprintf("%s[%d]", at, i), false, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func typeName(t reflect.Type) string {
	if t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// The dynamic check finds what it is meant to, wherever it is nested.
func TestUntypedFindsUntypedMessages(t *testing.T) {
	type local struct {
		X int `json:"x"`
	}
	bad := map[string]any{
		"a map":                           map[string]any{"uri": "file:///a"},
		"an anonymous struct of a map":    lspReply{Result: struct{ M map[string]string }{}},
		"a list of anything":              lspReply{Result: []any{protocol.Position{}}},
		"an anonymous struct":             lspNotification{Params: struct{ URI string }{"x"}},
		"a struct of another package":     lspReply{Result: local{}},
		"a map nested in a protocol type": lspReply{Result: protocol.CompletionList{Items: []protocol.CompletionItem{{}}}, ID: json.RawMessage("1")},
		"raw JSON as params":              lspNotification{Params: json.RawMessage(`{"uri":"x"}`)},
		"a map as a result":               lspReply{Result: map[string][]protocol.TextEdit{}},
		"a map of anything in a list":     lspReply{Result: []protocol.CodeAction{{Command: &protocol.Command{}}, {}}, ID: json.RawMessage("2")},
	}
	// Two of these are typed after all: the walk must pass them.
	delete(bad, "a map nested in a protocol type")
	delete(bad, "a map of anything in a list")
	for name, msg := range bad {
		if untyped(msg) == nil {
			t.Errorf("%s: not found untyped", name)
		}
	}
	ok := []any{
		lspReply{ID: json.RawMessage("1"), Result: nil},
		lspReply{ID: json.RawMessage("1"), Result: []protocol.Location{{URI: "file:///a"}}},
		lspReply{Result: protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{"file:///a": {{NewText: "x"}}}}},
		lspNotification{Params: protocol.PublishDiagnosticsParams{Diagnostics: []protocol.Diagnostic{}}},
		lspMessage{ID: json.RawMessage("null"), Error: &lspError{Code: 1}},
	}
	for _, msg := range ok {
		if err := untyped(msg); err != nil {
			t.Errorf("%#v: %v", msg, err)
		}
	}
}

// typedRules are what the source scan reports; each is planted once in
// TestSourceScanFindsEachRule.
const (
	ruleInterfaceMap  = "a map of interface values or raw JSON"
	ruleAnyList       = "a list of interface values"
	ruleJSONStruct    = "a struct with JSON tags outside package protocol and the envelope types"
	ruleUnmarshalIntf = "a request read into an interface value"
)

// TestNoUntypedMessagesInSource scans the server's Go files (not the
// tests, and not lsptest, the tests' client) for the forms an untyped
// message is built or read with.
func TestNoUntypedMessagesInSource(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// lsptest is the tests' client; gen reads the metaModel, not messages.
		if d.IsDir() && (d.Name() == "lsptest" || d.Name() == "testdata" || d.Name() == "gen") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %v: the scan is not looking at the server", files)
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range scanUntyped(t, p, src) {
			t.Error(f)
		}
	}
}

// TestSourceScanFindsEachRule plants each untyped form, spelled the ways
// that would slip past a text search, and wants the scan to report it.
func TestSourceScanFindsEachRule(t *testing.T) {
	planted := map[string]string{
		ruleInterfaceMap + " (any)":            `func f() any { return map[string]any{"a": 1} }`,
		ruleInterfaceMap + " (interface{})":    `func f() any { return map[string]interface{}{} }`,
		ruleInterfaceMap + " (an alias)":       "type obj = map[string]any\nfunc f() any { return obj{} }",
		ruleInterfaceMap + " (a named type)":   "type obj map[string]any",
		ruleInterfaceMap + " (make)":           `func f() any { return make(map[string]any) }`,
		ruleInterfaceMap + " (raw JSON)":       `func f() any { return map[string]json.RawMessage{} }`,
		ruleAnyList:                            `func f() any { return []any{1} }`,
		ruleAnyList + " (interface{})":         `func f() any { var x []interface{}; return x }`,
		ruleJSONStruct:                         "func f() any { return struct{ X int `json:\"x\"` }{} }",
		ruleJSONStruct + " (a named one)":      "type hover struct{ Contents string `json:\"contents\"` }",
		ruleUnmarshalIntf:                      `func f(b []byte) { var p any; _ = json.Unmarshal(b, &p) }`,
		ruleUnmarshalIntf + " (interface{})":   `func f(b []byte) { var p interface{}; _ = json.Unmarshal(b, &p) }`,
		ruleUnmarshalIntf + " (a map pointer)": `func f(b []byte) { p := new(map[string]string); _ = json.Unmarshal(b, p) }`,
	}
	for name, body := range planted {
		src := "package lsp\n\n" + body + "\n"
		found := scanUntyped(t, "planted.go", []byte(src))
		rule := name
		if i := strings.Index(rule, " ("); i >= 0 {
			rule = rule[:i]
		}
		hit := false
		for _, f := range found {
			hit = hit || strings.Contains(f, rule)
		}
		if !hit {
			t.Errorf("%s: planted\n%s\nnot found (found %q)", name, body, found)
		}
	}
	if found := scanUntyped(t, "clean.go", []byte("package lsp\n\nfunc f() any { return map[string][]int{} }\n")); len(found) > 0 {
		t.Errorf("a map of typed values is typed: %q", found)
	}
}

// scanUntyped reports the untyped forms in one file.
func scanUntyped(t *testing.T, path string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// protocol.go declares the protocol's types; TestGenerated keeps it
	// the generator's output.
	generated := filepath.ToSlash(path) == "protocol/protocol.go"
	var found []string
	report := func(n ast.Node, rule string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), rule))
	}
	envelope := map[string]bool{"lspMessage": true, "lspReply": true, "lspRequest": true, "lspNotification": true, "lspError": true}
	funcName := ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			funcName = n.Name.Name
		case *ast.MapType:
			if isInterfaceOrRaw(n.Value) {
				report(n, ruleInterfaceMap)
			}
		case *ast.ArrayType:
			if isInterface(n.Elt) {
				report(n, ruleAnyList)
			}
		case *ast.TypeSpec:
			if st, ok := n.Type.(*ast.StructType); ok && hasJSONTags(st) && !generated && !envelope[n.Name.Name] {
				report(n, ruleJSONStruct)
			}
			if st, ok := n.Type.(*ast.StructType); ok && hasJSONTags(st) {
				ast.Inspect(st, func(m ast.Node) bool {
					if inner, ok := m.(*ast.StructType); ok && inner != st && hasJSONTags(inner) {
						report(inner, ruleJSONStruct)
					}
					return true
				})
				return false
			}
		case *ast.StructType:
			if hasJSONTags(n) {
				report(n, ruleJSONStruct) // an anonymous one (named ones stop above)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Unmarshal" && len(n.Args) == 2 {
				if unmarshalsIntoInterface(n.Args[1]) && !readsAsIs[funcName] {
					report(n, ruleUnmarshalIntf)
				}
			}
		}
		return true
	})
	return found
}

// readsAsIs are the functions that read JSON of the project's, not a
// message: hover.go's jsonLiteral (a setting's default).
var readsAsIs = map[string]bool{"jsonLiteral": true}

// unmarshalsIntoInterface: the target is &x with x declared as an
// interface or a map, or a new(map...).
func unmarshalsIntoInterface(target ast.Expr) bool {
	if call, ok := target.(*ast.CallExpr); ok {
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "new" && len(call.Args) == 1 {
			_, isMap := call.Args[0].(*ast.MapType)
			return isMap || isInterface(call.Args[0])
		}
	}
	var id *ast.Ident
	switch x := target.(type) {
	case *ast.UnaryExpr:
		id, _ = x.X.(*ast.Ident)
	case *ast.Ident:
		id = x
	}
	if id == nil || id.Obj == nil {
		return false
	}
	var typ ast.Expr
	switch d := id.Obj.Decl.(type) {
	case *ast.ValueSpec:
		typ = d.Type
	case *ast.AssignStmt:
		for i, l := range d.Lhs {
			if l.(*ast.Ident).Name == id.Name && i < len(d.Rhs) {
				if call, ok := d.Rhs[i].(*ast.CallExpr); ok && len(call.Args) == 1 {
					if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "new" {
						typ = call.Args[0]
					}
				}
			}
		}
	}
	if typ == nil {
		return false
	}
	if _, isMap := typ.(*ast.MapType); isMap {
		return true
	}
	return isInterface(typ)
}

// isInterface: any or interface{...}. (A named interface of another
// package is left to the check of what is sent, which sees every value's
// kind.)
func isInterface(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "any"
	case *ast.InterfaceType:
		return true
	}
	return false
}

func isInterfaceOrRaw(e ast.Expr) bool {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if pkg, _ := sel.X.(*ast.Ident); pkg != nil && pkg.Name == "json" {
			return true // map[string]json.RawMessage is a map of anything too
		}
	}
	return isInterface(e)
}

func hasJSONTags(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `json:"`) {
			return true
		}
	}
	return false
}
