// Package check decides whether a project can run: it resolves every name
// across modules and packages, types every value, applies the rules of the
// receiving slice and, when nothing is wrong, produces the typed IR that
// `jadpo build` writes as the plan. It runs nothing.
package check

import (
	"strings"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
)

// Result is what a check found.
type Result struct {
	Diags diag.List
	// Files and Declarations count what was read, for the report.
	Files, Declarations int
}

// Check checks a loaded project.
func Check(p *project.Project) Result {
	diags := append(diag.List(nil), p.Diags...)
	diags = onlySyntaxIfAny(diags)
	diags.Sort()
	return Result{Diags: diags, Files: len(p.Parsed), Declarations: p.Declarations()}
}

// onlySyntaxIfAny keeps only syntax problems while any file has one: a
// declaration that did not parse would make every use of it look wrong.
func onlySyntaxIfAny(l diag.List) diag.List {
	hasSyntax := false
	for _, d := range l {
		if strings.HasPrefix(d.Code, "syntax.") {
			hasSyntax = true
			break
		}
	}
	if !hasSyntax {
		return l
	}
	out := l[:0:0]
	for _, d := range l {
		if strings.HasPrefix(d.Code, "syntax.") || strings.HasPrefix(d.Code, "toolchain.") {
			out = append(out, d)
		}
	}
	return out
}
