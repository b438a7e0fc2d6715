package lsp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// definition is where the name under the cursor is declared: a type
// across `use` lines and modules, Package.Event in the package's files, a
// connection, queue, config field, setting or operation, a handler's event.
func (s *server) definition(dc *docContext, off int) (any, error) {
	sym, _ := dc.pr.res.Index.At(dc.path, off)
	if sym == nil || sym.Ident.File == nil {
		return nil, nil
	}
	return location(dc.pr.root, sym.Ident), nil
}

// references lists every use of the name under the cursor, in every file
// of the project, with its declaration when the editor asks for it.
func (s *server) references(dc *docContext, off int) (any, error) {
	var p protocol.ReferenceParams
	_ = json.Unmarshal(dc.raw, &p)
	ix := dc.pr.res.Index
	sym, _ := ix.At(dc.path, off)
	if sym == nil {
		return nil, nil
	}
	out := []protocol.Location{}
	if p.Context.IncludeDeclaration && sym.Ident.File != nil {
		out = append(out, location(dc.pr.root, sym.Ident))
	}
	for _, r := range ix.RefsTo(sym) {
		out = append(out, location(dc.pr.root, r))
	}
	return out, nil
}

// renameRefusal says why the symbol cannot be renamed, "" when it can.
func renameRefusal(pr *proj, sym *check.Symbol) string {
	if pr.proj.HasSyntaxErrors() {
		return "the project has syntax errors: a declaration that does not parse may use the name; fix them first, then rename"
	}
	if sym.Ident.File != nil && strings.HasPrefix(sym.Ident.File.Path, "packages/") {
		return fmt.Sprintf("`%s` is declared in package `%s`: a package is installed as published (jadpo.lock records its files), so nothing under packages/ is renamed", sym.Name, sym.Package)
	}
	switch sym.Kind {
	case check.SymQueue:
		return fmt.Sprintf("queue `%s` is not renamed: received ids are recorded under `queue %s`, so after a rename a redelivered message would not be known and would be kept again", sym.Name, sym.Name)
	case check.SymConnection:
		for q := range pr.res.Index.Symbols() {
			if q.Kind == check.SymQueue && q.Name == sym.Name {
				return fmt.Sprintf("connection `%s` is not renamed: queue `%s` receives from it by name, and received ids are recorded under `queue %s`, so after a rename a redelivered message would not be known and would be kept again", sym.Name, sym.Name, sym.Name)
			}
		}
	case check.SymModule:
		return "a module is named by its file's path: rename the file, then its `use` lines"
	case check.SymPackage:
		return "a package is named by its header and folder: install the version you want with `jadpo package add`"
	case check.SymVariant:
		return fmt.Sprintf("variant `%s` is not renamed: it is its own name in the messages a queue receives and the calls a handler makes (`\"%s\"`), so a rename here would make what producers send unreadable", sym.Name, sym.Name)
	}
	for _, r := range pr.res.Index.RefsTo(sym) {
		if strings.HasPrefix(r.File.Path, "packages/") {
			return fmt.Sprintf("`%s` is used under packages/, which is not renamed", sym.Name)
		}
	}
	return ""
}

func (s *server) prepareRename(dc *docContext, off int) (any, error) {
	sym, at := dc.pr.res.Index.At(dc.path, off)
	if sym == nil {
		return nil, &lspError{lspRequestFailed, "there is no declared name here to rename"}
	}
	if why := renameRefusal(dc.pr, sym); why != "" {
		return nil, &lspError{lspRequestFailed, why}
	}
	return protocol.PrepareRenamePlaceholder{Range: lspRange(at), Placeholder: at.Text()}, nil
}

