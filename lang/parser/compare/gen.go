// Package compare measures the jadpo front end against CUE's and HCL's
// parsers on structurally equivalent inputs.
//
// The inputs are made from one generated .jadpo project (lang/projectgen):
// each file is parsed, and every declaration, field, member and expression
// is written again in CUE and in HCL, keeping the nesting and, where the
// other syntax allows, the line layout (a block written on one line stays on
// one line). So the three parsers read the same declarations in the same
// files, each in its own syntax, and their MB/s can be compared.
package compare

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// Translate parses every .jadpo file of fsys and writes it again in CUE and
// HCL, under the same path with .cue and .hcl extensions.
func Translate(fsys fstest.MapFS) (cue, hcl map[string][]byte, err error) {
	cue, hcl = map[string][]byte{}, map[string][]byte{}
	for name, f := range fsys {
		if !strings.HasSuffix(name, ".jadpo") {
			continue
		}
		tree, diags := parser.ParseFile(source.NewFile(name, f.Data))
		if len(diags) > 0 {
			return nil, nil, fmt.Errorf("%s: %v", name, diags)
		}
		base := strings.TrimSuffix(name, ".jadpo")
		c := &cueWriter{w: w{src: f.Data}}
		c.file(tree)
		cue[base+".cue"] = []byte(c.b.String())
		h := &hclWriter{w: w{src: f.Data}}
		h.file(tree)
		hcl[base+".hcl"] = []byte(h.b.String())
	}
	return cue, hcl, nil
}

// w is what both writers share: the output, the indentation, and the
// source to ask whether a node was written on one line.
type w struct {
	b      strings.Builder
	indent int
	src    []byte
}

func (x *w) nl() {
	x.b.WriteByte('\n')
	for i := 0; i < x.indent; i++ {
		x.b.WriteString("    ")
	}
}

func (x *w) s(parts ...string) {
	for _, p := range parts {
		x.b.WriteString(p)
	}
}

// oneLine reports whether the node was written on a single line.
func (x *w) oneLine(n ast.Node) bool {
	sp := n.Span()
	return !strings.Contains(string(x.src[sp.Start:sp.End]), "\n")
}

// sameLine reports whether b starts on the line a ends on.
func (x *w) sameLine(a, b ast.Node) bool {
	return !strings.Contains(string(x.src[a.Span().End:b.Span().Start]), "\n")
}

// gap writes what stands between two declarations (or before the first):
// its comment lines, and a blank line where the source has one. Both CUE
// and HCL take `//` comments.
func gap(x *w, decls []*ast.Decl, i int) {
	from := 0
	if i > 0 {
		from = decls[i-1].Span().End
	}
	between := string(x.src[from:decls[i].Span().Start])
	lines := strings.Split(between, "\n")
	for j, line := range lines {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "//"):
			x.s(line, "\n")
		case line == "" && i > 0 && j > 0 && j < len(lines)-1:
			x.s("\n")
		}
	}
}

// ---------------------------------------------------------------------------
// CUE

type cueWriter struct{ w }

var cueBuiltins = map[string]string{
	"Text": "string", "Int": "int", "Decimal": "number", "Bool": "bool", "Uuid": "string",
	"Instant": "string", "Email": "string", "Url": "string", "Duration": "string",
}

func (c *cueWriter) file(f *ast.File) {
	for i, d := range f.Decls {
		gap(&c.w, f.Decls, i)
		c.decl(d)
		c.s("\n")
	}
}

func (c *cueWriter) decl(d *ast.Decl) {
	switch {
	case d.Use != nil:
		c.s("use: \"", strings.Join(d.Use.Path.Parts, "/"), "\": [")
		for i, n := range d.Use.Names {
			if i > 0 {
				c.s(", ")
			}
			c.s(n.Name)
		}
		c.s("]")
	case d.Package != nil:
		c.s("\"package\": ", d.Package.Name.String())
	case d.Provider != nil:
		c.s("provider: ")
		c.block(d.Provider.Body)
	case d.Settings != nil:
		c.s("settings: ")
		c.fields(d.Settings.Node, d.Settings.Fields, "")
	case d.Resource != nil:
		c.s("resource: ", d.Resource.Name.Name, ": {")
		c.indent++
		for _, op := range d.Resource.Operations {
			c.nl()
			c.s("operation: ", op.Name.Name, ": ")
			c.block(op.Body)
		}
		c.indent--
		c.nl()
		c.s("}")
	case d.Subscriber != nil:
		c.subscriber(d.Subscriber)
	case d.Named != nil:
		c.named(d.Named)
	}
}

