// Package reading turns one queue message's body into the event to keep, or
// the reason to park it: the reading step of a tick. A body is read as JSON,
// decoded by the event's record and held to its rules; one that fails is
// parked with its reasons, never dropped (docs/design/runtime.md, "What the tick
// does, sentence by sentence"). It reads; it does not keep, park or
// acknowledge anything.
//
// A Reader is built once per queue from the plan, compiling every pattern and
// bound then, and is safe for concurrent use. Read walks the body once with a
// strict JSON parser of its own (no reflection, numbers kept as their exact
// text), decodes the event from the body's root by the event's record, and
// writes its canonical JSON as it goes. docs/design/reading.md gives every decision.
package reading

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/jsonstring"
	"github.com/jadpo/jadpo/runtime/store"
)

// MaxEventBytes is the most an event's canonical JSON may hold; a longer one
// is parked too_large.
const MaxEventBytes = 65536

// MaxProblems is the most problems one message keeps: the first found, in the
// body's order, then sorted.
const MaxProblems = 100

// maxKeyInPath caps how much of a map key a problem's field path repeats.
const maxKeyInPath = 256

// Reasons a message is parked: the store's, which keeps them (reading
// decides which, the store writes it).
const (
	UnlistedType = store.ReasonUnlistedType
	Unreadable   = store.ReasonUnreadable
	TooLarge     = store.ReasonTooLarge
)

// Rules a problem names. The language's own (docs/reference/language.md, "How a message body is read") and one more: json,
// for a body that isn't JSON this reader reads.
const (
	RuleJSON      = "json"
	RuleRequired  = "required"
	RuleType      = "type"
	RuleMin       = "min"
	RuleMax       = "max"
	RuleMinLength = "min_length"
	RuleMaxLength = "max_length"
	RulePattern   = "pattern"
	RuleFormat    = "format"
	RuleEnum      = "enum"
)

// Problem is one reason a body can't be read as its event: where, and which
// rule. It never holds a value from the body. It is the store's type, so
// what is read is parked as it is.
type Problem = store.Problem

// Outcome is what reading one body gives: an event to keep (EventJSON set)
// or a reason to park it (Park set).
type Outcome struct {
	Park   bool
	Reason store.Reason // UnlistedType, Unreadable or TooLarge when Park
	// Problems say why a body is unreadable, sorted by field then rule.
	Problems []Problem
	// ID is the message's id when it was read: its text, or the whole
	// number's decimal text.
	ID string
	// WireType is the type text when it was read.
	WireType string
	// Event is the listed event the message was matched to: by its type, or
	// the one event of a queue of one kind, even when the message is parked.
	Event *ir.QueueEvent
	// EventJSON is the event's canonical JSON when it is kept.
	EventJSON []byte
}

// Reader reads one queue's messages.
type Reader struct {
	idAt, typeAt       []string
	idField, typeField string
	events             []ir.QueueEvent
	records            []*record // the record of events[i]
	byWire             map[string]int
	pool               sync.Pool
}

// NewReader compiles a queue's reading from the plan. An error means the plan
// is inconsistent: an unknown record, a listed record that is no event, a
// missing or repeated wire_name, a rule that does not fit its type, a pattern
// that does not compile.
func NewReader(p *ir.Program, q *ir.Queue) (*Reader, error) {
	if len(q.IDAt) == 0 || slices.Contains(q.IDAt, "") {
		return nil, fmt.Errorf("queue %s: empty id_at path", q.Name)
	}
	if q.TypeAt != nil && (len(q.TypeAt) == 0 || slices.Contains(q.TypeAt, "")) {
		return nil, fmt.Errorf("queue %s: empty type_at path", q.Name)
	}
	if len(q.Events) == 0 {
		return nil, fmt.Errorf("queue %s: lists no event", q.Name)
	}
	if q.TypeAt == nil && len(q.Events) != 1 {
		return nil, fmt.Errorf("queue %s: lists %d events without type_at", q.Name, len(q.Events))
	}
	r := &Reader{
		idAt:      slices.Clone(q.IDAt),
		typeAt:    slices.Clone(q.TypeAt),
		idField:   strings.Join(q.IDAt, "."),
		typeField: strings.Join(q.TypeAt, "."),
		events:    slices.Clone(q.Events),
		byWire:    map[string]int{},
	}
	c := &compiler{p: p, records: map[string]*record{}}
	for i, e := range r.events {
		if r.typeAt != nil {
			if e.WireName == "" {
				return nil, fmt.Errorf("queue %s: event %s has no wire_name", q.Name, e.Name)
			}
			if _, dup := r.byWire[e.WireName]; dup {
				return nil, fmt.Errorf("queue %s: wire_name %q given twice", q.Name, e.WireName)
			}
			r.byWire[e.WireName] = i
		}
		rec := p.RecordByID(e.Event)
		if rec == nil {
			return nil, fmt.Errorf("queue %s: unknown record %q", q.Name, e.Event)
		}
		if !rec.Event {
			return nil, fmt.Errorf("queue %s: record %q is not an event", q.Name, e.Event)
		}
		cr, err := c.record(e.Event)
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q.Name, err)
		}
		r.records = append(r.records, cr)
	}
	r.pool.New = func() any { return new(state) }
	return r, nil
}

