package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
