package sqlinbox

import (
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
)

// TableOf reads the table's description from a sql_inbox connection's
// settings (their values resolved: text, and the claim form's variant): the
// settings the checker holds the package to (check/drivers.go).
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
		Schema: str("schema"), Name: str("table"), ID: str("id"), Group: str("group"), Attempt: str("attempt"),
		LockedUntil: str("locked_until"), Headers: list("headers"), Columns: list("columns"), Fetch: str("fetch"),
		LockKey: list("lock_key"),
	}
	switch claim := Form(str("claim")); claim {
	case "", RowLock:
		t.Form = RowLock
	case Lease, AdvisoryLock:
		t.Form = claim
	default:
		return t, fmt.Errorf("the SQL inbox's %q claim form is not one of %s, %s and %s", claim, RowLock, Lease, AdvisoryLock)
	}
	if s := str("lease"); s != "" {
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
