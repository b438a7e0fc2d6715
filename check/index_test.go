package check_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/providers"
)

// The index resolves each kind of name the language server is asked
// about to its declaration, across use lines, modules and packages.
func TestIndexResolvesNames(t *testing.T) {
	p := project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse"))
	res := check.CheckIndexed(p)
	if res.Diags.HasErrors() {
		t.Fatal(res.Diags)
	}
	ix := res.Index
	app := string(p.App.Source.Content)
	receiving := string(p.Packages["AmazonSqs.v2012_11_05"].Provides["receiving"].Source.Content)
	for _, c := range []struct {
		file, text  string
		nth, delta  int
		kind        check.SymbolKind
		name, where string
	}{
		{"app.jadpo", app, strings.Index(app, "use stock/events { OrderShipped"), len("use stock/events { "), check.SymEvent, "OrderShipped", "stock/events.jadpo"},
		{"app.jadpo", app, strings.Index(app, "use stock/events"), len("use "), check.SymModule, "stock/events", "stock/events.jadpo"},
		{"app.jadpo", app, strings.Index(app, "OrderShipped { wire_name"), 0, check.SymEvent, "OrderShipped", "stock/events.jadpo"},
		{"app.jadpo", app, strings.Index(app, "Packing.ParcelLost"), 0, check.SymPackage, "Packing.v1", "packages/Packing.v1/package.jadpo"},
		{"app.jadpo", app, strings.Index(app, "Packing.ParcelLost"), len("Packing."), check.SymEvent, "ParcelLost", "packages/Packing.v1/package.jadpo"},
		{"app.jadpo", app, strings.Index(app, "on OrderShipped"), len("on "), check.SymEvent, "OrderShipped", "stock/events.jadpo"},
		{"app.jadpo", app, strings.Index(app, "host: config.sqs_host"), len("host: "), check.SymConfig, "ShopConfig", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "host: config.sqs_host"), len("host: config."), check.SymConfigField, "sqs_host", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "package: AmazonSqs"), len("package: "), check.SymPackage, "AmazonSqs.v2012_11_05", "packages/AmazonSqs.v2012_11_05/package.jadpo"},
		{"app.jadpo", app, strings.Index(app, "queue_url: config.warehouse"), 0, check.SymSetting, "queue_url", "packages/AmazonSqs.v2012_11_05/package.jadpo"},
		{"app.jadpo", app, strings.Index(app, "queue warehouse_queue"), len("queue "), check.SymConnection, "warehouse_queue", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "packing.jobs.create_job"), 0, check.SymConnection, "packing", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "packing.jobs.create_job"), len("packing."), check.SymResource, "jobs", "packages/Packing.v1/resources/jobs.jadpo"},
		{"app.jadpo", app, strings.Index(app, "packing.jobs.create_job"), len("packing.jobs."), check.SymOperation, "create_job", "packages/Packing.v1/resources/jobs.jadpo"},
		{"app.jadpo", app, strings.Index(app, "order_id: shipment"), 0, check.SymField, "order_id", "packages/Packing.v1/resources/jobs.jadpo"},
		{"app.jadpo", app, strings.Index(app, "shipment.order_id"), 0, check.SymBinding, "shipment", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "json(shipment)"), len("json("), check.SymBinding, "shipment", "app.jadpo"},
		{"app.jadpo", app, strings.Index(app, "shipment.order_id"), len("shipment."), check.SymField, "order_id", "stock/events.jadpo"},
		{"app.jadpo", app, strings.Index(app, "reference: shipment"), 0, check.SymField, "reference", "packages/Packing.v1/resources/jobs.jadpo"},
		{"packages/AmazonSqs.v2012_11_05/provides/receiving.jadpo", receiving, strings.Index(receiving, "settings.queue_url"), len("settings."), check.SymSetting, "queue_url", "packages/AmazonSqs.v2012_11_05/package.jadpo"},
		{"packages/AmazonSqs.v2012_11_05/provides/receiving.jadpo", receiving, strings.Index(receiving, "messages.receive_message"), len("messages."), check.SymOperation, "receive_message", "packages/AmazonSqs.v2012_11_05/resources/messages.jadpo"},
	} {
		sym, _ := ix.At(c.file, c.nth+c.delta+1)
		if sym == nil || sym.Kind != c.kind || sym.Name != c.name || sym.Ident.File == nil || sym.Ident.File.Path != c.where {
			got := "nothing"
			if sym != nil {
				got = fmt.Sprintf("%s %s in %v", sym.Kind, sym.Name, sym.Ident.File)
			}
			t.Errorf("%s at %q: %s, want %s %s in %s", c.file, c.text[c.nth:c.nth+c.delta+4], got, c.kind, c.name, c.where)
		}
	}
	// What a hover shows comes with the symbols: resolved types, bindings, records' fields.
	cf, _ := ix.At("app.jadpo", strings.Index(app, "config.aws_secret_access_key")+8)
	if cf == nil || cf.Config == nil || cf.Config.Binding != "AWS_SECRET_ACCESS_KEY" || !cf.Config.Secret {
		t.Errorf("secret config field: %+v", cf)
	}
	ev, _ := ix.At("app.jadpo", strings.Index(app, "on OrderShipped")+4)
	if ev == nil || len(ev.Fields) != 5 || ev.Fields[0].Name != "order_id" || ev.Fields[0].Type.Rules == nil || *ev.Fields[0].Type.Rules.MaxLength != 64 {
		t.Errorf("event's fields: %+v", ev)
	}
	// Every use of OrderShipped: the use line, the queue's events, the handler.
	if refs := ix.RefsTo(ev); len(refs) != 3 {
		t.Errorf("uses of OrderShipped: %v", refs)
	}
}

