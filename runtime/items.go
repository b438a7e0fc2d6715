package runtime

import (
	"slices"
	"strings"

	"github.com/jadpo/jadpo/runtime/reading"
)

// RuleAnswer is the problem rule of a message whose item in the provider's
// answer does not fit its shape at the problem's field (a path in the item,
// "" when the item is not an object), or whose handle is empty or not valid
// text. The message is parked with it;
// the rest of its batch is read as usual.
const RuleAnswer = "answer"

// FieldDeliveryCount is the problem field, with RuleAnswer, of a message
// its driver handed over its broker's delivery limit
// (queue.Message.OverDeliveryLimit): the field Redis Streams' driver named
// before the runtime counted such parks apart, so parked rows read as they
// did.
const FieldDeliveryCount = "delivery_count"

// RuleNotFound is the problem rule of a message its driver claimed but found
// no body for (a SQL inbox's row the fetch did not return): it is parked
// unreadable with it, its handle as its id, with what else the driver read
// of it as its body (a SQL inbox's table row).
const RuleNotFound = "row"

// FieldContentType is the problem field of a message whose body came in a
// content type its driver cannot read as JSON text
// (queue.Message.ContentType); the problem's rule is that content type.
const FieldContentType = "content_type"

// parkForAnswer is the outcome of a message whose item did not fit at the
// fields unfit: parked unreadable with a RuleAnswer problem at each and the
// body's own, and what was read of the body (its id, type and event, for
// operators). Retrying it from the parked list reads the body alone.
func parkForAnswer(out reading.Outcome, unfit []string) reading.Outcome {
	ps := make([]reading.Problem, 0, len(unfit))
	for _, f := range unfit {
		ps = append(ps, reading.Problem{Field: f, Rule: RuleAnswer})
	}
	return parkWith(out, ps)
}

// parkWith parks out unreadable with the problems ps besides the body's
// own.
func parkWith(out reading.Outcome, ps []reading.Problem) reading.Outcome {
	ps = append(slices.Clone(out.Problems), ps...)
	slices.SortFunc(ps, func(a, b reading.Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	out.Park, out.Reason, out.Problems, out.EventJSON = true, reading.Unreadable, slices.Compact(ps), nil
	return out
}

// notFound is the outcome of a message its driver found no body for. What
// the driver read of it instead (body: a SQL inbox's table row, "" for
// nothing) is read for its wire type and event only, so that operators see
// the job's kind: the message is parked all the same, never kept.
func notFound(r *reading.Reader, id, body string) reading.Outcome {
	out := reading.Outcome{Park: true, Reason: reading.Unreadable, ID: id, Problems: []reading.Problem{{Field: "", Rule: RuleNotFound}}}
	if body != "" {
		read := r.Read([]byte(body))
		out.WireType, out.Event = read.WireType, read.Event
	}
	return out
}