func (s *server) rename(dc *docContext, off int) (any, error) {
	var p protocol.RenameParams
	_ = json.Unmarshal(dc.raw, &p)
	ix := dc.pr.res.Index
	sym, _ := ix.At(dc.path, off)
	if sym == nil {
		return nil, &lspError{lspRequestFailed, "there is no declared name here to rename"}
	}
	if why := renameRefusal(dc.pr, sym); why != "" {
		return nil, &lspError{lspRequestFailed, why}
	}
	if why := badNewName(ix, sym, p.NewName); why != "" {
		return nil, &lspError{lspRequestFailed, why}
	}
	edits := map[string][]protocol.TextEdit{}
	var uris []string
	warning := storedNameWarning(ix, sym)
	add := func(r source.Range) {
		uri := pathURI(filepath.Join(dc.pr.root, filepath.FromSlash(r.File.Path)))
		if edits[uri] == nil {
			uris = append(uris, uri)
		}
		edits[uri] = append(edits[uri], protocol.TextEdit{Range: lspRange(r), NewText: p.NewName})
	}
	add(sym.Ident)
	for _, r := range ix.RefsTo(sym) {
		add(r)
	}
	if warning == "" || !s.confirmEdits {
		return protocol.WorkspaceEdit{Changes: edits}, nil
	}
	// The user is asked first: the rename changes a name the store has
	// recorded rows under. Each edit carries the annotation that asks.
	var changes []protocol.TextDocumentEdit
	for _, uri := range uris {
		var annotated []protocol.AnnotatedTextEdit
		for _, e := range edits[uri] {
			annotated = append(annotated, protocol.AnnotatedTextEdit{AnnotationID: "stored-name", Range: e.Range, NewText: e.NewText})
		}
		changes = append(changes, protocol.TextDocumentEdit{TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{URI: uri}, Edits: annotated})
	}
	return protocol.WorkspaceEdit{DocumentChanges: changes, ChangeAnnotations: map[string]protocol.ChangeAnnotation{
		"stored-name": {Label: "Rename " + sym.Name + ": the store knows this name", NeedsConfirmation: true, Description: warning},
	}}, nil
}

// storedNameWarning says what a rename of sym does to what the store
// holds under its name, "" when it holds nothing under it: deliveries are
// recorded by subscriber and kept events by event name, so those not yet
// delivered would find no handler after the rename (they fail as
// handler_missing and are parked; `jadpo deliveries retry` runs them once
// the old name is back).
func storedNameWarning(ix *check.Index, sym *check.Symbol) string {
	switch sym.Kind {
	case check.SymSubscriber:
		return fmt.Sprintf("deliveries are recorded under subscriber `%s`: those not yet delivered when the renamed app starts find no handler, fail as handler_missing and are parked", sym.Name)
	case check.SymEvent:
		for _, r := range ix.RefsTo(sym) {
			for q := range ix.Symbols() {
				if q.Kind == check.SymQueue && q.Decl.File != nil && q.Decl.File.Path == r.File.Path && q.Decl.Span.Start <= r.Span.Start && r.Span.End <= q.Decl.Span.End {
					return fmt.Sprintf("queue `%s` receives `%s`, and kept events are recorded under its name: deliveries of those kept before the rename and not yet delivered find no handler, fail as handler_missing and are parked", q.Name, sym.Name)
				}
			}
		}
	}
	return ""
}

// upperNamed kinds are named in UpperCamelCase; the others in lower_snake_case.
var upperNamed = map[check.SymbolKind]bool{check.SymType: true, check.SymEnum: true, check.SymValue: true, check.SymEvent: true, check.SymConfig: true}

