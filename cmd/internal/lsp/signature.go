package lsp

import (
	"strings"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// Signature help (textDocument/signatureHelp): inside a handler's call,
// `attempt <connection>.<resource>.<operation>(...)`, `attempt
// <connection>.send(...)` or `json(...)`, the call's inputs with their
// types, the one the cursor is at marked. Like completion, it reads where
// the cursor is from the tokens before it: a call being typed rarely
// parses.

// callInput is one input of a call as signature help shows it.
type callInput struct {
	name, typ string // typ "" for json's binding
	optional  bool
}

func inputsOf(fields []ir.Field) []callInput {
	out := make([]callInput, len(fields))
	for i, f := range fields {
		out[i] = callInput{f.Name, check.TypeText(f.Type), f.Type.Optional}
	}
	return out
}

// callInputs are the inputs of the call path names, and its label's name;
// ok is false when the path names no call the project has.
func (pr *proj) callInputs(path []string) (name string, inputs []callInput, doc string, ok bool) {
	ix := pr.res.Index
	switch {
	case len(path) == 1 && path[0] == "json":
		return "json", []callInput{{name: "binding"}}, "the handler's event as JSON text, where text is expected", true
	case len(path) == 2 && path[1] == "send":
		if conn := connectionNamed(ix, path[0]); conn != nil {
			return path[0] + ".send", inputsOf(check.SendFields()), "sends mail through connection `" + path[0] + "` (package `" + conn.Package + "`): `text`, `html` or both", true
		}
	case len(path) == 3:
		conn := connectionNamed(ix, path[0])
		if conn == nil {
			return "", nil, "", false
		}
		doc := func(input, output string) string {
			d := "operation `" + path[1] + "." + path[2] + "` of package `" + conn.Package + "`, input `" + input + "`"
			if output != "" {
				d += ", output `" + output + "`"
			}
			return d
		}
		for sym := range ix.Symbols() {
			if sym.Kind == check.SymOperation && sym.Package == conn.Package && sym.Name == path[2] && sym.Parent != nil && sym.Parent.Name == path[1] && sym.Input != nil {
				out := ""
				if sym.Output != nil {
					out = sym.Output.Name
				}
				return strings.Join(path, "."), inputsOf(sym.Input.Fields), doc(sym.Input.Name, out), true
			}
		}
		// The check read no call of the operation (the handler being typed
		// does not parse, and a resource's file is read only for a call):
		// the resource's file says what its input is.
		if in, out, inputs, ok := pr.operationFromSource(conn.Package, path[1], path[2]); ok {
			return strings.Join(path, "."), inputs, doc(in, out), true
		}
	}
	return "", nil, "", false
}

// operationFromSource reads an operation's input from its package's
// files as written: packages/<pkg>/resources/<resource>.jadpo, the input
// value declared there or in package.jadpo. Types are shown as written.
func (pr *proj) operationFromSource(pkg, resource, operation string) (input, output string, inputs []callInput, ok bool) {
	parse := func(rel string) *ast.File {
		b, err := source.ReadLocalFile(pr.abs(rel), source.MaxFileSize)
		if err != nil {
			return nil
		}
		f, _ := parser.ParseFile(source.NewFile(rel, b))
		return f
	}
	dir := "packages/" + pkg + "/"
	res := parse(dir + "resources/" + resource + ".jadpo")
	if res == nil {
		return "", "", nil, false
	}
	var op *ast.Operation
	for _, d := range res.Decls {
		if d.Resource != nil && d.Resource.Name.Name == resource {
			for _, o := range d.Resource.Operations {
				if o.Name.Name == operation {
					op = o
				}
			}
		}
	}
	name := func(m *ast.Member) string {
		if m == nil || m.Value == nil || m.Value.Ref == nil {
			return ""
		}
		return m.Value.Ref.Path.String()
	}
	if op == nil || name(op.Body.Get("input")) == "" {
		return "", "", nil, false
	}
	input, output = name(op.Body.Get("input")), name(op.Body.Get("output"))
	for _, f := range []*ast.File{res, parse(dir + "package.jadpo")} {
		if f == nil {
			continue
		}
		for _, d := range f.Decls {
			if r := d.Named; r != nil && r.Record != nil && r.Record.Name.Name == input {
				for _, fl := range r.Record.Fields {
					t := f.Range(fl.Type.Span()).Text()
					inputs = append(inputs, callInput{fl.Name.Name, t, fl.Type.Optional})
				}
				return input, output, inputs, true
			}
		}
	}
	return "", "", nil, false
}

func (s *server) signatureHelp(dc *docContext, off int) (any, error) {
	src := dc.file.Content
	cc := readCompletionContext(src, off)
	at := -1
	for i := len(cc.stack) - 1; i >= 0; i-- {
		if cc.stack[i].kind == "call" {
			at = i
			break
		}
		if k := cc.stack[i].kind; k != "member" && k != "list" && k != "rules" {
			break
		}
	}
	if at < 0 {
		return nil, nil
	}
	name, fields, doc, ok := dc.pr.callInputs(cc.stack[at].call)
	if !ok {
		return nil, nil
	}
	var label strings.Builder
	label.WriteString(name + "(")
	params := make([]protocol.ParameterInformation, 0, len(fields))
	for i, f := range fields {
		if i > 0 {
			label.WriteString(", ")
		}
		start := utf16Count(label.String())
		text := f.name
		if f.typ != "" {
			text += ": " + f.typ
		}
		label.WriteString(text)
		p := protocol.ParameterInformation{Label: [2]int{start, utf16Count(label.String())}}
		if f.typ != "" {
			if f.optional {
				p.Documentation = "optional: may be left out or `none`"
			} else {
				p.Documentation = "required"
			}
		}
		params = append(params, p)
	}
	label.WriteString(")")
	sig := protocol.SignatureInformation{Label: label.String(), Parameters: params,
		Documentation: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: doc}}
	if active, ok := activeInput(src, off, cc, at, fields); ok {
		sig.ActiveParameter = &active
	}
	return protocol.SignatureHelp{Signatures: []protocol.SignatureInformation{sig}, ActiveSignature: 0}, nil
}

