package parser

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/internal/repofiles"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/projectgen"
	"github.com/jadpo/jadpo/lang/source"
)

// maxFuzzInput bounds an input: the parser is linear, so a longer one only
// slows the fuzzer down (and a hang shows on short inputs as well).
const maxFuzzInput = 64 << 10

// inlineSeeds cover each declaration kind of the language reference, and a
// few broken shapes for the recovery paths.
var inlineSeeds = []string{
	"use stock/events { OrderShipped, OrderCancelled }\nuse common { Money, }\n",
	"type OrderId = Text { min_length: 1 max_length: 64 }\ntype Quantity = Int { min: 1 max: 1000 }\n" +
		"type Sku = Text { pattern: \"[A-Z0-9-]+\" }\ntype ShippedAt = Instant\n",
	"public enum Carrier { dhl ups royal_mail }\n",
	"value OrderLine {\n    sku: Sku\n    quantity: Quantity\n}\n",
	"public event OrderShipped {\n    order_id: OrderId\n    lines: List<OrderLine>\n    note: Text? { max_length: 500 }\n" +
		"    attrs: Map<Text, Int>\n    md5: Text { wire_name: \"MD5OfBody\" }\n}\n",
	"config ShopConfig {\n    key: Text { binding: \"AWS_ACCESS_KEY_ID\" }\n    secret: Text { binding: \"S\" secret: true }\n" +
		"    host: Url { binding: \"SQS_HOST\" default: \"https://sqs.eu-west-1.amazonaws.com\" }\n}\n",
	"store primary {\n    database: config.database_url      // optional\n}\n",
	"connection warehouse_queue {\n    package: AmazonSqs.v2012_11_05\n    host: config.sqs_host\n" +
		"    credential: { key_id: config.a secret: config.b }\n    settings: { queue_url: config.q wait_time_seconds: 0 }\n}\n",
	"queue warehouse_queue {\n    id_at: \"id\"\n    type_at: \"type\"\n    events: {\n        OrderShipped { wire_name: \"order_shipped\" }\n" +
		"        Billing.InvoicePaid { wire_name: \"invoice_paid\" }\n    }\n}\nqueue r { id_at: \"meta.id\" events: { ReturnRequested } }\n",
	"subscriber pack_order {\n    on OrderShipped(shipment) {\n        attempt packing.jobs.create_job(order_id: shipment.order_id, " +
		"tags: [\"a\", \"b\"], label: { a: 1 } payload: json(shipment))\n    }\n    retry: { max_attempts: 8 first_delay: 10s max_delay: 1h }\n}\n",
	"package AmazonSqs.v2012_11_05\n\nprovider {\n    protocol: Protocol.aws_json\n    credential: CredentialScheme.aws_sigv4\n" +
		"    aws: { service: \"sqs\" target: \"AmazonSQS\" }\n    error_code: \"__type\"\n}\n\nsettings {\n    queue_url: Url\n" +
		"    wait_time_seconds: WaitTimeSeconds { default: 0 }\n}\n",
	"resource messages {\n    operation receive_message {\n        input: ReceiveMessageInput\n        output: ReceiveMessageOutput\n" +
		"        retry_safe: true\n    }\n    operation delete_message { input: DeleteMessageInput decode: \"x\" }\n}\n",
	"provide receiving {\n    receive: {\n        call: messages.receive_message\n        input: { queue_url: settings.queue_url max: 10 }\n" +
		"        messages: response.messages\n        body: item.body\n        handle: item.receipt_handle\n    }\n" +
		"    acknowledge: { call: messages.delete_message input: { receipt_handle: message.handle } }\n}\n",
	// Broken shapes.
	"type A = Int { min 1 }\nenum B { a, b }\nvalue C { x Int }\nevent D { y: Text }\n",
	"value C {\n  x: Int\n\nevent D { y: Text }\n",
	"store s { a: \"open\n  b: \"\\q\" c: 30x d: -7 e: 1.5h f: [1, 2,] }\n",
	"subscriber s { on A(x { } }\n} ) ] type\npublic\n",
	"connection c { host: = }\n\xff",
	// Other languages' forms and misspelt keywords (the parser's bridges).
	"public subscriber s {\n    on X(e) { attempt a.b.c() }\n}\n",
	"event E {\n    a: List[Text]\n    b: Text | null\n    c: Map[Text, List[Int]]\n}\n",
	"value V { a: Text }\npubic event X { a: Text }\ntye Y = Int\nevnt Z { }\npublic evnt W { }\n",
	"Use stock/events { A, B }\nsubscriber s { retry: { first_delay: 1.5s } attmpt x }\n",
}

