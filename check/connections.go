package check

import (
	"encoding/json"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// connection is a configured use of an installed package.
type connection struct {
	decl *decl
	pkg  *pkg
	ir   ir.Connection
	ok   bool
	// called: a subscriber's attempt names it (connection.unused).
	called bool
	// settingsKey is its `settings:` member (nil when it gives none) and
	// given the settings it gives: where its settings' problems are shown.
	settingsKey *ast.Member
	given       map[string]*ast.Member
}

func (c *checker) checkConnections() {
	for _, name := range sortedKeys(c.connections) {
		c.checkConnection(c.connections[name])
	}
}

func (c *checker) checkConnection(cn *connection) {
	d := cn.decl
	f := d.file
	ms := c.members(f, d.node.Named.BlockDecl.Body, diag.ConnectionValueInvalid, "in a connection", blockKeys["connection"]...)
	cn.ir = ir.Connection{Name: d.name, Settings: map[string]ir.Value{}}
	pm := ms["package"]
	if pm == nil {
		c.add(diag.ConnectionValueInvalid, d.rng(), "connection `%s` names no `package`", d.name).
			WithHelp("name an installed package with its version: package: AmazonSqs.v2012_11_05")
		return
	}
	parts := refParts(pm.Value)
	if len(parts) != 2 {
		d := c.add(diag.ConnectionValueInvalid, f.Range(pm.Value.Span()), "`package` takes a package name with its version, such as `AmazonSqs.v2012_11_05`")
		if pm.Value.Text != nil {
			name := pm.Value.TextValue()
			d.WithLabel("write it without quotes").WithFix(name).
				WithHelp("`package` takes the installed package's name, unquoted: `package: " + name + "`")
		} else {
			d.WithHelp("name an installed package and its version, as under packages/: `package: AmazonSqs.v2012_11_05`")
		}
		return
	}
	dir := parts[0] + "." + parts[1]
	p := c.pkgDirs[dir]
	if p == nil {
		c.packageNotInstalled(f.Range(pm.Value.Span()), dir, parts[0])
		return
	}
	cn.pkg = p
	cn.ir.Package = dir
	c.ref(f, pm.Value.Span(), c.pkgSym(p))
	if s := c.sym(d); s != nil {
		s.Package = dir
	}
	cn.ir.Provider = p.provider
	ok := p.providerOK
	// host: a driver's own protocol may reach its server otherwise (a SQL
	// database through its credential's url).
	noHost := c.noHost(p.provider.Protocol)
	if hm := ms["host"]; hm != nil && noHost != nil {
		c.add(diag.ConnectionValueInvalid, f.Range(hm.Key.Span()), "a connection of `%s` takes no `host`: %s", dir, noHost.NoHost).
			WithHelp(noHost.NoHostHelp)
		ok = false
	} else if hm != nil {
		v, vok := c.connectionValue(f, hm.Value, ir.Type{Kind: ir.Url}, "`host`", false)
		if vok && v.Literal != nil && !isHTTPURL(hm.Value.TextValue()) {
			c.add(diag.ConnectionValueInvalid, f.Range(hm.Value.Span()), "`host` takes an http or https URL").
				WithHelp("give the service's address with its scheme, such as \"https://sqs.eu-west-1.amazonaws.com\", or a config field: `host: config.sqs_host`")
			vok = false
		}
		if vok {
			cn.ir.Host = &v
		} else {
			ok = false
		}
	} else if p.provider.Host == "" && p.providerOK && noHost == nil {
		c.add(diag.ConnectionValueInvalid, d.rng(), "connection `%s` gives no `host`, and package `%s` has no fixed host", d.name, dir).
			WithHelp("give the service's endpoint: host: config.sqs_host")
		ok = false
	}
	// credential
	if !c.checkCredential(cn, ms["credential"]) {
		ok = false
	}
	// settings
	if !c.checkSettings(cn, ms["settings"]) {
		ok = false
	} else if !c.checkDriverRules(cn) {
		ok = false
	}
	cn.ok = ok
}

func (c *checker) checkCredential(cn *connection, m *ast.Member) bool {
	d, f, p := cn.decl, cn.decl.file, cn.pkg
	scheme := p.provider.Credential
	members := c.schemeMembers(scheme)
	if m == nil {
		if scheme == "" {
			return true
		}
		c.add(diag.ConnectionValueInvalid, d.rng(), "connection `%s` gives no `credential`; package `%s` signs with `%s`", d.name, cn.ir.Package, scheme).
			WithHelp("give " + c.credentialExample(scheme))
		return false
	}
	if scheme == "" {
		c.add(diag.ConnectionValueInvalid, f.Range(m.Key.Span()), "package `%s` takes no credential", cn.ir.Package)
		return false
	}
	blk := c.blockValue(f, m, diag.ConnectionValueInvalid)
	if blk == nil {
		return false
	}
	var names []string
	for _, mm := range members {
		names = append(names, mm.Name)
	}
	given := c.members(f, blk, diag.ConnectionValueInvalid, "in a `"+string(scheme)+"` credential", names...)
	ok := true
	cn.ir.Credential = map[string]ir.Value{}
	for _, mm := range members {
		gm := given[mm.Name]
		if gm == nil {
			if mm.Required {
				c.add(diag.ConnectionValueInvalid, f.Range(m.Key.Span()), "the credential has no `%s`", mm.Name).
					WithHelp("a `" + string(scheme) + "` credential gives " + c.credentialExample(scheme))
				ok = false
			}
			continue
		}
		if _, _, isCfg := configRef(gm.Value); !isCfg {
			c.add(diag.ConnectionValueInvalid, f.Range(gm.Value.Span()), "credential member `%s` takes a config field, `config.<name>`", mm.Name).
				WithHelp("credentials come from the environment, never from source").Suggest(nearConfigRef(gm.Value))
			ok = false
			continue
		}
		cf := c.useConfig(f, gm.Value, mm.Secret, "credential member `"+mm.Name+"`")
		if cf == nil {
			ok = false
			continue
		}
		if mm.Secret && !cf.ir.Secret {
			c.add(diag.ConnectionValueInvalid, f.Range(gm.Value.Span()), "credential member `%s` takes a secret config field; `%s` is not secret", mm.Name, cf.ir.Name).
				WithRelated(cf.file.Range(cf.field.Name.Span()), "declared here").
				WithHelp("mark it `secret: true` in the config")
			ok = false
			continue
		}
		if !assignable(cf.ir.Type, ir.Type{Kind: ir.Text}) {
			c.add(diag.ConnectionValueInvalid, f.Range(gm.Value.Span()), "credential member `%s` takes text; config field `%s` is %s", mm.Name, cf.ir.Name, describe(cf.ir.Type))
			ok = false
			continue
		}
		cn.ir.Credential[mm.Name] = ir.Value{Config: cf.ir.Name}
	}
	return ok
}

func credentialExample(scheme ir.CredentialScheme) string {
	switch scheme {
	case ir.CredentialBearer:
		return "credential: { token: config.<secret field> }"
	case ir.CredentialDatabaseURL:
		return "credential: { url: config.<secret field> }"
	}
	return "credential: { key_id: config.<field> secret: config.<secret field> }"
}

func (c *checker) checkSettings(cn *connection, m *ast.Member) bool {
	d, f, p := cn.decl, cn.decl.file, cn.pkg
	ok := true
	given := map[string]*ast.Member{}
	if m != nil {
		blk := c.blockValue(f, m, diag.ConnectionValueInvalid)
		if blk == nil {
			return false
		}
		given = c.members(f, blk, diag.ConnectionValueInvalid, "in package `"+cn.ir.Package+"`'s settings", sortedKeys(p.settings)...)
	}
	cn.settingsKey, cn.given = m, given
	for _, name := range sortedKeys(p.settings) {
		st := p.settings[name]
		gm := given[name]
		if gm != nil {
			c.ref(f, gm.Key.Span(), st.sym)
		}
		if gm == nil {
			if st.required() {
				at := d.rng()
				if m != nil {
					at = f.Range(m.Key.Span())
				}
				c.add(diag.ConnectionValueInvalid, at, "setting `%s` of package `%s` is not given", name, cn.ir.Package).
					WithRelated(st.file.Range(st.field.Name.Span()), "declared here").
					WithHelp("give it in settings: { " + name + ": ... }")
				ok = false
			} else if st.def != nil {
				cn.ir.Settings[name] = ir.Value{Literal: st.def}
			}
			continue
		}
		v, vok := c.connectionValue(f, gm.Value, st.typ, "setting `"+name+"`", false)
		if !vok {
			ok = false
			continue
		}
		if name == "lease" && p.provider.Protocol == ir.ProtocolSQL && zeroDuration(v) {
			// The sql_inbox driver's lease form: a lease of no time holds no row.
			c.add(diag.ConnectionValueInvalid, f.Range(gm.Value.Span()), "setting `lease` is 0: a claim's lease must hold its rows for some time").
				WithHelp("give a lease longer than 0, such as `30s`, or leave `lease` out for the default")
			ok = false
			continue
		}
		cn.ir.Settings[name] = v
	}
	return ok
}

// connectionValue checks a literal or `config.<field>` given where t is expected.
func (c *checker) connectionValue(f *ast.File, e *ast.Expr, t ir.Type, place string, sink bool) (ir.Value, bool) {
	if _, _, isCfg := configRef(e); isCfg {
		cf := c.useConfig(f, e, sink, place)
		if cf == nil {
			return ir.Value{}, false
		}
		if !assignable(cf.ir.Type, t) && cf.typeFailed {
			return ir.Value{}, false
		}
		if !assignable(cf.ir.Type, t) {
			c.add(diag.ConnectionValueInvalid, f.Range(e.Span()), "%s is %s; config field `%s` is %s", place, describe(t), cf.ir.Name, describe(cf.ir.Type)).
				WithRelated(cf.file.Range(cf.field.Type.Span()), "its type is declared here").
				WithHelp("give " + place + " a config field declared " + describe(t))
			return ir.Value{}, false
		}
		return ir.Value{Config: cf.ir.Name}, true
	}
	if !isLiteralOf(e, t) {
		c.add(diag.ConnectionValueInvalid, f.Range(e.Span()), "%s takes a literal or a config field, `config.<name>`", place).
			WithHelp("write the value itself (text in double quotes, a number, true or false), or `config.<field>` to read it from the environment").
			Suggest(nearConfigRef(e))
		return ir.Value{}, false
	}
	raw, problem := literalValue(e, t)
	if problem != "" {
		c.add(diag.ConnectionValueInvalid, f.Range(e.Span()), "%s is %s: %s", place, describe(t), problem).
			WithHelp("give a value that fits " + describe(t) + "; the message says why this one does not")
		return ir.Value{}, false
	}
	c.refVariant(f, e, t)
	return ir.Value{Literal: raw}, true
}

// zeroDuration reports whether v is a duration literal of no time.
func zeroDuration(v ir.Value) bool {
	var s string
	if v.Literal == nil || json.Unmarshal(v.Literal, &s) != nil {
		return false
	}
	d, err := ir.ParseDuration(s)
	return err == nil && d == 0
}

// packageNotInstalled reports a connection's package that is not under
// packages/: it suggests the installed or catalogue name nearest (the same
// but for case, or a typo away), and only a `jadpo package add` that works:
// the catalogue's name, or a package's own folder.
func (c *checker) packageNotInstalled(rng source.Range, dir, name string) {
	d := c.add(diag.PackageNotInstalled, rng, "package `%s` is not installed", dir).With("package", dir)
	installed := sortedKeys(c.pkgDirs)
	cands := append([]string(nil), installed...)
	if n, ok := c.proj.Catalogue.(interface{ Names() []string }); ok {
		cands = append(cands, n.Names()...)
	}
	sugg := suggest(dir, cands)
	switch other, ok := c.pkgs[name]; {
	case ok:
		d.Suggest(other.dir).WithHelp("`" + other.dir + "` is installed; name that version, or install this one with " + c.addCommand(dir))
	case sugg != "" && c.pkgDirs[sugg] != nil:
		d.Suggest(sugg).WithHelp("`" + sugg + "` is installed: name it as it is spelt under packages/")
	case sugg != "":
		d.Suggest(sugg).WithHelp("the catalogue has `" + sugg + "`: install it with `jadpo package add " + sugg + "`")
	case c.proj.Catalogue != nil && c.proj.Catalogue.Has(dir):
		d.WithHelp("install it with `jadpo package add " + dir + "`")
	default:
		d.WithHelp("`" + dir + "` is not a catalogue package: install your own package from its folder with " + c.addCommand(dir) + "; installed: " + keyListOrNone(installed))
	}
}

func keyListOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return keyList(names)
}

