package lsp

import (
	"sort"
	"strings"

	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/lexer"
)

// Completion reads where the cursor is from the lexer's tokens up to it,
// not from the tree: while the user types, the declaration under the
// cursor rarely parses. The tokens say which block the cursor is in (the
// brackets opened and the key or keyword before each) and whether it is
// at a member's key or its value; the checker's index and tables say what
// fits there.

// The completion item kinds the server uses.
const (
	ciMethod   = protocol.CompletionItemKindMethod
	ciField    = protocol.CompletionItemKindField
	ciVariable = protocol.CompletionItemKindVariable
	ciClass    = protocol.CompletionItemKindClass
	ciModule   = protocol.CompletionItemKindModule
	ciProperty = protocol.CompletionItemKindProperty
	ciValue    = protocol.CompletionItemKindValue
	ciEnum     = protocol.CompletionItemKindEnum
	ciKeyword  = protocol.CompletionItemKindKeyword
	ciVariant  = protocol.CompletionItemKindEnumMember
	ciStruct   = protocol.CompletionItemKindStruct
	ciEvent    = protocol.CompletionItemKindEvent
	ciTypeP    = protocol.CompletionItemKindTypeParameter
)

type completionFrame struct {
	kind string // a declaration keyword, "member" (a key's block), "rules", "handler", "operation", "call", "list"
	key  string // for "member": the key whose value the block is
	decl string // the enclosing declaration's keyword
	name string // the enclosing declaration's name
	call []string
	open int // the byte offset of the block's opening bracket
}

// completionContext is what the tokens before the cursor say.
type completionContext struct {
	stack []completionFrame
	qual  []string // the dotted name before the word: config. -> [config]
	word  string   // the part of a name typed so far
	key   string   // at a value: the member's key
	value bool
}

var appDeclKeywords = []string{"use", "public", "type", "enum", "value", "event", "config", "store", "connection", "queue", "subscriber"}
var packageDeclKeywords = []string{"package", "provider", "settings", "resource", "provide", "public", "type", "enum", "value", "event"}
var builtinTypes = []string{"Text", "Int", "Decimal", "Bool", "Uuid", "Instant", "Email", "Url", "Duration", "List", "Map"}

func readCompletionContext(src []byte, off int) completionContext {
	toks, _ := lexer.Lex(string(src[:off]))
	toks = toks[:len(toks)-1] // EOF
	var cc completionContext
	if n := len(toks); n > 0 && toks[n-1].Type == lexer.Ident && toks[n-1].Pos.Offset+len(toks[n-1].Value) == off {
		cc.word = toks[n-1].Value
		toks = toks[:n-1]
	}
	for n := len(toks); n >= 2 && toks[n-1].Value == "." && toks[n-2].Type == lexer.Ident; n = len(toks) {
		cc.qual = append([]string{toks[n-2].Value}, cc.qual...)
		toks = toks[:n-2]
	}
	if n := len(toks); n >= 2 && toks[n-1].Value == ":" && toks[n-1].Type == lexer.Punct && toks[n-2].Type == lexer.Ident {
		cc.value, cc.key = true, toks[n-2].Value
	}
	decl, name := "", ""
	tok := func(i int) plexer.Token {
		if i < 0 || i >= len(toks) {
			return plexer.Token{}
		}
		return toks[i]
	}
	for i, t := range toks {
		if t.Type == lexer.Ident && len(cc.stack) == 0 {
			switch {
			case isDeclKeyword(t.Value) && t.Value != "public":
				decl, name = t.Value, ""
			case decl != "" && name == "" && tok(i-1).Value == decl:
				name = t.Value
			}
			continue
		}
		if t.Type != lexer.Punct {
			continue
		}
		switch t.Value {
		case "{":
			fr := completionFrame{decl: decl, name: name, open: t.Pos.Offset}
			prev, prev2 := tok(i-1), tok(i-2)
			switch {
			case len(cc.stack) == 0:
				fr.kind = decl
			case prev.Value == ":" && prev2.Type == lexer.Ident:
				fr.kind, fr.key = "member", prev2.Value
			case prev.Value == ")":
				fr.kind = "handler"
			case prev2.Value == "operation":
				fr.kind = "operation"
			default:
				fr.kind = "rules"
			}
			cc.stack = append(cc.stack, fr)
		case "(":
			var path []string
			for j := i - 1; j >= 0 && tok(j).Type == lexer.Ident; j -= 2 {
				path = append([]string{tok(j).Value}, path...)
				if tok(j-1).Value != "." {
					break
				}
			}
			cc.stack = append(cc.stack, completionFrame{kind: "call", decl: decl, name: name, call: path})
		case "[":
			fr := completionFrame{kind: "list", decl: decl, name: name}
			if prev, prev2 := tok(i-1), tok(i-2); prev.Value == ":" && prev2.Type == lexer.Ident {
				fr.key = prev2.Value
			}
			cc.stack = append(cc.stack, fr)
		case "}", ")", "]":
			if len(cc.stack) > 0 {
				cc.stack = cc.stack[:len(cc.stack)-1]
			}
			if len(cc.stack) == 0 && t.Value == "}" {
				decl, name = "", ""
			}
		}
	}
	return cc
}

