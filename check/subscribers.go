package check

import (
	"fmt"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// Subscribers: unknown events, connections and operations are
// subscriber.invalid; an argument of the wrong type is type.mismatch.

var defaultRetry = ir.Retry{MaxAttempts: 10, FirstDelayMS: 10_000, MaxDelayMS: 3_600_000}

func (c *checker) checkSubscribers() {
	for _, name := range sortedKeys(c.subscribers) {
		c.checkSubscriber(c.subscribers[name])
	}
}

func (c *checker) checkSubscriber(d *decl) {
	f := d.file
	if !c.needStore(d, "subscriber") {
		return
	}
	sub := ir.Subscriber{Name: d.name, Retry: defaultRetry}
	ok := true
	seen := map[string]*ast.Handler{}
	var retry *ast.Member
	for _, item := range d.node.Subscriber.Items {
		if m := item.Member; m != nil {
			if m.Key == nil || m.Key.Name != "retry" {
				at := m.Span()
				name := ""
				if m.Key != nil {
					at, name = m.Key.Span(), m.Key.Name
				} else {
					name = m.Entry.String()
				}
				c.add(diag.SubscriberInvalid, f.Range(at), "a subscriber has no member `%s`", name).
					Suggest(suggest(name, []string{"retry"})).
					WithHelp("a subscriber holds `on Event(binding) { ... }` handlers and an optional `retry: { ... }`")
				ok = false
				continue
			}
			if retry != nil {
				c.add(diag.SemanticDuplicateName, f.Range(m.Key.Span()), "`retry` is given twice").
					WithRelated(f.Range(retry.Key.Span()), "first given here")
				ok = false
				continue
			}
			retry = m
			if !c.checkRetry(f, m, &sub.Retry) {
				ok = false
			}
			continue
		}
		h := item.Handler
		r := c.lookup(d.scope(), h.Event)
		if r.silenced || r.decl == nil || !isEvent(r.decl) {
			if !r.silenced {
				c.unknownEvent(d.scope(), f, h.Event, r.decl, diag.SubscriberInvalid, "`on %s`: `%[1]s` is not an event in scope", d.name)
			}
			// The steps are still checked, each mistake in them its own:
			// only what they read from the event is not (env.event is nil).
			env := &handlerEnv{binding: h.Binding.Name}
			for _, a := range h.Steps {
				c.checkAttempt(f, a, env)
			}
			ok = false
			continue
		}
		ev := r.decl
		c.refName(f, h.Event, ev)
		if prev, dup := seen[ev.id()]; dup {
			c.add(diag.SubscriberInvalid, f.Range(h.Event.Span()), "subscriber `%s` handles `%s` twice", d.name, h.Event.String()).
				WithRelated(f.Range(prev.Event.Span()), "first handled here").
				WithHelp("put every step for one event in one handler")
			ok = false
			continue
		}
		seen[ev.id()] = h
		c.checkName(f, h.Binding, false, "binding")
		handler := ir.Handler{Event: ev.id(), Name: ev.displayName(), Binding: h.Binding.Name, Steps: []ir.Step{}}
		env := &handlerEnv{binding: h.Binding.Name, event: ev}
		if c.idx != nil {
			env.sym = c.newSym(SymBinding, h.Binding.Name, f.Range(h.Binding.Span()), f.Range(h.Span()), c.sym(d))
			env.sym.Type = &ir.Type{Kind: ir.RecordK, Name: ev.id()}
		}
		for _, a := range h.Steps {
			step, sok := c.checkAttempt(f, a, env)
			if !sok {
				ok = false
				continue
			}
			handler.Steps = append(handler.Steps, step)
		}
		sub.Handlers = append(sub.Handlers, handler)
	}
	if len(sub.Handlers) == 0 && ok {
		c.add(diag.SubscriberInvalid, d.rng(), "subscriber `%s` handles no event", d.name).
			WithHelp("add a handler: on OrderShipped(shipment) { attempt ... }")
		ok = false
	}
	if ok {
		c.out.subscribers = append(c.out.subscribers, sub)
	}
}

func (c *checker) checkRetry(f *ast.File, m *ast.Member, r *ir.Retry) bool {
	blk := c.blockValue(f, m, diag.SubscriberInvalid)
	if blk == nil {
		return false
	}
	ms := c.members(f, blk, diag.SubscriberInvalid, "in `retry`", blockKeys["subscriber retry"]...)
	ok := true
	if mm := ms["max_attempts"]; mm != nil {
		n, good := int64(0), false
		if mm.Value.Number != nil {
			n, good = parseInt64(*mm.Value.Number)
		}
		if !good || n < 1 || n > 1000 {
			c.add(diag.SubscriberInvalid, f.Range(mm.Value.Span()), "`max_attempts` takes a whole number from 1 to 1000").
				WithHelp("write how many times to try in all, e.g. `max_attempts: 8`")
			ok = false
		} else {
			r.MaxAttempts = int(n)
		}
	}
	for _, k := range []string{"first_delay", "max_delay"} {
		mm := ms[k]
		if mm == nil {
			continue
		}
		ms, good := durationMS(mm.Value)
		if !good || ms <= 0 {
			d := c.add(diag.SubscriberInvalid, f.Range(mm.Value.Span()), "`%s` takes a positive duration such as `10s` or `1h`", k)
			whole := ""
			if mm.Value.Duration != nil {
				whole = wholeDuration(*mm.Value.Duration)
			}
			switch {
			case whole != "":
				// `1.5s`: a fraction, as other languages write durations.
				d.Suggest(whole).WithFix(whole).
					WithHelp("a duration is a whole number of one unit, one of ms, s, m, h, d: `" + k + ": " + whole + "` for `" + *mm.Value.Duration + "`")
			case mm.Value.Number != nil:
				d.WithLabel("a duration needs a unit: `" + *mm.Value.Number + "s`?").
					WithHelp("a duration is a whole number with its unit, one of ms, s, m, h, d: `" + k + ": " + *mm.Value.Number + "s`")
			default:
				d.WithHelp("a duration is a whole number with its unit, one of ms, s, m, h, d, e.g. `" + k + ": 10s`")
			}
			ok = false
			continue
		}
		if k == "first_delay" {
			r.FirstDelayMS = ms
		} else {
			r.MaxDelayMS = ms
		}
	}
	if ok && r.FirstDelayMS > r.MaxDelayMS {
		c.add(diag.SubscriberInvalid, f.Range(blk.Span()), "`first_delay` is longer than `max_delay`").
			WithHelp("retries wait from `first_delay` up to `max_delay`: make `max_delay` the longer")
		ok = false
	}
	return ok
}

// durationMS reads a duration literal in milliseconds, by the grammar the
// runtime shares (ir.ParseDuration).
func durationMS(e *ast.Expr) (int64, bool) {
	if e == nil || e.Duration == nil {
		return 0, false
	}
	d, err := ir.ParseDuration(*e.Duration)
	if err != nil {
		return 0, false
	}
	return d.Milliseconds(), true
}

// handlerEnv is what a handler's expressions can name.
type handlerEnv struct {
	binding string
	event   *decl
	sym     *Symbol // the binding's symbol, when indexing
}

func (c *checker) checkAttempt(f *ast.File, a *ast.Attempt, env *handlerEnv) (ir.Step, bool) {
	e := a.Call
	if e.Ref == nil || e.Ref.Call == nil {
		c.add(diag.SubscriberInvalid, f.Range(e.Span()), "`attempt` calls an operation: attempt <connection>.<resource>.<operation>(...)")
		return ir.Step{}, false
	}
	path := e.Ref.Path
	conn := path.Parts[0].Name
	cn := c.connection(conn)
	if cn == nil {
		c.add(diag.SubscriberInvalid, f.Range(path.Parts[0].Span()), "there is no connection `%s`", conn).
			Suggest(suggest(conn, sortedKeys(c.connections))).
			WithHelp("`attempt` calls an operation of a connection the app declares: `attempt <connection>.<resource>.<operation>(...)`")
		return ir.Step{}, false
	}
	c.ref(f, path.Parts[0].Span(), c.sym(cn.decl))
	cn.called = true
	if cn.pkg == nil || !cn.ok {
		return ir.Step{}, false // reported at the connection
	}
	step := ir.Step{Connection: conn, Args: map[string]ir.Expr{}}
	switch {
	case len(path.Parts) == 2 && path.Parts[1].Name == "send":
		return c.checkSend(f, e, cn, env, step)
	case len(path.Parts) != 3:
		d := c.add(diag.SubscriberInvalid, f.Range(path.Span()), "`attempt` names `<connection>.<resource>.<operation>`, or `<connection>.send` for email")
		if len(path.Parts) == 2 && suggest(path.Parts[1].Name, []string{"send"}) != "" {
			d.Suggest(conn + ".send")
		}
		return ir.Step{}, false
	}
	ref := path.Parts[1].Name + "." + path.Parts[2].Name
	op, why := c.findOperation(cn.pkg, ref)
	if r := cn.pkg.resources[path.Parts[1].Name]; r != nil {
		c.ref(f, path.Parts[1].Span(), r.sym)
	}
	if op != nil {
		c.ref(f, path.Parts[2].Span(), op.sym)
	}
	if op == nil {
		d := c.add(diag.SubscriberInvalid, f.Range(path.Span()), "connection `%s` cannot call `%s`: %s", conn, ref, why)
		if r := cn.pkg.resources[path.Parts[1].Name]; r != nil {
			ops := sortedKeys(r.ops)
			if s := suggest(path.Parts[2].Name, ops); s != "" {
				d.Suggest(conn + "." + path.Parts[1].Name + "." + s)
			}
			d.WithHelp(fmt.Sprintf("resource `%s` of `%s` has %s", path.Parts[1].Name, cn.pkg.dir, few("operation", ops)))
		} else {
			res := cn.pkg.proj.ResourceNames()
			if s := suggest(path.Parts[1].Name, res); s != "" {
				d.Suggest(conn + "." + s + "." + path.Parts[2].Name)
			}
			d.WithHelp(fmt.Sprintf("package `%s` has %s: `attempt %s.<resource>.<operation>(...)`", cn.pkg.dir, few("resource", res), conn))
		}
		return ir.Step{}, false
	}
	if op.decode {
		c.add(diag.SubscriberInvalid, f.Range(path.Span()), "`%s` is read by the package's own `decode:`, which this toolchain does not run", ref).
			WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here")
		return ir.Step{}, false
	}
	if op.failed || op.input == nil {
		return ir.Step{}, false
	}
	cn.pkg.useOperation(op)
	step.Operation = ref
	ok := c.checkArgs(f, e, op.input, op.input.fields(), env, step.Args, "`"+ref+"`")
	if !ok {
		return ir.Step{}, false
	}
	c.out.calledOps[conn] = append(c.out.calledOps[conn], op)
	return step, true
}

// SendFields are the arguments of `attempt <connection>.send(...)`, the
// call a connection whose package provides email takes (text, html or both).
func SendFields() []ir.Field {
	text := ir.Type{Kind: ir.Text}
	opt := ir.Type{Kind: ir.Text, Optional: true}
	return []ir.Field{{Name: "to", Type: ir.Type{Kind: ir.Email}}, {Name: "subject", Type: text}, {Name: "text", Type: opt}, {Name: "html", Type: opt}}
}

func (c *checker) checkSend(f *ast.File, e *ast.Expr, cn *connection, env *handlerEnv, step ir.Step) (ir.Step, bool) {
	if cn.pkg.emailMapping == nil {
		c.add(diag.SubscriberInvalid, f.Range(e.Ref.Path.Span()), "connection `%s`'s package `%s` does not provide `email`", cn.decl.name, cn.ir.Package)
		return ir.Step{}, false
	}
	if !cn.pkg.emailMapping.ok {
		return ir.Step{}, false
	}
	fields := SendFields()
	step.Operation = "send"
	if !c.checkArgs(f, e, nil, fields, env, step.Args, "`send`") {
		return ir.Step{}, false
	}
	if _, t := step.Args["text"]; !t {
		if _, h := step.Args["html"]; !h {
			c.add(diag.SubscriberInvalid, f.Range(e.Span()), "`send` needs `text`, `html`, or both")
			return ir.Step{}, false
		}
	}
	return step, true
}

// checkArgs checks a call's named arguments against the input's fields.
func (c *checker) checkArgs(f *ast.File, e *ast.Expr, input *decl, fields []ir.Field, env *handlerEnv, out map[string]ir.Expr, callee string) bool {
	ok := true
	for _, a := range e.Ref.Call.Items {
		if a.Name == nil {
			c.add(diag.SubscriberInvalid, f.Range(a.Span()), "arguments of %s are named: name: value", callee)
			ok = false
			continue
		}
		fl, known := fieldNamed(fields, a.Name.Name)
		if !known && input != nil && input.fieldFailed(a.Name.Name) {
			ok = false // its type's problem is reported
			continue
		}
		if !known {
			names := make([]string, len(fields))
			for i, fl := range fields {
				names[i] = fl.Name
			}
			c.add(diag.SubscriberInvalid, f.Range(a.Name.Span()), "%s takes no input `%s`", callee, a.Name.Name).
				Suggest(suggest(a.Name.Name, names)).
				WithHelp(fmt.Sprintf("%s takes %s", callee, few("input", names)))
			ok = false
			continue
		}
		c.ref(f, a.Name.Span(), c.fieldOfSym(input, a.Name.Name))
		if _, dup := out[a.Name.Name]; dup {
			c.add(diag.SemanticDuplicateName, f.Range(a.Name.Span()), "argument `%s` is given twice", a.Name.Name).
				WithHelp("give each argument once; remove one of the two")
			ok = false
			continue
		}
		x, xok := c.expr(f, a.Value, fl.Type, env, "input `"+fl.Name+"`")
		if !xok {
			ok = false
			out[a.Name.Name] = ir.Expr{}
			continue
		}
		out[a.Name.Name] = x
	}
	var missing []string
	for _, fl := range fields {
		if _, given := out[fl.Name]; !given && !fl.Type.Optional {
			missing = append(missing, fl.Name)
		}
	}
	if len(missing) > 0 {
		c.add(diag.SubscriberInvalid, f.Range(e.Ref.Path.Span()), "the call to %s leaves required input %s out", callee, keyList(missing)).
			WithHelp("add " + missingArgs(missing) + " to the call's arguments")
		ok = false
	}
	return ok
}

// fieldNamed finds an input by name: a scan, no map per call (a call's
// input has a handful of fields).
func fieldNamed(fields []ir.Field, name string) (ir.Field, bool) {
	for i := range fields {
		if fields[i].Name == name {
			return fields[i], true
		}
	}
	return ir.Field{}, false
}

// expr types a handler expression against the type its place expects.
func (c *checker) expr(f *ast.File, e *ast.Expr, want ir.Type, env *handlerEnv, place string) (ir.Expr, bool) {
	mismatch := func(got string) (ir.Expr, bool) {
		c.add(diag.TypeMismatch, f.Range(e.Span()), "%s is %s, but this is %s", place, describe(want), got).
			WithHelp("give " + place + " a value of " + describe(want) + "; no value converts to another type")
		return ir.Expr{}, false
	}
	// mismatchOf is mismatch for a value of a known type: the help names
	// both types and the way out.
	mismatchOf := func(got string, src ir.Type) (ir.Expr, bool) {
		c.add(diag.TypeMismatch, f.Range(e.Span()), "%s is %s, but this is %s", place, describe(want), got).
			WithHelp(wayOut(src, want, place))
		return ir.Expr{}, false
	}
	switch {
	case isLiteral(e) || want.Kind == ir.Enum && refName(e) != "" && refName(e) != env.binding && refName(e) != "config":
		// A literal, or an enum's variant written bare (`ups`) as in a config default.
		raw, problem := literalValue(e, want)
		if problem != "" {
			c.add(diag.TypeMismatch, f.Range(e.Span()), "%s is %s: %s", place, describe(want), problem)
			return ir.Expr{}, false
		}
		c.refVariant(f, e, want)
		return ir.Expr{Literal: raw}, true
	case e.List != nil:
		if want.Kind != ir.List {
			return mismatch("a list")
		}
		out := ir.Expr{List: []ir.Expr{}}
		ok := true
		for _, item := range e.List.Items {
			x, xok := c.expr(f, item, *want.Elem, env, "each item of "+place)
			ok = ok && xok
			out.List = append(out.List, x)
		}
		return out, ok
	case e.Record != nil:
		if want.Kind != ir.RecordK {
			return mismatch("a record")
		}
		rd := c.recordDecl(want.Name)
		if rd == nil {
			return ir.Expr{}, false
		}
		out := ir.Expr{Record: map[string]ir.Expr{}}
		ok := true
		for _, m := range e.Record.Members {
			if m.Key == nil {
				c.add(diag.SubscriberInvalid, f.Range(m.Span()), "a record's members are `field: value`")
				ok = false
				continue
			}
			fl := rd.field(m.Key.Name)
			if fl == nil && rd.fieldFailed(m.Key.Name) {
				ok = false
				continue
			}
			if fl == nil {
				c.add(diag.SubscriberInvalid, f.Range(m.Key.Span()), "`%s` has no field `%s`", rd.name, m.Key.Name).
					Suggest(suggest(m.Key.Name, fieldNamesOf(rd)))
				ok = false
				continue
			}
			c.ref(f, m.Key.Span(), c.fieldOfSym(rd, m.Key.Name))
			if _, dup := out.Record[m.Key.Name]; dup {
				c.add(diag.SemanticDuplicateName, f.Range(m.Key.Span()), "field `%s` is given twice", m.Key.Name)
				ok = false
				continue
			}
			x, xok := c.expr(f, m.Value, fl.Type, env, "field `"+fl.Name+"`")
			ok = ok && xok
			out.Record[m.Key.Name] = x
		}
		var missing []string
		for _, fl := range rd.fields() {
			if _, given := out.Record[fl.Name]; !given && !fl.Type.Optional {
				missing = append(missing, fl.Name)
			}
		}
		if len(missing) > 0 && ok {
			c.add(diag.SubscriberInvalid, f.Range(e.Span()), "the `%s` leaves required field %s out", rd.name, keyList(missing))
			ok = false
		}
		return out, ok
	case e.Ref != nil && e.Ref.Call != nil:
		if e.Ref.Path.String() != "json" {
			c.add(diag.SubscriberInvalid, f.Range(e.Ref.Path.Span()), "`%s(...)` is not a function; the one function is `json(%s)`", e.Ref.Path.String(), env.binding).
				Suggest(suggest(e.Ref.Path.String(), []string{"json"}))
			return ir.Expr{}, false
		}
		items := e.Ref.Call.Items
		if len(items) != 1 || items[0].Name != nil || refName(items[0].Value) != env.binding {
			d := c.add(diag.SubscriberInvalid, f.Range(e.Span()), "`json` takes the handler's event: json(%s)", env.binding)
			if len(items) == 1 && items[0].Name == nil && suggest(refName(items[0].Value), []string{env.binding}) != "" {
				d.Suggest("json(" + env.binding + ")")
			}
			return ir.Expr{}, false
		}
		c.ref(f, items[0].Value.Ref.Path.Parts[0].Span(), env.sym)
		if !assignable(ir.Type{Kind: ir.Text}, want) {
			return mismatch("text (the event as JSON)")
		}
		return ir.Expr{JSON: true}, true
	case e.Ref != nil:
		parts := refParts(e)
		if _, _, isCfg := configRef(e); isCfg {
			cf := c.useConfig(f, e, false, place)
			if cf == nil {
				return ir.Expr{}, false
			}
			if !assignable(cf.ir.Type, want) {
				if cf.typeFailed {
					return ir.Expr{}, false
				}
				return mismatchOf("config field `"+cf.ir.Name+"`, "+describe(cf.ir.Type), cf.ir.Type)
			}
			return ir.Expr{Config: cf.ir.Name}, true
		}
		if parts[0] != env.binding {
			c.add(diag.SubscriberInvalid, f.Range(e.Ref.Path.Parts[0].Span()), "`%s` is not known here", parts[0]).
				Suggest(suggest(parts[0], []string{env.binding, "config"})).
				WithHelp("a handler's values are literals, `" + env.binding + ".<field>`, `config.<field>`, records, lists and json(" + env.binding + ")")
			return ir.Expr{}, false
		}
		if env.event == nil {
			return ir.Expr{}, false // the handler's event did not resolve: reported there
		}
		c.ref(f, e.Ref.Path.Parts[0].Span(), env.sym)
		t := ir.Type{Kind: ir.RecordK, Name: env.event.id()}
		rd := env.event
		for i, p := range e.Ref.Path.Parts[1:] {
			if t.Kind != ir.RecordK || rd == nil {
				c.add(diag.SubscriberInvalid, f.Range(p.Span()), "`%s` is %s, which has no fields", strings.Join(parts[:i+1], "."), describe(t))
				return ir.Expr{}, false
			}
			fl := rd.field(p.Name)
			if fl == nil && rd.fieldFailed(p.Name) {
				return ir.Expr{}, false
			}
			if fl == nil {
				c.add(diag.SubscriberInvalid, f.Range(p.Span()), "`%s` has no field `%s`", rd.name, p.Name).
					Suggest(suggest(p.Name, fieldNamesOf(rd))).WithRelated(rd.rng(), "declared here").
					WithHelp("use a field `" + rd.name + "` declares: " + keyList(fieldNamesOf(rd)))
				return ir.Expr{}, false
			}
			c.ref(f, p.Span(), c.fieldOfSym(rd, p.Name))
			t = fl.Type
			if t.Optional && i < len(parts)-2 {
				c.add(diag.SubscriberInvalid, f.Range(p.Span()), "`%s` may be none, so its fields cannot be read", strings.Join(parts[:i+2], "."))
				return ir.Expr{}, false
			}
			rd = nil
			if t.Kind == ir.RecordK {
				rd = c.recordDecl(t.Name)
			}
		}
		if !assignable(t, want) {
			return mismatchOf("`"+strings.Join(parts, ".")+"`, "+describe(t), t)
		}
		if len(parts) == 1 {
			return ir.Expr{Event: true}, true
		}
		return ir.Expr{Path: parts[1:]}, true
	}
	return mismatch("a value of another kind")
}

// missingArgs shows required inputs as the arguments to add: `payload: ...`.
func missingArgs(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + ": ...`"
	}
	return strings.Join(out, ", ")
}