// connectionDriver is the contract of the built-in driver the
// connection's package receives with, nil for none (or a package whose
// mapping is wrong: that is reported in its file).
func (c *checker) connectionDriver(cn *connection) *ir.DriverContract {
	if cn.pkg == nil || cn.pkg.receiving == nil || !cn.pkg.receiving.ok || cn.pkg.receiving.ir.Driver == ir.DriverMapping {
		return nil
	}
	return c.driverContract(string(cn.pkg.receiving.ir.Driver))
}

// driverSettings are the connection's settings as its driver's rules
// read them: the literal and default values resolved, the config fields'
// left open.
func driverSettings(cn *connection) ir.ConnectionSettings {
	s := ir.ConnectionSettings{Values: map[string]any{}, Open: map[string]bool{}}
	for name, v := range cn.ir.Settings {
		switch {
		case v.Config != "":
			s.Open[name] = true
		case v.Literal != nil:
			if val, err := ir.DecodeLiteral(v.Literal); err == nil {
				s.Values[name] = val
			}
		}
	}
	return s
}

// settingAt is where a problem of the connection's setting name is shown:
// its value, else the `settings:` key, else the connection's name.
func (c *checker) settingAt(cn *connection, name string) source.Range {
	f := cn.decl.file
	if gm := cn.given[name]; gm != nil {
		return f.Range(gm.Value.Span())
	}
	if cn.settingsKey != nil {
		return f.Range(cn.settingsKey.Key.Span())
	}
	return cn.decl.rng()
}

// checkDriverRules holds the connection's settings, each of its type, to
// its driver's own rules (a SQL inbox's claim form and columns): those
// its start applies, shown at the setting at fault.
func (c *checker) checkDriverRules(cn *connection) bool {
	dc := c.connectionDriver(cn)
	if dc == nil || dc.Check == nil {
		return true
	}
	ps := dc.Check(driverSettings(cn))
	for _, p := range ps {
		c.add(diag.ConnectionValueInvalid, c.settingAt(cn, p.Setting), "%s", p.Message).WithHelp(p.Help)
	}
	return len(ps) == 0
}