func isDeclKeyword(w string) bool {
	for _, k := range appDeclKeywords {
		if k == w {
			return true
		}
	}
	for _, k := range packageDeclKeywords {
		if k == w {
			return true
		}
	}
	return false
}

// blockKind names the innermost block as check.MemberKeys does, with the
// connection or package it belongs to when that matters.
func (cc completionContext) blockKind() string {
	if len(cc.stack) == 0 {
		return ""
	}
	top := cc.stack[len(cc.stack)-1]
	parent := completionFrame{}
	if len(cc.stack) > 1 {
		parent = cc.stack[len(cc.stack)-2]
	}
	switch top.kind {
	case "connection", "queue", "store", "operation", "provider":
		return top.kind
	case "type":
		return "type rules"
	case "provide":
		return "provide " + top.name
	case "subscriber":
		return "subscriber"
	case "handler":
		return "handler"
	case "rules":
		switch {
		case parent.kind == "config":
			return "config field"
		case parent.kind == "event" || parent.kind == "value":
			return "field rules"
		case parent.kind == "settings":
			return "setting rules"
		case parent.kind == "member" && parent.key == "events":
			return "queue event"
		}
	case "member":
		if top.key == "input" && parent.kind == "member" && len(cc.stack) > 2 && cc.stack[len(cc.stack)-3].kind == "provide" {
			switch parent.key {
			case "receive", "acknowledge", "acknowledge_batch", "send":
				return "mapping input"
			}
		}
		switch p := parent.kind + " " + top.key; {
		case p == "connection credential":
			return "credential"
		case p == "connection settings":
			return "connection settings"
		case p == "store retention":
			return "store retention"
		case p == "subscriber retry":
			return "subscriber retry"
		case p == "provider aws":
			return "provider aws"
		case p == "queue events":
			return "queue events"
		case parent.kind == "provide" && parent.name == "receiving" && (top.key == "receive" || top.key == "acknowledge" || top.key == "acknowledge_batch"):
			return "receiving " + top.key
		case parent.kind == "provide" && parent.name == "email" && top.key == "send":
			return "email send"
		}
	}
	return top.kind
}

