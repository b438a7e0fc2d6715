package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/lang/termtext"
)

// TextOptions shape the human rendering.
type TextOptions struct {
	Color bool // ANSI colour; the caller decides (a terminal, and no NO_COLOR)
	// Dir is put before each file's project-relative path: the project folder as given
	// where the command ran, so that `jadpo check m22` shows m22/app.jadpo:17:27, a path
	// that can be pasted there. JSON keeps project-relative paths (diagnostics.md).
	Dir string
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[1;31m"
	ansiYel   = "\x1b[1;33m"
	ansiBlue  = "\x1b[1;34m"
)

// WriteText renders each diagnostic as people read it on stderr, in the
// shape rustc made familiar: the summary, the place, the line with carets
// under the subject, then help. Everything taken from the project (paths,
// names in summaries, source lines) goes through termtext, so a file cannot
// drive the terminal; a long line is shown as a window around the subject.
func WriteText(w io.Writer, l List, opt TextOptions) {
	paint := func(code, s string) string {
		if !opt.Color {
			return s
		}
		return code + s + ansiReset
	}
	for _, d := range l {
		sev := paint(ansiRed, d.Severity.String())
		if d.Severity == Warning {
			sev = paint(ansiYel, d.Severity.String())
		}
		fmt.Fprintf(w, "%s%s %s\n", sev, paint(ansiBold, "["+string(d.Code)+"]:"), paint(ansiBold, termtext.Text(d.Summary)))
		gutter := 0
		if d.Subject.File != nil {
			gutter = len(fmt.Sprint(d.Subject.File.Position(d.Subject.Span.Start).Line))
			for _, r := range d.Related {
				if r.Range.File != nil {
					if g := len(fmt.Sprint(r.Range.File.Position(r.Range.Span.Start).Line)); g > gutter {
						gutter = g
					}
				}
			}
			writeSnippet(w, d.Subject, d.Label, gutter, opt.Dir, paint)
		}
		for _, r := range d.Related {
			if r.Range.File == nil {
				continue
			}
			fmt.Fprintf(w, "%s%s %s\n", strings.Repeat(" ", gutter+1), paint(ansiBlue, "="), paint(ansiBold, "note:")+" "+termtext.Text(r.Message))
			writeSnippet(w, r.Range, "", gutter, opt.Dir, paint)
		}
		if h := d.HelpText(); h != "" {
			fmt.Fprintf(w, "%s%s help: %s\n", strings.Repeat(" ", gutter+1), paint(ansiBlue, "="), termtext.Text(h))
		}
		fmt.Fprintln(w)
	}
}

// A source line up to ExcerptWhole bytes is shown whole; a longer one as a
// window of ExcerptBefore characters before the subject and ExcerptAfter
// from its start, with `…` where it was cut (docs/design/language.md, "How diagnostics are shown").
const (
	ExcerptWhole  = 120
	ExcerptBefore = 40
	ExcerptAfter  = 80
)

func writeSnippet(w io.Writer, r source.Range, label string, gutter int, dir string, paint func(string, string) string) {
	f := r.File
	start := f.Position(r.Span.Start)
	pad := strings.Repeat(" ", gutter)
	path := f.Path
	if dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(dir, filepath.FromSlash(path))
	}
	fmt.Fprintf(w, "%s%s %s:%d:%d\n", pad, paint(ansiBlue, "-->"), termtext.Line(path), start.Line, start.Column)
	fmt.Fprintf(w, "%s %s\n", pad, paint(ansiBlue, "|"))
	lineStart, lineEnd := f.LineBounds(start.Line)
	at := min(max(start.Byte, lineStart), lineEnd)
	from, to := lineStart, lineEnd
	if lineEnd-lineStart > ExcerptWhole {
		from, to = back(f.Content, at, lineStart, ExcerptBefore), forward(f.Content, at, lineEnd, ExcerptAfter)
	}
	// The excerpt, and the carets under the span's part on it, at least one
	// wide, keeping the line's tabs so they line up in any terminal; an
	// escaped character is as wide as its escape.
	var text, lead strings.Builder
	if from > lineStart {
		text.WriteString("…")
		lead.WriteByte(' ')
	}
	end := min(max(r.Span.End, at), to)
	width := 0
	for i := from; i < to; {
		c, size := utf8.DecodeRune(f.Content[i:to])
		shown := termtext.Rune(c)
		if c == utf8.RuneError && size <= 1 {
			shown = fmt.Sprintf(`\x%02x`, f.Content[i])
		}
		text.WriteString(shown)
		switch {
		case i < at && c == '\t':
			lead.WriteByte('\t')
		case i < at:
			lead.WriteString(strings.Repeat(" ", utf8.RuneCountInString(shown)))
		case i < end:
			width += utf8.RuneCountInString(shown)
		}
		i += size
	}
	if to < lineEnd {
		text.WriteString("…")
	}
	fmt.Fprintf(w, "%s %s %s\n", paint(ansiBlue, fmt.Sprintf("%*d", gutter, start.Line)), paint(ansiBlue, "|"), text.String())
	carets := strings.Repeat("^", max(width, 1))
	if label != "" {
		carets += " " + termtext.Text(label)
	}
	fmt.Fprintf(w, "%s %s %s%s\n", pad, paint(ansiBlue, "|"), lead.String(), paint(ansiRed, carets))
}

