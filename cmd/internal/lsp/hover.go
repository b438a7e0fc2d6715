package lsp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/lexer"
)

// hover shows what the name under the cursor declares: a field's or
// setting's type with its rules and default, a record's fields, a config
// field's binding and whether it is secret (never a value: the server
// reads no environment and no .env file), an operation's input and
// output, and the declaration's own comment.
func (s *server) hover(dc *docContext, off int) (any, error) {
	sym, at := dc.pr.res.Index.At(dc.path, off)
	if sym == nil {
		return nil, nil
	}
	rng := lspRange(at)
	return protocol.Hover{
		Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: describeSymbol(sym)},
		Range:    &rng,
	}, nil
}

func describeSymbol(sym *check.Symbol) string {
	var b strings.Builder
	b.WriteString("```jadpo\n" + signature(sym) + "\n```\n")
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	switch sym.Kind {
	case check.SymField, check.SymSetting, check.SymBinding:
		if sym.Type != nil {
			for _, r := range typeRules(*sym.Type) {
				add("- %s", r)
			}
		}
		if sym.Kind == check.SymSetting {
			switch {
			case sym.Default != nil:
				add("- default: `%s`", jsonLiteral(sym.Default))
			case sym.Type != nil && !sym.Type.Optional:
				add("- required: every connection of the package gives it")
			}
		}
		if sym.Parent != nil && sym.Kind != check.SymBinding {
			add("- in %s `%s`", sym.Parent.Kind, sym.Parent.Name)
		}
	case check.SymConfigField:
		if cf := sym.Config; cf != nil {
			for _, r := range typeRules(cf.Type) {
				add("- %s", r)
			}
			if cf.Binding != "" {
				add("- read from the environment variable `%s`", cf.Binding)
			}
			if cf.Secret {
				add("- secret: its value is never shown, and it flows only into a credential or a store's database")
			} else {
				add("- not secret")
			}
			if cf.Default != nil {
				add("- has a default, used when `%s` is not set", cf.Binding)
			} else if !cf.Type.Optional {
				add("- required: the app does not start without it")
			}
		}
	case check.SymType:
		if sym.Type != nil {
			for _, r := range typeRules(*sym.Type) {
				add("- %s", r)
			}
		}
	case check.SymEnum:
		for _, v := range sym.Variants {
			add("- `%s`", v)
		}
	case check.SymValue, check.SymEvent:
		if len(sym.Fields) == 0 {
			add("no fields")
		}
		for _, f := range sym.Fields {
			line := fmt.Sprintf("- `%s: %s`", f.Name, check.TypeText(f.Type))
			if f.WireName != "" {
				line += fmt.Sprintf(" (on the wire `%s`)", f.WireName)
			}
			lines = append(lines, line)
		}
	case check.SymOperation:
		if sym.Input != nil {
			add("input `%s`:", sym.Input.Name)
			for _, f := range sym.Input.Fields {
				add("- `%s: %s`", f.Name, check.TypeText(f.Type))
			}
		}
		if sym.Output != nil {
			add("output `%s`:", sym.Output.Name)
			for _, f := range sym.Output.Fields {
				add("- `%s: %s`", f.Name, check.TypeText(f.Type))
			}
		}
		if op := sym.Op; op != nil {
			if op.Method != "" {
				add("%s `%s`", op.Method, op.Path)
			}
			if op.RetrySafe {
				add("safe to retry")
			}
		}
	case check.SymConnection:
		if sym.Package != "" {
			add("uses package `%s`", sym.Package)
		}
	case check.SymQueue:
		add("receives from connection `%s`; received ids are recorded under `queue %s`", sym.Name, sym.Name)
	case check.SymPackage:
		add("installed under `packages/%s/`", sym.Name)
	}
	if len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
	if sym.Decl.File != nil && sym.Kind != check.SymModule && sym.Kind != check.SymPackage {
		if doc := lexer.CommentAbove(sym.Decl.File.Content, sym.Decl.Span.Start); doc != "" {
			b.WriteString("\n---\n\n" + doc + "\n")
		}
	}
	return b.String()
}

