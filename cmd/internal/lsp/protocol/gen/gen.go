// Package gen writes package protocol: the LSP 3.17 types the language
// server uses, generated from the protocol's metaModel (metaModel.json,
// from microsoft/lsprotocol, generator/lsp.json at commit e55a4cf). Only
// the structures, fields and enumerations listed in Types and Enums are
// written: a field the server never reads or writes is left out, so a
// client's odd value there cannot fail a request, and every field the
// server does use has the metaModel's JSON name and kind.
//
// Rules for a field (what "optional" and "or" in the metaModel become):
//   - an optional field has `omitempty`, and an optional structure is a
//     pointer; Always drops the omitempty where the server has always
//     written the field (an empty list, a zero, an empty text);
//   - a required field of a type "or null" is a pointer written as null;
//   - a union (or) or a literal has no Go type of its own: the table names
//     the one the server uses (Type), and the generator stops on one that
//     has none.
//
// Fields are written in the order of their JSON names, as encoding/json
// writes a map's keys: the messages are byte for byte those the server
// built as maps before it had these types.
//
// The protocol package's TestGenerated checks protocol.go against this;
// `go test ./cmd/internal/lsp/protocol -run Generated -update` rewrites it.
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"sort"
	"strings"
	"unicode"
)

// Field is how one field is written when the metaModel alone does not say.
type Field struct {
	// Type is the Go type, for a union or literal, or to narrow one
	// (LSPAny to the one value the server sends).
	Type string
	// Always writes the field even when it is empty (no omitempty).
	Always bool
}

// Type is one structure: its fields by JSON name, from the structure, what
// it extends and its mixins.
type Type struct {
	Name   string
	Fields []string
	Over   map[string]Field
}

