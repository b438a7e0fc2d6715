package check_test

import (
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/projectgen"
)

// The checker finds nothing wrong with a generated project: its benchmark
// measures a full check, not an early exit.
func TestGenerateChecksClean(t *testing.T) {
	for _, n := range []int{300, 5000} {
		res := check.Check(project.LoadFS(projectgen.Generate(n)))
		for i, d := range res.Diags {
			if i == 10 {
				t.Errorf("... %d in all", len(res.Diags))
				break
			}
			t.Errorf("Generate(%d): %s: %s", n, d.Code, d.Summary)
		}
	}
}
