package sqlite

import "github.com/jadpo/jadpo/runtime/store/internal/sqlcommon"

// SchemaSQLUpTo is the schema as a build that knew the migrations up to version wrote
// it: applied by hand, it leaves a database at that version.
func SchemaSQLUpTo(version int) string {
	var ms []sqlcommon.Migration
	for _, m := range migrations {
		if m.Version <= version {
			ms = append(ms, m)
		}
	}
	return schemaSQL(ms)
}

// HousekeepingSQL is each housekeeping statement by name, for the EXPLAIN test.
func HousekeepingSQL() map[string]string {
	out := map[string]string{}
	for _, st := range []statement{stmtForgetReceived, stmtForgetParked, stmtPickSucceeded, stmtPickDismissed, stmtSettleOutbox, stmtForgetDeliveries, stmtForgetAttempts, stmtForgetOutbox, stmtForgetRuns} {
		out[st.Name] = st.SQL
	}
	return out
}
