package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/source"
)

// LSP counts characters in UTF-16 code units: an emoji outside the Basic
// Multilingual Plane is two.
func TestLSPRangeCountsUTF16(t *testing.T) {
	f := source.NewFile("app.jadpo", []byte("x\n// 😀é abc\n"))
	start := strings.Index(string(f.Content), "abc")
	r := lspRange(source.Range{File: f, Span: source.Span{Start: start, End: start + 3}})
	got := fmt.Sprintf("%+v", r)
	want := "{End:{Character:10 Line:1} Start:{Character:7 Line:1}}"
	if got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}
