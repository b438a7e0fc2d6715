package check_test

import (
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// The checker finds nothing wrong with a generated project: its benchmark
// measures a full check, not an early exit. Warnings stop nothing: the
// generator's modules bring in a shared set of names and use a random
// part of it (module.unused_name).
func TestGenerateChecksClean(t *testing.T) {
	for _, n := range []int{300, 5000} {
		res := check.Check(project.LoadFS(projectgen.Generate(n)))
		var errs []*diag.Diagnostic
		for _, d := range res.Diags {
			if d.Severity == diag.Error || d.Code != "module.unused_name" {
				errs = append(errs, d)
			}
		}
		for i, d := range errs {
			if i == 10 {
				t.Errorf("... %d in all", len(errs))
				break
			}
			t.Errorf("Generate(%d): %s: %s", n, d.Code, d.Summary)
		}
	}
}
