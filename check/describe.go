package check

import (
	"encoding/json"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// PackageReference is what an installed package offers an app, as the
// checker read it: the matter of the package's reference page.
type PackageReference struct {
	Name     string // with its version: AmazonSqs.v2012_11_05
	About    string // the comment before `package`, without its slashes
	Provider ir.Provider
	Settings []SettingReference // in the order declared
	// Operations of every resource, by resource file then declaration order.
	Operations []OperationReference
	// Records holds every value type an operation's input or output reaches,
	// by name, and the package's public events.
	Records map[string][]FieldReference
	Events  []string
	// Credential lists the members a connection's credential gives.
	Credential []ir.CredentialMember
	Receiving  *ir.Receiving // nil without provide receiving
	Email      *ir.Call      // nil without provide email
	// ReceivingAbout and EmailAbout are the comments above the mappings.
	ReceivingAbout, EmailAbout string
}

// SettingReference is one setting a package declares.
type SettingReference struct {
	Name string
	// Type is as code names it (`WaitTimeSeconds`, `Text?`); Base is resolved,
	// with every rule of the declared type.
	Type     string
	Base     ir.Type
	Default  json.RawMessage // nil without a default
	Required bool
	// About is the comment above the setting or above its group of settings;
	// TypeAbout the comment above its declared type.
	About, TypeAbout string
}

// OperationReference is one operation of a resource.
type OperationReference struct {
	ir.Operation
	Decode        bool   // read by a decoder of the package's own: neither mapped nor called
	About         string // the comment above the operation
	Input, Output string // the value types' names, "" when absent
}

// FieldReference is one field of a value type.
type FieldReference struct {
	Name, Type, WireName string
	Required             bool
}

// DescribePackages checks the project and describes each installed package,
// every resource loaded. The diagnostics are the check's: a package with
// problems is described as far as it was read.
func DescribePackages(p *project.Project) ([]PackageReference, diag.List) {
	c := newChecker(p)
	if p.App == nil || p.HasSyntaxErrors() {
		return nil, onlySyntaxIfAny(append(diag.List(nil), p.Diags...))
	}
	c.run()
	var out []PackageReference
	for _, dir := range sortedKeys(c.pkgDirs) {
		pk := c.pkgDirs[dir]
		ref := PackageReference{Name: dir, Provider: pk.provider, Records: map[string][]FieldReference{}}
		if h := pk.proj.Header; h != nil {
			for _, d := range h.Decls {
				if d.Package != nil {
					ref.About = commentAbove(h.Source, d.Package.Span().Start, false)
				}
			}
		}
		ref.Settings = c.describeSettings(pk)
		for _, name := range pk.proj.ResourceNames() {
			r := c.loadResource(pk, name)
			if r == nil {
				continue
			}
			for _, d := range r.file.Decls {
				if d.Resource == nil {
					continue
				}
				for _, op := range d.Resource.Operations {
					o := r.ops[op.Name.Name]
					if o == nil {
						continue
					}
					or := OperationReference{Operation: o.ir, Decode: o.decode, About: commentAbove(r.file.Source, op.Span().Start, true)}
					if o.input != nil {
						or.Input = o.input.name
						c.describeRecord(ref.Records, o.input)
					}
					if o.output != nil {
						or.Output = o.output.name
						c.describeRecord(ref.Records, o.output)
					}
					ref.Operations = append(ref.Operations, or)
				}
			}
		}
		for _, name := range sortedKeys(pk.ns.decls) {
			if d := pk.ns.decls[name]; d.kind == kindEvent && d.public {
				ref.Events = append(ref.Events, name)
				c.describeRecord(ref.Records, d)
			}
		}
		ref.Credential = c.schemeMembers(pk.provider.Credential)
		if pd := pk.provides["receiving"]; pd != nil {
			ref.ReceivingAbout = commentAbove(pd.file.Source, pd.decl.Span().Start, false)
		}
		if pd := pk.provides["email"]; pd != nil {
			ref.EmailAbout = commentAbove(pd.file.Source, pd.decl.Span().Start, false)
		}
		if pk.receiving != nil && pk.receiving.ok {
			ref.Receiving = pk.receiving.ir
		}
		if pk.emailMapping != nil && pk.emailMapping.ok {
			ref.Email = pk.emailMapping.ir
		}
		out = append(out, ref)
	}
	diags := c.diags
	diags.Sort()
	return out, diags
}

func (c *checker) describeSettings(pk *pkg) []SettingReference {
	var out []SettingReference
	for _, st := range pk.settings {
		ref := SettingReference{Name: st.name, Type: TypeText(st.typ), Base: st.typ, Default: st.def, Required: st.required(),
			About: commentAbove(st.file.Source, st.field.Span().Start, true)}
		if len(st.field.Type.Name.Parts) > 0 {
			ref.Type = string(st.file.Source.Content[st.field.Type.Span().Start:st.field.Type.Span().End])
			if d := pk.ns.decls[st.field.Type.Name.String()]; d != nil {
				ref.TypeAbout = commentAbove(d.file.Source, d.node.Span().Start, false)
			}
		}
		out = append(out, ref)
	}
	// In the order declared: a group of settings shares the comment above it.
	sortSettings(out, pk)
	return out
}

func sortSettings(s []SettingReference, pk *pkg) {
	at := func(name string) int { return pk.settings[name].field.Span().Start }
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && at(s[j].Name) < at(s[j-1].Name); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (c *checker) describeRecord(into map[string][]FieldReference, d *decl) {
	if _, done := into[d.name]; done || d.kind != kindValue && d.kind != kindEvent {
		return
	}
	c.resolveDecl(d)
	fields := []FieldReference{}
	into[d.name] = fields
	for _, f := range d.fields() {
		fields = append(fields, FieldReference{Name: f.Name, Type: TypeText(f.Type), WireName: f.WireName, Required: !f.Type.Optional})
		t := f.Type
		for t.Elem != nil {
			t = *t.Elem
		}
		if t.Kind == ir.RecordK {
			if rd := c.recordDecl(t.Name); rd != nil {
				c.describeRecord(into, rd)
			}
		}
	}
	into[d.name] = fields
}

// commentAbove is the run of `//` lines just above the line holding offset.
// With group, a run of declarations without comments of their own between
// the comment and the line still counts (the comment speaks for the group),
// up to a blank line or an opening brace.
func commentAbove(f *source.File, offset int, group bool) string {
	text := string(f.Content[:offset])
	lines := strings.Split(text, "\n")
	i := len(lines) - 2 // lines[len-1] is the start of the line holding offset
	if group {
		for i >= 0 {
			l := strings.TrimSpace(lines[i])
			if l == "" || strings.HasSuffix(l, "{") || strings.HasPrefix(l, "//") {
				break
			}
			i--
		}
	}
	var out []string
	for ; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "//") {
			break
		}
		out = append([]string{strings.TrimSpace(strings.TrimPrefix(l, "//"))}, out...)
	}
	// An empty comment line parts paragraphs.
	return strings.ReplaceAll(strings.Join(out, " "), "  ", "\n\n")
}
