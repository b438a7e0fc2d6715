package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/lang/diag"
)

// backticked finds the forms a text shows in backticks.
var backticked = regexp.MustCompile("`([^`]+)`")

// TestPageExamplesAreWhatCheckReports holds every diagnostics page's
// examples to what `check` reports for them. A page's usual cause that
// shows a form in backticks before its dash (`first_delay: 10` — write
// `10s`) names its golden case; the case must write one of the forms shown
// and report the page's code (TestGolden holds each case's expect lines to
// what the command prints, and TestDocsPages the page's "Example" to the
// first case of its code). So a page and the tool cannot disagree: a form
// that another code reports fails here.
func TestPageExamplesAreWhatCheckReports(t *testing.T) {
	root := repoRoot(t)
	byName := map[string]checktest.Case{}
	for _, gc := range checktest.Cases(t, root) {
		byName[gc.Name] = gc
	}
	codes := make([]string, 0, len(diag.Pages))
	for code := range diag.Pages {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	checked := 0
	for _, code := range codes {
		for _, cause := range diag.Pages[code].Causes {
			head, _, hasDash := strings.Cut(cause.Text, " — ")
			var forms []string
			if hasDash {
				for _, m := range backticked.FindAllStringSubmatch(head, -1) {
					forms = append(forms, m[1])
				}
			}
			if cause.Case == "" {
				if len(forms) > 0 {
					t.Errorf("%s: the cause %q shows %q but names no golden case that reports it: add one under testdata/cases and name it in lang/diag/pages.go", code, cause.Text, forms)
				}
				continue
			}
			gc, ok := byName[cause.Case]
			if !ok {
				t.Errorf("%s: the cause %q names case %s, which testdata/cases does not have", code, cause.Text, cause.Case)
				continue
			}
			reports := false
			for _, e := range gc.Expects {
				reports = reports || e.Code == code
			}
			if !reports {
				t.Errorf("%s: the cause %q names case %s, which does not report %s (it reports %v)", code, cause.Text, gc.Name, code, gc.Expects)
			}
			if len(forms) > 0 && !writes(t, root, gc, forms) {
				t.Errorf("%s: the cause %q shows %q, but case %s writes none of them", code, cause.Text, forms, gc.Name)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d causes name a case", checked)
	}
}

// writes reports whether the case's edits or files hold one of the forms.
func writes(t *testing.T, root string, gc checktest.Case, forms []string) bool {
	var texts []string
	for _, e := range gc.Edits {
		texts = append(texts, e.New)
	}
	_ = filepath.WalkDir(filepath.Join(root, "testdata", "cases", gc.Name), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			texts = append(texts, string(b))
		}
		return nil
	})
	texts = append(texts, strings.Join(gc.Args, " "))
	for _, form := range forms {
		for _, s := range texts {
			if strings.Contains(s, form) {
				return true
			}
		}
	}
	return false
}