// badNewName says why name cannot replace sym's, "" when it can.
func badNewName(ix *check.Index, sym *check.Symbol, name string) string {
	if name == sym.Name {
		return "the new name is the old one"
	}
	valid := name != "" && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z')
	for i := 0; i < len(name) && valid; i++ {
		c := name[i]
		valid = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	if !valid {
		return fmt.Sprintf("`%s` is not a name: a name is letters, digits and `_`, starting with a letter", name)
	}
	upper := name[0] >= 'A' && name[0] <= 'Z' && !strings.Contains(name, "_")
	lower := name[0] >= 'a' && name[0] <= 'z' && strings.ToLower(name) == name
	if upperNamed[sym.Kind] && !upper {
		return fmt.Sprintf("a %s is named in UpperCamelCase, not `%s`", sym.Kind, name)
	}
	if !upperNamed[sym.Kind] && !lower {
		return fmt.Sprintf("a %s is named in lower_snake_case, not `%s`", sym.Kind, name)
	}
	if name == "config" || name == "settings" || name == "true" || name == "false" || name == "none" {
		return fmt.Sprintf("`%s` is a word the language reads itself", name)
	}
	for other := range ix.Symbols() {
		if other == sym || other.Name != name || other.Parent != sym.Parent {
			continue
		}
		sameFile := other.Ident.File != nil && sym.Ident.File != nil && other.Ident.File.Path == sym.Ident.File.Path
		appWide := sym.Kind == check.SymConnection || sym.Kind == check.SymSubscriber || sym.Kind == check.SymStore
		if sym.Parent != nil || sameFile || appWide && other.Kind == sym.Kind {
			return fmt.Sprintf("`%s` is taken: %s `%s` is declared at %s", name, other.Kind, name, where(other.Ident))
		}
	}
	if upperNamed[sym.Kind] {
		for _, path := range filesUsing(ix, sym) {
			for _, n := range ix.InScope(path) {
				if n.Name == name && n.Symbol != sym {
					return fmt.Sprintf("`%s` is already a name in %s, which uses `%s`", name, path, sym.Name)
				}
			}
		}
	}
	return ""
}

// filesUsing lists the files that declare or use sym.
func filesUsing(ix *check.Index, sym *check.Symbol) []string {
	seen := map[string]bool{}
	var out []string
	if sym.Ident.File != nil {
		seen[sym.Ident.File.Path] = true
		out = append(out, sym.Ident.File.Path)
	}
	for _, r := range ix.RefsTo(sym) {
		if !seen[r.File.Path] {
			seen[r.File.Path] = true
			out = append(out, r.File.Path)
		}
	}
	return out
}

func where(r source.Range) string {
	if r.File == nil {
		return "the project"
	}
	return fmt.Sprintf("%s:%d", r.File.Path, r.File.Position(r.Span.Start).Line)
}

// The symbol kind of each kind of declaration.
var lspSymbolKind = map[check.SymbolKind]protocol.SymbolKind{
	check.SymModule:      protocol.SymbolKindModule,
	check.SymType:        protocol.SymbolKindTypeParameter,
	check.SymEnum:        protocol.SymbolKindEnum,
	check.SymVariant:     protocol.SymbolKindEnumMember,
	check.SymValue:       protocol.SymbolKindStruct,
	check.SymEvent:       protocol.SymbolKindEvent,
	check.SymField:       protocol.SymbolKindField,
	check.SymConfig:      protocol.SymbolKindObject,
	check.SymConfigField: protocol.SymbolKindField,
	check.SymStore:       protocol.SymbolKindObject,
	check.SymConnection:  protocol.SymbolKindInterface,
	check.SymQueue:       protocol.SymbolKindInterface,
	check.SymSubscriber:  protocol.SymbolKindFunction,
	check.SymBinding:     protocol.SymbolKindVariable,
	check.SymPackage:     protocol.SymbolKindPackage,
	check.SymSetting:     protocol.SymbolKindField,
	check.SymResource:    protocol.SymbolKindNamespace,
	check.SymOperation:   protocol.SymbolKindMethod,
}

// documentSymbols is the file's outline, read from its tree: every
// declaration with its fields, variants, members and handlers.
func (s *server) documentSymbols(dc *docContext) (any, error) {
	tree := dc.tree
	if tree == nil {
		tree, _ = parser.ParseFile(dc.file) // a file the check did not read (an uncalled resource)
	}
	sym := func(name, detail string, kind protocol.SymbolKind, whole, ident source.Span, children []protocol.DocumentSymbol) protocol.DocumentSymbol {
		if children == nil {
			children = []protocol.DocumentSymbol{}
		}
		if ident.End > whole.End || ident.Start < whole.Start {
			whole = whole.Cover(ident)
		}
		return protocol.DocumentSymbol{Name: name, Detail: detail, Kind: kind, Range: lspRange(tree.Range(whole)),
			SelectionRange: lspRange(tree.Range(ident)), Children: children}
	}
	fields := func(fs []*ast.Field, kind protocol.SymbolKind) []protocol.DocumentSymbol {
		var out []protocol.DocumentSymbol
		for _, fl := range fs {
			out = append(out, sym(fl.Name.Name, fl.Type.Name.String(), kind, fl.Span(), fl.Name.Span(), nil))
		}
		return out
	}
	members := func(b *ast.Block) []protocol.DocumentSymbol {
		var out []protocol.DocumentSymbol
		if b == nil {
			return nil
		}
		for _, m := range b.Members {
			if m.Key != nil {
				out = append(out, sym(m.Key.Name, "", protocol.SymbolKindProperty, m.Span(), m.Key.Span(), nil))
			} else if m.Entry != nil && len(m.Entry.Parts) > 0 {
				out = append(out, sym(m.Entry.String(), "", protocol.SymbolKindProperty, m.Span(), m.Entry.Span(), nil))
			}
		}
		return out
	}
	out := []protocol.DocumentSymbol{}
	for _, d := range tree.Decls {
		switch {
		case d.Named != nil:
			n := d.Named
			switch {
			case n.Type != nil:
				out = append(out, sym(n.Type.Name.Name, "type = "+n.Type.Base.Name.String(), protocol.SymbolKindTypeParameter, d.Span(), n.Type.Name.Span(), nil))
			case n.Enum != nil:
				var vs []protocol.DocumentSymbol
				for _, v := range n.Enum.Variants {
					vs = append(vs, sym(v.Name, "", protocol.SymbolKindEnumMember, v.Span(), v.Span(), nil))
				}
				out = append(out, sym(n.Enum.Name.Name, "enum", protocol.SymbolKindEnum, d.Span(), n.Enum.Name.Span(), vs))
			case n.Record != nil:
				kind := protocol.SymbolKindStruct
				if n.Record.IsEvent() {
					kind = protocol.SymbolKindEvent
				}
				out = append(out, sym(n.Record.Name.Name, n.Record.Kind, kind, d.Span(), n.Record.Name.Span(), fields(n.Record.Fields, protocol.SymbolKindField)))
			case n.Config != nil:
				out = append(out, sym(n.Config.Name.Name, "config", protocol.SymbolKindObject, d.Span(), n.Config.Name.Span(), fields(n.Config.Fields, protocol.SymbolKindField)))
			case n.BlockDecl != nil:
				kind := map[string]protocol.SymbolKind{"store": protocol.SymbolKindObject, "connection": protocol.SymbolKindInterface, "queue": protocol.SymbolKindInterface, "provide": protocol.SymbolKindInterface}[n.BlockDecl.Kind]
				out = append(out, sym(n.BlockDecl.Name.Name, n.BlockDecl.Kind, kind, d.Span(), n.BlockDecl.Name.Span(), members(n.BlockDecl.Body)))
			}
		case d.Subscriber != nil:
			var hs []protocol.DocumentSymbol
			for _, it := range d.Subscriber.Items {
				if h := it.Handler; h != nil {
					hs = append(hs, sym("on "+h.Event.String(), "handler", protocol.SymbolKindFunction, h.Span(), h.Event.Span(), nil))
				} else if it.Member != nil && it.Member.Key != nil {
					hs = append(hs, sym(it.Member.Key.Name, "", protocol.SymbolKindProperty, it.Member.Span(), it.Member.Key.Span(), nil))
				}
			}
			out = append(out, sym(d.Subscriber.Name.Name, "subscriber", protocol.SymbolKindFunction, d.Span(), d.Subscriber.Name.Span(), hs))
		case d.Package != nil:
			out = append(out, sym(d.Package.Name.String(), "package", protocol.SymbolKindPackage, d.Span(), d.Package.Name.Span(), nil))
		case d.Settings != nil:
			start := d.Span().Start
			out = append(out, sym("settings", "", protocol.SymbolKindObject, d.Span(), source.Span{Start: start, End: start + len("settings")}, fields(d.Settings.Fields, protocol.SymbolKindField)))
		case d.Provider != nil:
			start := d.Span().Start
			out = append(out, sym("provider", "", protocol.SymbolKindObject, d.Span(), source.Span{Start: start, End: start + len("provider")}, members(d.Provider.Body)))
		case d.Resource != nil:
			var ops []protocol.DocumentSymbol
			for _, op := range d.Resource.Operations {
				ops = append(ops, sym(op.Name.Name, "operation", protocol.SymbolKindMethod, op.Span(), op.Name.Span(), members(op.Body)))
			}
			out = append(out, sym(d.Resource.Name.Name, "resource", protocol.SymbolKindNamespace, d.Span(), d.Resource.Name.Span(), ops))
		}
	}
	return out, nil
}

// workspaceSymbols finds declarations by name in every project checked so
// far: the query's letters in order, ignoring case (as gopls matches).
func (s *server) workspaceSymbols(query string) []protocol.SymbolInformation {
	type hit struct {
		sym  *check.Symbol
		root string
	}
	var hits []hit
	q := strings.ToLower(query)
	roots := make([]string, 0, len(s.ws.projects))
	for root, pr := range s.ws.projects {
		if pr.res.Index != nil {
			roots = append(roots, root)
		}
	}
	sort.Strings(roots)
	for _, root := range roots {
		for sym := range s.ws.projects[root].res.Index.Symbols() {
			if sym.Kind == check.SymBinding || sym.Kind == check.SymModule || sym.Ident.File == nil {
				continue
			}
			if subsequence(strings.ToLower(sym.Name), q) {
				hits = append(hits, hit{sym, root})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i].sym, hits[j].sym
		ea, eb := strings.EqualFold(a.Name, query), strings.EqualFold(b.Name, query)
		if ea != eb {
			return ea
		}
		if len(a.Name) != len(b.Name) {
			return len(a.Name) < len(b.Name)
		}
		return a.Name < b.Name
	})
	if len(hits) > 500 {
		hits = hits[:500]
	}
	out := []protocol.SymbolInformation{}
	for _, h := range hits {
		info := protocol.SymbolInformation{Name: h.sym.Name, Kind: lspSymbolKind[h.sym.Kind], Location: location(h.root, h.sym.Ident)}
		if h.sym.Parent != nil {
			info.ContainerName = h.sym.Parent.Name
		}
		out = append(out, info)
	}
	return out
}

func subsequence(s, q string) bool {
	for i := 0; i < len(q); i++ {
		j := strings.IndexByte(s, q[i])
		if j < 0 {
			return false
		}
		s = s[j+1:]
	}
	return true
}