// Types are the structures the server reads and writes.
var Types = []Type{
	// Lifecycle and registration.
	{Name: "InitializeParams", Fields: []string{"capabilities", "rootPath", "rootUri", "workspaceFolders"}, Over: map[string]Field{
		"rootPath": {Type: "string"}, "rootUri": {Type: "string"}, "workspaceFolders": {Type: "[]WorkspaceFolder"},
		"capabilities": {Type: "ClientCapabilities"}}},
	{Name: "WorkspaceFolder", Fields: []string{"uri"}},
	{Name: "ClientCapabilities", Fields: []string{"workspace"}, Over: map[string]Field{"workspace": {Type: "WorkspaceClientCapabilities"}}},
	{Name: "WorkspaceClientCapabilities", Fields: []string{"didChangeWatchedFiles", "workspaceEdit"}, Over: map[string]Field{
		"didChangeWatchedFiles": {Type: "DidChangeWatchedFilesClientCapabilities"}, "workspaceEdit": {Type: "WorkspaceEditClientCapabilities"}}},
	{Name: "DidChangeWatchedFilesClientCapabilities", Fields: []string{"dynamicRegistration"}},
	{Name: "WorkspaceEditClientCapabilities", Fields: []string{"changeAnnotationSupport", "documentChanges"}},
	{Name: "ChangeAnnotationsSupportOptions", Fields: []string{"groupsOnLabel"}},
	{Name: "InitializeResult", Fields: []string{"capabilities", "serverInfo"}},
	{Name: "ServerInfo", Fields: []string{"name", "version"}, Over: map[string]Field{"version": {Always: true}}},
	{Name: "ServerCapabilities", Fields: []string{
		"codeActionProvider", "completionProvider", "definitionProvider", "documentFormattingProvider",
		"documentHighlightProvider", "documentSymbolProvider", "executeCommandProvider", "foldingRangeProvider",
		"hoverProvider", "inlayHintProvider", "referencesProvider", "renameProvider", "selectionRangeProvider",
		"semanticTokensProvider", "signatureHelpProvider", "textDocumentSync", "workspaceSymbolProvider",
	}, Over: map[string]Field{
		"codeActionProvider": {Type: "*CodeActionOptions"}, "definitionProvider": {Type: "bool"},
		"documentFormattingProvider": {Type: "bool"}, "documentHighlightProvider": {Type: "bool"},
		"documentSymbolProvider": {Type: "bool"}, "foldingRangeProvider": {Type: "bool"}, "hoverProvider": {Type: "bool"},
		"inlayHintProvider": {Type: "bool"}, "referencesProvider": {Type: "bool"}, "renameProvider": {Type: "*RenameOptions"},
		"selectionRangeProvider": {Type: "bool"}, "semanticTokensProvider": {Type: "*SemanticTokensOptions"},
		"textDocumentSync": {Type: "*TextDocumentSyncOptions"}, "workspaceSymbolProvider": {Type: "bool"},
	}},
	{Name: "TextDocumentSyncOptions", Fields: []string{"change", "openClose", "save"}, Over: map[string]Field{"save": {Type: "bool"}}},
	{Name: "CompletionOptions", Fields: []string{"triggerCharacters"}},
	{Name: "CodeActionOptions", Fields: []string{"codeActionKinds"}},
	{Name: "RenameOptions", Fields: []string{"prepareProvider"}},
	{Name: "ExecuteCommandOptions", Fields: []string{"commands"}},
	{Name: "SemanticTokensOptions", Fields: []string{"full", "legend", "range"}, Over: map[string]Field{
		"full": {Type: "*SemanticTokensFullDelta"}, "range": {Type: "bool"}}},
	{Name: "SemanticTokensLegend", Fields: []string{"tokenModifiers", "tokenTypes"}},
	{Name: "SemanticTokensFullDelta", Fields: []string{"delta"}},
	{Name: "SignatureHelpOptions", Fields: []string{"retriggerCharacters", "triggerCharacters"}},
	{Name: "RegistrationParams", Fields: []string{"registrations"}},
	{Name: "Registration", Fields: []string{"id", "method", "registerOptions"}, Over: map[string]Field{
		"registerOptions": {Type: "*DidChangeWatchedFilesRegistrationOptions"}}},
	{Name: "DidChangeWatchedFilesRegistrationOptions", Fields: []string{"watchers"}},
	{Name: "FileSystemWatcher", Fields: []string{"globPattern"}, Over: map[string]Field{"globPattern": {Type: "string"}}},
	{Name: "CancelParams", Fields: []string{"id"}, Over: map[string]Field{"id": {Type: "json.RawMessage"}}},

	// Documents: what the editor sends of them.
	{Name: "DidOpenTextDocumentParams", Fields: []string{"textDocument"}},
	{Name: "TextDocumentItem", Fields: []string{"text", "uri"}},
	{Name: "DidChangeTextDocumentParams", Fields: []string{"contentChanges", "textDocument"}, Over: map[string]Field{
		"contentChanges": {Type: "[]TextDocumentContentChangePartial"}}},
	{Name: "VersionedTextDocumentIdentifier", Fields: []string{"uri"}},
	// One of didChange's changes: a range and its new text, or (no range)
	// the whole text.
	{Name: "TextDocumentContentChangePartial", Fields: []string{"range", "text"}, Over: map[string]Field{"range": {Type: "*Range"}}},
	{Name: "DidSaveTextDocumentParams", Fields: []string{"textDocument"}},
	{Name: "DidCloseTextDocumentParams", Fields: []string{"textDocument"}},
	{Name: "TextDocumentIdentifier", Fields: []string{"uri"}},
	{Name: "DidChangeWatchedFilesParams", Fields: []string{"changes"}},
	{Name: "FileEvent", Fields: []string{"uri"}},
	{Name: "PublishDiagnosticsParams", Fields: []string{"diagnostics", "uri"}},
	{Name: "Diagnostic", Fields: []string{"code", "codeDescription", "message", "range", "relatedInformation", "severity", "source"}, Over: map[string]Field{
		"code": {Type: "string", Always: true}, "source": {Always: true}}},
	{Name: "CodeDescription", Fields: []string{"href"}},
	{Name: "DiagnosticRelatedInformation", Fields: []string{"location", "message"}},

	// Positions.
	{Name: "Position", Fields: []string{"character", "line"}},
	{Name: "Range", Fields: []string{"end", "start"}},
	{Name: "Location", Fields: []string{"range", "uri"}},
	{Name: "TextDocumentPositionParams", Fields: []string{"position", "textDocument"}},

	// Requests and their answers.
	{Name: "Hover", Fields: []string{"contents", "range"}, Over: map[string]Field{"contents": {Type: "MarkupContent"}}},
	{Name: "MarkupContent", Fields: []string{"kind", "value"}},
	{Name: "ReferenceParams", Fields: []string{"context", "position", "textDocument"}},
	{Name: "ReferenceContext", Fields: []string{"includeDeclaration"}},
	{Name: "PrepareRenamePlaceholder", Fields: []string{"placeholder", "range"}},
	{Name: "RenameParams", Fields: []string{"newName", "position", "textDocument"}},
	{Name: "WorkspaceEdit", Fields: []string{"changeAnnotations", "changes", "documentChanges"}, Over: map[string]Field{
		"documentChanges": {Type: "[]TextDocumentEdit"}}},
	{Name: "TextEdit", Fields: []string{"newText", "range"}},
	{Name: "AnnotatedTextEdit", Fields: []string{"annotationId", "newText", "range"}},
	{Name: "TextDocumentEdit", Fields: []string{"edits", "textDocument"}, Over: map[string]Field{"edits": {Type: "[]AnnotatedTextEdit"}}},
	{Name: "OptionalVersionedTextDocumentIdentifier", Fields: []string{"uri", "version"}},
	{Name: "ChangeAnnotation", Fields: []string{"description", "label", "needsConfirmation"}},
	{Name: "CompletionList", Fields: []string{"isIncomplete", "items"}},
	{Name: "CompletionItem", Fields: []string{"detail", "kind", "label"}},
	{Name: "DocumentSymbol", Fields: []string{"children", "detail", "kind", "name", "range", "selectionRange"}, Over: map[string]Field{
		"children": {Always: true}, "detail": {Always: true}}},
	{Name: "WorkspaceSymbolParams", Fields: []string{"query"}},
	{Name: "SymbolInformation", Fields: []string{"containerName", "kind", "location", "name"}},
	{Name: "CodeActionParams", Fields: []string{"context", "range", "textDocument"}},
	{Name: "CodeActionContext", Fields: []string{"only"}},
	{Name: "CodeAction", Fields: []string{"command", "diagnostics", "edit", "isPreferred", "kind", "title"}},
	{Name: "Command", Fields: []string{"arguments", "command", "title"}, Over: map[string]Field{"arguments": {Type: "[]string"}}},
	{Name: "ExecuteCommandParams", Fields: []string{"arguments", "command"}, Over: map[string]Field{"arguments": {Type: "[]json.RawMessage"}}},
	{Name: "SemanticTokensParams", Fields: []string{"textDocument"}},
	{Name: "SemanticTokensDeltaParams", Fields: []string{"previousResultId", "textDocument"}},
	{Name: "SemanticTokensRangeParams", Fields: []string{"range", "textDocument"}},
	// The tokens' integers as the server encodes them (uinteger is int elsewhere).
	{Name: "SemanticTokens", Fields: []string{"data", "resultId"}, Over: map[string]Field{"data": {Type: "[]uint32"}}},
	{Name: "SemanticTokensDelta", Fields: []string{"edits", "resultId"}},
	{Name: "SemanticTokensEdit", Fields: []string{"data", "deleteCount", "start"}, Over: map[string]Field{"data": {Type: "[]uint32", Always: true}}},
	{Name: "SignatureHelp", Fields: []string{"activeSignature", "signatures"}, Over: map[string]Field{"activeSignature": {Always: true}}},
	{Name: "SignatureInformation", Fields: []string{"activeParameter", "documentation", "label", "parameters"}, Over: map[string]Field{
		"documentation": {Type: "*MarkupContent"}, "parameters": {Always: true}}},
	{Name: "ParameterInformation", Fields: []string{"documentation", "label"}, Over: map[string]Field{
		"documentation": {Type: "string"}, "label": {Type: "[2]int"}}},
	{Name: "FoldingRange", Fields: []string{"endLine", "kind", "startLine"}},
	{Name: "SelectionRangeParams", Fields: []string{"positions", "textDocument"}},
	{Name: "SelectionRange", Fields: []string{"parent", "range"}},
	{Name: "DocumentHighlight", Fields: []string{"kind", "range"}},
	{Name: "InlayHintParams", Fields: []string{"range", "textDocument"}},
	{Name: "InlayHint", Fields: []string{"label", "paddingLeft", "position", "tooltip"}, Over: map[string]Field{
		"label": {Type: "string"}, "tooltip": {Type: "*MarkupContent"}}},
}

