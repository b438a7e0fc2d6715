package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Example is what a code's page shows of the first golden case that reports
// the code: the case's name, its golden human text and, when the case is an
// example project with a change, the project and the change.
type Example struct {
	Case  string // testdata/cases/<Case>
	Human string // testdata/golden/<Case>.txt
	Base  string // examples/<Base>, when the case edits an example project
	Edits []Edit
}

// Edit is one change a case makes to its example project.
type Edit struct{ File, Old, New string }

// Page is the code's page, docs/diagnostics/<code>.md, which `jadpo explain
// CODE` prints: its row of the table (severity, title, what it means, its
// usual causes, Help as "How to fix") and the example. cmd/jadpo's
// TestDocsPages writes every page with it (`make docs`).
func (e Entry) Page(ex Example) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s: %s.\n\n", e.Code, upperFirst(e.Severity.String()), e.Title)
	fmt.Fprintf(&b, "## What it means\n\n%s\n\n", e.Means)
	if len(e.Causes) > 0 {
		b.WriteString("## Usual causes\n\n")
		for _, c := range e.Causes {
			if c.Case != "" {
				fmt.Fprintf(&b, "- %s (case `%s`)\n", c.Text, c.Case)
			} else {
				fmt.Fprintf(&b, "- %s\n", c.Text)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## How to fix\n\n%s.\n\n", strings.TrimSuffix(upperFirst(e.Help), "."))
	fmt.Fprintf(&b, "## Example\n\nThe golden case `testdata/cases/%s` reports it:\n\n```text\n%s```\n", ex.Case, ex.Human)
	if len(ex.Edits) > 0 {
		b.WriteString("\nThe case is the example project `examples/" + ex.Base + "` with this change; undoing it is the fix:\n\n```text\n")
		for _, ed := range ex.Edits {
			fmt.Fprintf(&b, "%s: %q -> %q\n", ed.File, ed.Old, ed.New)
		}
		b.WriteString("```\n")
	}
	return b.String()
}

// IndexPath is the catalogue's page: every code with its severity and title.
const IndexPath = "docs/diagnostics/README.md"

// Codes are the table's codes, sorted.
func Codes() []Code {
	codes := make([]Code, 0, len(Catalogue))
	for c := range Catalogue {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	return codes
}

// Index is the catalogue's page (IndexPath): every code, its severity and
// title, linking its page, grouped by the part of the code before the dot.
// `jadpo explain --list` prints the same rows.
func Index() string {
	var b strings.Builder
	b.WriteString("# Diagnostic codes\n\n")
	b.WriteString("Every code `jadpo check` can report, with its severity and title; each links its page,\n")
	b.WriteString("which `jadpo explain CODE` prints. This page and the pages are written from the table in\n")
	b.WriteString("`lang/diag/codes.go` (`make docs`); do not edit them by hand.\n")
	group := ""
	for _, c := range Codes() {
		e := Catalogue[c]
		g, _, _ := strings.Cut(string(c), ".")
		if g != group {
			group = g
			fmt.Fprintf(&b, "\n## %s\n\n| Code | Severity | Title |\n|---|---|---|\n", g)
		}
		fmt.Fprintf(&b, "| [`%s`](%s.md) | %s | %s |\n", c, c, e.Severity, strings.ReplaceAll(e.Title, "|", "\\|"))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
