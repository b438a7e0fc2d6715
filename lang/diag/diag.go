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
	"github.com/jadpo/jadpo/lang/termtext"
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
	// Fix, when set, is the text that fixes the problem put in place of the
	// subject (an editor's quick fix: quote a URL, `:` for `=`); "" removes
	// the subject. A did-you-mean is Context["suggestion"] instead.
	Fix *string
	// FixRange, when set, is where Fix goes instead of the subject: an
	// unused declaration is reported at its name and removed whole.
	FixRange source.Range
	// Omitted is set on the "and N more" diagnostic that ends a file's
	// capped list: the errors and warnings it stands for, which the totals
	// count although they are not shown.
	Omitted *Omitted
}

// Omitted counts the diagnostics a cap left out.
type Omitted struct {
	Errors, Warnings int
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
			fmt.Fprintf(&b, "%s:%d:%d: ", termtext.Line(d.Subject.File.Path), p.Line, p.Column)
		}
		fmt.Fprintf(&b, "%s[%s]: %s", d.Severity, d.Code, termtext.Text(d.Summary))
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
		switch {
		case d.Omitted != nil && s == Error:
			n += d.Omitted.Errors
		case d.Omitted != nil:
			n += d.Omitted.Warnings
		case d.Severity == s:
			n++
		}
	}
	return n
}

// MaxPerFile is how many diagnostics a file shows: past it one more
// diagnostic says how many were left out (docs/design/language.md, "How diagnostics are shown"). The
// first hundred are where to start; a file with more is usually one
// mistake repeated, and a million of them would flood any terminal or editor.
const MaxPerFile = 100

// Capped keeps the first max diagnostics of each file of a sorted list and
// puts one toolchain.more_diagnostics in place of the rest, at the first
// left out. Problems with the project as a whole are never left out.
func (l List) Capped(max int) List {
	out := l[:0:0]
	for i := 0; i < len(l); {
		d := l[i]
		if d.Subject.File == nil {
			out = append(out, d)
			i++
			continue
		}
		j := i
		for j < len(l) && l[j].Subject.File != nil && l[j].Subject.File.Path == d.Subject.File.Path {
			j++
		}
		if j-i <= max {
			out = append(out, l[i:j]...)
			i = j
			continue
		}
		out = append(out, l[i:i+max]...)
		var o Omitted
		for _, left := range l[i+max : j] {
			if left.Omitted != nil {
				o.Errors += left.Omitted.Errors
				o.Warnings += left.Omitted.Warnings
			} else if left.Severity == Error {
				o.Errors++
			} else {
				o.Warnings++
			}
		}
		first := l[i+max]
		n := o.Errors + o.Warnings
		what := "problems"
		if n == 1 {
			what = "problem"
		}
		more := &Diagnostic{Code: "toolchain.more_diagnostics", Severity: Warning,
			Summary: fmt.Sprintf("and %d more %s in %s", n, what, d.Subject.File.Path),
			Label:   "the first one left out", Subject: first.Subject, Omitted: &o,
			Help: fmt.Sprintf("a file shows at most %d diagnostics; fix these and check again", max)}
		if o.Errors > 0 {
			more.Severity = Error
		}
		more.With("omitted", fmt.Sprint(n)).With("errors", fmt.Sprint(o.Errors)).With("warnings", fmt.Sprint(o.Warnings))
		out = append(out, more)
		i = j
	}
	return out
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

// WithFix records the text that fixes the problem in place of the subject.
func (d *Diagnostic) WithFix(text string) *Diagnostic { d.Fix = &text; return d }

// WithFixAt records the text that fixes the problem in place of rng.
func (d *Diagnostic) WithFixAt(rng source.Range, text string) *Diagnostic {
	d.Fix, d.FixRange = &text, rng
	return d
}

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