// Enums are the enumerations written whole, each value a constant.
var Enums = []string{
	"CodeActionKind", "CompletionItemKind", "DiagnosticSeverity", "DocumentHighlightKind", "FoldingRangeKind",
	"MarkupKind", "SymbolKind", "TextDocumentSyncKind",
}

type model struct {
	MetaData struct {
		Version string `json:"version"`
	} `json:"metaData"`
	Structures   []structure   `json:"structures"`
	Enumerations []enumeration `json:"enumerations"`
	TypeAliases  []struct {
		Name string `json:"name"`
		Type typ    `json:"type"`
	} `json:"typeAliases"`
}

type structure struct {
	Name          string     `json:"name"`
	Properties    []property `json:"properties"`
	Extends       []typ      `json:"extends"`
	Mixins        []typ      `json:"mixins"`
	Documentation string     `json:"documentation"`
}

type property struct {
	Name          string `json:"name"`
	Type          typ    `json:"type"`
	Optional      bool   `json:"optional"`
	Documentation string `json:"documentation"`
}

type typ struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Element *typ   `json:"element"`
	Key     *typ   `json:"key"`
	Value   json.RawMessage
	Items   []typ `json:"items"`
}

type enumeration struct {
	Name          string `json:"name"`
	Type          typ    `json:"type"`
	Documentation string `json:"documentation"`
	Values        []struct {
		Name          string          `json:"name"`
		Value         json.RawMessage `json:"value"`
		Documentation string          `json:"documentation"`
	} `json:"values"`
}

