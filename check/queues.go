package check

import (
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// Queues: everything wrong in one is receiving.invalid; without a store,
// event.store_required.

func (c *checker) checkQueues() {
	for _, name := range sortedKeys(c.queues) {
		c.checkQueue(c.queues[name])
	}
}

func isEvent(d *decl) bool { return d.kind == kindEvent }

func (c *checker) checkQueue(d *decl) {
	f := d.file
	if !c.needStore(d, "queue") {
		return
	}
	ms := c.members(f, d.node.Named.BlockDecl.Body, diag.ReceivingInvalid, "in a queue", blockKeys["queue"]...)
	q := ir.Queue{Name: d.name, Connection: d.name, Source: "queue " + d.name}
	ok := true

	cn := c.connection(d.name)
	if cn != nil {
		c.ref(f, d.ident().Span(), c.sym(cn.decl)) // a queue receives from its namesake
	}
	switch {
	case cn == nil:
		c.add(diag.ReceivingInvalid, d.rng(), "queue `%s` has no connection `%s` to receive from", d.name, d.name).
			Suggest(suggest(d.name, sortedKeys(c.connections))).
			WithHelp("a queue receives from the connection of the same name: connection " + d.name + " { package: ... }")
		ok = false
	case cn.pkg == nil:
		ok = false // the connection's own problem is reported there
	case cn.pkg.provides["receiving"] == nil:
		c.add(diag.ReceivingInvalid, d.rng(), "connection `%s`'s package `%s` does not provide `receiving`", d.name, cn.ir.Package).
			WithRelated(cn.decl.rng(), "the connection is declared here").
			WithHelp("a queue needs a package with provides/receiving.jadpo, such as AmazonSqs.v2012_11_05")
		ok = false
	case cn.pkg.receiving == nil || !cn.pkg.receiving.ok:
		ok = false // the mapping's problems are reported in its file
	}

	var path []string
	path, ok = c.queuePath(d, ms, "id_at", ok)
	q.IDAt = path
	typeAt := ms["type_at"]
	if typeAt != nil {
		path, ok = c.queuePath(d, ms, "type_at", ok)
		q.TypeAt = path
	}

	em := ms["events"]
	if em == nil {
		c.add(diag.ReceivingInvalid, d.rng(), "queue `%s` lists no `events`", d.name).
			WithHelp("name the events it receives: events: { OrderShipped }")
		ok = false
	} else if blk := c.blockValue(f, em, diag.ReceivingInvalid); blk == nil {
		ok = false
	} else {
		events, eok := c.queueEvents(d, blk, typeAt)
		q.Events = events
		ok = ok && eok
		if ok && !c.checkQueueBody(cn, events) {
			ok = false
		}
	}
	if ok {
		c.out.queues = append(c.out.queues, q)
		c.out.receivingConnections[d.name] = true
	}
}

// queuePath checks id_at: or type_at: — a dotted path into the body.
func (c *checker) queuePath(d *decl, ms map[string]*ast.Member, key string, ok bool) ([]string, bool) {
	f := d.file
	m := ms[key]
	if m == nil {
		c.add(diag.ReceivingInvalid, d.rng(), "queue `%s` has no `%s`", d.name, key).
			WithHelp("name where each message's id is: id_at: \"id\", or a dotted path such as \"meta.return_id\"")
		return nil, false
	}
	if m.Value.Text == nil {
		c.add(diag.ReceivingInvalid, f.Range(m.Value.Span()), "`%s` takes a dotted path as text, such as \"meta.id\"", key)
		return nil, false
	}
	v := m.Value.TextValue()
	parts := strings.Split(v, ".")
	for _, p := range parts {
		if p == "" {
			what := "is empty"
			if v != "" {
				what = fmt.Sprintf("has an empty step in `%s`", v)
			}
			c.add(diag.ReceivingInvalid, f.Range(m.Value.Span()), "`%s` %s", key, what).
				WithHelp("name the member holding the " + strings.TrimSuffix(key, "_at") + ": \"id\", or a dotted path such as \"meta.return_id\"")
			return nil, false
		}
	}
	return parts, ok
}

// queueEvents resolves the events a queue lists and their wire names.
func (c *checker) queueEvents(d *decl, blk *ast.Block, typeAt *ast.Member) ([]ir.QueueEvent, bool) {
	f := d.file
	s := d.scope()
	ok := true
	var out []ir.QueueEvent
	seenEvent := map[string]*ast.Member{}
	seenWire := map[string]*ast.Expr{}
	var first *ast.Member
	for _, m := range blk.Members {
		if m.Entry == nil {
			c.add(diag.ReceivingInvalid, f.Range(m.Span()), "`events` lists events by name, not `%s: ...`", m.Key.Name).
				WithHelp("write events: { OrderShipped { wire_name: \"order_shipped\" } }")
			ok = false
			continue
		}
		name := m.Entry.String()
		r := c.lookup(s, m.Entry)
		if r.silenced {
			ok = false
			continue
		}
		if r.decl == nil || !isEvent(r.decl) {
			c.unknownEvent(s, f, m.Entry, r.decl, diag.ReceivingInvalid, "`events` lists `%s`, which is not an event in scope", d.name)
			ok = false
			continue
		}
		ev := r.decl
		c.refName(f, m.Entry, ev)
		if prev, dup := seenEvent[ev.id()]; dup {
			c.add(diag.ReceivingInvalid, f.Range(m.Entry.Span()), "`events` lists `%s` twice", name).
				WithRelated(f.Range(prev.Entry.Span()), "first listed here").
				WithHelp("list each event once; remove this one")
			ok = false
			continue
		}
		seenEvent[ev.id()] = m
		qe := ir.QueueEvent{Event: ev.id(), Name: ev.displayName()}
		opts := c.members(f, m.EntryBody, diag.ReceivingInvalid, "in a queue's event", blockKeys["queue event"]...)
		wm := opts["wire_name"]
		switch {
		case typeAt == nil && wm != nil:
			c.add(diag.ReceivingInvalid, f.Range(wm.Key.Span()), "`wire_name` is given, but the queue has no `type_at` to read a type from").
				WithHelp("a queue of one kind lists one event without wire_name; add type_at: to tell several apart")
			ok = false
		case typeAt == nil:
			if first != nil {
				c.add(diag.ReceivingInvalid, f.Range(m.Entry.Span()), "queue `%s` lists several events but has no `type_at`", d.name).
					WithRelated(f.Range(first.Entry.Span()), "the first event is listed here").
					WithHelp("add type_at: \"type\" and a wire_name for each event, or list one event")
				ok = false
			}
		case wm == nil:
			c.add(diag.ReceivingInvalid, f.Range(m.Entry.Span()), "`%s` has no `wire_name`, which a queue with `type_at` needs for each event", name).
				WithHelp("write " + name + ` { wire_name: "` + toLowerSnake(ev.name) + `" }`)
			ok = false
		case wm.Value.Text == nil || wm.Value.TextValue() == "":
			c.add(diag.ReceivingInvalid, f.Range(wm.Value.Span()), "`wire_name` takes a non-empty text")
			ok = false
		default:
			w := wm.Value.TextValue()
			if prev, dup := seenWire[w]; dup {
				c.add(diag.ReceivingInvalid, f.Range(wm.Value.Span()), "wire_name %s is given to two events", *wm.Value.Text).
					WithRelated(f.Range(prev.Span()), "first given here").
					WithHelp("each event of a queue has its own wire_name, so its type tells them apart")
				ok = false
			} else {
				seenWire[w] = wm.Value
			}
			qe.WireName = w
			c.wireAt[queueWireKey(d.name, w)] = f.Range(wm.Value.Span())
		}
		if first == nil {
			first = m
		}
		out = append(out, qe)
	}
	if len(out) == 0 && ok {
		c.add(diag.ReceivingInvalid, f.Range(blk.Span()), "queue `%s` lists no events", d.name).
			WithHelp("name the events it receives: events: { OrderShipped }")
		ok = false
	}
	return out, ok
}

// checkQueueBody holds each listed event's required fields to the members
// its connection's driver says every body has (a SQL inbox's default
// fetch reads only the columns its settings name): a required field that
// is none of them would park every message `<field>: required`. It is
// shown at the connection's setting that names the columns, which is
// where it is fixed.
func (c *checker) checkQueueBody(cn *connection, events []ir.QueueEvent) bool {
	if cn == nil || !cn.ok {
		return true
	}
	dc := c.connectionDriver(cn)
	if dc == nil || dc.Body == nil {
		return true
	}
	body, known := dc.Body(driverSettings(cn))
	if !known {
		return true
	}
	// Each missing field once, with the events that require it.
	var missing []string
	requiredBy := map[string][]*decl{}
	for _, qe := range events {
		ev := c.recordDecl(qe.Event)
		if ev == nil {
			continue
		}
		for _, fld := range ev.fields() {
			if fld.Type.Optional || contains(body.Members, fld.Name) {
				continue
			}
			if requiredBy[fld.Name] == nil {
				missing = append(missing, fld.Name)
			}
			requiredBy[fld.Name] = append(requiredBy[fld.Name], ev)
		}
	}
	for _, name := range missing {
		var evs []string
		for _, ev := range requiredBy[name] {
			evs = append(evs, "`"+ev.displayName()+"`")
		}
		verb, their := "requires", "its"
		if len(evs) > 1 {
			verb, their = "require", "their"
		}
		dg := c.add(diag.ConnectionValueInvalid, c.settingAt(cn, body.Setting),
			"%s %s the field `%s`, which %s does not read: each of %s messages would be parked `%s: required`",
			andList(evs), verb, name, body.Reader, their, name)
		for _, ev := range requiredBy[name] {
			dg.WithRelated(ev.rng(), "`"+ev.displayName()+"` is declared here")
		}
		list := name
		if v, ok := driverSettings(cn).Values[body.Setting].(string); ok && strings.Trim(v, " ,") != "" {
			list = strings.Trim(v, " ,") + ", " + name
		}
		dg.WithHelp(fmt.Sprintf("add it to `%s` (`%s: %q`), or make the field optional if a message may lack it", body.Setting, body.Setting, list))
	}
	return len(missing) == 0
}

// unknownEvent reports a name that is not an event in scope, with the
// nearest event's name and the `use` line that would bring it in.
func (c *checker) unknownEvent(s scope, f *ast.File, q *ast.QualName, found *decl, code diag.Code, format string, owner string) {
	name := q.String()
	if found != nil {
		c.add(code, f.Range(q.Span()), "`%s` is %s %s, not an event", name, article(kindWords[found.kind]), kindWords[found.kind]).
			WithRelated(found.rng(), "declared here").With("name", name).
			WithHelp("list only events here; " + article(kindWords[found.kind]) + " " + kindWords[found.kind] + " is the type of an event's field")
		return
	}
	if len(q.Parts) == 2 {
		if p, ok := c.pkgs[q.Parts[0].Name]; ok {
			if hidden, ok := p.ns.decls[q.Parts[1].Name]; ok && isEvent(hidden) && !hidden.public {
				c.add(code, f.Range(q.Span()), "`%s` is not public in package `%s`", name, p.dir).
					WithRelated(hidden.rng(), "declared here without `public`").With("name", name).
					WithHelp("only a package's public events can be received or handled by the app")
				return
			}
		}
	}
	d := c.add(code, f.Range(q.Span()), format, name).With("name", name)
	if owner != "" {
		d.With(map[bool]string{true: "queue", false: "subscriber"}[code == diag.ReceivingInvalid], owner)
	}
	cands := c.candidates(s, isEvent)
	sugg := suggest(name, cands)
	other := c.elsewhere(s, name, isEvent)
	if sugg == "" && other == nil {
		// a near name in another module
		for _, path := range c.sortedModules() {
			m := c.modules[path]
			if m == s.mod {
				continue
			}
			var evs []string
			for n, dd := range m.ns.decls {
				if dd.public && isEvent(dd) {
					evs = append(evs, n)
				}
			}
			if g := suggest(name, evs); g != "" {
				sugg, other = g, m.ns.decls[g]
				break
			}
		}
	}
	d.Suggest(sugg)
	switch {
	case sugg != "" && other == nil:
		d.WithHelp(fmt.Sprintf("check the spelling: `%s` is in scope here", sugg))
	case other != nil:
		d.WithHelp(fmt.Sprintf("an event from another file needs `use %s { %s }`", other.home.qualifier, other.name))
	case len(q.Parts) == 2:
		d.WithHelp("a package's public event is named `Package.Event`; is the package installed and the event public?")
	default:
		d.WithHelp("declare it with `event " + name + " { ... }`, or bring it in with a `use` line")
	}
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// andList joins items as a sentence does: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
