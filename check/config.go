package check

import (
	"encoding/json"
	"regexp"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// configField is a field of the app's config.
type configField struct {
	ir    ir.ConfigField
	field *ast.Field
	file  *ast.File
	sym   *Symbol
	used  bool // some place reads it (config.unused_field)
	// typeFailed: its type was reported (a list, map or record); a use of
	// another type is not reported again.
	typeFailed bool
}

var bindingRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *checker) checkConfig() {
	d := c.configDecl
	if d == nil {
		return
	}
	cfg := d.node.Named.Config
	seen := map[string]*ast.Field{}
	s := d.scope()
	for _, f := range cfg.Fields {
		c.checkName(d.file, &f.Name, false, "config field")
		if first, dup := seen[f.Name.Name]; dup {
			c.add(diag.SemanticDuplicateName, d.file.Range(f.Name.Span()), "config field `%s` is declared twice", f.Name.Name).
				WithRelated(d.file.Range(first.Name.Span()), "first declared here")
			continue
		}
		seen[f.Name.Name] = f
		cf := &configField{field: f, file: d.file, ir: ir.ConfigField{Name: f.Name.Name}}
		c.configs[f.Name.Name] = cf
		if cf.sym = c.fieldSym(SymConfigField, d.file, f, c.sym(d)); cf.sym != nil {
			cf.sym.Config = &cf.ir
		}
		t, ok := c.typeOf(s, d.file, &f.Type, "config field")
		if !ok {
			cf.ir.Type = ir.Type{Kind: ir.Text}
			continue
		}
		if t.Kind == ir.List || t.Kind == ir.Map || t.Kind == ir.RecordK {
			c.add(diag.TypeMismatch, d.file.Range(f.Type.Span()), "config field `%s` is %s; config values are single values read from the environment", f.Name.Name, describe(t)).
				WithHelp("use a scalar type: Text, Int, Decimal, Bool, Url, Email, Uuid, Instant, Duration, an enum or a refinement of one")
			// The one diagnostic: its default and uses are read as of its
			// element's type (Text for a record), and not reported again.
			if t.Elem != nil && t.Elem.Kind != ir.List && t.Elem.Kind != ir.Map && t.Elem.Kind != ir.RecordK {
				t = *t.Elem
			} else {
				t = ir.Type{Kind: ir.Text}
			}
			cf.typeFailed = true
		}
		before := len(c.diags)
		opts := c.configOptions(d.file, f, &t)
		optionsReported := len(c.diags) > before
		cf.ir.Type = t
		b := opts["binding"]
		switch {
		case b == nil && optionsReported:
			// a misspelt option was reported; that is the one mistake
		case b == nil:
			c.add(diag.ConfigBindingRequired, d.file.Range(f.Name.Span()), "config field `%s` has no `binding`", f.Name.Name).
				WithHelp(`name the environment variable it is read from: { binding: "` + upperSnake(f.Name.Name) + `" }`)
		case b.Value.Text == nil || !bindingRE.MatchString(b.Value.TextValue()):
			c.add(diag.ConfigUnknownOption, d.file.Range(b.Value.Span()), "`binding` takes the name of an environment variable as text").
				WithHelp(`for example { binding: "` + upperSnake(f.Name.Name) + `" }`)
		default:
			cf.ir.Binding = b.Value.TextValue()
		}
		if sm := opts["secret"]; sm != nil {
			switch refName(sm.Value) {
			case "true":
				cf.ir.Secret = true
			case "false":
			default:
				c.add(diag.ConfigUnknownOption, d.file.Range(sm.Value.Span()), "`secret` takes `true` or `false`").
					WithLabel("write `secret: true` or `secret: false`").
					WithHelp("`secret` is `true` (the value is never shown) or `false`; leave it out for `false`")
				// Taken as secret, the safe reading: its uses are not
				// reported again as taking a field that is not secret.
				cf.ir.Secret = true
			}
		}
		if dm := opts["default"]; dm != nil {
			if cf.ir.Secret {
				c.add(diag.ConfigSecretDefault, d.file.Range(dm.Key.Span()), "secret config field `%s` has a default", f.Name.Name).
					WithHelp("a secret comes from the environment or .env.local only; remove the default")
				continue
			}
			if !isLiteralOf(dm.Value, t) {
				c.add(diag.ConfigUnknownOption, d.file.Range(dm.Value.Span()), "`default` takes a literal of the field's type").
					WithHelp(defaultHelp(t))
				continue
			}
			optional := t
			optional.Optional = true // `default: none` makes the field optional
			raw, problem := literalValue(dm.Value, optional)
			if problem != "" {
				c.add(diag.TypeMismatch, d.file.Range(dm.Value.Span()), "the default does not fit `%s`: %s", f.Name.Name, problem).
					WithHelp(defaultHelp(t))
				continue
			}
			cf.ir.Default = raw
			c.refVariant(d.file, dm.Value, t)
			if string(raw) == "null" {
				cf.ir.Type.Optional = true
			}
		}
	}
}