// Generate is protocol.go for the metaModel.
func Generate(metaModel []byte) ([]byte, error) { return generate(metaModel, Types, Enums) }

func generate(metaModel []byte, types []Type, enumNames []string) ([]byte, error) {
	var m model
	if err := json.Unmarshal(metaModel, &m); err != nil {
		return nil, fmt.Errorf("reading the metaModel: %w", err)
	}
	structs := map[string]structure{}
	for _, s := range m.Structures {
		structs[s.Name] = s
	}
	enums := map[string]enumeration{}
	for _, e := range m.Enumerations {
		enums[e.Name] = e
	}
	wanted := map[string]bool{}
	for _, t := range types {
		wanted[t.Name] = true
	}
	wantedEnum := map[string]bool{}
	for _, e := range enumNames {
		wantedEnum[e] = true
	}
	aliases := map[string]typ{}
	for _, a := range m.TypeAliases {
		aliases[a.Name] = a.Type
	}
	g := &generator{structs: structs, aliases: aliases, wanted: wanted, wantedEnum: wantedEnum, types: types, enums: enumNames}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by cmd/internal/lsp/protocol/gen from the LSP %s metaModel; DO NOT EDIT.\n\n", m.MetaData.Version)
	b.WriteString("package protocol\n\n")
	var body bytes.Buffer
	if err := g.write(&body, structs, enums); err != nil {
		return nil, err
	}
	if bytes.Contains(body.Bytes(), []byte("json.")) {
		b.WriteString("import \"encoding/json\"\n\n")
	}
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the output: %w\n%s", err, b.Bytes())
	}
	return out, nil
}

func (g *generator) write(b *bytes.Buffer, structs map[string]structure, enums map[string]enumeration) error {
	for _, t := range g.types {
		s, ok := structs[t.Name]
		if !ok {
			return fmt.Errorf("%s: no such structure in the metaModel", t.Name)
		}
		props := map[string]property{}
		g.collect(s, props)
		comment(b, "", t.Name+" is LSP's "+t.Name+". "+firstParagraph(s.Documentation))
		fmt.Fprintf(b, "type %s struct {\n", t.Name)
		fields := append([]string(nil), t.Fields...)
		sort.Strings(fields)
		for i, name := range fields {
			if i > 0 && fields[i-1] == name {
				return fmt.Errorf("%s.%s is listed twice", t.Name, name)
			}
			p, ok := props[name]
			if !ok {
				return fmt.Errorf("%s has no field %s in the metaModel", t.Name, name)
			}
			over := t.Over[name]
			goType, nullable := over.Type, false
			if goType == "" {
				var err error
				goType, nullable, err = g.goType(p.Type, p.Optional)
				if err != nil {
					return fmt.Errorf("%s.%s: %w: name its Go type in gen.Types", t.Name, name, err)
				}
			}
			tag := name
			// A structure held by value is always written: omitempty
			// would say otherwise.
			if p.Optional && !over.Always && !nullable && !g.wanted[goType] {
				tag += ",omitempty"
			}
			comment(b, "\t", firstParagraph(p.Documentation))
			fmt.Fprintf(b, "\t%s %s `json:%q`\n", goName(name), goType, tag)
		}
		b.WriteString("}\n\n")
	}
	for _, name := range g.enums {
		e, ok := enums[name]
		if !ok {
			return fmt.Errorf("%s: no such enumeration in the metaModel", name)
		}
		base, _, err := g.goType(e.Type, false)
		if err != nil {
			return fmt.Errorf("enumeration %s: %w", name, err)
		}
		comment(b, "", name+" is LSP's "+name+". "+firstParagraph(e.Documentation))
		fmt.Fprintf(b, "type %s %s\n\nconst (\n", name, base)
		for _, v := range e.Values {
			comment(b, "\t", firstParagraph(v.Documentation))
			fmt.Fprintf(b, "\t%s%s %s = %s\n", name, goName(v.Name), name, v.Value)
		}
		b.WriteString(")\n\n")
	}
	return nil
}