func FuzzParse(f *testing.F) {
	for _, b := range repofiles.Sources(f, maxFuzzInput, "testdata", "examples") {
		f.Add(b)
	}
	for _, s := range inlineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) > maxFuzzInput {
			t.Skip()
		}
		checkInvariants(t, content)
	})
}

// checkInvariants is the fuzz body: no panic (the fuzzer catches those),
// every diagnostic in the file with start <= end and a catalogued code, the
// same result twice, and the fast path agreeing with participle.
func checkInvariants(t *testing.T, content []byte) {
	t.Helper()
	file := source.NewFile("fuzz.jadpo", content)
	tree, diags := ParseFile(file)
	if tree == nil || tree.Source != file {
		t.Fatal("no tree, or a tree of another file")
	}
	for _, d := range diags {
		if _, ok := diag.Catalogue[d.Code]; !ok {
			t.Fatalf("code %q not in the catalogue", d.Code)
		}
		if d.Subject.File != file {
			t.Fatalf("%s: diagnostic of another file", d.Code)
		}
		s := d.Subject.Span
		if s.Start < 0 || s.Start > s.End || s.End > len(content) {
			t.Fatalf("%s: range [%d,%d) outside the file of %d bytes", d.Code, s.Start, s.End, len(content))
		}
		if d.Summary == "" {
			t.Fatalf("%s: no summary", d.Code)
		}
	}
	for _, decl := range tree.Decls {
		s := decl.Span()
		if s.Start < 0 || s.Start > s.End || s.End > len(content) {
			t.Fatalf("declaration range [%d,%d) outside the file", s.Start, s.End)
		}
	}
	tree2, diags2 := ParseFile(source.NewFile("fuzz.jadpo", content))
	if len(tree.Decls) != len(tree2.Decls) || !reflect.DeepEqual(tree.Decls, tree2.Decls) {
		t.Fatal("two parses of the same input give different trees")
	}
	if render(diags) != render(diags2) {
		t.Fatalf("two parses give different diagnostics:\n%s\n---\n%s", render(diags), render(diags2))
	}
	checkFastPath(t, content)
	checkCleanPath(t, content)
}

func render(l diag.List) string {
	var b strings.Builder
	for _, d := range l {
		fmt.Fprintf(&b, "%s [%d,%d) %s | %s\n", d.Code, d.Subject.Span.Start, d.Subject.Span.End, d.Summary, d.Label)
	}
	return b.String()
}

// checkFastPath: wherever the hand-written fast path accepts a declaration,
// participle accepts it too and builds the same tree, tokens and all.
func checkFastPath(t *testing.T, content []byte) {
	t.Helper()
	toks, _ := lexer.Lex(string(content))
	for _, chunk := range splitDecls(content, toks) {
		fast, ok := fastDecl(chunk, nil)
		if !ok {
			continue
		}
		slow, err := slowDecl(chunk)
		src := string(content[chunk[0].Pos.Offset:endOf(chunk)])
		if err != nil {
			t.Fatalf("the fast path accepts what participle rejects (%v):\n%s", err, src)
		}
		if diff := firstDiff(reflect.ValueOf(fast), reflect.ValueOf(slow), "Decl"); diff != "" {
			t.Fatalf("the fast path builds another tree than participle: %s\nin:\n%s", diff, src)
		}
	}
}

// firstDiff names the first place two values differ ("" when equal),
// telling a nil slice from an empty one as reflect.DeepEqual does.
func firstDiff(a, b reflect.Value, path string) string {
	if a.IsValid() != b.IsValid() {
		return path + ": one is invalid"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s vs %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: fast nil=%v, participle nil=%v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: fast nil=%v len %d, participle nil=%v len %d", path, a.IsNil(), a.Len(), b.IsNil(), b.Len())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
		}
		return ""
	}
}