// back steps n characters back from i, not before lo.
func back(b []byte, i, lo, n int) int {
	for ; n > 0 && i > lo; n-- {
		_, size := utf8.DecodeLastRune(b[lo:i])
		i -= size
	}
	return i
}

// forward steps n characters on from i, not past hi.
func forward(b []byte, i, hi, n int) int {
	for ; n > 0 && i < hi; n-- {
		_, size := utf8.DecodeRune(b[i:hi])
		i += size
	}
	return i
}

// The report's status, spelled as every other JSON document of the CLI spells it
// (cmd/internal/jsonout's StatusOK and StatusFailed, held equal by its tests).
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Report is the JSON document editors and scripts read (diagnostics.md).
type Report struct {
	SchemaVersion int `json:"schemaVersion"`
	// SchemaMinor counts the fields added within SchemaVersion (docs/reference/json.md):
	// 1 added each diagnostic's docsUri.
	SchemaMinor int          `json:"schemaMinor"`
	Kind        string       `json:"kind"`
	Command     string       `json:"command"`
	Status      string       `json:"status"`
	Project     string       `json:"project"`
	Summary     Totals       `json:"summary"`
	Diagnostics []JSONRecord `json:"diagnostics"`
}

// Totals counts what was read and found.
type Totals struct {
	Files        int `json:"files"`
	Declarations int `json:"declarations"`
	Errors       int `json:"errors"`
	Warnings     int `json:"warnings"`
}

// JSONRecord is one diagnostic in the report.
type JSONRecord struct {
	Code     Code              `json:"code"`
	Severity string            `json:"severity"`
	Summary  string            `json:"summary"`
	Label    string            `json:"label,omitempty"`
	Help     string            `json:"help"`
	Location *JSONLocation     `json:"location"`
	Related  []JSONRelated     `json:"related"`
	Context  map[string]string `json:"context"`
	Docs     string            `json:"docs"`
	// DocsURI is Docs as an absolute address (DocsURI).
	DocsURI string `json:"docsUri"`
}

// JSONLocation is a file and a range in it.
type JSONLocation struct {
	Source string    `json:"source"`
	Range  JSONRange `json:"range"`
}

// JSONRange is a range with both ends as byte, line and column.
type JSONRange struct {
	Start source.Position `json:"start"`
	End   source.Position `json:"end"`
}

// JSONRelated is a contributing location.
type JSONRelated struct {
	Message  string        `json:"message"`
	Location *JSONLocation `json:"location"`
}

// NewReport builds the JSON report of a command's run.
func NewReport(command, project string, files, declarations int, l List) Report {
	r := Report{
		SchemaVersion: 1,
		SchemaMinor:   1,
		Kind:          "diagnostic_report",
		Command:       command,
		Status:        StatusOK,
		Project:       project,
		Summary:       Totals{Files: files, Declarations: declarations, Errors: l.Errors(), Warnings: l.Warnings()},
		Diagnostics:   []JSONRecord{},
	}
	if l.HasErrors() {
		r.Status = StatusFailed
	}
	for _, d := range l {
		rec := JSONRecord{
			Code: d.Code, Severity: d.Severity.String(), Summary: d.Summary, Label: d.Label,
			Help: d.HelpText(), Location: location(d.Subject), Related: []JSONRelated{},
			Context: d.Context, Docs: DocsPath(d.Code), DocsURI: DocsURI(d.Code),
		}
		if rec.Context == nil {
			rec.Context = map[string]string{}
		}
		for _, rel := range d.Related {
			rec.Related = append(rec.Related, JSONRelated{Message: rel.Message, Location: location(rel.Range)})
		}
		r.Diagnostics = append(r.Diagnostics, rec)
	}
	return r
}

func location(r source.Range) *JSONLocation {
	if r.File == nil {
		return nil
	}
	return &JSONLocation{Source: r.File.Path, Range: JSONRange{
		Start: r.File.Position(r.Span.Start),
		End:   r.File.Position(r.Span.End),
	}}
}

// WriteJSON writes the report, indented, with a final newline.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