func (c *cueWriter) named(n *ast.Named) {
	attr := ""
	if n.Public {
		attr = " @public()"
	}
	switch {
	case n.Type != nil:
		c.s("#", n.Type.Name.Name, ": ")
		c.typeExpr(n.Type.Base)
		if n.Type.Rules != nil {
			c.s(" & ")
			c.block(n.Type.Rules)
		}
	case n.Enum != nil:
		c.s("#", n.Enum.Name.Name, ": ")
		for i, v := range n.Enum.Variants {
			if i > 0 {
				c.s(" | ")
			}
			c.s("\"", v.Name, "\"")
		}
		if len(n.Enum.Variants) == 0 {
			c.s("_|_")
		}
	case n.Record != nil:
		c.s("#", n.Record.Name.Name, ": ")
		kind := ""
		if n.Record.IsEvent() {
			kind = "@event()"
		}
		c.fields(n.Record.Node, n.Record.Fields, kind)
	case n.Config != nil:
		c.s("config: ", n.Config.Name.Name, ": ")
		c.fields(n.Config.Node, n.Config.Fields, "")
	case n.BlockDecl != nil:
		c.s(n.BlockDecl.Kind, ": ", n.BlockDecl.Name.Name, ": ")
		c.block(n.BlockDecl.Body)
	}
	c.s(attr)
}

func (c *cueWriter) fields(owner ast.Node, fs []*ast.Field, declAttr string) {
	c.s("{")
	c.indent++
	if declAttr != "" {
		c.nl()
		c.s(declAttr)
	}
	for _, f := range fs {
		c.nl()
		c.s(f.Name.Name)
		if f.Type.Optional {
			c.s("?")
		}
		c.s(": ")
		c.typeExpr(&f.Type)
		if f.Options != nil {
			c.s(" & ")
			c.block(f.Options)
		}
	}
	c.indent--
	c.nl()
	c.s("}")
}

func (c *cueWriter) typeExpr(t *ast.TypeExpr) {
	name := t.Name.String()
	switch {
	case name == "List" && len(t.Args) == 1:
		c.s("[...")
		c.typeExpr(t.Args[0])
		c.s("]")
	case name == "Map" && len(t.Args) == 2:
		c.s("{[string]: ")
		c.typeExpr(t.Args[1])
		c.s("}")
	case cueBuiltins[name] != "":
		c.s(cueBuiltins[name])
	default:
		parts := t.Name.Parts
		for i, p := range parts {
			if i > 0 {
				c.s(".")
			}
			if i == len(parts)-1 {
				c.s("#")
			}
			c.s(p.Name)
		}
	}
}

// block is a struct, on one line (commas) or many, as the source has it.
func (c *cueWriter) block(b *ast.Block) {
	if len(b.Members) == 0 {
		c.s("{}")
		return
	}
	if c.oneLine(b.Node) {
		c.s("{")
		for i, m := range b.Members {
			if i > 0 {
				c.s(", ")
			}
			c.member(m)
		}
		c.s("}")
		return
	}
	c.s("{")
	c.indent++
	for i, m := range b.Members {
		if i == 0 || !c.sameLine(b.Members[i-1].Node, m.Node) {
			c.nl()
		} else {
			c.s(", ")
		}
		c.member(m)
	}
	c.indent--
	c.nl()
	c.s("}")
}

