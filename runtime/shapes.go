package runtime

import (
	"fmt"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// shapeOf turns a plan type into the wire's shape. Text-like scalars
// (Uuid, Instant, Email, Url, Duration, enums) travel as text.
func shapeOf(p *ir.Program, t ir.Type, depth int) (wire.Shape, error) {
	if depth > 32 {
		return wire.Shape{}, fmt.Errorf("type nesting deeper than 32")
	}
	s := wire.Shape{Optional: t.Optional}
	switch t.Kind {
	case ir.Int:
		s.Kind = wire.Int
	case ir.Decimal:
		s.Kind = wire.Decimal
	case ir.Bool:
		s.Kind = wire.Bool
	case ir.List, ir.Map:
		s.Kind = wire.List
		if t.Kind == ir.Map {
			s.Kind = wire.Map
		}
		elem, err := shapeOf(p, *t.Elem, depth+1)
		if err != nil {
			return s, err
		}
		s.Elem = &elem
	case ir.RecordK:
		s.Kind = wire.Record
		r := p.RecordByID(t.Name)
		if r == nil {
			return s, fmt.Errorf("the plan has no record %s", t.Name)
		}
		for _, f := range r.Fields {
			fs, err := shapeOf(p, f.Type, depth+1)
			if err != nil {
				return s, err
			}
			s.Fields = append(s.Fields, wire.Field{Name: f.Name, WireName: f.WireName, Shape: fs})
		}
	default:
		s.Kind = wire.Text
	}
	return s, nil
}

// operationOf turns a plan operation into the wire's.
func operationOf(p *ir.Program, o ir.Operation) (wire.Operation, error) {
	w := wire.Operation{Resource: o.Resource, Name: o.Name, RetrySafe: o.RetrySafe, Method: o.Method, Path: o.Path}
	for _, io := range []struct {
		t   *ir.Type
		dst **wire.Shape
	}{{o.Input, &w.Input}, {o.Output, &w.Output}} {
		if io.t == nil {
			continue
		}
		s, err := shapeOf(p, *io.t, 0)
		if err != nil {
			return w, fmt.Errorf("operation %s: %w", o.Ref, err)
		}
		*io.dst = &s
	}
	return w, nil
}
