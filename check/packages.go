package check

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// pkg is an installed package as the checker sees it.
type pkg struct {
	name, version, dir string
	proj               *project.Package
	ns                 *namespace

	provider     ir.Provider
	providerOK   bool
	providerDecl *ast.Provider
	providerFile *ast.File

	settings     map[string]*setting
	provides     map[string]*provideDecl
	resources    map[string]*resource
	usedOps      map[string]*operation
	receiving    *receivingResult
	emailMapping *emailResult
}

// setting is a setting a package declares.
type setting struct {
	name  string
	typ   ir.Type
	def   json.RawMessage // the default, or nil
	field *ast.Field
	file  *ast.File
	sym   *Symbol
}

// required: the connection must give it.
func (s *setting) required() bool { return s.def == nil && !s.typ.Optional }

type provideDecl struct {
	decl *ast.BlockDecl
	file *ast.File
}

type resource struct {
	name string
	file *ast.File
	ops  map[string]*operation
	sym  *Symbol
}

// operation is one operation of a loaded resource.
type operation struct {
	ir     ir.Operation
	ident  *ast.Ident
	file   *ast.File
	input  *decl // the input record
	output *decl // the output record
	decode bool
	failed bool
	sym    *Symbol
}

var pkgDirRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\.(v[A-Za-z0-9_]+)$`)

// indexPackages reads every installed package's header, provider, settings,
// shared types and capability mappings. Resources wait until called.
func (c *checker) indexPackages() {
	for _, dir := range sortedKeys(c.proj.Packages) {
		pp := c.proj.Packages[dir]
		p := &pkg{dir: dir, proj: pp, settings: map[string]*setting{}, provides: map[string]*provideDecl{},
			resources: map[string]*resource{}, usedOps: map[string]*operation{}}
		p.ns = &namespace{decls: map[string]*decl{}, pkg: p}
		m := pkgDirRE.FindStringSubmatch(dir)
		if m == nil {
			c.add(diag.PackageInvalid, source.Range{}, "`packages/%s` is not named `<Name>.<version>`", dir).
				WithHelp("install packages with `jadpo package add`, which names their folders")
			continue
		}
		p.name, p.version = m[1], m[2]
		p.ns.qualifier = p.name
		if pp.Header == nil {
			c.add(diag.PackageInvalid, source.Range{}, "package `%s` has no package.jadpo", dir).
				WithHelp("a package's package.jadpo holds `package " + dir + "`, its provider and its settings")
			continue
		}
		if other, dup := c.pkgs[p.name]; dup {
			c.add(diag.PackageInvalid, source.Range{}, "two versions of package `%s` are installed: %s and %s", p.name, other.dir, dir).
				WithHelp("an app uses one version of a package; remove the other folder and its line in jadpo.lock")
			continue
		}
		c.pkgs[p.name] = p
		c.pkgDirs[dir] = p
		c.pkgSym(p)
		files := append([]*ast.File{pp.Header}, pp.Files...)
		for _, cap := range sortedKeys(pp.Provides) {
			files = append(files, pp.Provides[cap])
		}
		for _, f := range files {
			c.indexPackageFile(p, f, f == pp.Header)
		}
		c.checkPackageHeader(p, pp.Header)
		for _, name := range sortedKeys(p.ns.decls) {
			c.resolveDecl(p.ns.decls[name])
		}
		c.checkProvider(p)
		c.checkProvides(p)
	}
}

func (c *checker) checkPackageHeader(p *pkg, f *ast.File) {
	var header *ast.Package
	for _, d := range f.Decls {
		if d.Package != nil {
			if header != nil {
				c.add(diag.PackageInvalid, f.Range(d.Package.Span()), "package.jadpo names its package twice")
				continue
			}
			header = d.Package
		}
	}
	if header == nil {
		c.add(diag.PackageInvalid, f.Range(source.Span{}), "package.jadpo has no `package %s` line", p.dir)
		return
	}
	if got := header.Name.String(); got != p.dir {
		c.add(diag.PackageInvalid, f.Range(header.Name.Span()), "package.jadpo names `%s`, but it is installed as `%s`", got, p.dir).
			Suggest(suggest(got, []string{p.dir})).
			WithHelp("reinstall the package with `jadpo package add`, which names its folder after its header")
	}
	c.checkName(f, &header.Name.Parts[0], true, "package")
}

func (c *checker) indexPackageFile(p *pkg, f *ast.File, isHeader bool) {
	for _, d := range f.Decls {
		switch {
		case d.Package != nil:
			if !isHeader {
				c.add(diag.PackageInvalid, f.Range(d.Package.Span()), "`package` belongs in package.jadpo")
			}
		case d.Use != nil:
			c.add(diag.SemanticMisplacedDeclaration, f.Range(d.Use.Span()), "a package's files share one namespace and take no `use` lines")
		case d.Provider != nil:
			if p.providerDecl != nil {
				c.add(diag.PackageProviderInvalid, f.Range(d.Provider.Span()), "the package declares a second `provider`").
					WithRelated(p.providerFile.Range(p.providerDecl.Span()), "the first is here")
				continue
			}
			p.providerDecl, p.providerFile = d.Provider, f
		case d.Settings != nil:
			c.indexSettings(p, f, d.Settings)
		case d.Resource != nil:
			c.add(diag.PackageInvalid, f.Range(d.Resource.Name.Span()), "resource `%s` belongs in resources/%s.jadpo", d.Resource.Name.Name, d.Resource.Name.Name).
				WithHelp("each resource has its own file, so that a call loads only the file it names")
		case d.Subscriber != nil:
			c.add(diag.SemanticMisplacedDeclaration, f.Range(d.Subscriber.Name.Span()), "a subscriber belongs in the app, not in a package")
		case d.Named != nil:
			c.indexPackageNamed(p, f, d)
		}
	}
}

func (c *checker) indexPackageNamed(p *pkg, f *ast.File, d *ast.Decl) {
	n := d.Named
	if n.BlockDecl != nil {
		if n.BlockDecl.Kind == "provide" {
			name := n.BlockDecl.Name.Name
			if first, dup := p.provides[name]; dup {
				c.add(diag.SemanticDuplicateName, f.Range(n.BlockDecl.Name.Span()), "`provide %s` is declared twice", name).
					WithRelated(first.file.Range(first.decl.Name.Span()), "first declared here")
				return
			}
			p.provides[name] = &provideDecl{decl: n.BlockDecl, file: f}
			return
		}
		c.add(diag.SemanticMisplacedDeclaration, f.Range(n.BlockDecl.Name.Span()), "a %s belongs in the app, not in a package", n.BlockDecl.Kind)
		return
	}
	if n.Config != nil {
		c.add(diag.SemanticMisplacedDeclaration, f.Range(n.Config.Name.Span()), "a config belongs in the app, not in a package").
			WithHelp("a package declares `settings`; the app's connection gives their values")
		return
	}
	dd := newDecl(d, f, p.ns)
	c.checkName(f, dd.ident(), true, kindWords[dd.kind])
	if _, dup := p.ns.decls[dd.name]; !dup {
		c.sym(dd)
	}
	c.addUnique(p.ns.decls, dd)
}

func (c *checker) indexSettings(p *pkg, f *ast.File, s *ast.Settings) {
	for _, field := range s.Fields {
		name := field.Name.Name
		c.checkName(f, &field.Name, false, "setting")
		if first, dup := p.settings[name]; dup {
			c.add(diag.SemanticDuplicateName, f.Range(field.Name.Span()), "setting `%s` is declared twice", name).
				WithRelated(first.file.Range(first.field.Name.Span()), "first declared here")
			continue
		}
		p.settings[name] = &setting{name: name, field: field, file: f, sym: c.fieldSym(SymSetting, f, field, c.pkgSym(p))}
	}
}

// resolveSettings types the settings (after the package's types are indexed).
func (c *checker) resolveSettings(p *pkg) {
	for _, name := range sortedKeys(p.settings) {
		st := p.settings[name]
		t, ok := c.typeOf(scope{ns: p.ns}, st.file, &st.field.Type, "setting")
		if !ok {
			st.typ = ir.Type{Kind: ir.Text, Optional: true}
			if st.sym != nil {
				st.sym.Type = &st.typ
			}
			continue
		}
		dm := c.applyRules(st.file, &t, st.field.Options, "default")
		st.typ = t
		if dm != nil {
			raw, problem := literalValue(dm.Value, t)
			if problem != "" {
				d := c.add(diag.TypeMismatch, st.file.Range(dm.Value.Span()), "the default of setting `%s` does not fit: %s", name, problem)
				if t.Kind == ir.Enum {
					d.Suggest(suggest(refName(dm.Value), t.Variants))
				}
				continue
			}
			st.def = raw
		}
		if st.sym != nil {
			st.sym.Type, st.sym.Default = &st.typ, st.def
		}
	}
}

// texts lists the text of each of the plan's names, for diagnostics and suggestions.
func texts[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// checkProvider reads the provider block.
func (c *checker) checkProvider(p *pkg) {
	c.resolveSettings(p)
	if p.providerDecl == nil {
		c.add(diag.PackageProviderInvalid, p.proj.Header.Range(source.Span{}), "package `%s` declares no `provider`", p.dir).
			WithHelp("package.jadpo says how the package talks to its service: provider { protocol: Protocol.aws_json ... }")
		return
	}
	f := p.providerFile
	ms := c.members(f, p.providerDecl.Body, diag.PackageProviderInvalid, "in a provider", blockKeys["provider"]...)
	ok := true
	enumRef := func(key, prefix string, allowed []string) string {
		m := ms[key]
		if m == nil {
			return ""
		}
		parts := refParts(m.Value)
		if len(parts) != 2 || parts[0] != prefix || !contains(allowed, parts[1]) {
			cands := make([]string, len(allowed))
			for i, a := range allowed {
				cands[i] = prefix + "." + a
			}
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` takes one of %s", key, keyList(cands)).
				Suggest(suggest(strings.Join(parts, "."), cands))
			ok = false
			return ""
		}
		return parts[1]
	}
	p.provider.Protocol = ir.Protocol(enumRef("protocol", "Protocol", c.protocolNames()))
	p.provider.Credential = ir.CredentialScheme(enumRef("credential", "CredentialScheme", c.schemeNames()))
	if ms["protocol"] == nil {
		c.add(diag.PackageProviderInvalid, f.Range(p.providerDecl.Span()), "the provider has no `protocol`").
			WithHelp("protocol: Protocol.aws_json or Protocol.json_http")
		ok = false
	}
	if m := ms["aws"]; m != nil {
		if m.Value.Record == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`aws` takes a block: aws: { service: \"sqs\" target: \"AmazonSQS\" }")
			ok = false
		} else {
			am := c.members(f, m.Value.Record, diag.PackageProviderInvalid, "in `aws`", blockKeys["provider aws"]...)
			for key, mm := range am {
				if mm.Value.Text == nil || mm.Value.TextValue() == "" {
					c.add(diag.PackageProviderInvalid, f.Range(mm.Value.Span()), "`aws.%s` takes a non-empty text", key)
					ok = false
					continue
				}
				if key == "service" {
					p.provider.AWSService = mm.Value.TextValue()
				} else {
					p.provider.AWSTarget = mm.Value.TextValue()
				}
			}
		}
	}
	if p.provider.Protocol == ir.ProtocolAWSJSON && p.provider.AWSTarget == "" {
		c.add(diag.PackageProviderInvalid, f.Range(ms["protocol"].Value.Span()), "`Protocol.aws_json` needs `aws: { target: ... }`, the operations' prefix").
			WithHelp(`add aws: { target: "AmazonSQS" } (the X-Amz-Target prefix)`)
		ok = false
	}
	if (p.provider.Protocol == ir.ProtocolSQL) != (p.provider.Credential == ir.CredentialDatabaseURL) && p.provider.Protocol != "" && p.provider.Credential != "" && ms["credential"] != nil {
		c.add(diag.PackageProviderInvalid, f.Range(ms["credential"].Value.Span()), "`Protocol.sql` goes with `CredentialScheme.database_url`, and only with it").
			WithHelp("a SQL inbox reaches its database through credential: CredentialScheme.database_url")
		ok = false
	}
	if p.provider.Credential == ir.CredentialAWSSigV4 && p.provider.AWSService == "" {
		c.add(diag.PackageProviderInvalid, f.Range(ms["credential"].Value.Span()), "`CredentialScheme.aws_sigv4` needs `aws: { service: ... }`, the service requests are signed for").
			WithHelp(`add aws: { service: "sqs" }`)
		ok = false
	}
	if m := ms["error_code"]; m != nil {
		if m.Value.Text == nil || m.Value.TextValue() == "" {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`error_code` takes a text: where a refusal's code is read")
			ok = false
		} else {
			p.provider.ErrorCode = m.Value.TextValue()
		}
	}
	if m := ms["host"]; m != nil {
		if m.Value.Text == nil || !isHTTPURL(m.Value.TextValue()) {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`host` takes an http or https URL as text")
			ok = false
		} else {
			p.provider.Host = m.Value.TextValue()
		}
	}
	p.providerOK = ok
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// refParts is a reference's dotted parts, or nil.
func refParts(e *ast.Expr) []string {
	if e == nil || e.Ref == nil || e.Ref.Call != nil {
		return nil
	}
	out := make([]string, len(e.Ref.Path.Parts))
	for i, p := range e.Ref.Path.Parts {
		out[i] = p.Name
	}
	return out
}

