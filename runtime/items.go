package runtime

import (
	"crypto/md5"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jadpo/jadpo/providers/wire"
	"github.com/jadpo/jadpo/runtime/reading"
)

// RuleAnswer is the problem rule of a message whose item in the provider's
// answer does not fit its shape at the problem's field (a path in the item:
// "md5_of_body", "receipt_handle"; "" when the item is not an object), or
// whose handle is empty or not valid text. The message is parked with it;
// the rest of its batch is read as usual.
const RuleAnswer = "answer"

// itemFields name the fields of one received item: the body, the handle,
// the provider's own message id (for logs; "" for none) and the body's MD5
// checksum (SQS's MD5OfBody; "" for none).
type itemFields struct {
	body, handle, id, md5 string
}

// itemMessage is the message in hand for one item of a receive's answer: a
// record that fit its shape, or a *wire.Unfit. An unfit item keeps what was
// readable of it (its body, handle and id) and its problems, so it is parked
// on its own, and acknowledged when it has a handle. A body whose MD5 does
// not match is left on the queue: a transfer damaged on the way is sent
// again.
func (r *Runtime) itemMessage(queue string, item any, f itemFields) *message {
	m := &message{}
	var fields map[string]any
	unfit, _ := item.(*wire.Unfit)
	if unfit != nil {
		fields = unfit.Fields
		for _, p := range unfit.Problems {
			m.itemProblems = append(m.itemProblems, reading.Problem{Field: p.Path, Rule: RuleAnswer})
		}
	} else {
		fields, _ = item.(map[string]any)
	}
	text := func(name string) (string, bool) {
		s, ok := fields[name].(string)
		return s, ok && name != ""
	}
	m.wireID, _ = text(f.id)
	body, bodyOK := text(f.body)
	switch {
	case bodyOK:
		m.body = body
	case unfit != nil && unfit.Members[f.body] != nil:
		m.body = string(unfit.Members[f.body]) // the body member's JSON as it came: not text, so unreadable
	case unfit != nil:
		m.body = string(unfit.Raw)
	}
	if h, _ := text(f.handle); h != "" && utf8.ValidString(h) {
		// A handle that is not valid text could not be sent back as it came
		// (a request's JSON holds only valid text). An item that is not an
		// object has its one problem already.
		m.handle = h
	} else if fields != nil && !slices.ContainsFunc(m.itemProblems, func(p reading.Problem) bool { return p.Field == f.handle }) {
		m.itemProblems = append(m.itemProblems, reading.Problem{Field: f.handle, Rule: RuleAnswer})
	}
	slices.SortFunc(m.itemProblems, func(a, b reading.Problem) int { return strings.Compare(a.Field, b.Field) })
	if sum, ok := text(f.md5); ok && bodyOK && !strings.EqualFold(sum, md5Hex(body)) {
		m.leave = true
		r.log.Warn("a received body does not match its MD5OfBody: damaged on the way; it is left on the queue to be sent again",
			"queue", queue, "provider_message_id", m.wireID)
		return m
	}
	if len(m.itemProblems) > 0 {
		paths := make([]string, len(m.itemProblems))
		for i, p := range m.itemProblems {
			paths[i] = p.Field
		}
		r.log.Warn("a received item does not fit its shape; it is parked on its own",
			"queue", queue, "provider_message_id", m.wireID, "fields", strings.Join(paths, ","), "acknowledged", m.handle != "")
	}
	return m
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// parkForAnswer is the outcome of a message whose item did not fit: parked
// unreadable with the item's problems and the body's own, and what was read
// of the body (its id, type and event, for operators). Retrying it from the
// parked list reads the body alone.
func parkForAnswer(out reading.Outcome, problems []reading.Problem) reading.Outcome {
	ps := append(slices.Clone(problems), out.Problems...)
	slices.SortFunc(ps, func(a, b reading.Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	out.Park, out.Reason, out.Problems, out.EventJSON = true, reading.Unreadable, slices.Compact(ps), nil
	return out
}
