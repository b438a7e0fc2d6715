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
		out = append(out, string(d.Code)+": "+d.Summary)
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

// A driver may bring its own protocol and credential scheme: a package
// naming them checks with no change to the checker or to check/ir, its
// connection's credential held to the scheme's members, and without the
// driver the same package is refused.
func TestADriverBringsItsProtocolAndScheme(t *testing.T) {
	pkg := "packages/SqlInbox.v1/"
	dir := checktest.CopyExample(t, "jobs", t.TempDir(),
		checktest.Edit{File: pkg + "package.jadpo", Old: "protocol: Protocol.sql", New: "protocol: Protocol.test_broker"},
		checktest.Edit{File: pkg + "package.jadpo", Old: "credential: CredentialScheme.database_url", New: "credential: CredentialScheme.broker_url"},
		checktest.Edit{File: pkg + "provides/receiving.jadpo", Old: "driver: sql_inbox", New: "driver: test_broker"})
	checktest.Relock(t, dir)
	var broker ir.DriverContract
	for _, c := range providers.Contracts() {
		if c.Name == ir.DriverSQLInbox {
			broker = c
		}
	}
	broker.Name, broker.Protocol, broker.ProtocolWhy = "test_broker", "test_broker", "reads a test broker"
	broker.Schemes = []ir.DriverScheme{{Name: "broker_url", Members: []ir.CredentialMember{{Name: "url", Secret: true, Required: true}}}}
	diags := func(drivers check.Drivers) []string {
		p := project.Load(dir) // not the catalogue's copy any more: held to none
		p.Drivers = drivers
		var out []string
		for _, d := range check.Check(p).Diags {
			out = append(out, string(d.Code)+": "+d.Summary)
		}
		return out
	}
	if got := diags(append(providers.Contracts(), broker)); len(got) != 0 {
		t.Fatalf("a package on the driver's own protocol and scheme: %q", got)
	}
	got := strings.Join(diags(providers.Contracts()), "\n")
	for _, want := range []string{"`protocol` takes one of", "`credential` takes one of"} {
		if !strings.Contains(got, want) {
			t.Errorf("without the driver: %q, want %q", got, want)
		}
	}
}