type generator struct {
	structs            map[string]structure
	aliases            map[string]typ
	wanted, wantedEnum map[string]bool
	types              []Type
	enums              []string
}

// collect gathers a structure's properties with those it extends and mixes
// in; its own come last and win.
func (g *generator) collect(s structure, into map[string]property) {
	for _, parents := range [][]typ{s.Extends, s.Mixins} {
		for _, p := range parents {
			if ps, ok := g.structs[p.Name]; ok {
				g.collect(ps, into)
			}
		}
	}
	for _, p := range s.Properties {
		into[p.Name] = p
	}
}

// goType is a metaModel type's Go type; nullable when it is "X or null"
// (a pointer, written as null).
func (g *generator) goType(t typ, optional bool) (string, bool, error) {
	switch t.Kind {
	case "base":
		switch t.Name {
		case "string", "DocumentUri", "URI", "RegExp":
			return "string", false, nil
		case "integer", "uinteger":
			return "int", false, nil
		case "decimal":
			return "float64", false, nil
		case "boolean":
			return "bool", false, nil
		}
		return "", false, fmt.Errorf("the base type %s has no Go type here", t.Name)
	case "reference":
		switch {
		case g.wanted[t.Name]:
			if optional {
				return "*" + t.Name, false, nil
			}
			return t.Name, false, nil
		case g.wantedEnum[t.Name]:
			return t.Name, false, nil
		}
		if a, ok := g.aliases[t.Name]; ok && a.Kind == "base" {
			return g.goType(a, optional) // ChangeAnnotationIdentifier: a string
		}
		return "", false, fmt.Errorf("%s is neither in gen.Types nor gen.Enums", t.Name)
	case "array":
		el, _, err := g.goType(*t.Element, false)
		if err != nil {
			return "", false, err
		}
		return "[]" + el, false, nil
	case "map":
		v := typ{}
		if err := json.Unmarshal(t.Value, &v); err != nil {
			return "", false, err
		}
		val, _, err := g.goType(v, false)
		if err != nil {
			return "", false, err
		}
		return "map[string]" + val, false, nil
	case "or":
		var rest []typ
		for _, it := range t.Items {
			if it.Kind == "base" && it.Name == "null" {
				continue
			}
			rest = append(rest, it)
		}
		if len(rest) == 1 && len(rest) < len(t.Items) {
			inner, _, err := g.goType(rest[0], false)
			if err != nil {
				return "", false, err
			}
			if strings.HasPrefix(inner, "[]") || strings.HasPrefix(inner, "map[") {
				return inner, !optional, nil
			}
			return "*" + inner, !optional, nil
		}
		return "", false, fmt.Errorf("a union (or)")
	}
	return "", false, fmt.Errorf("a %s type", t.Kind)
}

// goName is a JSON name as a Go identifier: uri -> URI, resultId -> ResultID.
func goName(s string) string {
	if s == "" {
		return "Empty"
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	s = string(r)
	for _, w := range []struct{ from, to string }{{"Uri", "URI"}, {"Id", "ID"}} {
		if s == w.from {
			return w.to
		}
		if strings.HasSuffix(s, w.from) {
			s = strings.TrimSuffix(s, w.from) + w.to
		}
	}
	return s
}

func firstParagraph(doc string) string {
	doc, _, _ = strings.Cut(strings.TrimSpace(doc), "\n\n")
	return strings.Join(strings.Fields(doc), " ")
}

// comment writes text as a wrapped comment.
func comment(b *bytes.Buffer, indent, text string) {
	words := strings.Fields(text)
	line := ""
	for _, w := range words {
		if line != "" && len(line)+1+len(w) > 76 {
			fmt.Fprintf(b, "%s// %s\n", indent, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		fmt.Fprintf(b, "%s// %s\n", indent, line)
	}
}