func (c *cueWriter) member(m *ast.Member) {
	if m.Key != nil {
		c.s(m.Key.Name, ": ")
		c.expr(m.Value)
		return
	}
	if len(m.Entry.Parts) > 1 {
		c.s("\"", m.Entry.String(), "\": ")
	} else {
		c.s(m.Entry.String(), ": ")
	}
	if m.EntryBody != nil {
		c.block(m.EntryBody)
	} else {
		c.s("{}")
	}
}

func (c *cueWriter) expr(e *ast.Expr) {
	switch {
	case e.Text != nil:
		c.s(*e.Text)
	case e.Number != nil:
		c.s(*e.Number)
	case e.Duration != nil:
		c.s("\"", *e.Duration, "\"")
	case e.List != nil:
		c.s("[")
		for i, it := range e.List.Items {
			if i > 0 {
				c.s(", ")
			}
			c.expr(it)
		}
		c.s("]")
	case e.Record != nil:
		c.block(e.Record)
	case e.Ref != nil:
		c.ref(e.Ref)
	}
}

func (c *cueWriter) ref(r *ast.Ref) {
	path := r.Path.String()
	if path == "none" {
		path = "null"
	}
	c.s(path)
	if r.Call == nil {
		return
	}
	named := len(r.Call.Items) > 0 && r.Call.Items[0].Name != nil
	if !named {
		c.s("(")
		for i, a := range r.Call.Items {
			if i > 0 {
				c.s(", ")
			}
			c.expr(a.Value)
		}
		c.s(")")
		return
	}
	// Named arguments are one struct argument.
	c.s("({")
	multi := !c.oneLine(r.Call.Node)
	c.indent++
	for i, a := range r.Call.Items {
		if multi {
			c.nl()
		} else if i > 0 {
			c.s(", ")
		}
		if a.Name != nil {
			c.s(a.Name.Name, ": ")
		}
		c.expr(a.Value)
	}
	c.indent--
	if multi {
		c.nl()
	}
	c.s("})")
}

func (c *cueWriter) subscriber(s *ast.Subscriber) {
	c.s("subscriber: ", s.Name.Name, ": {")
	c.indent++
	for _, it := range s.Items {
		c.nl()
		if it.Member != nil {
			c.member(it.Member)
			continue
		}
		h := it.Handler
		c.s("on: ")
		if len(h.Event.Parts) > 1 {
			c.s("\"", h.Event.String(), "\"")
		} else {
			c.s(h.Event.String())
		}
		c.s(": {")
		c.indent++
		c.nl()
		c.s("binding: \"", h.Binding.Name, "\"")
		c.nl()
		c.s("attempt: [")
		c.indent++
		for _, st := range h.Steps {
			c.nl()
			c.expr(st.Call)
			c.s(",")
		}
		c.indent--
		c.nl()
		c.s("]")
		c.indent--
		c.nl()
		c.s("}")
	}
	c.indent--
	c.nl()
	c.s("}")
}

// ---------------------------------------------------------------------------
// HCL

type hclWriter struct{ w }

func (h *hclWriter) file(f *ast.File) {
	for i, d := range f.Decls {
		gap(&h.w, f.Decls, i)
		h.decl(d)
		h.s("\n")
	}
}

func quote(s string) string { return "\"" + s + "\"" }

func (h *hclWriter) decl(d *ast.Decl) {
	switch {
	case d.Use != nil:
		h.s("use ", quote(strings.Join(d.Use.Path.Parts, "/")), " { names = [")
		for i, n := range d.Use.Names {
			if i > 0 {
				h.s(", ")
			}
			h.s(n.Name)
		}
		h.s("] }")
	case d.Package != nil:
		h.s("package = ", d.Package.Name.String())
	case d.Provider != nil:
		h.s("provider ")
		h.body(d.Provider.Body)
	case d.Settings != nil:
		h.s("settings ")
		h.fields(d.Settings.Fields, nil)
	case d.Resource != nil:
		h.s("resource ", quote(d.Resource.Name.Name), " {")
		h.indent++
		for _, op := range d.Resource.Operations {
			h.nl()
			h.s("operation ", quote(op.Name.Name), " ")
			h.body(op.Body)
		}
		h.indent--
		h.nl()
		h.s("}")
	case d.Subscriber != nil:
		h.subscriber(d.Subscriber)
	case d.Named != nil:
		h.named(d.Named)
	}
}

