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

// fingerprint is a check's diagnostics and index in words, to compare two:
// each reference with where its target is declared and what it resolved
// to, so that a reference to a declaration as an earlier check saw it
// (moved by an edit, or typed otherwise) differs from a fresh check's.
func fingerprint(res check.Result) string {
	var lines []string
	where := func(r source.Range) string {
		if r.File == nil {
			return fmt.Sprint(r.Span)
		}
		return fmt.Sprintf("%s%v", r.File.Path, r.Span)
	}
	symbol := func(s *check.Symbol) string {
		line := fmt.Sprintf("%s %s %s %s public=%v id=%s", s.Kind, s.Name, where(s.Ident), where(s.Decl), s.Public, s.ID)
		if s.Parent != nil {
			line += " in " + s.Parent.Name
		}
		if s.Type != nil {
			b, _ := json.Marshal(s.Type)
			line += " " + string(b)
		}
		if len(s.Fields) > 0 {
			b, _ := json.Marshal(s.Fields)
			line += " " + string(b)
		}
		return line + fmt.Sprint(len(s.Children), s.Variants)
	}
	for _, d := range res.Diags {
		line := fmt.Sprintf("diag %s %s %s", d.Code, where(d.Subject), d.Summary)
		for _, r := range d.Related {
			line += " / " + where(r.Range) + " " + r.Message
		}
		lines = append(lines, line)
	}
	for s := range res.Index.Symbols() {
		lines = append(lines, "sym "+symbol(s))
	}
	for path := range res.Index.Modules {
		for _, r := range res.Index.RefsIn(path) {
			lines = append(lines, fmt.Sprintf("ref %s %v -> %s", path, r.At.Span, symbol(r.Target)))
		}
		for _, n := range res.Index.InScope(path) {
			lines = append(lines, fmt.Sprintf("scope %s %s -> %s", path, n.Name, symbol(n.Symbol)))
		}
	}
	sort.Strings(lines)
	return fmt.Sprintf("%d files, %d declarations\n", res.Files, res.Declarations) + strings.Join(lines, "\n")
}

// strays are the references and names in scope whose symbol is not one of
// the index's own: a symbol of an earlier check that a Session kept.
func strays(res check.Result) []string {
	own := map[*check.Symbol]bool{}
	for s := range res.Index.Symbols() {
		own[s] = true
	}
	var out []string
	for path := range res.Index.Modules {
		for _, r := range res.Index.RefsIn(path) {
			if !own[r.Target] {
				out = append(out, fmt.Sprintf("%s %v -> %s %s", path, r.At.Span, r.Target.Kind, r.Target.Name))
			}
		}
		for _, n := range res.Index.InScope(path) {
			if !own[n.Symbol] {
				out = append(out, fmt.Sprintf("%s in scope: %s", path, n.Name))
			}
		}
	}
	return out
}

