package sqlinbox

import (
	"fmt"
	"time"

	"github.com/jadpo/jadpo/check/ir"
)

// The rules a table's description is held to before any statement is
// sent: the start ([Open]) refuses the first problem, and `jadpo check`
// shows every one at its setting (the contract's Check), from the one
// function, problems, so the two never disagree.

// identRule is what a plain SQL identifier is, for the messages.
const identRule = "a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 bytes)"

// withDefaults is t as Open reads it: no form is the row lock form, no
// lease the default one.
func withDefaults(t Table) Table {
	if t.Form == "" {
		t.Form = RowLock
	}
	if t.Lease == 0 {
		t.Lease = DefaultLease
	}
	return t
}

// problems are t's mistakes that need no database, in the order the start
// reports them. open names the settings whose values are not known yet
// (check: those given a config field; t holds nothing for them): a rule
// reading one is not applied. The start knows every value (open is nil).
func problems(t Table, open map[string]bool) []ir.SettingProblem {
	var out []ir.SettingProblem
	add := func(setting, help, format string, args ...any) {
		out = append(out, ir.SettingProblem{Setting: setting, Message: fmt.Sprintf(format, args...), Help: help})
	}
	// Each name is reported as the setting the user wrote it in (the
	// SqlInbox.v1 package's settings, which Table mirrors).
	type named struct{ field, name string }
	var names []named
	for _, n := range []named{{settingSchema, t.Schema}, {settingTable, t.Name}, {settingID, t.ID}, {settingGroup, t.Group},
		{settingAttempt, t.Attempt}, {settingLockedUntil, t.LockedUntil}} {
		optional := n.field != settingTable && n.field != settingID
		if !open[n.field] && (n.name != "" || !optional) {
			names = append(names, n)
		}
	}
	for _, h := range t.Headers {
		names = append(names, named{settingHeaders, h})
	}
	for _, c := range t.Columns {
		names = append(names, named{settingColumns, c})
	}
	identHelp := "name it as PostgreSQL knows it unquoted: letters, digits and _, not starting with a digit, at most 63 bytes"
	seen := map[string]string{}
	for _, k := range t.LockKey {
		// A key column may also play a role or be a header (it is only read), so it is not in names.
		if !validIdent(k) {
			add(settingLockKey, identHelp, "setting lock_key: %q is not %s", k, identRule)
			continue
		}
		if _, ok := seen[k]; ok {
			add(settingLockKey, "name each key column once", "setting lock_key names column %q twice", k)
		}
		seen[k] = settingLockKey
	}
	clear(seen)
	for _, n := range names {
		if !validIdent(n.name) {
			add(n.field, identHelp, "setting %s: %q is not %s", n.field, n.name, identRule)
			continue
		}
		if n.field == settingSchema || n.field == settingTable {
			continue
		}
		// A column named twice would be selected twice and give a body with a duplicate key.
		if prev, ok := seen[n.name]; ok {
			if prev == n.field {
				add(n.field, "name each column once", "setting %s names column %q twice", n.field, n.name)
			} else {
				add(n.field, fmt.Sprintf("remove %q from `%s`: a column is read once, and `%s` reads it already", n.name, n.field, prev),
					"column %q is named by both setting %s and setting %s", n.name, prev, n.field)
			}
			continue
		}
		seen[n.name] = n.field
	}
	if open[settingClaim] {
		return out
	}
	if len(t.LockKey) > 0 && t.Form != AdvisoryLock {
		add(settingLockKey, "remove `lock_key`, or claim the rows with `claim: advisory_lock`",
			"setting lock_key is only for claim: advisory_lock (claim is %s)", t.Form)
	}
	switch t.Form {
	case RowLock, AdvisoryLock:
		if t.LockedUntil != "" {
			add(settingLockedUntil, "remove `locked_until`, or claim the rows with `claim: lease`",
				"setting locked_until is only for claim: lease (claim is %s)", t.Form)
		}
	case Lease:
		if t.LockedUntil == "" && !open[settingLockedUntil] {
			add(settingClaim, "add `locked_until: \"<column>\"`, naming the table's timestamptz column, or claim the rows with `row_lock` or `advisory_lock`",
				"claim: lease needs the setting locked_until, the timestamptz column a claim sets")
		}
		if open[settingLease] {
			break
		}
		if t.Lease < 0 {
			add(settingLease, "give a lease longer than 0, such as `30s`", "setting lease: %v is negative", t.Lease)
		} else if t.Lease < time.Microsecond {
			add(settingLease, "give a lease of a microsecond or more, such as `30s`", "setting lease: %v is shorter than PostgreSQL's microsecond", t.Lease)
		}
	default:
		add(settingClaim, "claim the rows with `row_lock`, `lease` or `advisory_lock`",
			"setting claim: %q is not one of %s, %s and %s", t.Form, RowLock, Lease, AdvisoryLock)
	}
	return out
}

// fetchColumns are the columns the default fetch selects, in its order:
// the id, the group, the attempt, the lease form's locked_until, the
// header columns and the message's own; each row's body has them as its
// members.
func (t Table) fetchColumns() []string {
	cols := []string{t.ID}
	for _, c := range []string{t.Group, t.Attempt, t.LockedUntil} {
		if c != "" {
			cols = append(cols, c)
		}
	}
	cols = append(cols, t.Headers...)
	return append(cols, t.Columns...)
}

// checkSettings is the contract's Check: the start's rules (problems), on
// the settings `jadpo check` knows.
func checkSettings(s ir.ConnectionSettings) []ir.SettingProblem {
	t, err := TableOf(s.Values)
	if err != nil {
		return nil // a value outside its setting's type: the checker reports that itself
	}
	return problems(withDefaults(t), s.Open)
}

// bodyMembers is the contract's Body: the columns of the default fetch,
// when every setting naming them is known and no `fetch:` of the app's own
// replaces it.
func bodyMembers(s ir.ConnectionSettings) (ir.DriverBody, bool) {
	for _, name := range []string{settingFetch, settingID, settingGroup, settingAttempt, settingLockedUntil, settingHeaders, settingColumns} {
		if s.Open[name] {
			return ir.DriverBody{}, false
		}
	}
	t, err := TableOf(s.Values)
	if err != nil || t.Fetch != "" {
		return ir.DriverBody{}, false
	}
	return ir.DriverBody{Members: t.fetchColumns(), Reader: "the SQL inbox's default fetch", Setting: settingColumns}, true
}