// loadResource parses a resource's file on first use and checks it.
func (c *checker) loadResource(p *pkg, name string) *resource {
	if r, ok := p.resources[name]; ok {
		return r
	}
	f := p.proj.Resource(name)
	if f == nil {
		p.resources[name] = nil
		return nil
	}
	r := &resource{name: name, file: f, ops: map[string]*operation{}}
	p.resources[name] = r
	var res *ast.Resource
	var recordDecls []*decl
	for _, d := range f.Decls {
		switch {
		case d.Resource != nil:
			if res != nil {
				c.add(diag.PackageInvalid, f.Range(d.Resource.Name.Span()), "resources/%s.jadpo holds a second resource, `%s`", name, d.Resource.Name.Name).
					WithHelp("each resource has its own file")
				continue
			}
			res = d.Resource
		case d.Named != nil && (d.Named.Type != nil || d.Named.Enum != nil || d.Named.Record != nil):
			before := len(p.ns.decls)
			c.indexPackageNamed(p, f, d)
			if len(p.ns.decls) > before {
				recordDecls = append(recordDecls, p.ns.decls[d.Name().Name])
			}
		default:
			c.indexPackageFile(p, &ast.File{Source: f.Source, Decls: []*ast.Decl{d}}, false)
		}
	}
	for _, d := range recordDecls {
		c.resolveDecl(d)
	}
	if res == nil {
		c.add(diag.PackageInvalid, f.Range(source.Span{}), "resources/%s.jadpo holds no `resource %s`", name, name)
		return r
	}
	if c.idx != nil {
		r.sym = c.newSym(SymResource, res.Name.Name, f.Range(res.Name.Span()), f.Range(res.Span()), c.pkgSym(p))
	}
	if res.Name.Name != name {
		c.add(diag.PackageInvalid, f.Range(res.Name.Span()), "resources/%s.jadpo declares resource `%s`; the file is named for `%s`", name, res.Name.Name, name).
			Suggest(suggest(res.Name.Name, []string{name}))
	}
	c.checkName(f, res.Name, false, "resource")
	for _, op := range res.Operations {
		c.checkOperation(p, r, f, op)
	}
	return r
}