// A Session's check after each edit is a fresh check's, though it takes
// the modules the edit did not reach as they were, and those that use the
// edited module when what they import of it is what it was.
func TestSessionMatchesAFreshCheck(t *testing.T) {
	base := projectgen.Generate(3000)
	// module is one that another module (not the app) uses.
	var module, user string
	for _, name := range projectgen.Files(base) {
		if name == "app.jadpo" || !strings.HasSuffix(name, ".jadpo") || strings.HasPrefix(name, "packages/") || strings.HasPrefix(name, "shared/") {
			continue
		}
		for _, line := range strings.Split(string(base[name].Data), "\n") {
			if used, ok := strings.CutPrefix(line, "use "); ok && !strings.HasPrefix(used, "shared/") {
				module, user = strings.Fields(used)[0]+".jadpo", name
				break
			}
		}
		if module != "" {
			break
		}
	}
	if module == "" {
		t.Fatal("no module of the generated project uses another")
	}
	orig := string(base[module].Data)
	shared := string(base["shared/common.jadpo"].Data)
	public := func(text, kind string) string { // the first public declaration of a kind
		i := strings.Index(text, "public "+kind+" ")
		if i < 0 {
			t.Fatalf("%s declares no public %s", module, kind)
		}
		return strings.Fields(text[i:])[2]
	}
	ref := public(orig, "value") // imported by user
	event := public(orig, "event")
	if !strings.Contains(string(base[user].Data), ref) {
		t.Fatalf("%s does not import %s", user, ref)
	}
	type edit struct {
		what, file, text string
		// onlyItself: every other module is taken again.
		onlyItself bool
		gone       bool // the file is removed
		app        bool // the app's checks are taken again
	}
	app := string(base["app.jadpo"].Data)
	jobs := "packages/" + projectgen.PackageDir + "/resources/jobs.jadpo"
	resource := string(base[jobs].Data)
	conn := "connection extra_api {\n    package: " + projectgen.PackageDir + "\n    host: config.relay_host\n" +
		"    credential: { token: config.relay_api_token }\n    settings: { account_id: config.relay_account queue_id: \"jobs\" }\n}\n"
	rule := strings.Replace(orig, "min_length: 1", "min_length: 2", 1)
	fixed := strings.Replace(orig, "public event "+event+" {\n", "public event "+event+" {\n    oops: Int\n", 1)
	// retyped: the event's first field, which a subscriber reads, made a number.
	head := strings.Index(orig, "public event "+event+" {\n") + len("public event "+event+" {\n")
	first := orig[head : head+strings.Index(orig[head:], "\n")]
	retyped := orig[:head] + "    " + strings.Fields(first)[0] + " Int" + orig[head+len(first):]
	edits := []edit{
		{"as generated", module, orig, false, false, false},
		{"a comment: nothing that matters", module, strings.Replace(orig, "\n", "\n// a comment\n", 1), true, false, false},
		{"a private declaration added: what its importers read is the same", module, strings.Replace(orig, "\nenum ", "\ntype PrivateExtra = Int { min: 3 }\nenum ", 1), true, false, false},
		{"a public type's rule: its importers and the app's subscribers read it", module, rule, false, false, false},
		{"a comment above the new rule", module, strings.Replace(rule, "\n", "\n// another comment\n\n", 1), true, false, false},
		{"an imported value's field changes type", module, strings.Replace(orig, "public value "+ref+" {\n", "public value "+ref+" {\n    extra: Int\n", 1), false, false, false},
		{"a public event gains a field", module, strings.Replace(orig, "public event "+event+" {\n", "public event "+event+" {\n    added_at: Instant\n", 1), false, false, false},
		{"a public event's field that a subscriber reads made a number", module, retyped, false, false, false},
		{"a comment above it", module, strings.Replace(retyped, "\n", "\n// a comment\n", 1), false, false, false},
		{"back as generated", module, orig, false, false, false},
		{"a public event's field that a subscriber reads renamed", module, strings.Replace(orig, "public event "+event+" {\n    ", "public event "+event+" {\n    renamed_", 1), false, false, false},
		{"a comment while the app has an error", module, strings.Replace(strings.Replace(orig, "public event "+event+" {\n    ", "public event "+event+" {\n    renamed_", 1), "\n", "\n// a comment\n", 1), false, false, false},
		{"a private record inside public events gains a field", module, strings.Replace(orig, "\n    position: Int { min: 0 }\n", "\n    position: Int { min: 0 }\n    extra_note: Text\n", 1), false, false, false},
		{"a comment after it", module, strings.Replace(strings.Replace(orig, "\n    position: Int { min: 0 }\n", "\n    position: Int { min: 0 }\n    extra_note: Text\n", 1), "\n", "\n// a comment\n", 1), true, false, false},
		{"a name another module imports removed", module, strings.Replace(orig, "public value "+ref+" ", "public value "+ref+"Moved ", 1), false, false, false},
		{"back as generated", module, orig, false, false, false},
		{"a rule changes", module, strings.Replace(orig, "min_length: 1", "min_length: 2", 1), false, false, false},
		{"a name stops being public: its importers fail", module, strings.Replace(orig, "public type", "type", 1), false, false, false},
		{"a comment", module, strings.Replace(orig, "\n", "\n// a comment\n", 1), false, false, false},
		{"a syntax error", module, strings.Replace(orig, "enum", "enum Broken {\nenum", 1), false, false, false},
		{"the syntax fixed", module, orig, false, false, false},
		{"a comment in the module every other uses", "shared/common.jadpo", strings.Replace(shared, "\n", "\n// a comment\n", 1), true, false, false},
		{"a type every module uses refined", "shared/common.jadpo", strings.Replace(shared, "public type", "// now stricter\npublic type", 1), true, false, false},
		{what: "a syntax error in a declaration no public one reads", file: module, text: strings.Replace(orig, "\nenum ", "\ntype PrivateExtra = Int { min: }\nenum ", 1), app: true},
		{what: "the next keystroke", file: module, text: strings.Replace(orig, "\nenum ", "\ntype PrivateExtra = Int {{ }\nenum ", 1), app: true},
		{what: "a comment while it is broken", file: module, text: strings.Replace(orig, "\nenum ", "\n// soon\ntype PrivateExtra = Int {{ }\nenum ", 1), app: true},
		{what: "broken where a public event reads", file: module, text: strings.Replace(orig, "public event "+event+" {\n", "public event "+event+" {\n    oops: \n", 1)},
		{what: "another keystroke there", file: module, text: strings.Replace(orig, "public event "+event+" {\n", "public event "+event+" {\n    oops: I\n", 1)},
		{what: "fixed", file: module, text: fixed},
		{what: "the declaration no public one reads broken again", file: module, text: strings.Replace(fixed, "\nenum ", "\ntype PrivateExtra = Int { min: }\nenum ", 1), app: true},
		{what: "and fixed", file: module, text: strings.Replace(fixed, "\nenum ", "\ntype PrivateExtra = Int { min: 1 }\nenum ", 1), app: true},
		{what: "back as generated again", file: module, text: orig},
		{what: "a comment in app.jadpo", file: "app.jadpo", text: strings.Replace(app, "\n", "\n// a comment\n", 1)},
		{what: "app.jadpo as generated", file: "app.jadpo", text: app},
		{what: "a comment in a package's resource the subscribers call", file: jobs, text: strings.Replace(resource, "\n", "\n// a comment\n", 1)},
		{what: "the resource as installed", file: jobs, text: resource},
		{what: "a module added", file: "extra/added.jadpo", text: "public type AddedThing = Text { max_length: 3 }\n", onlyItself: true},
		{what: "a comment in it", file: "extra/added.jadpo", text: "// a comment\npublic type AddedThing = Text { max_length: 3 }\n", onlyItself: true},
		{what: "it declares a queue now", file: "extra/added.jadpo", text: "public type AddedThing = Text\nqueue added_queue {\n}\n"},
		{what: "a comment above the queue", file: "extra/added.jadpo", text: "public type AddedThing = Text\n// a comment\nqueue added_queue {\n}\n"},
		{what: "it declares a connection now, which nothing uses", file: "extra/added.jadpo", text: conn},
		{what: "a comment in another module while it does", file: module, text: strings.Replace(orig, "\n", "\n// a comment\n", 1), onlyItself: true},
		{what: "a comment above the connection", file: "extra/added.jadpo", text: "// a comment\n" + conn},
		{what: "another comment elsewhere", file: module, text: strings.Replace(orig, "\n", "\n// another\n", 1), onlyItself: true},
		{what: "the module removed", file: "extra/added.jadpo", gone: true},
		{what: "a comment after", file: module, text: strings.Replace(orig, "\n", "\n// a last comment\n", 1), onlyItself: true},
	}
	s := check.NewSession()
	cache := parseCache{}
	texts := map[string]string{}
	for i, e := range edits {
		texts[e.file] = e.text
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		for file, text := range texts {
			fsys[file] = &fstest.MapFile{Data: []byte(text)}
		}
		if e.gone {
			delete(texts, e.file)
			delete(fsys, e.file)
		}
		p := project.LoadFSParsing(fsys, cache.parse)
		got := s.Check(p)
		want := check.CheckIndexed(project.LoadFS(fsys))
		if g, w := fingerprint(got), fingerprint(want); g != w {
			t.Fatalf("edit %d (%s): the session's check differs from a fresh one:\n%s", i, e.what, firstDifference(g, w))
		}
		if st := strays(got); len(st) > 0 {
			t.Fatalf("edit %d (%s): symbols of an earlier check: %v", i, e.what, st)
		}
		if e.app && !got.Index.AppReused {
			t.Errorf("edit %d (%s): the app's checks were run again", i, e.what)
		}
		if e.onlyItself && (got.Index.Reused != len(p.Modules)-1 || !got.Index.AppReused) {
			t.Errorf("edit %d (%s): %d modules of %d taken again (the app's checks: %v), want all but the edited one and the app's",
				i, e.what, got.Index.Reused, len(p.Modules), got.Index.AppReused)
		}
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
