package jsonout

import (
	"bytes"
	"encoding/json"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/internal/testclock"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// TestReportStartsWithTheEnvelope holds check's report (lang/diag, which cannot
// import this package) to Envelope: the same four fields, the same JSON names
// and types, and the same spelling of its status.
func TestReportStartsWithTheEnvelope(t *testing.T) {
	rep := objectOf(reflect.TypeFor[diag.Report]())
	for _, f := range objectOf(reflect.TypeFor[Envelope]()).fields {
		rf, ok := rep.field(f.name)
		if !ok || rf.typ != f.typ {
			t.Errorf("diag.Report has no field %q of type %s, as Envelope has", f.name, f.typ)
		}
	}
	passed := diag.NewReport("check", "p", 1, 1, diag.List{})
	var l diag.List
	l.Add("toolchain.usage_invalid", source.Range{}, "wrong")
	failed := diag.NewReport("check", "p", 1, 1, l)
	for _, c := range []struct {
		rep  diag.Report
		want string
	}{{passed, StatusOK}, {failed, StatusFailed}} {
		head := DiagnosticReport{c.rep}.Head()
		if head != (Envelope{SchemaVersion: SchemaVersion, Kind: "diagnostic_report", Command: "check", Status: c.want}) {
			t.Errorf("the report's envelope is %+v; want status %q, as every other kind spells it", head, c.want)
		}
	}
	if diag.StatusOK != StatusOK || diag.StatusFailed != StatusFailed {
		t.Errorf("diag spells status %q/%q, jsonout %q/%q", diag.StatusOK, diag.StatusFailed, StatusOK, StatusFailed)
	}
}

// TestWriteRefusesAStrangeDocument: a kind not in Kinds, or a kind written
// with another kind's type, is an error and prints nothing.
func TestWriteRefusesAStrangeDocument(t *testing.T) {
	for name, doc := range map[string]Document{
		"unknown kind":   PackageCatalogue{Envelope: NewEnvelope("package_catalog", "package list", StatusOK)},
		"another's type": PackageCatalogue{Envelope: NewEnvelope("package_list", "package list", StatusOK)},
		"a local type":   struct{ Envelope }{NewEnvelope("error", "x", StatusFailed)},
	} {
		var b bytes.Buffer
		if err := Write(&b, doc); err == nil || b.Len() > 0 {
			t.Errorf("%s: Write printed %q, err %v; want an error and nothing printed", name, b.String(), err)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, NewError("deliveries show", "unknown_id", "p9: <no> & such")); err != nil {
		t.Fatal(err)
	}
	want := `{
  "schemaVersion": 1,
  "kind": "error",
  "command": "deliveries show",
  "status": "failed",
  "error": {
    "code": "unknown_id",
    "message": "p9: <no> & such"
  }
}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestKindsAreConcrete: no field of any kind, nested ones included, is an
// interface (any) or a map of anything but strings: each document's shape is
// its Go type's, which docs/reference/json.md is checked against.
func TestKindsAreConcrete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds {
		if seen[k.Name] {
			t.Errorf("kind %s is listed twice", k.Name)
		}
		seen[k.Name] = true
		if !k.Type.Implements(reflect.TypeFor[Document]()) {
			t.Errorf("kind %s's type %s is not a Document", k.Name, k.Type)
		}
		for _, o := range objects(k.Type) {
			for _, f := range o.fields {
				ft := f.typ
				for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Interface || (ft.Kind() == reflect.Map && (ft.Key().Kind() != reflect.String || ft.Elem().Kind() != reflect.String)) {
					t.Errorf("kind %s: %s.%s is a %s: give it a type", k.Name, o.typ, f.name, f.typ)
				}
			}
		}
		// The zero document of each kind is a JSON object starting with the envelope.
		doc := reflect.New(k.Type).Elem().Interface()
		b, err := json.Marshal(doc)
		if err != nil || !bytes.HasPrefix(b, []byte(`{"schemaVersion":`)) {
			t.Errorf("kind %s: %s, %v: not an object starting with schemaVersion", k.Name, b, err)
		}
	}
}

// publicJSONDirs are the folders of the packages whose output is a public
// JSON document: the CLI and check's report. cmd/internal/lsp speaks the
// language server protocol, held to its own types there.
// publicJSONDirs are relative to the repository's root.
var publicJSONDirs = []string{"cmd/jadpo", "cmd/internal/install", "cmd/internal/jsonout", "lang/diag"}

// TestNoUntypedPublicJSON scans the non-test Go files of publicJSONDirs: no
// map[string]any (or map[string]interface{}) at all, so none builds a document; and outside
// this package and lang/diag (whose WriteJSON writes the report check's own
// tests compare) nothing encodes JSON: every document goes through Write.
func TestNoUntypedPublicJSON(t *testing.T) {
	files := 0
	root := reporoot.Dir(t)
	for _, rel := range publicJSONDirs {
		dir := filepath.Join(root, filepath.FromSlash(rel))
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			files++
			for _, prob := range untypedJSON(t, p, rel == "cmd/internal/jsonout" || rel == "lang/diag") {
				t.Error(prob)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 20 {
		t.Fatalf("only %d files scanned: the folders moved?", files)
	}
}

// TestNoUntypedPublicJSONFindsAPlant: the scan finds each thing it refuses.
func TestNoUntypedPublicJSONFindsAPlant(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "planted.go")
	src := `package main

import (
	enc "encoding/json"
	"os"
)

func a() { _ = enc.NewEncoder(os.Stdout).Encode(map[string]any{"x": 1}) }
func b() { b, _ := enc.Marshal(map[string]interface{}{}); os.Stdout.Write(b) }
func c() { var v map[string]any; _ = enc.Unmarshal(nil, &v) }
`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(untypedJSON(t, p, false), "\n")
	for _, want := range []string{"planted.go:8: map[string]any", "planted.go:8: json.NewEncoder", "planted.go:9: map[string]interface{}", "planted.go:9: json.Marshal", "planted.go:10: map[string]any"} {
		if !strings.Contains(got, want) {
			t.Errorf("the scan did not find %q in the plant; it said:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Unmarshal") {
		t.Errorf("decoding is not printing JSON, yet the scan refused it:\n%s", got)
	}
}

// untypedJSON lists file's untyped JSON maps and, unless encodes, its calls of
// encoding/json's encoders.
func untypedJSON(t *testing.T, file string, encodes bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	jsonName := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "encoding/json" {
			jsonName = "json"
			if imp.Name != nil {
				jsonName = imp.Name.Name
			}
		}
	}
	var out []string
	at := func(n ast.Node) string {
		pos := fset.Position(n.Pos())
		return filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.MapType:
			key, _ := x.Key.(*ast.Ident)
			if key == nil || key.Name != "string" {
				return true
			}
			switch v := x.Value.(type) {
			case *ast.Ident:
				if v.Name == "any" {
					out = append(out, at(x)+": map[string]any: a public JSON document is one of cmd/internal/jsonout's types")
				}
			case *ast.InterfaceType:
				if len(v.Methods.List) == 0 {
					out = append(out, at(x)+": map[string]interface{}: a public JSON document is one of cmd/internal/jsonout's types")
				}
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && jsonName != "" && id.Name == jsonName && !encodes {
				switch x.Sel.Name {
				case "Marshal", "MarshalIndent", "NewEncoder":
					out = append(out, at(x)+": json."+x.Sel.Name+": print a document with jsonout.Write")
				}
			}
		}
		return true
	})
	return out
}

// TestEntryKeepsItsBytes: an entry's keys in the order the map it was built
// from printed them (sorted), null for a budget not read, the fields of the
// other kind of entry left out. A script diffing two outputs sees no change.
func TestEntryKeepsItsBytes(t *testing.T) {
	at := testclock.Epoch()
	sub, attempts, budget, sum, body := "pack_order", 1, Budget(0), "ab12", "{\"id\":\"1\"}"
	delivery := Entry{Attempts: &attempts, Code: "status_400", CreatedAt: at, Event: "OrderShipped", ID: "d1", Kind: "delivery",
		MaxAttempts: &budget, MessageID: "m-1", Problems: []Problem{}, RowState: "failed", SettledAt: &at, Source: "queue q", State: "failed", Subscriber: &sub, UpdatedAt: at, What: "subscriber pack_order · OrderShipped"}
	parked := Entry{BodySHA256: &sum, Body: &body, Code: "unreadable", CreatedAt: at, Headers: map[string]string{"tenant": "acme"}, ID: "p2", Kind: "parked_message",
		Problems: []Problem{{Rule: "json"}}, RowState: "failed", Source: "queue q", State: "failed", UpdatedAt: at, What: "queue q · ?"}
	var b bytes.Buffer
	if err := Write(&b, DeliveryList{Envelope: NewEnvelope("delivery_list", "deliveries", StatusOK), Entries: []Entry{delivery, parked}, State: "all", Store: "sqlite:x"}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "schemaVersion": 1,
  "kind": "delivery_list",
  "command": "deliveries",
  "status": "ok",
  "entries": [
    {
      "attempts": 1,
      "code": "status_400",
      "createdAt": "AT",
      "error": "",
      "event": "OrderShipped",
      "id": "d1",
      "kind": "delivery",
      "maxAttempts": null,
      "messageId": "m-1",
      "problems": [],
      "rowState": "failed",
      "settledAt": "AT",
      "source": "queue q",
      "state": "failed",
      "subscriber": "pack_order",
      "updatedAt": "AT",
      "what": "subscriber pack_order · OrderShipped",
      "wireType": ""
    },
    {
      "body": "{\"id\":\"1\"}",
      "bodySha256": "ab12",
      "code": "unreadable",
      "createdAt": "AT",
      "error": "",
      "event": "",
      "headers": {
        "tenant": "acme"
      },
      "id": "p2",
      "kind": "parked_message",
      "messageId": "",
      "problems": [
        {
          "field": "",
          "rule": "json"
        }
      ],
      "rowState": "failed",
      "source": "queue q",
      "state": "failed",
      "updatedAt": "AT",
      "what": "queue q · ?",
      "wireType": ""
    }
  ],
  "state": "all",
  "store": "sqlite:x"
}
`
	want = strings.ReplaceAll(want, `"AT"`, `"`+at.Format(time.RFC3339Nano)+`"`)
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// A field out of the sorted order in one of the map-built kinds would change the bytes.
	for _, k := range Kinds {
		switch k.Name {
		case "delivery_list", "delivery_entry", "delivery_change", "package_list", "package_catalogue":
		default:
			continue
		}
		for _, o := range objects(k.Type) {
			var names []string
			for _, f := range o.fields {
				if _, env := objectOf(reflect.TypeFor[Envelope]()).field(f.name); !env || o.typ != k.Type {
					names = append(names, f.name)
				}
			}
			if !slices.IsSorted(names) {
				t.Errorf("%s: %s's fields %v are not in the sorted order its map printed", k.Name, o.typ, names)
			}
		}
	}
}