var httpMethods = []string{"DELETE", "GET", "PATCH", "POST", "PUT"}
var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

func (c *checker) checkOperation(p *pkg, r *resource, f *ast.File, op *ast.Operation) {
	name := op.Name.Name
	c.checkName(f, op.Name, false, "operation")
	if _, dup := r.ops[name]; dup {
		c.add(diag.SemanticDuplicateName, f.Range(op.Name.Span()), "operation `%s` is declared twice", name).
			WithRelated(f.Range(r.ops[name].ident.Span()), "first declared here")
		return
	}
	o := &operation{ident: op.Name, file: f, ir: ir.Operation{Ref: r.name + "." + name, Resource: r.name, Name: name}}
	r.ops[name] = o
	if c.idx != nil {
		o.sym = c.newSym(SymOperation, name, f.Range(op.Name.Span()), f.Range(op.Span()), r.sym)
		o.sym.Op = &o.ir
		defer func() { o.sym.Input, o.sym.Output = c.sym(o.input), c.sym(o.output) }()
	}
	ms := c.members(f, op.Body, diag.PackageOperationInvalid, "in an operation", blockKeys["operation"]...)
	recordOf := func(key string) (*decl, *ir.Type) {
		m := ms[key]
		if m == nil {
			return nil, nil
		}
		parts := refParts(m.Value)
		if len(parts) != 1 {
			c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`%s` takes the name of a value", key)
			o.failed = true
			return nil, nil
		}
		te := &ast.TypeExpr{Node: m.Value.Node, Name: *m.Value.Ref.Path}
		t, ok := c.typeOf(scope{ns: p.ns}, f, te, key)
		if !ok {
			o.failed = true
			return nil, nil
		}
		if t.Kind != ir.RecordK {
			c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`%s` takes a value (a record), not %s", key, describe(t))
			o.failed = true
			return nil, nil
		}
		return p.ns.decls[parts[0]], &t
	}
	if ms["input"] == nil {
		c.add(diag.PackageOperationInvalid, f.Range(op.Name.Span()), "operation `%s` has no `input`", name).
			WithHelp("name the value its call sends: input: " + ir.UpperCamel(name) + "Input")
		o.failed = true
	}
	o.input, o.ir.Input = recordOf("input")
	o.output, o.ir.Output = recordOf("output")
	if m := ms["retry_safe"]; m != nil {
		switch refName(m.Value) {
		case "true":
			o.ir.RetrySafe = true
		case "false":
		default:
			c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`retry_safe` takes `true` or `false`").
				Suggest(suggest(refName(m.Value), []string{"true", "false"}))
		}
	}
	if m := ms["decode"]; m != nil {
		if m.Value.Text == nil {
			c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`decode` takes the name of the package's decoder as text")
		}
		o.decode = true
	}
	if m := ms["method"]; m != nil {
		if m.Value.Text == nil || !contains(httpMethods, m.Value.TextValue()) {
			quoted := make([]string, len(httpMethods))
			for i, hm := range httpMethods {
				quoted[i] = `"` + hm + `"`
			}
			d := c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`method` takes one of %s, as text in double quotes", strings.Join(quoted, ", "))
			if bare := refName(m.Value); m.Value.Text == nil && contains(httpMethods, strings.ToUpper(bare)) {
				d.WithLabel("write \"" + strings.ToUpper(bare) + "\"").WithFix("\"" + strings.ToUpper(bare) + "\"").
					WithHelp("`method` is text: `method: \"" + strings.ToUpper(bare) + "\"`")
			} else if m.Value.Text != nil {
				d.WithHelp("json_http sends only these methods; pick the one the API's documentation gives, e.g. `method: \"POST\"`")
			} else {
				d.WithHelp("write the HTTP method in double quotes, e.g. `method: \"POST\"`")
			}
		} else {
			o.ir.Method = m.Value.TextValue()
		}
	}
	if m := ms["path"]; m != nil {
		path := m.Value.TextValue()
		if m.Value.Text == nil || !strings.HasPrefix(path, "/") {
			c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "`path` takes a text starting with `/`")
		} else {
			o.ir.Path = path
			for _, ph := range placeholderRE.FindAllStringSubmatch(path, -1) {
				if _, ok := p.settings[ph[1]]; !ok {
					c.add(diag.PackageOperationInvalid, f.Range(m.Value.Span()), "the path's placeholder `{%s}` names no setting", ph[1]).
						Suggest(suggest(ph[1], sortedKeys(p.settings))).
						WithHelp("a path's placeholders are filled from the package's settings")
				}
			}
		}
	}
	if p.provider.Protocol == ir.ProtocolJSONHTTP && !o.decode {
		if o.ir.Method == "" && ms["method"] == nil {
			c.add(diag.PackageOperationInvalid, f.Range(op.Name.Span()), "operation `%s` of a json_http package has no `method`", name)
		}
		if o.ir.Path == "" && ms["path"] == nil {
			c.add(diag.PackageOperationInvalid, f.Range(op.Name.Span()), "operation `%s` of a json_http package has no `path`", name)
		}
	}
}

// findOperation resolves `resource.operation` in a package, loading the
// resource's file. It returns a sentence when it cannot.
func (c *checker) findOperation(p *pkg, ref string) (*operation, string) {
	parts := strings.Split(ref, ".")
	if len(parts) != 2 {
		return nil, "an operation is named `resource.operation`"
	}
	r := c.loadResource(p, parts[0])
	if r == nil {
		return nil, "package `" + p.dir + "` has no resource `" + parts[0] + "` (no resources/" + parts[0] + ".jadpo)"
	}
	o, ok := r.ops[parts[1]]
	if !ok {
		return nil, "resource `" + parts[0] + "` has no operation `" + parts[1] + "`"
	}
	return o, ""
}

// useOperation marks an operation as called, for the program.
func (p *pkg) useOperation(o *operation) { p.usedOps[o.ir.Ref] = o }