// configOptions reads a config field's options block: binding, secret,
// default, and the type's own rules.
func (c *checker) configOptions(f *ast.File, field *ast.Field, t *ir.Type) map[string]*ast.Member {
	if field.Options == nil {
		return map[string]*ast.Member{}
	}
	// Rules first, then the config options; an unknown key is config.unknown_option.
	ms := c.members(f, field.Options, diag.ConfigUnknownOption, "in a config field's options", blockKeys["config field"]...)
	rules := &ast.Block{Node: field.Options.Node}
	out := map[string]*ast.Member{}
	for _, m := range field.Options.Members {
		if m.Key == nil || ms[m.Key.Name] != m {
			continue
		}
		if contains(ruleKeys, m.Key.Name) {
			rules.Members = append(rules.Members, m)
		} else {
			out[m.Key.Name] = m
		}
	}
	if len(rules.Members) > 0 {
		c.applyRules(f, t, rules, "")
	}
	return out
}

func upperSnake(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}

// configRef reads `config.<field>`; ok is false when e is not one.
func configRef(e *ast.Expr) (name string, ident *ast.Ident, ok bool) {
	if e == nil || e.Ref == nil || e.Ref.Call != nil || len(e.Ref.Path.Parts) != 2 || e.Ref.Path.Parts[0].Name != "config" {
		return "", nil, false
	}
	return e.Ref.Path.Parts[1].Name, &e.Ref.Path.Parts[1], true
}

// nearConfigRef is `config.<field>` for a reference that misspells
// `config` (`conig.sqs_host`), else "".
func nearConfigRef(e *ast.Expr) string {
	if e == nil || e.Ref == nil || e.Ref.Call != nil || len(e.Ref.Path.Parts) != 2 {
		return ""
	}
	if suggest(e.Ref.Path.Parts[0].Name, []string{"config"}) == "" {
		return ""
	}
	return "config." + e.Ref.Path.Parts[1].Name
}

// useConfig resolves a config reference; sink says whether the place may
// take a secret. It reports unknown fields and secret flows, and returns nil
// when the reference cannot be used.
func (c *checker) useConfig(f *ast.File, e *ast.Expr, sink bool, place string) *configField {
	name, ident, _ := configRef(e)
	cf, ok := c.configs[name]
	if ok {
		cf.used = true
		c.ref(f, e.Ref.Path.Parts[0].Span(), c.sym(c.configDecl))
		c.ref(f, ident.Span(), cf.sym)
	}
	if !ok {
		d := c.add(diag.ConfigUnknownField, f.Range(e.Span()), "there is no config field `%s`", name)
		if c.configDecl == nil {
			d.WithHelp("declare the app's config: config AppConfig { " + name + `: Text { binding: "` + upperSnake(name) + `" } }`)
		} else {
			d.Suggest(suggest(name, sortedKeys(c.configs))).WithRelated(c.configDecl.rng(), "the app's config is declared here")
		}
		return nil
	}
	if cf.ir.Secret && !sink {
		c.add(diag.ConfigSecretFlow, f.Range(ident.Span()), "secret config field `%s` flows into %s", name, place).
			WithRelated(cf.file.Range(cf.field.Name.Span()), "declared secret here").
			WithHelp("a secret may flow only into a credential's secret members and a store's `database`")
		return nil
	}
	return cf
}

// rawJSON marshals a Go string as JSON.
func rawJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// defaultHelp says how a default of type t is written.
func defaultHelp(t ir.Type) string {
	switch t.Kind {
	case ir.Text, ir.Email, ir.Url, ir.Uuid, ir.Instant:
		return "write the default in double quotes, for example `default: \"...\"`, or `default: none` to make the field optional"
	case ir.Duration:
		return "write a duration such as `default: 30s`, or `default: none` to make the field optional"
	case ir.Int, ir.Decimal:
		return "write a number such as `default: 10`, or `default: none` to make the field optional"
	case ir.Bool:
		return "write `default: true` or `default: false`"
	case ir.Enum:
		return "write one of " + keyList(t.Variants) + " unquoted, for example `default: " + t.Variants[0] + "`"
	}
	return "a default is a literal: text, a number, a duration, `true`/`false`, an enum's variant or `none`"
}