func (s *server) completion(dc *docContext, off int) (any, error) {
	cc := readCompletionContext(dc.file.Content, off)
	ix := dc.pr.res.Index
	var items []protocol.CompletionItem
	seen := map[string]bool{}
	add := func(label string, kind protocol.CompletionItemKind, detail string) {
		if seen[label] || !strings.HasPrefix(strings.ToLower(label), strings.ToLower(cc.word)) {
			return
		}
		seen[label] = true
		items = append(items, protocol.CompletionItem{Label: label, Kind: kind, Detail: detail})
	}
	inPackage := strings.HasPrefix(dc.path, "packages/")
	block := cc.blockKind()
	switch {
	case len(cc.qual) == 1 && cc.qual[0] == "config":
		for sym := range ix.Symbols() {
			if sym.Kind == check.SymConfigField {
				add(sym.Name, ciField, signature(sym))
			}
		}
	case len(cc.qual) == 1 && cc.qual[0] == "settings" && inPackage:
		if pkg := ix.Packages[packageDirOf(dc.path)]; pkg != nil {
			for _, ch := range pkg.Children {
				if ch.Kind == check.SymSetting {
					add(ch.Name, ciField, signature(ch))
				}
			}
		}
	case len(cc.qual) > 0 && (block == "handler" || block == "call" || blockHas(cc, "handler")):
		s.completeInHandler(dc, cc, add)
	case len(cc.qual) == 1 && isUpper(cc.qual[0]):
		// Package.Name: a package's public declarations.
		for _, n := range ix.InScope(dc.path) {
			if rest, ok := strings.CutPrefix(n.Name, cc.qual[0]+"."); ok && (block != "queue events" || n.Symbol.Kind == check.SymEvent) {
				add(rest, symbolCompletionKind(n.Symbol), signature(n.Symbol))
			}
		}
	case inCallArguments(cc):
		s.completeArguments(dc, cc, add)
	case cc.value && cc.key == "package" && block == "connection":
		if s.opts.Catalogue != nil {
			for _, name := range s.opts.Catalogue() {
				add(name, ciModule, "catalogue package")
			}
		}
		for dir := range ix.Packages {
			add(dir, ciModule, "installed package")
		}
	case cc.value:
		if typePosition(block, cc) {
			s.completeTypes(dc, add)
		}
	case block == "":
		words := appDeclKeywords
		if inPackage {
			words = packageDeclKeywords
		}
		for _, w := range words {
			add(w, ciKeyword, "declaration")
		}
	case block == "queue events":
		for _, n := range ix.InScope(dc.path) {
			if n.Symbol.Kind == check.SymEvent {
				add(n.Name, ciEvent, signature(n.Symbol))
			}
		}
	case block == "connection settings":
		if conn := connectionNamed(ix, cc.stack[0].name); conn != nil {
			if pkg := ix.Packages[conn.Package]; pkg != nil {
				for _, ch := range pkg.Children {
					if ch.Kind == check.SymSetting {
						add(ch.Name, ciProperty, signature(ch))
					}
				}
			}
		}
	case block == "credential":
		if conn := connectionNamed(ix, cc.stack[0].name); conn != nil {
			if pkg := ix.Packages[conn.Package]; pkg != nil {
				// The scheme's members as the checker takes them: a built-in
				// scheme's or a driver's, from the contracts handed to it.
				drivers, _ := dc.pr.proj.Drivers.(check.Drivers)
				for _, k := range drivers.CredentialKeys(ir.CredentialScheme(pkg.Scheme)) {
					add(k, ciProperty, pkg.Scheme+" credential")
				}
			}
		}
	case block == "mapping input":
		s.completeMappingInput(dc, cc, add)
	case block == "subscriber":
		add("on", ciKeyword, "a handler: on Event(binding) { attempt ... }")
		add("retry", ciProperty, "how deliveries are retried")
	case block == "handler":
		add("attempt", ciKeyword, "call an operation: attempt <connection>.<resource>.<operation>(...)")
	case block == "resource":
		add("operation", ciKeyword, "an operation of the resource")
	case block == "config" || block == "event" || block == "value" || block == "settings":
		// a field's name is the author's to choose
	default:
		for _, k := range check.MemberKeys(block) {
			add(k, ciProperty, block)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Label < items[j].Label })
	if items == nil {
		items = []protocol.CompletionItem{}
	}
	return protocol.CompletionList{IsIncomplete: false, Items: items}, nil
}

