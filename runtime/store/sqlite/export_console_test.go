package sqlite

// ConsoleSQL is each console statement by name, for the EXPLAIN test.
func ConsoleSQL() map[string]string {
	out := map[string]string{}
	for _, st := range []statement{stmtBrowseParked, stmtBrowseParkedByID, stmtBrowseDeliveries, stmtActivityReceived, stmtActivityParked} {
		out[st.Name] = st.SQL
	}
	return out
}
