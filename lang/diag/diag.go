// Package diag is the one record every problem the toolchain finds is kept in,
// the catalogue of its codes, and the two renderings users see: human text and
// the JSON report editors read.
//
// Like HCL's hcl.Diagnostics, a List is itself the error value: code that can
// fail with problems in the user's sources returns a List.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jadpo/jadpo/lang/source"
)

// Severity says whether a diagnostic fails the command.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem at its smallest responsible range.
type Diagnostic struct {
	Code     string
	Severity Severity
	// Summary names the concrete problem in the author's words.
	Summary string
	// Label is printed under the subject's carets (a suggestion, usually).
	Label string
	// Help says how to fix it; empty means the catalogue's help for the code.
	Help string
	// Subject is the range the problem is reported at. A zero Range (no file)
	// is a problem with the project as a whole.
	Subject source.Range
	// Related are other places that contribute (the first of two duplicates).
	Related []Related
	// Context is structured detail for editors and scripts (queue, name,
	// suggestion, ...). Never a config value or a secret.
	Context map[string]string
}

// Related is a contributing location with a sentence about it.
type Related struct {
	Message string
	Range   source.Range
}

// HelpText is the diagnostic's own help or, without one, its code's.
func (d *Diagnostic) HelpText() string {
	if d.Help != "" {
		return d.Help
	}
	return Catalogue[d.Code].Help
}

// List is a set of diagnostics; a non-empty List with errors is an error value.
type List []*Diagnostic

func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteString("\n")
		}
		if d.Subject.File != nil {
			p := d.Subject.File.Position(d.Subject.Span.Start)
			fmt.Fprintf(&b, "%s:%d:%d: ", d.Subject.File.Path, p.Line, p.Column)
		}
		fmt.Fprintf(&b, "%s[%s]: %s", d.Severity, d.Code, d.Summary)
	}
	return b.String()
}

// Errors counts the diagnostics of severity Error.
func (l List) Errors() int { return l.count(Error) }

// Warnings counts the diagnostics of severity Warning.
func (l List) Warnings() int { return l.count(Warning) }

func (l List) count(s Severity) int {
	n := 0
	for _, d := range l {
		if d.Severity == s {
			n++
		}
	}
	return n
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool { return l.Errors() > 0 }

// Add appends a diagnostic of the given code at rng, its severity from the
// catalogue. It panics on a code the catalogue lacks: emitting an
// uncatalogued code is a bug in the toolchain, caught by every test.
func (l *List) Add(code string, rng source.Range, summary string) *Diagnostic {
	e, ok := Catalogue[code]
	if !ok {
		panic("diag: code not in the catalogue: " + code)
	}
	d := &Diagnostic{Code: code, Severity: e.Severity, Summary: summary, Subject: rng}
	*l = append(*l, d)
	return d
}

// Addf is Add with a formatted summary.
func (l *List) Addf(code string, rng source.Range, format string, args ...any) *Diagnostic {
	return l.Add(code, rng, fmt.Sprintf(format, args...))
}

// WithLabel sets the text under the carets.
func (d *Diagnostic) WithLabel(label string) *Diagnostic { d.Label = label; return d }

// WithHelp sets a help text particular to this diagnostic.
func (d *Diagnostic) WithHelp(help string) *Diagnostic { d.Help = help; return d }

// WithRelated adds a contributing location.
func (d *Diagnostic) WithRelated(rng source.Range, message string) *Diagnostic {
	d.Related = append(d.Related, Related{Message: message, Range: rng})
	return d
}

// With adds a context entry.
func (d *Diagnostic) With(key, value string) *Diagnostic {
	if d.Context == nil {
		d.Context = map[string]string{}
	}
	d.Context[key] = value
	return d
}

// Suggest records a did-you-mean suggestion as label and context.
func (d *Diagnostic) Suggest(name string) *Diagnostic {
	if name == "" {
		return d
	}
	d.Label = fmt.Sprintf("did you mean `%s`?", name)
	return d.With("suggestion", name)
}

// Sort orders diagnostics by file, then position, then code, as every output
// shows them. Problems with no file come first.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		ap, bp := pathOf(a.Subject), pathOf(b.Subject)
		if ap != bp {
			return ap < bp
		}
		if a.Subject.Span.Start != b.Subject.Span.Start {
			return a.Subject.Span.Start < b.Subject.Span.Start
		}
		return a.Code < b.Code
	})
}

func pathOf(r source.Range) string {
	if r.File == nil {
		return ""
	}
	return r.File.Path
}