func blockHas(cc completionContext, kind string) bool {
	for _, f := range cc.stack {
		if f.kind == kind {
			return true
		}
	}
	return false
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// typePosition reports whether a value being typed is a type: a field's
// (of a record, the config or the settings), a type's base, an
// operation's input or output.
func typePosition(block string, cc completionContext) bool {
	switch block {
	case "config", "event", "value", "settings":
		return true
	case "operation":
		return cc.key == "input" || cc.key == "output"
	}
	return false
}

func (s *server) completeTypes(dc *docContext, add func(string, protocol.CompletionItemKind, string)) {
	for _, t := range builtinTypes {
		add(t, ciTypeP, "built-in type")
	}
	for _, n := range dc.pr.res.Index.InScope(dc.path) {
		switch n.Symbol.Kind {
		case check.SymType, check.SymEnum, check.SymValue, check.SymEvent:
			add(n.Name, symbolCompletionKind(n.Symbol), signature(n.Symbol))
		}
	}
}

func symbolCompletionKind(sym *check.Symbol) protocol.CompletionItemKind {
	switch sym.Kind {
	case check.SymEvent:
		return ciEvent
	case check.SymEnum:
		return ciEnum
	case check.SymValue:
		return ciStruct
	case check.SymType:
		return ciTypeP
	case check.SymOperation:
		return ciMethod
	case check.SymField, check.SymConfigField, check.SymSetting:
		return ciField
	case check.SymResource:
		return ciModule
	}
	return ciClass
}

func connectionNamed(ix *check.Index, name string) *check.Symbol {
	for sym := range ix.Symbols() {
		if sym.Kind == check.SymConnection && sym.Name == name {
			return sym
		}
	}
	return nil
}

// packageDirOf is the package folder a path under packages/ is in.
func packageDirOf(path string) string {
	rest := strings.TrimPrefix(path, "packages/")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// completeInHandler offers what follows a dot in a handler: a
// connection's resources (attempt packing.), a resource's operations
// (packing.jobs.), the binding's fields (shipment.).
func (s *server) completeInHandler(dc *docContext, cc completionContext, add func(string, protocol.CompletionItemKind, string)) {
	ix := dc.pr.res.Index
	if conn := connectionNamed(ix, cc.qual[0]); conn != nil && conn.Package != "" {
		pp := dc.pr.proj.Packages[conn.Package]
		if pp == nil {
			return
		}
		switch len(cc.qual) {
		case 1:
			for _, r := range pp.ResourceNames() {
				add(r, ciModule, "resource of "+conn.Package)
			}
		case 2:
			if f := pp.Resource(cc.qual[1]); f != nil {
				for _, d := range f.Decls {
					if d.Resource == nil {
						continue
					}
					for _, op := range d.Resource.Operations {
						add(op.Name.Name, ciMethod, "operation "+cc.qual[1]+"."+op.Name.Name)
					}
				}
			}
		}
		return
	}
	// binding.field.field: walk the record types.
	if sym := bindingAt(dc); sym != nil && sym.Name == cc.qual[0] {
		rec := recordByID(ix, sym.Type.Name)
		for _, part := range cc.qual[1:] {
			if rec == nil {
				return
			}
			var next *check.Symbol
			for _, f := range rec.Fields {
				if f.Name == part && f.Type.Kind == "record" {
					next = recordByID(ix, f.Type.Name)
				}
			}
			rec = next
		}
		if rec != nil {
			for _, f := range rec.Fields {
				add(f.Name, ciField, check.TypeText(f.Type))
			}
		}
	}
}

// bindingAt is the binding of the handler the cursor is in, nil outside one.
func bindingAt(dc *docContext) *check.Symbol {
	for sym := range dc.pr.res.Index.Symbols() {
		if sym.Kind == check.SymBinding && sym.Decl.File != nil && sym.Decl.File.Path == dc.path &&
			sym.Decl.Span.Start <= dc.cursor && dc.cursor <= sym.Decl.Span.End {
			return sym
		}
	}
	return nil
}

func recordByID(ix *check.Index, id string) *check.Symbol {
	for sym := range ix.Symbols() {
		if sym.ID == id && (sym.Kind == check.SymEvent || sym.Kind == check.SymValue) {
			return sym
		}
	}
	return nil
}

// inCallArguments reports whether the cursor is among a call's arguments,
// at any depth of record literals and lists inside them.
func inCallArguments(cc completionContext) bool {
	for i := len(cc.stack) - 1; i >= 0; i-- {
		switch cc.stack[i].kind {
		case "call":
			return true
		case "member", "list", "rules":
		default:
			return false
		}
	}
	return false
}

// completeArguments offers what fits among a call's arguments: the
// operation's input fields at a key (attempt packing.jobs.create_job(|),
// a record's fields inside a record literal (label: { | }), also in a list
// (lines: [{ | }]), and at a value what its type takes: an enum's variants,
// true and false, none where the input may be none, the handler's binding
// and config.
func (s *server) completeArguments(dc *docContext, cc completionContext, add func(string, protocol.CompletionItemKind, string)) {
	at := len(cc.stack) - 1
	for cc.stack[at].kind != "call" {
		at--
	}
	call := cc.stack[at].call
	if len(call) != 3 {
		return
	}
	ix := dc.pr.res.Index
	conn := connectionNamed(ix, call[0])
	if conn == nil {
		return
	}
	var fields []ir.Field
	for sym := range ix.Symbols() {
		if sym.Kind == check.SymOperation && sym.Package == conn.Package && sym.Name == call[2] && sym.Parent != nil && sym.Parent.Name == call[1] && sym.Input != nil {
			fields = sym.Input.Fields
		}
	}
	fieldType := func(fields []ir.Field, name string) *ir.Type {
		for i := range fields {
			if fields[i].Name == name {
				return &fields[i].Type
			}
		}
		return nil
	}
	recordFields := func(t *ir.Type) []ir.Field {
		if t == nil || t.Kind != ir.RecordK {
			return nil
		}
		if rec := recordByID(ix, t.Name); rec != nil {
			return rec.Fields
		}
		return nil
	}
	// Walk the literal's blocks from the call inwards; elem is the element
	// type of the list the cursor is in, if it is.
	var elem *ir.Type
	for _, fr := range cc.stack[at+1:] {
		switch fr.kind {
		case "member": // key: { ... }
			fields, elem = recordFields(fieldType(fields, fr.key)), nil
		case "list": // key: [ ... ]
			elem = nil
			if t := fieldType(fields, fr.key); t != nil && t.Kind == ir.List {
				elem = t.Elem
			}
		case "rules": // a record in a list: [{ ... }]
			fields, elem = recordFields(elem), nil
		}
	}
	if !cc.value {
		if elem != nil {
			s.completeValues(dc, cc, elem, add)
			return
		}
		for _, f := range fields {
			add(f.Name, ciField, check.TypeText(f.Type))
		}
		return
	}
	if t := fieldType(fields, cc.key); t != nil {
		s.completeValues(dc, cc, t, add)
	}
}

// completeValues offers the values a place of type t takes, by name.
func (s *server) completeValues(dc *docContext, cc completionContext, t *ir.Type, add func(string, protocol.CompletionItemKind, string)) {
	switch t.Kind {
	case ir.Enum:
		for _, v := range t.Variants {
			add(v, ciVariant, "variant of "+check.TypeText(*t))
		}
	case ir.Bool:
		add("true", ciValue, "Bool")
		add("false", ciValue, "Bool")
	}
	if t.Optional {
		add("none", ciValue, "no value")
	}
	if sym := bindingAt(dc); sym != nil {
		add(sym.Name, ciVariable, "the handler's event")
	}
	add("config", ciModule, "the app's config: config.<field>")
	if t.Kind == ir.Text {
		add("json", ciMethod, "the event as JSON text: json(binding)")
	}
}

// completeMappingInput offers the input fields of the operation a package's
// mapping calls, inside its `input: { | }`: the operation is the `call:`
// beside it, before or after the cursor, read from the file's tokens.
func (s *server) completeMappingInput(dc *docContext, cc completionContext, add func(string, protocol.CompletionItemKind, string)) {
	parent := cc.stack[len(cc.stack)-2]
	toks, _ := lexer.Lex(string(dc.file.Content))
	depth := 0
	var resource, op string
scan:
	for i, t := range toks {
		switch {
		case t.Pos.Offset <= parent.open:
		case t.Type == lexer.Punct && (t.Value == "{" || t.Value == "(" || t.Value == "["):
			depth++
		case t.Type == lexer.Punct && (t.Value == "}" || t.Value == ")" || t.Value == "]"):
			if depth--; depth < 0 {
				break scan // the mapping's block ends
			}
		case depth == 0 && t.Value == "call" && i+4 < len(toks) && toks[i+1].Value == ":" && toks[i+3].Value == ".":
			resource, op = toks[i+2].Value, toks[i+4].Value
			break scan
		}
	}
	if op == "" {
		return
	}
	for sym := range dc.pr.res.Index.Symbols() {
		if sym.Kind == check.SymOperation && sym.Package == packageDirOf(dc.path) && sym.Name == op &&
			sym.Parent != nil && sym.Parent.Name == resource && sym.Input != nil {
			for _, f := range sym.Input.Fields {
				add(f.Name, ciField, check.TypeText(f.Type))
			}
		}
	}
}
