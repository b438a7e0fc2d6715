package check_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/catalog"
)

// checkJobs checks examples/jobs (SqlInbox.v1, `driver: sql_inbox`) with
// the drivers handed in.
func checkJobs(t *testing.T, drivers check.Drivers) []string {
	t.Helper()
	p := project.LoadFS(checktest.Example(t, "jobs"))
	p.Catalogue = catalog.Builtin
	p.Drivers = drivers
	var out []string
	for _, d := range check.Check(p).Diags {
		out = append(out, d.Code+": "+d.Summary)
	}
	return out
}

// The checker holds a package to the contract of the driver handed to it,
// whatever the driver: a contract that reads one more setting is enforced
// with no change to the checker, and without the driver the package's
// `driver:` names none the toolchain has.
func TestTheCheckerHoldsAPackageToTheContractHandedIn(t *testing.T) {
	if got := checkJobs(t, providers.Contracts()); len(got) != 0 {
		t.Fatalf("examples/jobs with the built-in drivers: %q", got)
	}
	var drivers check.Drivers
	for _, c := range providers.Contracts() {
		if c.Name == ir.DriverSQLInbox {
			c.Settings = append(slices.Clone(c.Settings), ir.DriverSetting{Name: "stream", Kind: ir.Text, Required: true})
			c.Help = "declare it as the test's contract says"
		}
		drivers = append(drivers, c)
	}
	got := checkJobs(t, drivers)
	want := "package.provider_invalid: the `sql_inbox` driver reads the setting `stream` (text), which the package does not declare"
	if !slices.Contains(got, want) {
		t.Fatalf("with a contract reading `stream`: %q, want %q", got, want)
	}
	got = checkJobs(t, nil)
	if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "`driver` takes one of") {
		t.Fatalf("with no drivers handed in: %q, want `driver` refused", got)
	}
}