// TestSeeds runs the fuzz body over every seed, so `go test` checks them
// without -fuzz (the regression inputs under testdata/fuzz run too).
func TestSeeds(t *testing.T) {
	for path, b := range repofiles.Sources(t, maxFuzzInput, "testdata", "examples") {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) { checkInvariants(t, b) })
	}
	for i, s := range inlineSeeds {
		t.Run(fmt.Sprint("inline", i), func(t *testing.T) { checkInvariants(t, []byte(s)) })
	}
}

// TestFastPathTakesRealProjects: the fast path, not participle, parses every
// declaration of a realistic project, and agrees with participle on each.
func TestFastPathTakesRealProjects(t *testing.T) {
	fsys := projectgen.Generate(20000)
	inputs := map[string][]byte{}
	for _, name := range projectgen.Files(fsys) {
		inputs[name] = fsys[name].Data
	}
	for path, b := range repofiles.Sources(t, maxFuzzInput, "testdata", "examples") {
		if strings.HasPrefix(filepath.ToSlash(path), "examples/") {
			inputs[path] = b
		}
	}
	for i, s := range inlineSeeds[:13] {
		inputs[fmt.Sprint("inline", i)] = []byte(s)
	}
	decls := 0
	for name, content := range inputs {
		toks, probs := lexer.Lex(string(content))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		for _, chunk := range splitDecls(content, toks) {
			if _, ok := fastDecl(chunk, nil); !ok {
				t.Errorf("%s: the fast path gives up on:\n%s", name, content[chunk[0].Pos.Offset:endOf(chunk)])
			}
			decls++
		}
		checkFastPath(t, content)
	}
	t.Logf("%d files, %d declarations", len(inputs), decls)
}