// Read reads one message body.
func (r *Reader) Read(body []byte) Outcome {
	st := r.pool.Get().(*state)
	out := r.read(st, body)
	st.reset()
	if cap(st.out) <= 1<<20 && cap(st.p.esc) <= 1<<20 && cap(st.p.nodes) <= 1<<16 && cap(st.p.stack) <= 1<<16 {
		r.pool.Put(st)
	}
	return out
}

func (r *Reader) read(st *state, body []byte) Outcome {
	var o Outcome
	if r.typeAt == nil {
		o.Event = &r.events[0] // every message of a queue of one kind is its event
	}
	root, ok := st.p.parse(body)
	if !ok || root.kind != kObj {
		return unreadable(o, []Problem{{Field: "", Rule: RuleJSON}})
	}
	var head []Problem
	switch id := st.find(&root, r.idAt); {
	case id == nil || id.kind == kNull:
		head = append(head, Problem{Field: r.idField, Rule: RuleRequired})
	case id.kind == kStr:
		if id.val.len == 0 {
			head = append(head, Problem{Field: r.idField, Rule: RuleRequired})
		} else {
			o.ID = string(st.p.text(id.val))
		}
	case id.kind == kNum:
		var n int64
		if n, st.num, ok = wholeNumber(st.p.text(id.val), st.num); ok {
			o.ID = strconv.FormatInt(n, 10)
		} else {
			head = append(head, Problem{Field: r.idField, Rule: RuleType})
		}
	default:
		head = append(head, Problem{Field: r.idField, Rule: RuleType})
	}
	ev := 0
	if r.typeAt != nil {
		switch t := st.find(&root, r.typeAt); {
		case t == nil || t.kind == kNull:
			head = append(head, Problem{Field: r.typeField, Rule: RuleRequired})
		case t.kind != kStr:
			head = append(head, Problem{Field: r.typeField, Rule: RuleType})
		default:
			wire := st.p.text(t.val)
			if i, listed := r.byWire[string(wire)]; listed {
				ev, o.WireType, o.Event = i, r.events[i].WireName, &r.events[i]
			} else {
				ev, o.WireType = -1, string(wire)
			}
		}
	}
	if len(head) > 0 {
		return unreadable(o, head)
	}
	if ev < 0 {
		o.Park, o.Reason = true, UnlistedType
		return o
	}
	st.record(r.records[ev], &root)
	if len(st.problems) > 0 {
		return unreadable(o, slices.Clone(st.problems))
	}
	if len(st.out) > MaxEventBytes {
		o.Park, o.Reason = true, TooLarge
		return o
	}
	o.EventJSON = slices.Clone(st.out)
	return o
}

func unreadable(o Outcome, ps []Problem) Outcome {
	slices.SortFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	o.Park, o.Reason, o.Problems = true, Unreadable, slices.Compact(ps)
	return o
}

// record is a value's or event's fields, compiled, sorted bytewise by name:
// the order its canonical JSON writes them.
type record struct {
	id     string
	fields []field
	index  map[string]int
}

type field struct {
	name []byte
	key  []byte // `"name":`
	t    *ftype
}

// ftype is a field's type with its rules, compiled.
type ftype struct {
	kind     ir.Kind
	optional bool
	minLen   int // -1 when none
	maxLen   int // -1 when none
	patterns []*pattern
	email    bool // format: email, or the Email kind
	min, max *bound
	variants map[string]struct{}
	elem     *ftype
	rec      *record
}

type compiler struct {
	p       *ir.Program
	records map[string]*record
}

