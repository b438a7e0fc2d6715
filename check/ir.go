package check

import (
	"sort"

	"github.com/jadpo/jadpo/check/ir"
)

// programParts collects what the checks found good, for the program.
type programParts struct {
	store                *ir.Store
	queues               []ir.Queue
	subscribers          []ir.Subscriber
	receivingConnections map[string]bool
	calledOps            map[string][]*operation
}

// program assembles the typed IR from a clean check.
func (c *checker) program() *ir.Program {
	p := &ir.Program{
		Version: ir.Version, Store: c.out.store,
		Config: []ir.ConfigField{}, Records: []ir.Record{}, Connections: []ir.Connection{},
		Queues: c.out.queues, Subscribers: c.out.subscribers,
	}
	if p.Queues == nil {
		p.Queues = []ir.Queue{}
	}
	if p.Subscribers == nil {
		p.Subscribers = []ir.Subscriber{}
	}
	for _, name := range sortedKeys(c.configs) {
		p.Config = append(p.Config, c.configs[name].ir)
	}
	records := map[string]bool{}
	var walk func(t ir.Type)
	walk = func(t ir.Type) {
		switch t.Kind {
		case ir.List, ir.Map:
			walk(*t.Elem)
		case ir.RecordK:
			if records[t.Name] {
				return
			}
			records[t.Name] = true
			if d := c.recordDecl(t.Name); d != nil {
				for _, f := range d.flds {
					walk(*f.typ)
				}
			}
		}
	}
	for _, q := range p.Queues {
		for _, e := range q.Events {
			walk(ir.Type{Kind: ir.RecordK, Name: e.Event})
		}
	}
	usesSend := map[string]bool{}
	for _, s := range p.Subscribers {
		for _, h := range s.Handlers {
			walk(ir.Type{Kind: ir.RecordK, Name: h.Event})
			for _, st := range h.Steps {
				if st.Operation == "send" {
					usesSend[st.Connection] = true
				}
			}
		}
	}
	for _, name := range sortedKeys(c.connections) {
		cn := c.connections[name]
		conn := cn.ir
		conn.Operations = []ir.Operation{}
		ops := map[string]*operation{}
		if c.out.receivingConnections[name] && cn.pkg.receiving != nil {
			conn.Receiving = cn.pkg.receiving.ir
			calls := []*ir.Call{conn.Receiving.Receive, conn.Receiving.Acknowledge}
			if b := conn.Receiving.AcknowledgeBatch; b != nil {
				calls = append(calls, &b.Call)
			}
			for _, call := range calls {
				if call != nil {
					ops[call.Operation] = cn.pkg.usedOps[call.Operation]
				}
			}
		}
		if usesSend[name] && cn.pkg.emailMapping != nil {
			conn.Email = cn.pkg.emailMapping.ir
			ops[conn.Email.Operation] = cn.pkg.usedOps[conn.Email.Operation]
		}
		for _, o := range c.out.calledOps[name] {
			ops[o.ir.Ref] = o
		}
		for _, ref := range sortedKeys(ops) {
			o := ops[ref]
			if o == nil {
				continue
			}
			conn.Operations = append(conn.Operations, o.ir)
			if o.ir.Input != nil {
				walk(*o.ir.Input)
			}
			if o.ir.Output != nil {
				walk(*o.ir.Output)
			}
		}
		p.Connections = append(p.Connections, conn)
	}
	ids := sortedKeys(records)
	for _, id := range ids {
		d := c.recordDecl(id)
		if d == nil {
			continue
		}
		fields := d.fields()
		if fields == nil {
			fields = []ir.Field{}
		}
		p.Records = append(p.Records, ir.Record{ID: id, Name: d.displayName(), Event: d.kind == kindEvent, Fields: fields})
	}
	sort.Slice(p.Queues, func(i, j int) bool { return p.Queues[i].Name < p.Queues[j].Name })
	sort.Slice(p.Subscribers, func(i, j int) bool { return p.Subscribers[i].Name < p.Subscribers[j].Name })
	return p
}
