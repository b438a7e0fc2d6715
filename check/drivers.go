package check

import (
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// Built-in receiving drivers (`provide receiving { driver: <name> }`). Each
// driver states its contract as data (ir.DriverContract, in its own
// package under providers/); the commands hand the contracts to the
// checker with the project (project.Project.Drivers), and every package
// naming a driver is held to its contract here, by one path: the protocol
// it speaks, the settings it declares, and the operations the driver calls
// with the members it reads and writes. A driver the runtime lacks is
// toolchain.not_built_yet.

// Drivers are the built-in drivers' contracts a project is checked with
// (project.Project.Drivers = check.Drivers(providers.Contracts())).
type Drivers []ir.DriverContract

// DriverSet marks Drivers as what project.Project.Drivers holds.
func (Drivers) DriverSet() {}

// drivers are the project's drivers' contracts, nil when it was handed none.
func (c *checker) drivers() Drivers {
	d, _ := c.proj.Drivers.(Drivers)
	return d
}

// driverNames are the names of the project's drivers, in the order
// diagnostics list them.
func (c *checker) driverNames() []string {
	var out []string
	for _, d := range c.drivers() {
		out = append(out, string(d.Name))
	}
	return out
}

// driverContract is the contract of the driver named name.
func (c *checker) driverContract(name string) *ir.DriverContract {
	ds := c.drivers()
	for i := range ds {
		if string(ds[i].Name) == name {
			return &ds[i]
		}
	}
	return nil
}

// protocolNames are the protocols a package may name: the built-in ones,
// then those the drivers bring, in the order diagnostics list them.
func (c *checker) protocolNames() []string {
	out := texts(ir.Protocols)
	for _, d := range c.drivers() {
		if d.Protocol != "" && !contains(out, string(d.Protocol)) {
			out = append(out, string(d.Protocol))
		}
	}
	return out
}

// schemeNames are the credential schemes a package may name: the built-in
// ones, then those the drivers bring.
func (c *checker) schemeNames() []string {
	out := texts(ir.CredentialSchemes)
	for _, d := range c.drivers() {
		for _, s := range d.Schemes {
			if !contains(out, string(s.Name)) {
				out = append(out, string(s.Name))
			}
		}
	}
	return out
}

// schemeMembers are the credential members scheme takes: a built-in
// scheme's, or the one a driver brings.
func (c *checker) schemeMembers(scheme ir.CredentialScheme) []ir.CredentialMember {
	return c.drivers().SchemeMembers(scheme)
}

// credentialExample is how a connection gives scheme's credential: the
// built-in schemes' own lines, or one from a driver's scheme's members.
func (c *checker) credentialExample(scheme ir.CredentialScheme) string {
	if scheme.Known() {
		return credentialExample(scheme)
	}
	var parts []string
	for _, m := range c.schemeMembers(scheme) {
		if !m.Required {
			continue
		}
		field := "config.<field>"
		if m.Secret {
			field = "config.<secret field>"
		}
		parts = append(parts, m.Name+": "+field)
	}
	return "credential: { " + strings.Join(parts, " ") + " }"
}

// noHost is the contract of the driver whose own protocol is protocol and
// takes no `host:`, nil for none.
func (c *checker) noHost(protocol ir.Protocol) *ir.DriverContract {
	ds := c.drivers()
	for i := range ds {
		if protocol != "" && ds[i].Protocol == protocol && ds[i].NoHost != "" {
			return &ds[i]
		}
	}
	return nil
}

// checkDriver checks a package against its driver's contract and fills in
// what the plan carries for it: the protocol, the settings, then the calls.
func (c *checker) checkDriver(p *pkg, f *ast.File, m *ast.Member, name string, out *ir.Receiving) bool {
	dc := c.driverContract(name)
	if dc == nil {
		return false
	}
	ok := c.checkDriverSettings(p, f, m, dc)
	if dc.Receive != nil || dc.Acknowledge != nil {
		ok = c.checkDriverCalls(p, f, m, dc, out) && ok
	}
	return ok
}

// checkDriverSettings checks that the package speaks the driver's protocol
// and declares the settings the driver reads; the plan carries the settings.
func (c *checker) checkDriverSettings(p *pkg, f *ast.File, m *ast.Member, dc *ir.DriverContract) bool {
	ok := true
	name := string(dc.Name)
	bad := func(format string, args ...any) {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver "+format, append([]any{name}, args...)...).
			WithHelp(dc.Help)
		ok = false
	}
	if dc.Protocol != "" && p.provider.Protocol != dc.Protocol {
		bad("%s: the provider needs `protocol: Protocol.%s`", dc.ProtocolWhy, dc.Protocol)
	}
	for _, need := range dc.Settings {
		st, has := p.settings[need.Name]
		switch {
		case !has:
			if need.Required || need.Declared {
				bad("reads the setting `%s` (%s), which the package does not declare", need.Name, need.Kind)
			}
		case st.typ.Kind != need.Kind:
			bad("reads the setting `%s` as %s; it is declared %s", need.Name, need.Kind, describe(st.typ))
		case need.Kind == ir.Enum && !containsAll(st.typ.Variants, need.Variants):
			bad("reads the setting `%s` as %s; it is declared %s", need.Name, need.As, describe(st.typ))
		case need.Required && st.typ.Optional:
			bad("needs the setting `%s`; it is declared optional", need.Name)
		}
	}
	return ok
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !contains(have, w) {
			return false
		}
	}
	return true
}