func (h *hclWriter) named(n *ast.Named) {
	var attrs []string
	if n.Public {
		attrs = append(attrs, "public = true")
	}
	switch {
	case n.Type != nil:
		h.s("type ", quote(n.Type.Name.Name), " ")
		if n.Type.Rules == nil && !n.Public {
			h.s("{ base = ")
			h.typeExpr(n.Type.Base)
			h.s(" }")
			return
		}
		h.s("{")
		h.indent++
		for _, a := range attrs {
			h.nl()
			h.s(a)
		}
		h.nl()
		h.s("base = ")
		h.typeExpr(n.Type.Base)
		if n.Type.Rules != nil {
			h.nl()
			h.s("rules = ")
			h.object(n.Type.Rules)
		}
		h.indent--
		h.nl()
		h.s("}")
	case n.Enum != nil:
		h.s("enum ", quote(n.Enum.Name.Name), " {")
		if n.Public {
			h.indent++
			h.nl()
			h.s("public = true")
			h.nl()
		} else {
			h.s(" ")
		}
		h.s("variants = [")
		for i, v := range n.Enum.Variants {
			if i > 0 {
				h.s(", ")
			}
			h.s(v.Name)
		}
		h.s("]")
		if n.Public {
			h.indent--
			h.nl()
			h.s("}")
		} else {
			h.s(" }")
		}
	case n.Record != nil:
		h.s(n.Record.Kind, " ", quote(n.Record.Name.Name), " ")
		h.fields(n.Record.Fields, attrs)
	case n.Config != nil:
		h.s("config ", quote(n.Config.Name.Name), " ")
		h.fields(n.Config.Fields, attrs)
	case n.BlockDecl != nil:
		h.s(n.BlockDecl.Kind, " ", quote(n.BlockDecl.Name.Name), " ")
		h.body(n.BlockDecl.Body)
	}
}

func (h *hclWriter) fields(fs []*ast.Field, attrs []string) {
	h.s("{")
	h.indent++
	for _, a := range attrs {
		h.nl()
		h.s(a)
	}
	for _, f := range fs {
		h.nl()
		h.s(f.Name.Name, " = ")
		if f.Options == nil {
			h.typeExpr(&f.Type)
			continue
		}
		h.s("{ type = ")
		h.typeExpr(&f.Type)
		for _, m := range f.Options.Members {
			h.s(", ")
			h.objectItem(m)
		}
		h.s(" }")
	}
	h.indent--
	h.nl()
	h.s("}")
}

func (h *hclWriter) typeExpr(t *ast.TypeExpr) {
	name := t.Name.String()
	if t.Optional {
		h.s("optional(")
	}
	switch {
	case name == "List" && len(t.Args) == 1:
		h.s("list(")
		h.typeExpr(t.Args[0])
		h.s(")")
	case name == "Map" && len(t.Args) == 2:
		h.s("map(")
		h.typeExpr(t.Args[0])
		h.s(", ")
		h.typeExpr(t.Args[1])
		h.s(")")
	default:
		h.s(name)
	}
	if t.Optional {
		h.s(")")
	}
}

// body writes a declaration's block as an HCL block: one attribute per
// line (HCL allows no more on a line), nested records as object values.
func (h *hclWriter) body(b *ast.Block) {
	if len(b.Members) == 0 {
		h.s("{}")
		return
	}
	if len(b.Members) == 1 && h.oneLine(b.Node) && b.Members[0].Key != nil {
		h.s("{ ")
		h.attr(b.Members[0])
		h.s(" }")
		return
	}
	h.s("{")
	h.indent++
	for _, m := range b.Members {
		h.nl()
		h.attr(m)
	}
	h.indent--
	h.nl()
	h.s("}")
}

