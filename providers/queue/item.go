package queue

import (
	"crypto/md5"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jadpo/jadpo/providers/wire"
)

// ItemFields name the fields of one item of a receive's answer: the body,
// the handle, the provider's own message id (for logs; "" for none) and
// the body's MD5 checksum (SQS's MD5OfBody; "" for none).
type ItemFields struct {
	Body, Handle, ID, MD5 string
}

// FromItem is the message for one item of a receive's answer: a record
// that fit its shape, or a *wire.Unfit. An unfit item keeps what was
// readable of it (its body, handle and id) and lists its fields that did
// not fit, so it is parked on its own, and acknowledged when it has a
// handle. A body whose MD5 does not match is Damaged: a transfer damaged on
// the way is sent again. log says both, with the queue's name.
func FromItem(log *slog.Logger, queue string, item any, f ItemFields) Message {
	var m Message
	var fields map[string]any
	unfit, _ := item.(*wire.Unfit)
	if unfit != nil {
		fields = unfit.Fields
		for _, p := range unfit.Problems {
			m.Unfit = append(m.Unfit, p.Path)
		}
	} else {
		fields, _ = item.(map[string]any)
	}
	text := func(name string) (string, bool) {
		s, ok := fields[name].(string)
		return s, ok && name != ""
	}
	m.WireID, _ = text(f.ID)
	body, bodyOK := text(f.Body)
	switch {
	case bodyOK:
		m.Body = body
	case unfit != nil && unfit.Members[f.Body] != nil:
		m.Body = string(unfit.Members[f.Body]) // the body member's JSON as it came: not text, so unreadable
	case unfit != nil:
		m.Body = string(unfit.Raw)
	}
	if h, _ := text(f.Handle); h != "" && utf8.ValidString(h) {
		// A handle that is not valid text could not be sent back as it came
		// (a request's JSON holds only valid text). An item that is not an
		// object has its one problem already.
		m.Handle = h
	} else if fields != nil && !slices.Contains(m.Unfit, f.Handle) {
		m.Unfit = append(m.Unfit, f.Handle)
	}
	slices.Sort(m.Unfit)
	if sum, ok := text(f.MD5); ok && bodyOK && !strings.EqualFold(sum, md5Hex(body)) {
		m.Damaged = true
		log.Warn("a received body does not match its MD5OfBody: damaged on the way; it is left on the queue to be sent again",
			"queue", queue, "provider_message_id", m.WireID)
		return m
	}
	if len(m.Unfit) > 0 {
		log.Warn("a received item does not fit its shape; it is parked on its own",
			"queue", queue, "provider_message_id", m.WireID, "fields", strings.Join(m.Unfit, ","), "acknowledged", m.Handle != "")
	}
	return m
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