func (c *compiler) record(id string) (*record, error) {
	if r, ok := c.records[id]; ok {
		return r, nil // compiled, or being compiled: a value that holds itself through a list or map
	}
	src := c.p.RecordByID(id)
	if src == nil {
		return nil, fmt.Errorf("unknown record %q", id)
	}
	r := &record{id: id, index: make(map[string]int, len(src.Fields))}
	c.records[id] = r
	fs := slices.Clone(src.Fields)
	slices.SortFunc(fs, func(a, b ir.Field) int { return strings.Compare(a.Name, b.Name) })
	for i, f := range fs {
		if f.Name == "" {
			return nil, fmt.Errorf("record %s: a field without a name", id)
		}
		if i > 0 && fs[i-1].Name == f.Name {
			return nil, fmt.Errorf("record %s: field %s declared twice", id, f.Name)
		}
		t, err := c.typ(&f.Type)
		if err != nil {
			return nil, fmt.Errorf("record %s field %s: %w", id, f.Name, err)
		}
		r.index[f.Name] = i
		r.fields = append(r.fields, field{
			name: []byte(f.Name),
			key:  append(jsonstring.Append(nil, []byte(f.Name)), ':'),
			t:    t,
		})
	}
	return r, nil
}

func (c *compiler) typ(t *ir.Type) (*ftype, error) {
	ft := &ftype{kind: t.Kind, optional: t.Optional, minLen: -1, maxLen: -1, email: t.Kind == ir.Email}
	switch t.Kind {
	case ir.Text, ir.Int, ir.Decimal, ir.Bool, ir.Uuid, ir.Instant, ir.Email, ir.Url, ir.Duration:
	case ir.Enum:
		if len(t.Variants) == 0 {
			return nil, fmt.Errorf("enum %s without variants", t.Name)
		}
		ft.variants = make(map[string]struct{}, len(t.Variants))
		for _, v := range t.Variants {
			ft.variants[v] = struct{}{}
		}
	case ir.RecordK:
		rec, err := c.record(t.Name)
		if err != nil {
			return nil, err
		}
		ft.rec = rec
	case ir.List, ir.Map:
		if t.Elem == nil {
			return nil, fmt.Errorf("%s without an element type", t.Kind)
		}
		elem, err := c.typ(t.Elem)
		if err != nil {
			return nil, err
		}
		ft.elem = elem
	default:
		return nil, fmt.Errorf("unknown kind %q", t.Kind)
	}
	rs := t.Rules
	if rs == nil {
		return ft, nil
	}
	textual := t.Kind == ir.Text || t.Kind == ir.Email || t.Kind == ir.Url
	numeric := t.Kind == ir.Int || t.Kind == ir.Decimal
	if (rs.Min != nil || rs.Max != nil) && !numeric {
		return nil, fmt.Errorf("min or max on %s", t.Kind)
	}
	if (rs.MinLength != nil || rs.MaxLength != nil) && !textual {
		return nil, fmt.Errorf("min_length or max_length on %s", t.Kind)
	}
	if (len(rs.Patterns) > 0 || rs.Format != "") && t.Kind != ir.Text {
		return nil, fmt.Errorf("pattern or format on %s", t.Kind)
	}
	var ok bool
	if rs.Min != nil {
		if ft.min, ok = newBound(*rs.Min); !ok {
			return nil, fmt.Errorf("min %q is not a number", *rs.Min)
		}
	}
	if rs.Max != nil {
		if ft.max, ok = newBound(*rs.Max); !ok {
			return nil, fmt.Errorf("max %q is not a number", *rs.Max)
		}
	}
	if rs.MinLength != nil {
		if ft.minLen = *rs.MinLength; ft.minLen < 0 {
			return nil, fmt.Errorf("min_length %d", ft.minLen)
		}
	}
	if rs.MaxLength != nil {
		if ft.maxLen = *rs.MaxLength; ft.maxLen < 0 {
			return nil, fmt.Errorf("max_length %d", ft.maxLen)
		}
	}
	for _, p := range rs.Patterns {
		re, err := newPattern(p)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		ft.patterns = append(ft.patterns, re)
	}
	switch rs.Format {
	case "":
	case "email":
		ft.email = true
	default:
		return nil, fmt.Errorf("unknown format %q", rs.Format)
	}
	return ft, nil
}

