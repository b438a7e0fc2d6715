package check

import (
	"strconv"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// Built-in receiving drivers (`provide receiving { driver: <name> }`). A
// driver built into this runtime calls operations its package declares, so
// the checker holds the package to the driver's contract: the operations
// exist and carry the members the driver reads and writes. A driver the
// runtime lacks is toolchain.not_built_yet.

// driverNeed is one member a driver reads or writes: a dotted path through
// records (a list of records is stepped through as its element, written
// `messages[]`) and the kind at its end.
type driverNeed struct {
	path string
	kind ir.Kind
}

// driverCall is an operation a driver calls and what it needs of it.
type driverCall struct {
	op            string
	input, output []driverNeed
}

// cloudflareQueues is the cloudflare_queues driver's contract (docs/guide/receiving.md,
// "Cloudflare Queues"): it pulls with batch_size and visibility_timeout_ms, reads each
// leased message's id, body and lease_id, and answers a batch with one ack
// listing the acknowledged leases and the ones handed back.
var cloudflareQueues = []driverCall{
	{op: "messages.pull",
		input: []driverNeed{{"batch_size", ir.Int}, {"visibility_timeout_ms", ir.Int}},
		output: []driverNeed{{"result.messages[].id", ir.Text}, {"result.messages[].body", ir.Text},
			{"result.messages[].lease_id", ir.Text}}},
	{op: "messages.ack",
		input: []driverNeed{{"acks[].lease_id", ir.Text}, {"retries[].lease_id", ir.Text},
			{"retries[].delay_seconds", ir.Int}}},
}

// driverHelp says where a driver's contract is met, for its diagnostics.
var driverHelp = map[ir.Driver]string{
	ir.DriverCloudflareQueues: "declare the operations and members as the catalogue's CloudflareQueues.v4 does (`jadpo package add CloudflareQueues.v4`)",
	ir.DriverSQLInbox:         "declare the provider and settings as the catalogue's SqlInbox.v1 does (`jadpo package add SqlInbox.v1`)",
}

// sqlInboxSettings is the sql_inbox driver's contract (docs/guide/receiving.md, "A SQL inbox"): the
// settings it reads, by name, with their kind and whether the package must
// require them. The claim form is an enum holding at least row_lock and lease.
var sqlInboxSettings = []struct {
	name     string
	kind     ir.Kind
	required bool
}{
	{"table", ir.Text, true}, {"id", ir.Text, true}, {"schema", ir.Text, false}, {"group", ir.Text, false},
	{"attempt", ir.Text, false}, {"locked_until", ir.Text, false}, {"headers", ir.Text, false},
	{"columns", ir.Text, false}, {"fetch", ir.Text, false}, {"claim", ir.Enum, false}, {"lease", ir.Duration, false},
	{"lock_key", ir.Text, false},
}

// checkSQLInboxDriver checks that the package reaches a SQL database and
// declares the settings the driver reads; the plan carries the settings.
func (c *checker) checkSQLInboxDriver(p *pkg, f *ast.File, m *ast.Member, name string) bool {
	ok := true
	bad := func(format string, args ...any) {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver "+format, append([]any{name}, args...)...).
			WithHelp(driverHelp[ir.Driver(name)])
		ok = false
	}
	if p.provider.Protocol != ir.ProtocolSQL {
		bad("reads a table of a SQL database: the provider needs `protocol: Protocol.sql`")
	}
	for _, need := range sqlInboxSettings {
		st, has := p.settings[need.name]
		switch {
		case !has:
			if need.required || need.name == "claim" {
				bad("reads the setting `%s` (%s), which the package does not declare", need.name, need.kind)
			}
		case st.typ.Kind != need.kind:
			bad("reads the setting `%s` as %s; it is declared %s", need.name, need.kind, describe(st.typ))
		case need.kind == ir.Enum && !(contains(st.typ.Variants, "row_lock") && contains(st.typ.Variants, "lease")):
			bad("reads the setting `claim` as one of row_lock, lease and advisory_lock; it is declared %s", describe(st.typ))
		case need.required && st.typ.Optional:
			bad("needs the setting `%s`; it is declared optional", need.name)
		}
	}
	return ok
}

// checkDriver checks a package against its driver's contract and fills in
// what the plan carries for it.
func (c *checker) checkDriver(p *pkg, f *ast.File, m *ast.Member, name string, out *ir.Receiving) bool {
	switch ir.Driver(name) {
	case ir.DriverCloudflareQueues:
		return c.checkCloudflareDriver(p, f, m, name, out)
	case ir.DriverSQLInbox:
		return c.checkSQLInboxDriver(p, f, m, name)
	}
	return false
}

// checkCloudflareDriver checks the operations the driver calls and fills in
// the calls the plan carries (their inputs are the driver's, made at run
// time, except the pull's fixed ones).
func (c *checker) checkCloudflareDriver(p *pkg, f *ast.File, m *ast.Member, name string, out *ir.Receiving) bool {
	ok := true
	for i, dc := range cloudflareQueues {
		op, why := c.findOperation(p, dc.op)
		if op == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver calls `%s`: %s", name, dc.op, why).
				WithHelp(driverHelp[ir.Driver(name)])
			ok = false
			continue
		}
		if op.failed {
			ok = false
			continue
		}
		if op.decode {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver calls `%s`, which is read by the package's own `decode:`", name, dc.op).
				WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here")
			ok = false
			continue
		}
		for _, side := range []struct {
			verb  string // what the driver does with the member
			rec   *decl
			needs []driverNeed
		}{{"writes %s (%s) into `%s`'s input", op.input, dc.input}, {"reads %s (%s) from `%s`'s output", op.output, dc.output}} {
			for _, need := range side.needs {
				if problem := c.driverMember(side.rec, need); problem != "" {
					c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver "+side.verb+": %s",
						name, "`"+need.path+"`", need.kind, dc.op, problem).
						WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here").
						WithHelp(driverHelp[ir.Driver(name)])
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		p.useOperation(op)
		call := &ir.Call{Operation: dc.op, Input: map[string]ir.Value{}}
		if i == 0 {
			out.Receive = call
		} else {
			out.Acknowledge = call
		}
	}
	if !ok {
		return false
	}
	// The pull asks for a batch as large as the tick's (10) and leases for
	// the package's visibility_timeout_ms setting.
	out.Receive.Input["batch_size"] = ir.Value{Literal: []byte(strconv.Itoa(10))}
	if st, has := p.settings["visibility_timeout_ms"]; has && st.typ.Kind == ir.Int {
		out.Receive.Input["visibility_timeout_ms"] = ir.Value{Setting: "visibility_timeout_ms"}
	}
	return true
}

// driverMember walks need.path from rec; it returns "" when the member is
// there with need.kind, else what is wrong.
func (c *checker) driverMember(rec *decl, need driverNeed) string {
	if rec == nil {
		return "the operation declares none"
	}
	parts := strings.Split(need.path, ".")
	for i, part := range parts {
		list := strings.HasSuffix(part, "[]")
		part = strings.TrimSuffix(part, "[]")
		fld := rec.field(part)
		if fld == nil {
			return "`" + rec.name + "` has no field `" + part + "`"
		}
		t := fld.Type
		if list {
			if t.Kind != ir.List || t.Elem == nil {
				return "`" + part + "` is " + describe(t) + ", not a list"
			}
			t = *t.Elem
		}
		if i == len(parts)-1 {
			if t.Kind != need.kind {
				return "`" + part + "` is " + describe(t)
			}
			return ""
		}
		if t.Kind != ir.RecordK {
			return "`" + part + "` is " + describe(t) + ", not a record"
		}
		if rec = c.recordDecl(t.Name); rec == nil {
			return "`" + part + "` is not a record"
		}
	}
	return ""
}
