package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jadpo/jadpo/lang/source"
)

func sample() List {
	f := source.NewFile("app.jadpo", []byte("queue q {\n\tevents: { Café }\n}\n"))
	start := bytes.Index(f.Content, []byte("Café"))
	var l List
	l.Add("receiving.invalid", source.Range{File: f, Span: source.Span{Start: start, End: start + len("Café")}},
		"`events` lists `Café`, which is not an event in scope").Suggest("Cafe")
	return l
}

// Carets stand under the subject, counted in code points and keeping tabs.
func TestTextCaretsUnderTheSubject(t *testing.T) {
	var b bytes.Buffer
	WriteText(&b, sample(), TextOptions{})
	out := b.String()
	want := "2 | \tevents: { Café }\n  | \t          ^^^^ did you mean `Cafe`?\n"
	if !strings.Contains(out, want) {
		t.Fatalf("got\n%s\nwant it to contain\n%s", out, want)
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("colour without Color")
	}
	b.Reset()
	WriteText(&b, sample(), TextOptions{Color: true})
	if !strings.Contains(b.String(), "\x1b[") {
		t.Fatal("no colour with Color")
	}
}

// The JSON report's columns are code points, bytes 0-based and end-exclusive.
func TestReportRanges(t *testing.T) {
	r := NewReport("check", "p", 1, 1, sample())
	b, _ := json.Marshal(r)
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	loc := back.Diagnostics[0].Location
	if loc.Range.Start.Line != 2 || loc.Range.Start.Column != 12 || loc.Range.End.Column != 16 ||
		loc.Range.End.Byte-loc.Range.Start.Byte != len("Café") {
		t.Fatalf("range %+v", loc.Range)
	}
	if back.Status != "failed" || back.Diagnostics[0].Context["suggestion"] != "Cafe" || back.Diagnostics[0].Docs != "docs/diagnostics/receiving.invalid.md" {
		t.Fatalf("report %+v", back)
	}
}

// Sorting is by file, position, then code.
func TestSort(t *testing.T) {
	a := source.NewFile("a.jadpo", []byte("xx"))
	z := source.NewFile("z.jadpo", []byte("xx"))
	var l List
	l.Add("type.mismatch", source.Range{File: z, Span: source.Span{Start: 0, End: 1}}, "z0")
	l.Add("type.mismatch", source.Range{File: a, Span: source.Span{Start: 1, End: 2}}, "a1")
	l.Add("semantic.name_case", source.Range{File: a, Span: source.Span{Start: 1, End: 2}}, "a1 code")
	l.Add("toolchain.empty_project", source.Range{}, "none")
	l.Sort()
	var got []string
	for _, d := range l {
		got = append(got, d.Summary)
	}
	if strings.Join(got, ",") != "none,a1 code,a1,z0" {
		t.Fatalf("order %v", got)
	}
}

// An uncatalogued code is a bug in the toolchain: it panics in every test.
func TestUncataloguedCodePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var l List
	l.Add("made.up", source.Range{}, "x")
}

// Human text shows a path that can be pasted where the command ran: the project folder as
// given, then the file; JSON keeps the project-relative source.
func TestTextPathFromWhereTheCommandRan(t *testing.T) {
	var b bytes.Buffer
	WriteText(&b, sample(), TextOptions{Dir: "m22"})
	if !strings.Contains(b.String(), "--> m22/app.jadpo:2:12\n") {
		t.Fatalf("the path is not from the working directory:\n%s", b.String())
	}
	b.Reset()
	WriteText(&b, sample(), TextOptions{Dir: "."})
	if !strings.Contains(b.String(), "--> app.jadpo:2:12\n") {
		t.Fatalf("with Dir \".\":\n%s", b.String())
	}
	if r := NewReport("check", "m22", 1, 1, sample()); r.Diagnostics[0].Location.Source != "app.jadpo" {
		t.Fatalf("JSON source %q, want app.jadpo", r.Diagnostics[0].Location.Source)
	}
}

// strays is one line holding n stray characters, each a diagnostic, the way
// the lexer reports `- - - ...` (issue 11, point 8).
func strays(n int) List {
	src := []byte("store primary {}\n" + strings.Repeat("- ", n) + "\n")
	f := source.NewFile("app.jadpo", src)
	var l List
	for i := 0; i < n; i++ {
		off := len("store primary {}\n") + 2*i
		l.Add("syntax.stray_character", source.Range{File: f, Span: source.Span{Start: off, End: off + 1}}, "`-` cannot appear here")
	}
	return l
}

