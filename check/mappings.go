package check

import (
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
)

// Capability mappings: provide receiving (and provide email). Every problem
// in one is package.provider_invalid, reported in the mapping's file.

type receivingResult struct {
	ir *ir.Receiving
	ok bool
}

type emailResult struct {
	ir *ir.Call
	ok bool
}

// emailMessageMembers are what `message.` offers in an email mapping.
var emailMessageMembers = []string{"html", "subject", "text", "to"}

// checkProvides checks each capability mapping of a package, loading the
// resources its calls name.
func (c *checker) checkProvides(p *pkg) {
	for _, cap := range sortedKeys(p.provides) {
		pd := p.provides[cap]
		switch cap {
		case "receiving":
			p.receiving = c.checkReceiving(p, pd)
		case "email":
			p.emailMapping = c.checkEmail(p, pd)
		default:
			c.add(diag.ToolchainNotBuiltYet, pd.file.Range(pd.decl.Name.Span()), "`provide %s` is not built yet", cap).
				Suggest(suggest(cap, []string{"receiving", "email"})).
				With("capability", cap).
				WithHelp("this toolchain builds the `receiving` and `email` capability mappings; others come later")
		}
	}
}

func (c *checker) checkReceiving(p *pkg, pd *provideDecl) *receivingResult {
	f := pd.file
	res := &receivingResult{ir: &ir.Receiving{}, ok: true}
	ms := c.members(f, pd.decl.Body, diag.PackageProviderInvalid, "in `provide receiving`", blockKeys["provide receiving"]...)
	bad := func() { res.ok = false }
	if m := ms["driver"]; m != nil {
		name := refName(m.Value)
		receivingDrivers := c.driverNames()
		if !contains(receivingDrivers, name) {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`driver` takes one of %s", keyList(receivingDrivers)).
				Suggest(suggest(name, receivingDrivers))
			bad()
		}
		res.ir.Driver = ir.Driver(name)
		if contains(receivingDrivers, name) && !c.checkDriver(p, f, m, name, res.ir) {
			bad()
		}
		for _, k := range []string{"receive", "acknowledge", "acknowledge_batch"} {
			if mm := ms[k]; mm != nil {
				c.add(diag.PackageProviderInvalid, f.Range(mm.Key.Span()), "a mapping with `driver` takes no `%s`", k).
					WithHelp("the driver receives and acknowledges itself; remove `" + k + "`")
				bad()
			}
		}
		return res
	}
	for _, k := range []string{"receive", "acknowledge"} {
		if ms[k] == nil {
			help := "map `receive:` and `acknowledge:` onto the package's operations, or name a built-in `driver:`"
			if k == "acknowledge" && ms["acknowledge_batch"] != nil {
				// The batch form needs the single one as its fallback.
				help = "`acknowledge_batch:` needs `acknowledge:` beside it: the runtime acknowledges with the single call what a batch could not (an entry the answer lists as failed, or the messages of a batch call that failed as a whole)"
			}
			c.add(diag.PackageProviderInvalid, f.Range(pd.decl.Name.Span()), "`provide receiving` has no `%s`", k).
				WithHelp(help)
			bad()
		}
	}
	if m := ms["receive"]; m != nil {
		blk := c.blockValue(f, m, diag.PackageProviderInvalid)
		if blk == nil {
			bad()
		} else {
			rm := c.members(f, blk, diag.PackageProviderInvalid, "in `receive`", blockKeys["receiving receive"]...)
			op, call := c.mappedCall(p, f, m, rm, false, nil, "")
			if call == nil {
				bad()
			}
			res.ir.Receive = call
			if !c.mapReceivedItems(p, f, m, rm, op, res.ir) {
				bad()
			}
		}
	}
	if m := ms["acknowledge"]; m != nil {
		blk := c.blockValue(f, m, diag.PackageProviderInvalid)
		if blk == nil {
			bad()
		} else {
			am := c.members(f, blk, diag.PackageProviderInvalid, "in `acknowledge`", blockKeys["receiving acknowledge"]...)
			_, call := c.mappedCall(p, f, m, am, true, nil, "")
			if call == nil {
				bad()
			}
			res.ir.Acknowledge = call
		}
	}
	if m := ms["acknowledge_batch"]; m != nil {
		if batch := c.checkAcknowledgeBatch(p, f, m); batch == nil {
			bad()
		} else {
			res.ir.AcknowledgeBatch = batch
		}
	}
	return res
}

