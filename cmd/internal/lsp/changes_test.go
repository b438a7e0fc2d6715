package lsp

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/source"
)

type contentChange = protocol.TextDocumentContentChangePartial

// ranged is a change replacing the range from (sl, sc) to (el, ec).
func ranged(sl, sc, el, ec int, text string) contentChange {
	return contentChange{Text: text, Range: &protocol.Range{
		Start: protocol.Position{Line: sl, Character: sc}, End: protocol.Position{Line: el, Character: ec}}}
}

func TestApplyChanges(t *testing.T) {
	cases := []struct {
		name, text string
		changes    []contentChange
		want       string
	}{
		{"insert", "ab\ncd\n", []contentChange{ranged(1, 1, 1, 1, "X")}, "ab\ncXd\n"},
		{"delete across lines", "ab\ncd\nef\n", []contentChange{ranged(0, 1, 2, 1, "")}, "af\n"},
		{"replace", "queue q {\n}\n", []contentChange{ranged(0, 6, 0, 7, "orders")}, "queue orders {\n}\n"},
		// Characters are UTF-16 units: 😀 is two, é one.
		{"after a surrogate pair", "a😀b\n", []contentChange{ranged(0, 3, 0, 4, "c")}, "a😀c\n"},
		{"after an accent", "é=1\n", []contentChange{ranged(0, 1, 0, 2, ":")}, "é:1\n"},
		{"CRLF lines", "ab\r\ncd\r\n", []contentChange{ranged(1, 0, 1, 2, "xy")}, "ab\r\nxy\r\n"},
		{"past a line's end clamps to it", "ab\ncd\n", []contentChange{ranged(0, 99, 0, 99, "!")}, "ab!\ncd\n"},
		{"past the end appends", "ab", []contentChange{ranged(5, 0, 5, 0, "\ncd")}, "ab\ncd"},
		{"each change on the text the one before left", "abc", []contentChange{ranged(0, 0, 0, 1, ""), ranged(0, 0, 0, 1, "")}, "c"},
		{"a whole text, then a range of it", "old", []contentChange{{Text: "new text"}, ranged(0, 0, 0, 3, "the")}, "the text"},
		{"an end before the start is the start", "abc", []contentChange{ranged(0, 2, 0, 1, "X")}, "abXc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := []byte(tc.text)
			got, ok := applyChanges(orig, tc.changes)
			if !ok || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, ok, tc.want)
			}
			if string(orig) != tc.text {
				t.Errorf("the old text was written into: %q", orig)
			}
		})
	}
	if _, ok := applyChanges(nil, []contentChange{ranged(0, 0, 0, 0, "x")}); ok {
		t.Error("a ranged change to a document not open was applied")
	}
	if got, ok := applyChanges(nil, []contentChange{{Text: "whole"}}); !ok || string(got) != "whole" {
		t.Errorf("a whole text for a document not open: %q, %v", got, ok)
	}
}

// FuzzApplyChanges: for any text, replacing the range between two of its
// character boundaries, given as the positions the server itself reports,
// gives the text with those bytes replaced.
//
//	go test ./cmd/internal/lsp -run XXX -fuzz FuzzApplyChanges -fuzztime 60s
func FuzzApplyChanges(f *testing.F) {
	f.Add("queue q {\n    id_at: \"id\"\n}\n", 3, 11, "x")
	f.Add("a😀b\r\nc\n", 1, 5, "")
	f.Add("\xef\xbb\xbfé\n", 0, 2, "y")
	f.Add("\xff\xfe\n\n", 1, 3, "z\n")
	f.Fuzz(func(t *testing.T, text string, i, j int, insert string) {
		file := source.NewFile("", []byte(text))
		// The character boundaries: every rune start past a byte order
		// mark, and the end, but not just after a CR that ends a line
		// (before its LF or at the end): lines end at LF, as in the
		// checker's positions, and a CR at a line's end is not on it, so a
		// position there is the line's end, before the CR.
		var cuts []int
		for off := file.BOMLen(); off <= len(text); {
			if !(off > 0 && text[off-1] == '\r' && (off == len(text) || text[off] == '\n')) {
				cuts = append(cuts, off)
			}
			if off == len(text) {
				break
			}
			_, size := utf8.DecodeRuneInString(text[off:])
			off += size
		}
		a, b := cuts[abs(i)%len(cuts)], cuts[abs(j)%len(cuts)]
		if a > b {
			a, b = b, a
		}
		pa, pb := lspPos(file, a), lspPos(file, b)
		ch := ranged(pa.Line, pa.Character, pb.Line, pb.Character, insert)
		got, ok := applyChanges([]byte(text), []contentChange{ch})
		want := text[:a] + insert + text[b:]
		if !ok || string(got) != want {
			t.Fatalf("replacing bytes %d..%d (%v..%v) of %q by %q: got %q, want %q", a, b, pa, pb, text, insert, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the smallest int
			return 0
		}
		return -n
	}
	return n
}

// The server takes changes by range (it advertises incremental sync): a
// ranged edit that misspells an event is reported, and one that puts it
// back clears the report.
func TestIncrementalChanges(t *testing.T) {
	c, _, app, text := warehouse(t, Options{})
	uri := pathURI(app)
	start := at(text, "OrderShipped { wire_name", 0, len("OrderShip"))
	end := at(text, "OrderShipped { wire_name", 0, len("OrderShipp"))
	send := func(version int, start, end map[string]any, insert string) {
		c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": start, "end": end}, "text": insert}}})
	}
	send(2, start, end, "")
	ds := c.Published(uri, c.Pubs(uri))
	if len(ds) != 1 || !strings.Contains(fmt.Sprint(ds[0]), "OrderShiped") {
		t.Fatalf("after a ranged edit: %v, want OrderShiped reported", ds)
	}
	send(3, start, start, "p")
	if ds := c.Published(uri, c.Pubs(uri)); len(ds) != 0 {
		t.Fatalf("after the edit was undone by range: %v", ds)
	}
}