// parseCache keeps each file's tree while its content stays the same, as
// the language server's does.
type parseCache map[string]struct {
	content []byte
	file    *ast.File
	diags   diag.List
}

func (pc parseCache) parse(f *source.File) (*ast.File, diag.List) {
	if e, ok := pc[f.Path]; ok && bytes.Equal(e.content, f.Content) {
		return e.file, e.diags
	}
	af, d := parser.ParseFile(f)
	pc[f.Path] = struct {
		content []byte
		file    *ast.File
		diags   diag.List
	}{f.Content, af, d}
	return af, d
}

// fingerprint is a check's diagnostics and index in words, to compare two.
func fingerprint(res check.Result) string {
	var lines []string
	for _, d := range res.Diags {
		lines = append(lines, fmt.Sprintf("diag %s %v %s", d.Code, d.Subject.Span, d.Summary))
	}
	for _, s := range res.Index.Symbols {
		line := fmt.Sprintf("sym %s %s %v %v", s.Kind, s.Name, s.Ident.Span, s.Ident.File != nil && s.Ident.File.Path != "")
		if s.Ident.File != nil {
			line += " " + s.Ident.File.Path
		}
		if s.Type != nil {
			b, _ := json.Marshal(s.Type)
			line += " " + string(b)
		}
		lines = append(lines, line+fmt.Sprint(len(s.Children), len(s.Fields)))
	}
	for path := range res.Index.Modules {
		for _, r := range res.Index.RefsIn(path) {
			lines = append(lines, fmt.Sprintf("ref %s %v -> %s %s", path, r.At.Span, r.Target.Kind, r.Target.Name))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A Session's check after each edit is a fresh check's, though it takes
// the modules the edit did not reach as they were.
func TestSessionMatchesAFreshCheck(t *testing.T) {
	base := projectgen.Generate(3000)
	var module string
	for _, name := range projectgen.Files(base) {
		if name != "app.jadpo" && strings.HasSuffix(name, ".jadpo") && !strings.HasPrefix(name, "packages/") && !strings.HasPrefix(name, "shared/") {
			module = name
			break
		}
	}
	orig := string(base[module].Data)
	edits := []string{
		orig,
		strings.Replace(orig, "min_length: 1", "min_length: 2", 1), // a rule changes: its users are checked again
		strings.Replace(orig, "public type", "type", 1),            // a name stops being public: its importers fail
		strings.Replace(orig, "\n", "\n// a comment\n", 1),         // nothing that matters
		strings.Replace(orig, "enum", "enum Broken {\nenum", 1),    // a syntax error
		orig,
	}
	s := check.NewSession()
	cache := parseCache{}
	reusedOnce := false
	for i, text := range edits {
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		fsys[module] = &fstest.MapFile{Data: []byte(text)}
		got := s.Check(project.LoadFSParsing(fsys, cache.parse))
		want := check.CheckIndexed(project.LoadFS(fsys))
		if g, w := fingerprint(got), fingerprint(want); g != w {
			t.Fatalf("edit %d: the session's check differs from a fresh one:\n%s", i, firstDifference(g, w))
		}
		if i > 0 && got.Index.Reused > 0 {
			reusedOnce = true
		}
	}
	if !reusedOnce {
		t.Fatal("the session never reused a module")
	}
}

func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("session: %s\nfresh:   %s", al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}

// MemberKeys are the keys the checker takes: a connection given each is
// not told it has no such member.
func TestMemberKeysAreTheCheckersOwn(t *testing.T) {
	for _, block := range []string{"connection", "queue", "queue event", "store", "store retention", "subscriber retry", "config field", "provider", "operation", "provide receiving"} {
		if len(check.MemberKeys(block)) == 0 {
			t.Errorf("%s: no keys", block)
		}
	}
	builtin := check.Drivers(providers.Contracts())
	if got := fmt.Sprint(builtin.CredentialKeys(ir.CredentialAWSSigV4)); got != "[key_id secret session_token]" {
		t.Errorf("aws_sigv4 credential: %s", got)
	}
	// A driver's own scheme: its members, as the checker takes them.
	broker := append(builtin, ir.DriverContract{Name: "test_broker", Schemes: []ir.DriverScheme{{Name: "broker_login",
		Members: []ir.CredentialMember{{Name: "user", Required: true}, {Name: "password", Secret: true, Required: true}}}}})
	if got := fmt.Sprint(broker.CredentialKeys("broker_login")); got != "[user password]" {
		t.Errorf("a driver's broker_login credential: %s", got)
	}
	if got := builtin.CredentialKeys("broker_login"); got != nil {
		t.Errorf("broker_login without its driver: %v", got)
	}
	var members []string
	for _, k := range check.MemberKeys("store") {
		members = append(members, k+": x")
	}
	src := "store primary { " + strings.Join(members, " ") + " nope: 1 }\n"
	res := check.Check(project.LoadFS(fstest.MapFS{"app.jadpo": {Data: []byte(src)}}))
	for _, d := range res.Diags {
		if strings.Contains(d.Summary, "has no member") && !strings.Contains(d.Summary, "`nope`") {
			t.Errorf("a key MemberKeys lists is refused: %s", d.Summary)
		}
	}
	if !strings.Contains(res.Diags.Error(), "has no member `nope`") {
		t.Errorf("an unknown key is not reported: %v", res.Diags)
	}
}
