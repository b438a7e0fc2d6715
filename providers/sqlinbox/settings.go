package sqlinbox

import (
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// Driver is the sql_inbox driver (providers.Drivers registers it). dev runs
// it against a database on this machine, its credential's url.
var Driver = queue.Driver{Contract: contract, Open: OpenSource, LocalURL: ir.MemberURL, RemoteHost: RemoteHost,
	LocalWhat: "database", LocalFix: "a PostgreSQL database on this machine (postgres://postgres@127.0.0.1:5432/postgres)"}

// The settings the driver reads (docs/guide/receiving.md, "A SQL inbox"):
// the contract holds the package to them, and TableOf reads them.
const (
	settingTable       = "table"
	settingID          = "id"
	settingSchema      = "schema"
	settingGroup       = "group"
	settingAttempt     = "attempt"
	settingLockedUntil = "locked_until"
	settingHeaders     = "headers"
	settingColumns     = "columns"
	settingFetch       = "fetch"
	settingClaim       = "claim"
	settingLease       = "lease"
	settingLockKey     = "lock_key"
)

// contract is the driver's contract: a provider reaching a SQL database,
// and the settings it reads, with their kind and whether the package must
// require them. The claim form is an enum holding at least row_lock and
// lease, which the package must declare. Check and Body hold the
// connection's settings to the start's own rules (rules.go).
var contract = ir.DriverContract{
	Name:        ir.DriverSQLInbox,
	Help:        "declare the provider and settings as the catalogue's SqlInbox.v1 does (`jadpo package add SqlInbox.v1`)",
	Protocol:    ir.ProtocolSQL,
	ProtocolWhy: "reads a table of a SQL database",
	NoHost:      "its database is the credential's `url`",
	NoHostHelp:  "remove host, and give credential: { url: config.<database url> }",
	Settings: []ir.DriverSetting{
		{Name: settingTable, Kind: ir.Text, Required: true}, {Name: settingID, Kind: ir.Text, Required: true},
		{Name: settingSchema, Kind: ir.Text}, {Name: settingGroup, Kind: ir.Text},
		{Name: settingAttempt, Kind: ir.Text}, {Name: settingLockedUntil, Kind: ir.Text}, {Name: settingHeaders, Kind: ir.Text},
		{Name: settingColumns, Kind: ir.Text}, {Name: settingFetch, Kind: ir.Text},
		{Name: settingClaim, Kind: ir.Enum, Declared: true, Variants: []string{string(RowLock), string(Lease)},
			As: "one of row_lock, lease and advisory_lock"},
		{Name: settingLease, Kind: ir.Duration}, {Name: settingLockKey, Kind: ir.Text},
	},
	Check: checkSettings,
	Body:  bodyMembers,
}

// TableOf reads the table's description from a sql_inbox connection's
// settings (their values resolved: text, and the claim form's variant): the
// settings the driver's contract holds the package to.
func TableOf(settings map[string]any) (Table, error) {
	str := func(name string) string { s, _ := settings[name].(string); return s }
	list := func(name string) []string {
		var out []string
		for _, part := range strings.Split(str(name), ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out
	}
	t := Table{
		Schema: str(settingSchema), Name: str(settingTable), ID: str(settingID), Group: str(settingGroup), Attempt: str(settingAttempt),
		LockedUntil: str(settingLockedUntil), Headers: list(settingHeaders), Columns: list(settingColumns), Fetch: str(settingFetch),
		LockKey: list(settingLockKey),
	}
	switch claim := Form(str(settingClaim)); claim {
	case "", RowLock:
		t.Form = RowLock
	case Lease, AdvisoryLock:
		t.Form = claim
	default:
		return t, fmt.Errorf("the SQL inbox's %q claim form is not one of %s, %s and %s", claim, RowLock, Lease, AdvisoryLock)
	}
	if s := str(settingLease); s != "" {
		d, err := ir.ParseDuration(s)
		if err != nil {
			return t, fmt.Errorf("setting lease: %w", err)
		}
		if d <= 0 {
			// A zero Lease reads as the default: refuse it here, where it is
			// what the user wrote.
			return t, fmt.Errorf("setting lease: %q holds no row: write a lease longer than 0, such as `30s`", s)
		}
		t.Lease = d
	}
	return t, nil
}