func (h *hclWriter) attr(m *ast.Member) {
	if m.Key != nil {
		h.s(m.Key.Name, " = ")
		h.expr(m.Value)
		return
	}
	// An entry in a declaration's body is a nested block.
	h.s(m.Entry.String(), " ")
	if m.EntryBody != nil {
		h.body(m.EntryBody)
	} else {
		h.s("{}")
	}
}

// object writes a record as an object constructor, on one line with
// commas or on many, as the source has it.
func (h *hclWriter) object(b *ast.Block) {
	if len(b.Members) == 0 {
		h.s("{}")
		return
	}
	if h.oneLine(b.Node) {
		h.s("{ ")
		for i, m := range b.Members {
			if i > 0 {
				h.s(", ")
			}
			h.objectItem(m)
		}
		h.s(" }")
		return
	}
	h.s("{")
	h.indent++
	for i, m := range b.Members {
		if i == 0 || !h.sameLine(b.Members[i-1].Node, m.Node) {
			h.nl()
		} else {
			h.s(", ")
		}
		h.objectItem(m)
	}
	h.indent--
	h.nl()
	h.s("}")
}

func (h *hclWriter) objectItem(m *ast.Member) {
	if m.Key != nil {
		h.s(m.Key.Name, " = ")
		h.expr(m.Value)
		return
	}
	if len(m.Entry.Parts) > 1 {
		h.s(quote(m.Entry.String()), " = ")
	} else {
		h.s(m.Entry.String(), " = ")
	}
	if m.EntryBody != nil {
		h.object(m.EntryBody)
	} else {
		h.s("{}")
	}
}

func (h *hclWriter) expr(e *ast.Expr) {
	switch {
	case e.Text != nil:
		h.s(*e.Text)
	case e.Number != nil:
		h.s(*e.Number)
	case e.Duration != nil:
		h.s(quote(*e.Duration))
	case e.List != nil:
		h.s("[")
		for i, it := range e.List.Items {
			if i > 0 {
				h.s(", ")
			}
			h.expr(it)
		}
		h.s("]")
	case e.Record != nil:
		h.object(e.Record)
	case e.Ref != nil:
		path := e.Ref.Path.String()
		if path == "none" {
			path = "null"
		}
		if e.Ref.Call == nil {
			h.s(path)
			return
		}
		// A function call; HCL functions take positional arguments, so
		// named ones become one object argument.
		h.s(path, "(")
		named := len(e.Ref.Call.Items) > 0 && e.Ref.Call.Items[0].Name != nil
		if named {
			h.s("{ ")
		}
		for i, a := range e.Ref.Call.Items {
			if i > 0 {
				h.s(", ")
			}
			if a.Name != nil {
				h.s(a.Name.Name, " = ")
			}
			h.expr(a.Value)
		}
		if named {
			h.s(" }")
		}
		h.s(")")
	}
}

// subscriber: handlers are blocks labelled with the event and binding, each
// attempt a block labelled with the operation, its arguments attributes.
func (h *hclWriter) subscriber(s *ast.Subscriber) {
	h.s("subscriber ", quote(s.Name.Name), " {")
	h.indent++
	for _, it := range s.Items {
		h.nl()
		if it.Member != nil {
			h.attr(it.Member)
			continue
		}
		hd := it.Handler
		h.s("on ", quote(hd.Event.String()), " ", quote(hd.Binding.Name), " {")
		h.indent++
		for _, st := range hd.Steps {
			h.nl()
			r := st.Call.Ref
			if r == nil || r.Call == nil {
				h.s("attempt = ")
				h.expr(st.Call)
				continue
			}
			h.s("attempt ", quote(r.Path.String()), " {")
			h.indent++
			for _, a := range r.Call.Items {
				h.nl()
				if a.Name != nil {
					h.s(a.Name.Name, " = ")
				} else {
					h.s("_ = ")
				}
				h.expr(a.Value)
			}
			h.indent--
			h.nl()
			h.s("}")
		}
		h.indent--
		h.nl()
		h.s("}")
	}
	h.indent--
	h.nl()
	h.s("}")
}
