package check

import (
	"encoding/json"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

func queueWireKey(queue, wire string) string { return queue + "\x00" + wire }

// checkSharedInboxTables: sql_inbox connections may share one table, each
// queue claiming the rows of the kinds (group values) it lists. Two queues
// on one table that list the same wire_name would each take rows of that
// kind, whichever claims first: receiving.invalid. The same table is the
// same database url, schema and table as written (a config field counts as
// itself), so tables that only meet at run time are not caught. A queue of
// one kind (no type_at) or a connection without group claims every row and
// is left out.
func (c *checker) checkSharedInboxTables() {
	type lister struct {
		queue, table string
		at           source.Range
	}
	first := map[string]lister{}
	for _, q := range c.out.queues { // in the queues' name order
		cn := c.connection(q.Connection)
		if q.TypeAt == nil || cn == nil || cn.pkg == nil || cn.pkg.receiving == nil || cn.pkg.receiving.ir == nil ||
			cn.pkg.receiving.ir.Driver != ir.DriverSQLInbox {
			continue
		}
		group, ok := cn.ir.Settings["group"]
		if !ok || (group.Config == "" && (len(group.Literal) == 0 || string(group.Literal) == `""`)) {
			continue
		}
		table := cn.ir.Settings["table"]
		key, _ := json.Marshal([]ir.Value{cn.ir.Credential[ir.MemberURL], cn.ir.Settings["schema"], table})
		name := "config." + table.Config
		if table.Config == "" {
			_ = json.Unmarshal(table.Literal, &name)
		}
		for _, e := range q.Events {
			at, ok := c.wireAt[queueWireKey(q.Name, e.WireName)]
			if !ok {
				continue
			}
			k := string(key) + "\x00" + e.WireName
			prev, dup := first[k]
			if !dup {
				first[k] = lister{q.Name, name, at}
				continue
			}
			c.add(diag.ReceivingInvalid, at, "queue `%s` and queue `%s` both list wire_name %q on table %s: each row of that kind would go to whichever claims it first",
				prev.queue, q.Name, e.WireName, name).
				WithRelated(prev.at, "queue `"+prev.queue+"` lists it here").
				WithHelp("list each kind in one queue of the table; remove it from one of them")
		}
	}
}
