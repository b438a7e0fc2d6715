package check_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/diag"
)

// TestGoldenCasesThroughCheck runs every golden case of testdata/cases whose
// command is a plain `jadpo check` through check.Check, without the CLI:
// its diagnostics must be exactly the case's expect lines (code and source
// text of the range), and its JSON report byte for byte the golden
// testdata/golden/<case>.json that cmd/jadpo's TestGolden holds the CLI to
// (codes, severities, messages, positions). So each rule of the checker is
// tested in check/ itself; the goldens stay where the CLI's test rewrites
// them (`go test ./cmd/jadpo -run Golden -update`).
func TestGoldenCasesThroughCheck(t *testing.T) {
	root := reporoot.Dir(t)
	tmp := t.TempDir()
	t.Chdir(tmp) // the CLI's test runs `jadpo check <case>` from here, so reports name the project alike
	ran := 0
	for _, gc := range checktest.Cases(t, root) {
		if !slices.Equal(gc.Args, []string{"check"}) {
			continue // build, flags and missing folders are the CLI's
		}
		if slices.ContainsFunc(gc.Expects, func(e checktest.Expectation) bool { return e.Code == "toolchain.empty_project" }) {
			continue // a folder with no app.jadpo: the CLI refuses it before loading (cmd/jadpo/where.go)
		}
		ran++
		t.Run(gc.Name, func(t *testing.T) {
			gc.Materialize(t, root, tmp)
			res := check.Check(checktest.LoadDir(gc.Name))
			got := make([]checktest.Expectation, 0, len(res.Diags))
			for _, d := range res.Diags {
				text := strings.ToValidUTF8(d.Subject.Text(), "\uFFFD") // "" for a diagnostic with no range
				got = append(got, checktest.Expectation{Code: d.Code, Text: text})
			}
			if fmt.Sprint(got) != fmt.Sprint(gc.Expects) {
				t.Errorf("diagnostics differ from CASE's expect lines\n got: %v\nwant: %v", got, gc.Expects)
			}
			var report bytes.Buffer
			if err := diag.WriteJSON(&report, diag.NewReport("check", gc.Name, res.Files, res.Declarations, res.Diags)); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(root, "testdata", "golden", gc.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(report.Bytes(), want) {
				t.Errorf("check.Check's report differs from testdata/golden/%s.json:\n got: %s\nwant: %s", gc.Name, report.Bytes(), want)
			}
		})
	}
	if ran < 100 {
		t.Fatalf("only %d golden cases run `jadpo check`; testdata/cases was not read whole", ran)
	}
}