// state is one Read's working memory, reused through the Reader's pool.
type state struct {
	p        parser
	out      []byte    // the canonical JSON being written
	path     []byte    // the dotted path of the value being read
	slots    []int32   // per record being read: the member index of each field, or -1
	order    []int32   // per map being read: its members in key order
	num      []byte    // digits of the number being compared
	problems []Problem // found so far, at most MaxProblems
}

func (st *state) reset() {
	st.out, st.path, st.slots, st.order, st.num = st.out[:0], st.path[:0], st.slots[:0], st.order[:0], st.num[:0]
	st.problems = st.problems[:0]
	st.p.nodes, st.p.esc = st.p.nodes[:0], st.p.esc[:0]
	st.p.b = nil // the body is the caller's
}

// find follows a dotted path of object members from the root.
func (st *state) find(root *node, path []string) *node {
	n := root
	for _, name := range path {
		if n.kind != kObj {
			return nil
		}
		if n = st.p.member(n, name); n == nil {
			return nil
		}
	}
	return n
}

func (st *state) problem(rule string) {
	if len(st.problems) < MaxProblems {
		st.problems = append(st.problems, Problem{Field: string(st.path), Rule: rule})
	}
}

func (st *state) push(seg []byte) int {
	mark := len(st.path)
	if mark > 0 {
		st.path = append(st.path, '.')
	}
	st.path = append(st.path, seg...)
	return mark
}

func (st *state) pushIndex(i int) int {
	mark := len(st.path)
	if mark > 0 {
		st.path = append(st.path, '.')
	}
	st.path = strconv.AppendInt(st.path, int64(i), 10)
	return mark
}

// pushKey adds a map key to the path, its first maxKeyInPath bytes (cut at a
// character) and "…" when it is longer.
func (st *state) pushKey(key []byte) int {
	if len(key) <= maxKeyInPath {
		return st.push(key)
	}
	cut := maxKeyInPath
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	mark := st.push(key[:cut])
	st.path = append(st.path, "…"...)
	return mark
}

// record reads a record from an object: its declared members in name order,
// every other member left out.
func (st *state) record(r *record, obj *node) {
	base := len(st.slots)
	for range r.fields {
		st.slots = append(st.slots, -1)
	}
	ms := st.p.children(obj)
	for i := range ms {
		key := st.p.text(ms[i].key)
		fi := -1
		if len(r.fields) <= 8 {
			for j := range r.fields {
				if string(r.fields[j].name) == string(key) {
					fi = j
					break
				}
			}
		} else if j, ok := r.index[string(key)]; ok {
			fi = j
		}
		if fi >= 0 {
			st.slots[base+fi] = obj.first + int32(i)
		}
	}
	st.out = append(st.out, '{')
	wrote := false
	for fi := range r.fields {
		f := &r.fields[fi]
		var m *node
		if mi := st.slots[base+fi]; mi >= 0 {
			m = &st.p.nodes[mi]
		}
		if m == nil || m.kind == kNull {
			if !f.t.optional {
				mark := st.push(f.name)
				st.problem(RuleRequired)
				st.path = st.path[:mark]
			}
			continue
		}
		if wrote {
			st.out = append(st.out, ',')
		}
		wrote = true
		st.out = append(st.out, f.key...)
		mark := st.push(f.name)
		st.value(f.t, m)
		st.path = st.path[:mark]
	}
	st.out = append(st.out, '}')
	st.slots = st.slots[:base]
}

// elem reads a list's element or a map's value, which writes null for none.
func (st *state) elem(t *ftype, n *node) {
	if n.kind == kNull {
		if !t.optional {
			st.problem(RuleRequired)
		}
		st.out = append(st.out, "null"...)
		return
	}
	st.value(t, n)
}

