package reading

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jadpo/jadpo/internal/jsonstring"
)

var fuzzQueues = []string{"audit_queue", "returns_queue", "warehouse_queue"}

// FuzzRead reads any body on each queue and checks what holds for every
// body: see checkInvariants; a body encoding/json refuses is unreadable as
// "json"; a problem's field starts at the id, the type or a declared field;
// and an event's canonical JSON, read again as a message, gives itself.
func FuzzRead(f *testing.F) {
	for _, c := range allCases() {
		f.Add(uint8(slices.Index(fuzzQueues, c.queue)), []byte(c.body))
	}
	f.Add(uint8(2), typicalBody())
	f.Add(uint8(2), []byte(linesBody(30, 20)))
	rs := readers(f)
	f.Fuzz(func(t *testing.T, qi uint8, body []byte) {
		queue := fuzzQueues[int(qi)%len(fuzzQueues)]
		r := rs[queue]
		o := r.Read(body)
		checkInvariants(t, body, o)
		if !json.Valid(body) && !(o.Reason == Unreadable && len(o.Problems) == 1 && o.Problems[0] == Problem{Field: "", Rule: RuleJSON}) {
			t.Fatalf("encoding/json refuses the body, we read %+v", got(o))
		}
		for _, pb := range o.Problems {
			if pb.Field == "" || pb.Field == r.idField || pb.Field == r.typeField {
				continue
			}
			head, _, _ := strings.Cut(pb.Field, ".")
			declared := false
			for i := range r.records {
				declared = declared || slices.ContainsFunc(r.records[i].fields, func(f field) bool { return string(f.name) == head })
			}
			if !declared {
				t.Fatalf("problem %v names no declared field", pb)
			}
		}
		if o.Park {
			return
		}
		// the canonical event is a fixed point
		var again []byte
		rest := o.EventJSON[1:]
		if len(rest) > 1 {
			rest = append([]byte{','}, rest...)
		}
		switch queue {
		case "audit_queue":
			again = o.EventJSON
		case "returns_queue":
			again = append([]byte(`{"meta":{"return_id":"x"}`), rest...)
		default:
			again = append([]byte(`{"id":"x","type":`+string(jsonstring.Append(nil, []byte(o.Event.WireName)))), rest...)
		}
		o2 := r.Read(again)
		if o2.Park || !bytes.Equal(o2.EventJSON, o.EventJSON) {
			t.Fatalf("read again:\n%s\n%s\n%+v", o.EventJSON, again, got(o2))
		}
	})
}

// FuzzPattern checks the character-class fast path against the regexp
// engine, for any pattern and any valid text.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"[A-Z0-9-]+", `\d*`, "[^ ]+", "(?i)[a-z]+", ".+", "(?s).*", `[\p{L}]+`, "[a-zé]+", "[^q]*", "a+", "[ab]{2}"} {
		f.Add(s, "ABC-123")
		f.Add(s, "")
		f.Add(s, "é\nq Ǳ ſK")
	}
	f.Fuzz(func(t *testing.T, src, text string) {
		if !utf8.ValidString(text) || len(src) > 64 || len(text) > 256 {
			return // plans' patterns are short; long ones only slow the search
		}
		p, err := newPattern(src)
		if err != nil {
			return
		}
		if g, w := p.match([]byte(text)), p.re.MatchString(text); g != w {
			t.Fatalf("pattern %q text %q: fast %v regexp %v", src, text, g, w)
		}
	})
}