// signature is the symbol's declaration as the source writes it, in short.
func signature(sym *check.Symbol) string {
	switch sym.Kind {
	case check.SymField, check.SymConfigField, check.SymSetting:
		t := "?"
		if sym.Type != nil {
			t = check.TypeText(*sym.Type)
		} else if sym.Config != nil {
			t = check.TypeText(sym.Config.Type)
		}
		word := map[check.SymbolKind]string{check.SymField: "field", check.SymConfigField: "config field", check.SymSetting: "setting"}[sym.Kind]
		return fmt.Sprintf("%s %s: %s", word, sym.Name, t)
	case check.SymBinding:
		t := ""
		if sym.Type != nil {
			t = ": " + check.TypeText(*sym.Type)
		}
		return "binding " + sym.Name + t
	case check.SymType:
		if sym.Type != nil {
			return fmt.Sprintf("type %s = %s", sym.Name, kindWord(sym.Type.Kind))
		}
	case check.SymModule:
		return "module " + sym.Name
	case check.SymVariant:
		if sym.Parent != nil {
			return fmt.Sprintf("variant %s of enum %s", sym.Name, sym.Parent.Name)
		}
	case check.SymOperation:
		if sym.Parent != nil {
			return fmt.Sprintf("operation %s.%s", sym.Parent.Name, sym.Name)
		}
	}
	public := ""
	if sym.Public {
		public = "public "
	}
	return public + sym.Kind.String() + " " + sym.Name
}

var kindWords = map[ir.Kind]string{ir.Text: "Text", ir.Int: "Int", ir.Decimal: "Decimal", ir.Bool: "Bool", ir.Uuid: "Uuid",
	ir.Instant: "Instant", ir.Email: "Email", ir.Url: "Url", ir.Duration: "Duration", ir.Enum: "enum", ir.RecordK: "record",
	ir.List: "List", ir.Map: "Map"}

func kindWord(k ir.Kind) string {
	if w, ok := kindWords[k]; ok {
		return w
	}
	return string(k)
}

// typeRules says what a value of the type is, one line a fact.
func typeRules(t ir.Type) []string {
	var out []string
	base := kindWord(t.Kind)
	switch t.Kind {
	case ir.Enum:
		out = append(out, "one of "+quoteAll(t.Variants))
	case ir.RecordK:
		out = append(out, "a record: "+check.ShortName(t.Name))
	case ir.List, ir.Map:
		out = append(out, check.TypeText(t))
	default:
		article := "a "
		if strings.ContainsRune("AEIOU", rune(base[0])) {
			article = "an "
		}
		if t.Name != "" {
			out = append(out, fmt.Sprintf("`%s`, %s%s", check.ShortName(t.Name), article, base))
		} else {
			out = append(out, article+base)
		}
	}
	if r := t.Rules; r != nil {
		if r.Min != nil {
			out = append(out, "at least "+*r.Min)
		}
		if r.Max != nil {
			out = append(out, "at most "+*r.Max)
		}
		if r.MinLength != nil {
			out = append(out, "at least "+characters(*r.MinLength))
		}
		if r.MaxLength != nil {
			out = append(out, "at most "+characters(*r.MaxLength))
		}
		for _, p := range r.Patterns {
			out = append(out, "matches `"+p+"` (whole text)")
		}
		if r.Format != "" {
			out = append(out, "format "+r.Format)
		}
	}
	if t.Optional {
		out = append(out, "optional: may be `none`")
	}
	return out
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return fmt.Sprintf("%d characters", n)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

// jsonLiteral writes a default as the source would: text in quotes,
// numbers and flags bare.
func jsonLiteral(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	if v == nil {
		return "none"
	}
	return string(raw)
}