// activeInput is the index of the input the cursor is at: the argument
// whose value it is in, the one whose name is being typed, else the first
// input not written yet.
func activeInput(src []byte, off int, cc completionContext, at int, fields []callInput) (int, bool) {
	index := func(name string) (int, bool) {
		for i, f := range fields {
			if f.name == name {
				return i, true
			}
		}
		return 0, false
	}
	if len(fields) == 1 && fields[0].typ == "" {
		return 0, true // json(binding)
	}
	if at+1 < len(cc.stack) { // inside an argument's record or list
		if k := cc.stack[at+1].key; k != "" {
			return index(k)
		}
		return 0, false
	}
	if cc.value {
		return index(cc.key)
	}
	if cc.word != "" {
		for i, f := range fields {
			if strings.HasPrefix(f.name, cc.word) {
				return i, true
			}
		}
		return 0, false
	}
	given := givenArguments(src, off)
	for i, f := range fields {
		if !given[f.name] {
			return i, true
		}
	}
	return 0, false
}

// givenArguments are the names written as `name:` directly inside the
// innermost call open before off.
func givenArguments(src []byte, off int) map[string]bool {
	toks, _ := lexer.Lex(string(src[:off]))
	type open struct {
		paren bool
		names map[string]bool
	}
	var stack []open
	for i, t := range toks {
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "(", "{", "[":
			stack = append(stack, open{paren: t.Value == "(", names: map[string]bool{}})
		case ")", "}", "]":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ":":
			if len(stack) > 0 && i > 0 && toks[i-1].Type == lexer.Ident {
				stack[len(stack)-1].names[toks[i-1].Value] = true
			}
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].paren {
			return stack[i].names
		}
	}
	return nil
}

func utf16Count(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}