// At most MaxPerFile diagnostics a file, then one that counts the rest; the
// totals still count every problem, in the text and the JSON alike.
func TestCapPerFileSaysHowManyMore(t *testing.T) {
	l := append(strays(MaxPerFile+250), strays(3)...) // a second file of the same name: one group
	l = append(l, &Diagnostic{Code: "toolchain.empty_project", Severity: Error, Summary: "no app"})
	l.Sort()
	capped := l.Capped(MaxPerFile)
	if len(capped) != 1+MaxPerFile+1 {
		t.Fatalf("%d diagnostics after the cap, want %d", len(capped), MaxPerFile+2)
	}
	more := capped[len(capped)-1]
	if more.Code != "toolchain.more_diagnostics" || more.Summary != "and 253 more problems in app.jadpo" ||
		more.Severity != Error || more.Context["omitted"] != "253" {
		t.Fatalf("last diagnostic %+v", more)
	}
	if capped.Errors() != len(l) || capped.Warnings() != 0 {
		t.Fatalf("totals %d errors, %d warnings; want %d errors", capped.Errors(), capped.Warnings(), len(l))
	}
	rep := NewReport("check", ".", 1, 1, capped)
	if rep.Summary.Errors != len(l) || len(rep.Diagnostics) != len(capped) {
		t.Fatalf("report totals %+v with %d records", rep.Summary, len(rep.Diagnostics))
	}
	if got := (List{more}).Errors(); got != 253 {
		t.Fatalf("the cap's diagnostic stands for %d errors", got)
	}
	// A file within the cap is left alone.
	few := strays(MaxPerFile)
	if got := few.Capped(MaxPerFile); len(got) != MaxPerFile {
		t.Fatalf("%d of %d kept", len(got), MaxPerFile)
	}
}

// A long line is shown as a window around the subject, not whole, with the
// carets still under the subject.
func TestTextShowsAWindowOfALongLine(t *testing.T) {
	l := strays(5000)
	var b bytes.Buffer
	WriteText(&b, l[2500:2501], TextOptions{})
	out := b.String()
	if len(out) > 600 {
		t.Fatalf("%d bytes for one diagnostic on a %d-byte line:\n%.600s", len(out), len(l[0].Subject.File.Content), out)
	}
	want := "2 | …" + strings.Repeat("- ", ExcerptBefore/2) + strings.Repeat("- ", ExcerptAfter/2) + "…\n" +
		"  |  " + strings.Repeat(" ", ExcerptBefore) + "^\n"
	if !strings.Contains(out, want) {
		t.Fatalf("got\n%s\nwant it to contain\n%s", out, want)
	}
	if !strings.Contains(out, "--> app.jadpo:2:5001\n") {
		t.Fatalf("place missing:\n%s", out)
	}
	// The start of the line: no cut before it.
	b.Reset()
	WriteText(&b, l[:1], TextOptions{})
	if want := "2 | " + strings.Repeat("- ", ExcerptAfter/2) + "…\n  | ^\n"; !strings.Contains(b.String(), want) {
		t.Fatalf("got\n%s\nwant it to contain\n%s", b.String(), want)
	}
}

// Control characters from the project are shown escaped (issue 11, point
// 10): the source line, the summary, the label and the path; the carets
// stay under the subject.
func TestTextEscapesControlCharacters(t *testing.T) {
	src := "value V { note: \"\x1b]0;pwned\x07\" x: \u202e€ }\n"
	f := source.NewFile("evil\x1b[2J.jadpo", []byte(src))
	off := strings.Index(src, "€")
	var l List
	l.Add("syntax.stray_character", source.Range{File: f, Span: source.Span{Start: off, End: off + len("€")}},
		"`\x1b[31m` cannot appear here").WithLabel("\u009b label")
	var b bytes.Buffer
	WriteText(&b, l, TextOptions{})
	out := b.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q printed raw:\n%s", bad, out)
		}
	}
	line := "1 | value V { note: \"\\x1b]0;pwned\\x07\" x: \\u202e€ }\n"
	i := strings.Index(out, line)
	if i < 0 {
		t.Fatalf("got\n%s\nwant it to contain\n%s", out, line)
	}
	under := strings.SplitN(out[i+len(line):], "\n", 2)[0]
	if want := strings.Repeat(" ", utf8.RuneCountInString(line[:strings.Index(line, "€")])) + "^ \\u009b label"; under[3:] != want[3:] || under[:3] != "  |" {
		t.Fatalf("carets not under the subject:\n%s\n%s", line, under)
	}
	if !strings.Contains(out, "--> evil\\x1b[2J.jadpo:1:") || !strings.Contains(out, "`\\x1b[31m` cannot appear here") {
		t.Fatalf("path or summary not escaped:\n%s", out)
	}
}