// value reads a present, non-null value of type t.
func (st *state) value(t *ftype, n *node) {
	v := st.p.text(n.val)
	switch t.kind {
	case ir.Text, ir.Email, ir.Url:
		if n.kind != kStr {
			st.problem(RuleType)
			return
		}
		st.text(t, v)
		st.out = jsonstring.Append(st.out, v)
	case ir.Uuid:
		if n.kind != kStr {
			st.problem(RuleType)
			return
		}
		if !validUUID(v) {
			st.problem(RuleFormat)
			return
		}
		st.out = append(st.out, '"')
		st.out = appendLower(st.out, v)
		st.out = append(st.out, '"')
	case ir.Int:
		if n.kind != kNum {
			st.problem(RuleType)
			return
		}
		i, num, ok := wholeNumber(v, st.num)
		st.num = num
		if !ok {
			st.problem(RuleType)
			return
		}
		if t.min != nil && st.cmpInt(i, t.min) < 0 {
			st.problem(RuleMin)
		}
		if t.max != nil && st.cmpInt(i, t.max) > 0 {
			st.problem(RuleMax)
		}
		st.out = strconv.AppendInt(st.out, i, 10)
	case ir.Decimal:
		if n.kind != kNum {
			st.problem(RuleType)
			return
		}
		if t.min != nil || t.max != nil {
			var d dec
			d, st.num = parseDec(st.num[:0], v)
			if t.min != nil && cmpDec(d, t.min.d) < 0 {
				st.problem(RuleMin)
			}
			if t.max != nil && cmpDec(d, t.max.d) > 0 {
				st.problem(RuleMax)
			}
		}
		st.out = append(st.out, v...)
	case ir.Bool:
		switch n.kind {
		case kTrue:
			st.out = append(st.out, "true"...)
		case kFalse:
			st.out = append(st.out, "false"...)
		default:
			st.problem(RuleType)
		}
	case ir.Instant:
		if n.kind != kStr {
			st.problem(RuleType)
			return
		}
		st.out = append(st.out, '"')
		var ok bool
		if st.out, ok = appendInstant(st.out, v); !ok {
			st.problem(RuleFormat)
			return
		}
		st.out = append(st.out, '"')
	case ir.Duration:
		if n.kind != kStr {
			st.problem(RuleType)
			return
		}
		if !validDuration(v) {
			st.problem(RuleFormat)
			return
		}
		st.out = append(st.out, '"')
		st.out = append(st.out, v...)
		st.out = append(st.out, '"')
	case ir.Enum:
		if n.kind != kStr {
			st.problem(RuleType)
			return
		}
		if _, ok := t.variants[string(v)]; !ok {
			st.problem(RuleEnum)
			return
		}
		st.out = jsonstring.Append(st.out, v)
	case ir.RecordK:
		if n.kind != kObj {
			st.problem(RuleType)
			return
		}
		st.record(t.rec, n)
	case ir.List:
		if n.kind != kArr {
			st.problem(RuleType)
			return
		}
		st.out = append(st.out, '[')
		for i := range int(n.n) {
			if i > 0 {
				st.out = append(st.out, ',')
			}
			mark := st.pushIndex(i)
			st.elem(t.elem, &st.p.nodes[n.first+int32(i)])
			st.path = st.path[:mark]
		}
		st.out = append(st.out, ']')
	case ir.Map:
		if n.kind != kObj {
			st.problem(RuleType)
			return
		}
		base := len(st.order)
		for i := range n.n {
			st.order = append(st.order, n.first+i)
		}
		p := &st.p
		slices.SortFunc(st.order[base:], func(a, b int32) int {
			return bytes.Compare(p.text(p.nodes[a].key), p.text(p.nodes[b].key))
		})
		st.out = append(st.out, '{')
		for i := range int(n.n) {
			m := &st.p.nodes[st.order[base+i]]
			if i > 0 {
				st.out = append(st.out, ',')
			}
			key := st.p.text(m.key)
			st.out = jsonstring.Append(st.out, key)
			st.out = append(st.out, ':')
			mark := st.pushKey(key)
			st.elem(t.elem, m)
			st.path = st.path[:mark]
		}
		st.out = append(st.out, '}')
		st.order = st.order[:base]
	}
}

// text checks a text's length, patterns and format.
func (st *state) text(t *ftype, s []byte) {
	if t.minLen >= 0 || t.maxLen >= 0 {
		n := utf8.RuneCount(s)
		if t.minLen >= 0 && n < t.minLen {
			st.problem(RuleMinLength)
		}
		if t.maxLen >= 0 && n > t.maxLen {
			st.problem(RuleMaxLength)
		}
	}
	for _, re := range t.patterns {
		if !re.match(s) {
			st.problem(RulePattern)
			break
		}
	}
	if t.email && !validEmail(s) {
		st.problem(RuleFormat)
	}
}

// cmpInt compares an Int value with a bound exactly.
func (st *state) cmpInt(v int64, b *bound) int {
	if b.isInt {
		switch {
		case v < b.i:
			return -1
		case v > b.i:
			return 1
		}
		return 0
	}
	st.num = strconv.AppendInt(st.num[:0], v, 10)
	d, _ := parseDec(nil, st.num)
	return cmpDec(d, b.d)
}