// BenchmarkFastPathVsParticiple parses the declarations of a generated
// 50,000-line project (lexing and splitting done beforehand) with the fast
// path and with participle alone: what the fast path saves.
func BenchmarkFastPathVsParticiple(b *testing.B) {
	fsys := projectgen.Generate(50000)
	var chunks [][]plexer.Token
	size := 0
	for _, name := range projectgen.Files(fsys) {
		content := fsys[name].Data
		size += len(content)
		toks, _ := lexer.Lex(string(content))
		chunks = append(chunks, splitDecls(content, toks)...)
	}
	for _, bb := range []struct {
		name  string
		parse func([]plexer.Token) (*ast.Decl, error)
	}{
		{"fast", func(c []plexer.Token) (*ast.Decl, error) {
			if d, ok := fastDecl(c, nil); ok {
				return d, nil
			}
			return nil, fmt.Errorf("the fast path gave up")
		}},
		{"participle", slowDecl},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range chunks {
					if _, err := bb.parse(c); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// checkCleanPath: the clean-file path cuts the file where splitDecls cuts,
// and where it takes a file it builds the tree the full way builds, which
// reports nothing on it.
func checkCleanPath(t *testing.T, content []byte) {
	t.Helper()
	if !utf8.Valid(content) {
		return
	}
	toks, _ := lexer.Lex(string(content))
	var want []string
	for _, chunk := range splitDecls(content, toks) {
		want = append(want, fmt.Sprintf("[%d,%d)", chunk[0].Pos.Offset, endOf(chunk)))
	}
	compact, _ := lexer.LexTokens(string(content), nil)
	var got []string
	splitTokens(string(content), compact, func(chunk []lexer.Tok) bool {
		last := chunk[len(chunk)-1]
		got = append(got, fmt.Sprintf("[%d,%d)", chunk[0].Off, int(last.Off)+len(last.Value)))
		return true
	})
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the clean path cuts %v, splitDecls %v", got, want)
	}
	file := source.NewFile("fuzz.jadpo", content)
	clean := parseClean(file, false)
	checkLeanPath(t, file, clean)
	if clean == nil {
		return
	}
	cleanPath = false
	full, diags := ParseFile(file)
	cleanPath = true
	if len(diags) > 0 {
		t.Fatalf("the clean path takes a file the full way reports: %s", render(diags))
	}
	if diff := firstDiff(reflect.ValueOf(clean), reflect.ValueOf(full), "File"); diff != "" {
		t.Fatalf("the clean path builds another tree than the full way: %s", diff)
	}
}

// TestCleanPathTakesRealProjects: every file of a generated project and of
// the examples goes the clean way, with the full way's tree.
func TestCleanPathTakesRealProjects(t *testing.T) {
	fsys := projectgen.Generate(5000)
	for _, name := range projectgen.Files(fsys) {
		if parseClean(source.NewFile(name, fsys[name].Data), false) == nil {
			t.Errorf("%s: the clean path gives up", name)
		}
		checkCleanPath(t, fsys[name].Data)
	}
}

// TestDeclKeywordSwitch: the clean path's keyword test is declKeywords.
func TestDeclKeywordSwitch(t *testing.T) {
	for k := range declKeywords {
		if !isDeclKeyword(k) {
			t.Errorf("isDeclKeyword(%q) is false", k)
		}
	}
	for _, w := range []string{"", "Use", "types", "on", "attempt", "operation", "publicx"} {
		if isDeclKeyword(w) != declKeywords[w] {
			t.Errorf("isDeclKeyword(%q) differs", w)
		}
	}
	n := 0
	for _, w := range declKeywordList {
		if isDeclKeyword(w) {
			n++
		}
	}
	if n != len(declKeywords) {
		t.Errorf("isDeclKeyword takes %d keywords, declKeywords holds %d", n, len(declKeywords))
	}
}

// checkLeanPath: ParseFileLean takes the files the clean path takes (and
// reports what ParseFile reports on the others), keeps no record's fields,
// and a FieldReader reads back each record's fields as the full tree holds
// them, one reader recycled record after record.
func checkLeanPath(t *testing.T, file *source.File, clean *ast.File) {
	t.Helper()
	lean, leanDiags := ParseFileLean(file)
	full, fullDiags := ParseFile(file)
	if render(leanDiags) != render(fullDiags) {
		t.Fatalf("ParseFileLean reports %s, ParseFile %s", render(leanDiags), render(fullDiags))
	}
	if lean.FieldsDeferred != (clean != nil) {
		t.Fatalf("FieldsDeferred is %v on a file the clean path takes: %v", lean.FieldsDeferred, clean != nil)
	}
	var reader FieldReader
	var records []*ast.Record
	for _, d := range lean.Decls {
		if d.Named != nil && d.Named.Record != nil {
			r := d.Named.Record
			if lean.FieldsDeferred && r.Fields != nil {
				t.Fatalf("record %s keeps its fields in a lean tree", r.Name.Name)
			}
			records = append(records, r)
		}
	}
	// Read each record's fields through the one reader, the last again
	// after the first, and keep a copy of each: the reader's nodes are
	// its own until its next call.
	order := make([]int, 0, len(records)+1)
	for i := range records {
		order = append(order, i)
	}
	if len(records) > 1 {
		order = append(order, 0)
	}
	got := make([][]*ast.Field, len(records))
	for _, i := range order {
		got[i] = deepCopyFields(reader.Fields(lean, records[i]))
	}
	for i, r := range records {
		r.Fields = got[i]
	}
	lean.FieldsDeferred = false
	if diff := firstDiff(reflect.ValueOf(lean), reflect.ValueOf(full), "File"); diff != "" {
		t.Fatalf("the lean tree with its fields read back differs from the full tree: %s", diff)
	}
}

// deepCopyFields copies fields out of a FieldReader's slab.
func deepCopyFields(fields []*ast.Field) []*ast.Field {
	if fields == nil {
		return nil
	}
	out := make([]*ast.Field, len(fields))
	for i, f := range fields {
		v := reflect.New(reflect.TypeOf(*f))
		deepCopy(v.Elem(), reflect.ValueOf(f).Elem())
		out[i] = v.Interface().(*ast.Field)
	}
	return out
}

func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		deepCopy(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Struct:
		for i := range src.NumField() {
			deepCopy(dst.Field(i), src.Field(i))
		}
	default:
		dst.Set(src)
	}
}