// checkDriverCalls checks the operations the driver calls and fills in
// the calls the plan carries (their inputs are the driver's, made at run
// time, except the fixed ones and those given settings).
func (c *checker) checkDriverCalls(p *pkg, f *ast.File, m *ast.Member, dc *ir.DriverContract, out *ir.Receiving) bool {
	ok := true
	name := string(dc.Name)
	for i, call := range []*ir.DriverCall{dc.Receive, dc.Acknowledge} {
		if call == nil {
			continue
		}
		op, why := c.findOperation(p, call.Operation)
		if op == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver calls `%s`: %s", name, call.Operation, why).
				WithHelp(dc.Help)
			ok = false
			continue
		}
		if op.failed {
			ok = false
			continue
		}
		if op.decode {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver calls `%s`, which is read by the package's own `decode:`", name, call.Operation).
				WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here")
			ok = false
			continue
		}
		for _, side := range []struct {
			verb  string // what the driver does with the member
			rec   *decl
			needs []ir.DriverMember
		}{{"writes %s (%s) into `%s`'s input", op.input, call.Input}, {"reads %s (%s) from `%s`'s output", op.output, call.Output}} {
			for _, need := range side.needs {
				if problem := c.driverMember(side.rec, need); problem != "" {
					c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "the `%s` driver "+side.verb+": %s",
						name, "`"+need.Path+"`", need.Kind, call.Operation, problem).
						WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here").
						WithHelp(dc.Help)
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		p.useOperation(op)
		pc := &ir.Call{Operation: call.Operation, Input: map[string]ir.Value{}}
		if i == 0 {
			out.Receive = pc
		} else {
			out.Acknowledge = pc
		}
	}
	if !ok {
		return false
	}
	for _, pair := range []struct {
		call *ir.DriverCall
		out  *ir.Call
	}{{dc.Receive, out.Receive}, {dc.Acknowledge, out.Acknowledge}} {
		if pair.call == nil {
			continue
		}
		for k, v := range pair.call.Fixed {
			pair.out.Input[k] = v
		}
		for _, s := range pair.call.FromSettings {
			kind := ir.Kind("")
			for _, in := range pair.call.Input {
				if in.Path == s {
					kind = in.Kind
				}
			}
			if st, has := p.settings[s]; has && st.typ.Kind == kind {
				pair.out.Input[s] = ir.Value{Setting: s}
			}
		}
	}
	return true
}

// driverMember walks need.Path from rec; it returns "" when the member is
// there with need.Kind, else what is wrong.
func (c *checker) driverMember(rec *decl, need ir.DriverMember) string {
	if rec == nil {
		return "the operation declares none"
	}
	parts := strings.Split(need.Path, ".")
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
			if t.Kind != need.Kind {
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
