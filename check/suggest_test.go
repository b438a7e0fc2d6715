package check_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/catalog"
)

// mutations of a name that a user's typo or another casing makes: each is
// within a small edit of the name, or the same but for case.
func mutations(name string) []string {
	var out []string
	if len(name) >= 4 {
		i := len(name) / 2
		out = append(out, name[:i]+name[i+1:]) // a letter left out
	}
	if len(name) >= 5 {
		i := len(name)/2 - 1
		out = append(out, name[:i]+name[i+1:i+2]+name[i:i+1]+name[i+2:]) // two letters swapped
	}
	if !strings.ContainsFunc(name, unicode.IsUpper) {
		out = append(out, strings.ToUpper(name[:1])+name[1:]) // a capital: Event, Store
	}
	for i := len(name) - 1; i >= 0; i-- {
		r := rune(name[i])
		if unicode.IsLetter(r) && strings.ContainsFunc(name, unicode.IsUpper) {
			// the same but for case: AmazonSqs -> AmazonSqS
			sw := strings.ToUpper(string(r))
			if unicode.IsUpper(r) {
				sw = strings.ToLower(string(r))
			}
			out = append(out, name[:i]+sw+name[i+1:])
			break
		}
	}
	return out
}

// TestEveryUnknownNameHasItsSuggestion mistypes each name of the examples'
// files (packages' too) in turn and checks the project: every diagnostic
// reported at the mistyped name must suggest the name it was (a
// did-you-mean, a fix or the label), since that name is within a small
// edit, or a case-fold, of it. In the app's own files a syntax error must
// also be the run's one diagnostic (an edited package's files add their
// lock's).
func TestEveryUnknownNameHasItsSuggestion(t *testing.T) {
	var missing, cascade []string
	for _, ex := range []string{"warehouse", "shipmail", "returns", "jobs"} {
		base := checktest.Example(t, ex)
		var files []string
		for name := range base {
			if strings.HasSuffix(name, ".jadpo") {
				files = append(files, name)
			}
		}
		sort.Strings(files)
		for _, file := range files {
			src := string(base[file].Data)
			toks, _ := lexer.Lex(src)
			for _, tok := range toks {
				if tok.Type != lexer.Ident || len(tok.Value) < 3 {
					continue
				}
				for _, m := range mutations(tok.Value) {
					fsys := fstest.MapFS{}
					for k, v := range base {
						fsys[k] = v
					}
					edited := src[:tok.Pos.Offset] + m + src[tok.Pos.Offset+len(tok.Value):]
					fsys[file] = &fstest.MapFile{Data: []byte(edited), Mode: 0o644}
					p := project.LoadFS(fsys)
					p.Catalogue = catalog.Builtin
					res := check.Check(p)
					start, end := tok.Pos.Offset, tok.Pos.Offset+len(m)
					line := strings.Count(src[:tok.Pos.Offset], "\n") + 1
					inPackage := strings.HasPrefix(file, "packages/")
					if n := ownDiags(res.Diags); n > 1 && hasSyntax(res.Diags) {
						// One mistake, one diagnostic: what a declaration
						// that did not parse declares is known enough.
						cascade = append(cascade, fmt.Sprintf("%s/%s:%d: `%s` written `%s` gives %d diagnostics: %v", ex, file, line, tok.Value, m, len(res.Diags), res.Diags))
					}
					for _, d := range res.Diags {
						if d.Subject.File == nil || d.Subject.File.Path != file || d.Subject.Span.End <= start || d.Subject.Span.Start >= end {
							continue
						}
						if suggests(d, tok.Value) || inPackage && (d.Code == "package.lock_mismatch" || d.Code == "package.not_catalogue") {
							// An edited package's files no longer match its lock:
							// said at its first line, whatever the edit.
							continue
						}
						missing = append(missing, fmt.Sprintf("%s/%s:%d: `%s` written `%s`: %s[%s] %s (label %q)", ex, file, line, tok.Value, m, d.Severity, d.Code, d.Summary, d.Label))
					}
				}
			}
		}
	}
	for _, m := range cascade {
		t.Error(m)
	}
	for _, m := range missing {
		t.Error(m)
	}
}

// ownDiags counts the run's diagnostics but an edited package's lock's
// (package.lock_mismatch, package.not_catalogue), which any edit of an
// installed package brings.
func ownDiags(l diag.List) int {
	n := 0
	for _, d := range l {
		if d.Code != "package.lock_mismatch" && d.Code != "package.not_catalogue" {
			n++
		}
	}
	return n
}

func hasSyntax(l diag.List) bool {
	for _, d := range l {
		if strings.HasPrefix(d.Code, "syntax.") {
			return true
		}
	}
	return false
}

func suggests(d *diag.Diagnostic, name string) bool {
	if strings.Contains(d.Context["suggestion"], name) || strings.Contains(d.Label, name) {
		return true
	}
	return d.Fix != nil && strings.Contains(*d.Fix, name)
}