// batchMessageMembers are what `message.` offers in an `entry:` block.
var batchMessageMembers = []string{"entry_id"}

// checkAcknowledgeBatch checks `acknowledge_batch:`: its call and inputs as
// in `acknowledge:`, the list input its `entries:` names, built with one
// `entry:` per message (which gives `message.entry_id` and
// `message.handle`), and the answer's list of failed entries.
func (c *checker) checkAcknowledgeBatch(p *pkg, f *ast.File, owner *ast.Member) *ir.BatchCall {
	blk := c.blockValue(f, owner, diag.PackageProviderInvalid)
	if blk == nil {
		return nil
	}
	bm := c.members(f, blk, diag.PackageProviderInvalid, "in `acknowledge_batch`", blockKeys["receiving acknowledge_batch"]...)
	ok := true
	for _, k := range []string{"entries", "entry", "failed", "failed_id"} {
		if bm[k] == nil {
			c.add(diag.PackageProviderInvalid, f.Range(owner.Key.Span()), "`acknowledge_batch` has no `%s`", k).
				WithHelp("entries: input.<list field>, entry: { <field>: message.entry_id <field>: message.handle }, failed: response.<list field>, failed_id: item.<text field>")
			ok = false
		}
	}
	// The list input is built from `entry:`, so it counts as mapped; with
	// no `entries:` (reported above) whatever list it would name counts too.
	entries, built := "", "*"
	if m := bm["entries"]; m != nil {
		// Whatever list input `entries` meant is built, not left unmapped:
		// only the problem with `entries` itself is reported.
		built = "*"
		if parts := refParts(m.Value); len(parts) == 2 && parts[0] == "input" {
			entries, built = parts[1], parts[1]
		} else {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`entries` takes `input.<field>`, the call's list of entries").
				Suggest(nearHead(m.Value, "input"))
			ok = false
		}
	}
	op, call := c.mappedCall(p, f, owner, bm, false, nil, built)
	if op == nil || op.failed || op.input == nil {
		return nil
	}
	out := &ir.BatchCall{Entries: entries, Entry: map[string]ir.Value{}}
	if call == nil {
		ok = false
	} else {
		out.Call = *call
	}
	if entries != "" {
		if !c.batchEntry(p, f, bm, op, entries, out) {
			ok = false
		}
	}
	if m := bm["failed"]; m != nil {
		if list, id, good := c.batchAnswerList(f, m, bm["failed_id"], op, "failed"); good {
			out.Failed, out.FailedID = list, id
		} else {
			ok = false
		}
	}
	// `succeeded:` and `succeeded_id:` are optional, and go together: with
	// them the runtime reads the answer strictly (an entry named neither
	// way is not acknowledged).
	switch sm, sid := bm["succeeded"], bm["succeeded_id"]; {
	case sm == nil && sid == nil:
	case sm == nil || sid == nil:
		given, want := "succeeded", "succeeded_id"
		at := sm
		if sm == nil {
			given, want, at = "succeeded_id", "succeeded", sid
		}
		c.add(diag.PackageProviderInvalid, f.Range(at.Key.Span()), "`acknowledge_batch` has `%s` but no `%s`", given, want).
			WithHelp("succeeded: response.<list field>, succeeded_id: item.<text field>: the answer's entries that took, each by its entry id")
		ok = false
	case op.output == nil:
		ok = false // `failed` said so: the one mistake
	default:
		if list, id, good := c.batchAnswerList(f, sm, sid, op, "succeeded"); good {
			out.Succeeded, out.SucceededID = list, id
		} else {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return out
}

// batchEntry checks the list input `entries:` names and each entry's
// `entry:` block.
func (c *checker) batchEntry(p *pkg, f *ast.File, bm map[string]*ast.Member, op *operation, entries string, out *ir.BatchCall) bool {
	em := bm["entries"]
	lf := op.input.field(entries)
	if lf == nil {
		c.add(diag.PackageProviderInvalid, f.Range(em.Value.Span()), "`%s` has no field `%s`", op.input.name, entries).
			Suggest(suggest(entries, fieldNamesOf(op.input))).WithRelated(op.input.rng(), "the input is declared here")
		return false
	}
	if lf.Type.Kind != ir.List || lf.Type.Elem == nil || lf.Type.Elem.Kind != ir.RecordK {
		c.add(diag.PackageProviderInvalid, f.Range(em.Value.Span()), "`input.%s` is %s, not a list of objects", entries, describe(lf.Type)).
			WithHelp("`entries` names the input list that holds one object per message")
		return false
	}
	item := c.recordDecl(lf.Type.Elem.Name)
	if item == nil {
		return false
	}
	m := bm["entry"]
	if m == nil {
		return false
	}
	blk := c.blockValue(f, m, diag.PackageProviderInvalid)
	if blk == nil {
		return false
	}
	gives := map[string]bool{}
	given, ok := c.mapFields(p, f, blk, item, fieldMapWords{
		block: "entry", twice: "entry field `%s` is mapped twice", unknown: "`%s` has no field `%s`",
		declared: "each entry is a `" + item.name + "`",
	}, true, batchMessageMembers, func(key string, v ir.Value) {
		if v.Message != "" {
			gives[v.Message] = true
		}
		out.Entry[key] = v
	})
	var missing []string
	for _, fld := range item.fields() {
		if !fld.Type.Optional && !given[fld.Name] {
			missing = append(missing, fld.Name)
		}
	}
	if len(missing) > 0 {
		c.add(diag.PackageProviderInvalid, f.Range(m.Key.Span()), "each `%s` entry leaves required field %s unmapped", item.name, keyList(missing)).
			WithRelated(item.rng(), "each entry is a `"+item.name+"`").
			WithHelp("map every required field of an entry to `message.entry_id`, `message.handle`, a setting or a literal")
		ok = false
	}
	for _, g := range []struct{ member, why string }{
		{"entry_id", "the answer names the entries that failed by it"},
		{"handle", "it says which message each entry acknowledges"},
	} {
		if ok && !gives[g.member] {
			c.add(diag.PackageProviderInvalid, f.Range(m.Key.Span()), "`entry` gives no field `message.%s`", g.member).
				WithHelp("map a text field of the entry to `message." + g.member + "`: " + g.why)
			ok = false
		}
	}
	return ok
}

// batchAnswerList checks `failed:` or `succeeded:` (kind), the answer's
// list of the entries that did not take or did, and `<kind>_id:`, each
// one's entry id: the list field and the id field.
func (c *checker) batchAnswerList(f *ast.File, m, idm *ast.Member, op *operation, kind string) (list, id string, ok bool) {
	what := map[string]string{"failed": "failed", "succeeded": "took"}[kind]
	an := map[string]string{"failed": "a failed entry", "succeeded": "an entry that took"}[kind]
	each := map[string]string{"failed": "each failed entry", "succeeded": "each entry that took"}[kind]
	parts := refParts(m.Value)
	if len(parts) != 2 || parts[0] != "response" {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` takes `response.<field>`, the answer's list of the entries that %s", kind, what).
			Suggest(nearHead(m.Value, "response"))
		return "", "", false
	}
	if op.output == nil {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` declares no `output`, so its answer has no `%s`", op.ir.Ref, parts[1]).
			WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here").
			WithHelp("declare the operation's output, with the list of the entries that " + what)
		return "", "", false
	}
	lf := op.output.field(parts[1])
	if lf == nil {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` has no field `%s`", op.output.name, parts[1]).
			Suggest(suggest(parts[1], fieldNamesOf(op.output))).WithRelated(op.output.rng(), "the output is declared here")
		return "", "", false
	}
	if lf.Type.Kind != ir.List || lf.Type.Elem == nil || lf.Type.Elem.Kind != ir.RecordK {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`response.%s` is %s, not a list of objects", parts[1], describe(lf.Type))
		return "", "", false
	}
	item := c.recordDecl(lf.Type.Elem.Name)
	if item == nil || idm == nil {
		return "", "", false
	}
	ip := refParts(idm.Value)
	if len(ip) != 2 || ip[0] != "item" {
		c.add(diag.PackageProviderInvalid, f.Range(idm.Value.Span()), "`%s_id` takes `item.<field>`, the text field of %s that holds its entry id", kind, an).
			Suggest(nearHead(idm.Value, "item"))
		return "", "", false
	}
	fld := item.field(ip[1])
	if fld == nil {
		c.add(diag.PackageProviderInvalid, f.Range(idm.Value.Span()), "`%s` has no field `%s`", item.name, ip[1]).
			Suggest(suggest(ip[1], fieldNamesOf(item))).WithRelated(item.rng(), each+" is a `"+item.name+"`")
		return "", "", false
	}
	if fld.Type.Kind != ir.Text || fld.Type.Optional {
		c.add(diag.PackageProviderInvalid, f.Range(idm.Value.Span()), "`item.%s` is %s; the entry id is text", ip[1], describe(fld.Type))
		return "", "", false
	}
	return parts[1], ip[1], true
}

// blockValue is a member's block value, reporting another kind of value.
func (c *checker) blockValue(f *ast.File, m *ast.Member, code diag.Code) *ast.Block {
	if m.Value.Record == nil {
		c.add(code, f.Range(m.Value.Span()), "`%s` takes a block: %s: { ... }", m.Key.Name, m.Key.Name)
		return nil
	}
	return m.Value.Record
}

// mappedCall checks `call:` and `input:` of a mapping. handle says whether
// `message.handle` may be given; message lists the other `message.` members
// an email mapping offers; built names the input field a batch builds
// itself, which counts as mapped ("" for none; when it names no field, as
// when `entries` is wrong, every list field counts, so that only the
// problem with `entries` is reported).
func (c *checker) mappedCall(p *pkg, f *ast.File, owner *ast.Member, ms map[string]*ast.Member, handle bool, message []string, built string) (*operation, *ir.Call) {
	cm := ms["call"]
	if cm == nil {
		c.add(diag.PackageProviderInvalid, f.Range(owner.Key.Span()), "`%s` has no `call`", owner.Key.Name).
			WithHelp("name the operation it calls: call: resource.operation")
		return nil, nil
	}
	parts := refParts(cm.Value)
	if len(parts) != 2 {
		c.add(diag.PackageProviderInvalid, f.Range(cm.Value.Span()), "`call` names an operation of the package as `resource.operation`")
		return nil, nil
	}
	ref := strings.Join(parts, ".")
	op, why := c.findOperation(p, ref)
	if r := p.resources[parts[0]]; r != nil {
		c.ref(f, cm.Value.Ref.Path.Parts[0].Span(), r.sym)
	}
	if op != nil {
		c.ref(f, cm.Value.Ref.Path.Parts[1].Span(), op.sym)
	}
	if op == nil {
		d := c.add(diag.PackageProviderInvalid, f.Range(cm.Value.Span()), "`call` names `%s`: %s", ref, why)
		if r := p.resources[parts[0]]; r != nil {
			d.Suggest(suggest(parts[1], sortedKeys(r.ops)))
		} else {
			d.Suggest(suggest(parts[0], p.proj.ResourceNames()))
		}
		return nil, nil
	}
	if op.decode {
		c.add(diag.PackageProviderInvalid, f.Range(cm.Value.Span()), "`%s` is read by the package's own `decode:`, so it cannot be mapped", ref).
			WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here").
			WithHelp("map an operation whose answer is plain JSON")
		return op, nil
	}
	if op.failed || op.input == nil {
		return op, nil
	}
	p.useOperation(op)
	call := &ir.Call{Operation: ref, Input: map[string]ir.Value{}}
	ok := true
	given := map[string]bool{}
	if im := ms["input"]; im != nil {
		blk := c.blockValue(f, im, diag.PackageProviderInvalid)
		if blk == nil {
			return op, nil
		}
		given, ok = c.mapFields(p, f, blk, op.input, fieldMapWords{
			block: "input", twice: "input `%s` is mapped twice", unknown: "`%s` takes no input `%s`",
			declared: "the input is declared here",
		}, handle, message, func(key string, v ir.Value) { call.Input[key] = v })
	}
	var missing []string
	for _, fld := range op.input.fields() {
		isBuilt := fld.Name == built || built != "" && op.input.field(built) == nil && fld.Type.Kind == ir.List
		if !fld.Type.Optional && !given[fld.Name] && !isBuilt {
			missing = append(missing, fld.Name)
		}
	}
	if len(missing) > 0 {
		at := owner.Key.Span()
		if im := ms["input"]; im != nil {
			at = im.Key.Span()
		}
		c.add(diag.PackageProviderInvalid, f.Range(at), "the call to `%s` leaves required input %s unmapped", ref, keyList(missing)).
			WithRelated(op.input.rng(), "the input is declared here").
			WithHelp("map every required input field to a setting, a literal" + map[bool]string{true: " or `message.handle`", false: ""}[handle])
		ok = false
	}
	if !ok {
		return op, nil
	}
	return op, call
}

// fieldMapWords are how mapFields' diagnostics name what is mapped.
type fieldMapWords struct {
	block    string // "input": "`input` members are `field: value`"
	twice    string // "input `%s` is mapped twice" (the key)
	unknown  string // "`%s` takes no input `%s`" (the record's name, the key)
	declared string // said at the record's declaration: "the input is declared here"
}

// mapFields checks a mapping block's `field: value` members against the
// fields of rec: each a `field: value`, each key once, each a field of rec,
// each value one mappedValue takes (with handle and message). Each member
// that maps is handed to put. It returns the keys given, and whether every
// member mapped.
func (c *checker) mapFields(p *pkg, f *ast.File, blk *ast.Block, rec *decl, words fieldMapWords, handle bool, message []string,
	put func(key string, v ir.Value)) (given map[string]bool, ok bool) {
	ok = true
	given = map[string]bool{}
	for _, m := range blk.Members {
		if m.Key == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Span()), "`%s` members are `field: value`", words.block)
			ok = false
			continue
		}
		key := m.Key.Name
		if given[key] {
			c.add(diag.SemanticDuplicateName, f.Range(m.Key.Span()), words.twice, key)
			ok = false
			continue
		}
		given[key] = true
		field := rec.field(key)
		c.ref(f, m.Key.Span(), c.fieldOfSym(rec, key))
		if field == nil && rec.fieldFailed(key) {
			ok = false
			continue
		}
		if field == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Key.Span()), words.unknown, rec.name, key).
				Suggest(suggest(key, fieldNamesOf(rec))).WithRelated(rec.rng(), words.declared)
			ok = false
			continue
		}
		v, vok := c.mappedValue(p, f, m.Value, *field, handle, message)
		if !vok {
			ok = false
			continue
		}
		put(key, v)
	}
	return given, ok
}

func fieldNamesOf(d *decl) []string {
	out := make([]string, len(d.flds))
	for i, f := range d.flds {
		out[i] = f.name
	}
	return out
}

// mappedValue checks one input's value: a setting, a literal, or a message member.
func (c *checker) mappedValue(p *pkg, f *ast.File, e *ast.Expr, field ir.Field, handle bool, message []string) (ir.Value, bool) {
	parts := refParts(e)
	switch {
	case isLiteral(e):
		raw, problem := literalValue(e, field.Type)
		if problem != "" {
			c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "input `%s` is %s: %s", field.Name, describe(field.Type), problem)
			return ir.Value{}, false
		}
		return ir.Value{Literal: raw}, true
	case len(parts) == 2 && parts[0] == "settings":
		st, ok := p.settings[parts[1]]
		if ok {
			c.ref(f, e.Ref.Path.Parts[1].Span(), st.sym)
		}
		if !ok {
			c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "the package declares no setting `%s`", parts[1]).
				Suggest(suggest(parts[1], sortedKeys(p.settings)))
			return ir.Value{}, false
		}
		if !assignable(st.typ, field.Type) && !(st.def != nil && assignable(required(st.typ), field.Type)) {
			c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "setting `%s` is %s, which input `%s` (%s) does not take", parts[1], describe(st.typ), field.Name, describe(field.Type))
			return ir.Value{}, false
		}
		return ir.Value{Setting: parts[1]}, true
	case len(parts) == 2 && parts[0] == "message" && parts[1] == "handle" && handle:
		if !assignable(ir.Type{Kind: ir.Text}, field.Type) {
			c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "`message.handle` is text, which input `%s` (%s) does not take", field.Name, describe(field.Type))
			return ir.Value{}, false
		}
		return ir.Value{Message: "handle"}, true
	case len(parts) == 2 && parts[0] == "message" && parts[1] == "entry_id" && contains(message, "entry_id"):
		if !assignable(ir.Type{Kind: ir.Text}, field.Type) {
			c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "`message.entry_id` is text, which field `%s` (%s) does not take", field.Name, describe(field.Type))
			return ir.Value{}, false
		}
		return ir.Value{Message: "entry_id"}, true
	case len(parts) == 2 && parts[0] == "message" && contains(message, parts[1]):
		return ir.Value{Message: parts[1]}, true
	}
	allowed := "`settings.<name>`, a text, a whole number or a flag"
	if contains(message, "entry_id") {
		allowed += ", `message.entry_id` or `message.handle`"
	} else if handle {
		allowed += ", or `message.handle`"
	}
	if message != nil && !contains(message, "entry_id") {
		allowed += ", or one of `message.to`, `message.subject`, `message.text`, `message.html`"
	}
	d := c.add(diag.PackageProviderInvalid, f.Range(e.Span()), "input `%s` takes %s", field.Name, allowed)
	heads := []string{"settings"}
	if message != nil || handle {
		heads = append(heads, "message")
	}
	if s := nearHead(e, heads...); s != "" {
		d.Suggest(s)
	} else if len(parts) == 2 && parts[0] == "message" {
		names := append([]string(nil), message...)
		if handle {
			names = append(names, "handle")
		}
		if s := suggest(parts[1], names); s != "" {
			d.Suggest("message." + s)
		}
	}
	return ir.Value{}, false
}

func required(t ir.Type) ir.Type { t.Optional = false; return t }

// mapReceivedItems checks messages:, body: and handle:.
func (c *checker) mapReceivedItems(p *pkg, f *ast.File, owner *ast.Member, ms map[string]*ast.Member, op *operation, out *ir.Receiving) bool {
	ok := true
	for _, k := range []string{"messages", "body", "handle"} {
		if ms[k] == nil {
			c.add(diag.PackageProviderInvalid, f.Range(owner.Key.Span()), "`receive` has no `%s`", k).
				WithHelp("messages: response.<list field>, body: item.<text field>, handle: item.<text field>")
			ok = false
		}
	}
	if op == nil || op.failed || !ok {
		return false
	}
	m := ms["messages"]
	parts := refParts(m.Value)
	if len(parts) != 2 || parts[0] != "response" {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`messages` takes `response.<field>`, the answer's list of messages").
			Suggest(nearHead(m.Value, "response"))
		return false
	}
	if op.output == nil {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` declares no `output`, so its answer has no `%s`", op.ir.Ref, parts[1]).
			WithRelated(op.file.Range(op.ident.Span()), "the operation is declared here")
		return false
	}
	lf := op.output.field(parts[1])
	if lf == nil {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` has no field `%s`", op.output.name, parts[1]).
			Suggest(suggest(parts[1], fieldNamesOf(op.output))).WithRelated(op.output.rng(), "the output is declared here")
		return false
	}
	if lf.Type.Kind != ir.List || lf.Type.Elem.Kind != ir.RecordK {
		c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`response.%s` is %s, not a list of objects", parts[1], describe(lf.Type))
		return false
	}
	out.Messages = parts[1]
	item := c.recordDecl(lf.Type.Elem.Name)
	if item == nil {
		return false
	}
	for _, k := range []string{"body", "handle"} {
		m := ms[k]
		parts := refParts(m.Value)
		if len(parts) != 2 || parts[0] != "item" {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` takes `item.<field>`, a text field of each message", k).
				Suggest(nearHead(m.Value, "item"))
			ok = false
			continue
		}
		fld := item.field(parts[1])
		if fld == nil {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`%s` has no field `%s`", item.name, parts[1]).
				Suggest(suggest(parts[1], fieldNamesOf(item))).WithRelated(item.rng(), "each message is a `"+item.name+"`")
			ok = false
			continue
		}
		if fld.Type.Kind != ir.Text || fld.Type.Optional {
			c.add(diag.PackageProviderInvalid, f.Range(m.Value.Span()), "`item.%s` is %s; the %s is text", parts[1], describe(fld.Type), k)
			ok = false
			continue
		}
		if k == "body" {
			out.Body = parts[1]
		} else {
			out.Handle = parts[1]
		}
	}
	return ok
}

func (c *checker) checkEmail(p *pkg, pd *provideDecl) *emailResult {
	f := pd.file
	res := &emailResult{}
	ms := c.members(f, pd.decl.Body, diag.PackageProviderInvalid, "in `provide email`", blockKeys["provide email"]...)
	m := ms["send"]
	if m == nil {
		c.add(diag.PackageProviderInvalid, f.Range(pd.decl.Name.Span()), "`provide email` has no `send`").
			WithHelp("map send: { call: resource.operation input: { ... } }")
		return res
	}
	blk := c.blockValue(f, m, diag.PackageProviderInvalid)
	if blk == nil {
		return res
	}
	sm := c.members(f, blk, diag.PackageProviderInvalid, "in `send`", blockKeys["email send"]...)
	_, call := c.mappedCall(p, f, m, sm, false, emailMessageMembers, "")
	res.ir, res.ok = call, call != nil
	return res
}

// recordDecl finds a record's declaration by its id.
func (c *checker) recordDecl(id string) *decl {
	i := strings.LastIndex(id, ".")
	if i < 0 {
		return nil
	}
	q, name := id[:i], id[i+1:]
	if m, ok := c.modules[q]; ok {
		return m.ns.decls[name]
	}
	if p, ok := c.pkgs[q]; ok {
		return p.ns.decls[name]
	}
	return nil
}
