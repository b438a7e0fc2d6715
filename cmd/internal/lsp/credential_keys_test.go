package lsp

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
)

// A connection's credential is completed with its scheme's members as the
// checker takes them, from the drivers' contracts it is handed: a scheme a
// driver brings (here a test broker's, with members no built-in scheme
// has) is offered as a built-in one is, and without that driver nothing
// is.
func TestCompletionOffersADriversCredentialMembers(t *testing.T) {
	pkg := "packages/SqlInbox.v1/"
	dir := checktest.CopyExample(t, "jobs", t.TempDir(),
		checktest.Edit{File: pkg + "package.jadpo", Old: "protocol: Protocol.sql", New: "protocol: Protocol.test_broker"},
		checktest.Edit{File: pkg + "package.jadpo", Old: "credential: CredentialScheme.database_url", New: "credential: CredentialScheme.broker_login"},
		checktest.Edit{File: pkg + "provides/receiving.jadpo", Old: "driver: sql_inbox", New: "driver: test_broker"})
	checktest.Relock(t, dir)
	var broker ir.DriverContract
	for _, c := range providers.Contracts() {
		if c.Name == ir.DriverSQLInbox {
			broker = c
		}
	}
	broker.Name, broker.Protocol, broker.ProtocolWhy = "test_broker", "test_broker", "reads a test broker"
	broker.Schemes = []ir.DriverScheme{{Name: "broker_login", Members: []ir.CredentialMember{
		{Name: "broker_user", Required: true}, {Name: "broker_password", Secret: true, Required: true}}}}

	complete := func(drivers check.Drivers) []string {
		c := startServer(t, Options{Debounce: -1, Drivers: drivers})
		c.initialize(dir)
		app := filepath.Join(dir, "app.jadpo")
		text := read(t, app)
		c.open(app, text)
		c.Published(pathURI(app), 0)
		return completionLabels(t, c, app, text, at(text, "url: config.jobs_database_url", 0, 0))
	}
	withBroker := complete(append(check.Drivers(providers.Contracts()), broker))
	if !slices.Contains(withBroker, "broker_user") || !slices.Contains(withBroker, "broker_password") || slices.Contains(withBroker, "url") {
		t.Errorf("the broker's credential offers %v, want broker_user and broker_password (and not database_url's url)", withBroker)
	}
	if without := complete(nil); slices.Contains(without, "broker_user") {
		t.Errorf("without the broker's driver, its credential offers %v", without)
	}
}
