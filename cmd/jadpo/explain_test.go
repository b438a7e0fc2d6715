package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jadpo explain prints a code's page as docs/diagnostics/ has it, from the binary.
func TestExplainPrintsThePage(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "diagnostics", "receiving.invalid.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"receiving.invalid", "error[receiving.invalid]"} {
		out, errOut, code := runCLI("explain", arg)
		if code != 0 || out != string(want) {
			t.Fatalf("explain %s: exit %d, printed\n%s%s", arg, code, out, errOut)
		}
	}
}

// An unknown code exits non-zero and suggests the code it likely meant.
func TestExplainUnknownCode(t *testing.T) {
	for arg, want := range map[string]string{
		"recieving.invalid": "did you mean receiving.invalid?",
		"receiving":         "did you mean receiving.invalid or receiving.target_unsupported?",
		"nothing.like.it":   "a code looks like receiving.invalid",
	} {
		out, errOut, code := runCLI("explain", arg)
		if code != exitFound || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("explain %s: exit %d, want %d and %q\n%s%s", arg, code, exitFound, want, out, errOut)
		}
	}
}

// Issue 30, item 9: `jadpo explain --list` lists every code of the catalogue with its
// severity and title, one a line; with a code too it is a usage error.
func TestExplainListsEveryCode(t *testing.T) {
	out, errOut, code := runCLI("explain", "--list")
	if code != 0 {
		t.Fatalf("explain --list: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "CODE") || len(lines)-1 != len(catalogueCodes()) {
		t.Fatalf("explain --list printed %d codes, the catalogue has %d:\n%s", len(lines)-1, len(catalogueCodes()), out)
	}
	for _, want := range []string{"receiving.invalid ", "toolchain.empty_project ", "a config field has no `binding`"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain --list lacks %q", want)
		}
	}
	if _, _, code := runCLI("explain", "--list", "receiving.invalid"); code != exitUsage {
		t.Errorf("explain --list CODE: exit %d, want %d", code, exitUsage)
	}
}
