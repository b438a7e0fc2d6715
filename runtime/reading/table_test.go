package reading

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/runtime/store"
)

// tablePath is the reading table shared with the Worker's reader
// (codegen/workers/test/reading.test.mjs runs the same file): one body per
// case and the outcome both runtimes must give, to the byte.
var tablePath = filepath.Join("testdata", "reading", "table.json") // from the repository's root

// tableBytes is a body or an event's JSON as the table writes it: a text,
// {"hex": "..."} for bytes that are no UTF-8, or a list of texts and
// {"repeat": text, "times": n} so that 64 KB cases stay short.
type tableBytes []byte

func (b *tableBytes) UnmarshalJSON(raw []byte) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*b = []byte(s)
		return nil
	}
	var h struct {
		Hex *string `json:"hex"`
	}
	if json.Unmarshal(raw, &h) == nil && h.Hex != nil {
		v, err := hex.DecodeString(*h.Hex)
		*b = v
		return err
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("a body is a text, {\"hex\": ...} or a list of parts: %s", raw)
	}
	var out []byte
	for _, p := range parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			out = append(out, s...)
			continue
		}
		var r struct {
			Repeat string `json:"repeat"`
			Times  int    `json:"times"`
		}
		if err := json.Unmarshal(p, &r); err != nil || r.Times <= 0 {
			return fmt.Errorf("a part is a text or {\"repeat\": text, \"times\": n}: %s", p)
		}
		out = append(out, strings.Repeat(r.Repeat, r.Times)...)
	}
	*b = out
	return nil
}

type tableOutcome struct {
	Reason   store.Reason `json:"reason"`
	Problems []Problem    `json:"problems"`
	ID       string       `json:"id"`
	WireType string       `json:"wire_type"`
	Event    string       `json:"event"`
	JSON     *tableBytes  `json:"json"`
}

type tableCase struct {
	Name   string        `json:"name"`
	Queue  string        `json:"queue"`
	Body   tableBytes    `json:"body"`
	Kept   *tableOutcome `json:"kept"`
	Parked *tableOutcome `json:"parked"`
}

type readingTable struct {
	About string      `json:"about"`
	Plan  *ir.Program `json:"plan"`
	Cases []tableCase `json:"cases"`
}

func loadTable(t testing.TB) readingTable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(reporoot.Dir(t), tablePath))
	if err != nil {
		t.Fatal(err)
	}
	var tab readingTable
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tab); err != nil {
		t.Fatalf("%s: %v", tablePath, err)
	}
	return tab
}

// TestReadingTable runs the shared table against this reader: for every case
// the same reason, problems, id, type, event and canonical bytes.
func TestReadingTable(t *testing.T) {
	tab := loadTable(t)
	rs := map[string]*Reader{}
	for i := range tab.Plan.Queues {
		r, err := NewReader(tab.Plan, &tab.Plan.Queues[i])
		if err != nil {
			t.Fatal(err)
		}
		rs[tab.Plan.Queues[i].Name] = r
	}
	names := map[string]bool{}
	for _, c := range tab.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if names[c.Name] {
				t.Fatalf("case %q given twice", c.Name)
			}
			names[c.Name] = true
			r := rs[c.Queue]
			if r == nil || (c.Kept == nil) == (c.Parked == nil) {
				t.Fatalf("a case names a queue of the plan and is either kept or parked")
			}
			o := r.Read(c.Body)
			checkInvariants(t, c.Body, o)
			w := want{ID: "", Problems: nil}
			exp := c.Kept
			if c.Parked != nil {
				exp = c.Parked
				w.Park, w.Reason, w.Problems = true, exp.Reason, exp.Problems
			} else if exp.JSON != nil {
				w.JSON = string(*exp.JSON)
			}
			w.ID, w.WireType, w.Event = exp.ID, exp.WireType, exp.Event
			if g := got(o); !reflect.DeepEqual(g, w) {
				t.Errorf("\n got  %+v\n want %+v", g, w)
			}
		})
	}
}

// The table holds a case for every rule a problem names and every reason,
// and the cases the Workers issue asks for by name.
func TestReadingTableCoversEveryRule(t *testing.T) {
	tab := loadTable(t)
	seen := map[string]bool{}
	var bodies [][]byte
	for _, c := range tab.Cases {
		if c.Parked != nil {
			seen["reason "+string(c.Parked.Reason)] = true
			for _, p := range c.Parked.Problems {
				seen["rule "+p.Rule] = true
			}
		} else {
			seen["kept"] = true
		}
		bodies = append(bodies, c.Body)
	}
	for _, r := range []string{RuleJSON, RuleRequired, RuleType, RuleMin, RuleMax, RuleMinLength, RuleMaxLength, RulePattern, RuleFormat, RuleEnum} {
		if !seen["rule "+r] {
			t.Errorf("no case for the rule %s", r)
		}
	}
	for _, r := range []store.Reason{UnlistedType, Unreadable, TooLarge} {
		if !seen["reason "+string(r)] {
			t.Errorf("no case for the reason %s", r)
		}
	}
	has := func(what string, f func(b []byte) bool) {
		if !slices.ContainsFunc(bodies, f) {
			t.Errorf("no case with %s", what)
		}
	}
	has("the id 9007199254740993", func(b []byte) bool { return bytes.Contains(b, []byte(`"return_id":9007199254740993}`)) })
	has("an escaped lone surrogate", func(b []byte) bool { return bytes.Contains(b, []byte(`\ud800`)) })
	has("invalid UTF-8", func(b []byte) bool { return bytes.Contains(b, []byte{0xff}) })
	has("a body of 64 KB and one byte more", func(b []byte) bool { return len(b) == MaxEventBytes+1 })
	has("an event of exactly 64 KB", func(b []byte) bool { return len(b) == MaxEventBytes })
}
