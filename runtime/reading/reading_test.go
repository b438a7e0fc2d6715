package reading

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/jsonstring"
	"github.com/jadpo/jadpo/runtime/store"
)

// canary marks values in test bodies: no problem may ever repeat it.
const canary = "CANARY"

type want struct {
	Park     bool
	Reason   store.Reason
	Problems []Problem
	ID       string
	WireType string
	Event    string // the listed event's Name
	JSON     string
}

func got(o Outcome) want {
	w := want{Park: o.Park, Reason: o.Reason, Problems: o.Problems, ID: o.ID, WireType: o.WireType, JSON: string(o.EventJSON)}
	if o.Event != nil {
		w.Event = o.Event.Name
	}
	return w
}

type readCase struct {
	name  string
	queue string
	body  string
	want  want
}

func pr(field, rule string) Problem { return Problem{Field: field, Rule: rule} }

func notJSON() want {
	return want{Park: true, Reason: Unreadable, Problems: []Problem{pr("", RuleJSON)}}
}

// notJSONOneKind is notJSON on a queue of one kind, whose event is known.
func notJSONOneKind() want {
	w := notJSON()
	w.Event = "ReturnRequested"
	return w
}

// kinds is a warehouse message of the AllKinds event holding members.
func kinds(members string) string {
	if members == "" {
		return `{"id":"k","type":"all_kinds"}`
	}
	return `{"id":"k","type":"all_kinds",` + members + `}`
}

func kindsKept(event string) want {
	return want{ID: "k", WireType: "all_kinds", Event: "AllKinds", JSON: event}
}

func kindsBad(ps ...Problem) want {
	return want{Park: true, Reason: Unreadable, Problems: ps, ID: "k", WireType: "all_kinds", Event: "AllKinds"}
}

const shippedBody = `{"id":"m-1","type":"order_shipped","order_id":"A-1",` +
	`"shipped_at":"2024-05-01T10:00:00+02:00","carrier":"dhl",` +
	`"lines":[{"sku":"SKU-1","quantity":2,"colour":"red"},{"sku":"SKU-2","quantity":1000}],` +
	`"note":null,"extra":{"deep":[1,2,{"x":null}]}}`

const shippedEvent = `{"carrier":"dhl","lines":[{"quantity":2,"sku":"SKU-1"},{"quantity":1000,"sku":"SKU-2"}],` +
	`"order_id":"A-1","shipped_at":"2024-05-01T08:00:00Z"}`

func shipped(id string, event string) want {
	return want{ID: id, WireType: "order_shipped", Event: "OrderShipped", JSON: event}
}

func shippedBad(id string, ps ...Problem) want {
	return want{Park: true, Reason: Unreadable, Problems: ps, ID: id, WireType: "order_shipped", Event: "OrderShipped"}
}

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

// seedCases follows the seed's "Parked, never dropped" and "Reading a
// message", sentence by sentence.
var seedCases = []readCase{
	// Reading a message: its body is JSON; its id is the text or whole number at id_at.
	{"kept: the event read from the body's root", "warehouse_queue", shippedBody, shipped("m-1", shippedEvent)},
	{"id: text", "returns_queue", `{"meta":{"return_id":"r-1"},"order_id":"o"}`,
		want{ID: "r-1", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: whole number", "returns_queue", `{"meta":{"return_id":42},"order_id":"o"}`,
		want{ID: "42", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: whole number with an exponent", "returns_queue", `{"meta":{"return_id":4.2e1},"order_id":"o"}`,
		want{ID: "42", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: whole number written with a zero fraction", "returns_queue", `{"meta":{"return_id":42.000},"order_id":"o"}`,
		want{ID: "42", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: negative whole number", "returns_queue", `{"meta":{"return_id":-7},"order_id":"o"}`,
		want{ID: "-7", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: int64's largest", "returns_queue", `{"meta":{"return_id":9223372036854775807},"order_id":"o"}`,
		want{ID: "9223372036854775807", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	{"id: a fraction is no id", "returns_queue", `{"meta":{"return_id":1.5},"order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleType)}, Event: "ReturnRequested"}},
	{"id: past int64", "returns_queue", `{"meta":{"return_id":9223372036854775808},"order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleType)}, Event: "ReturnRequested"}},
	{"id: a huge exponent", "returns_queue", `{"meta":{"return_id":1e999999999999},"order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleType)}, Event: "ReturnRequested"}},
	{"id: a flag is no id", "returns_queue", `{"meta":{"return_id":true},"order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleType)}, Event: "ReturnRequested"}},
	{"id: an object is no id", "warehouse_queue", `{"id":{"v":"CANARY"},"type":"order_shipped"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleType)}, WireType: "order_shipped", Event: "OrderShipped"}},
	// its type the text at type_at, matched against each listed event's wire_name
	{"type: matched against wire_name", "warehouse_queue",
		`{"id":7,"type":"invoice_paid","invoice_id":"0F8FAD5B-D9CB-469F-A165-70867728950E","amount":12.50}`,
		want{ID: "7", WireType: "invoice_paid", Event: "Billing.InvoicePaid",
			JSON: `{"amount":12.50,"invoice_id":"0f8fad5b-d9cb-469f-a165-70867728950e"}`}},
	{"type: matched exactly", "warehouse_queue", `{"id":"m","type":"Order_Shipped"}`,
		want{Park: true, Reason: UnlistedType, ID: "m", WireType: "Order_Shipped"}},
	// a queue of one kind has no type
	{"one kind: no type, and a type member is one more undeclared member", "returns_queue",
		`{"meta":{"return_id":"r-2","sent":"CANARY"},"type":"order_shipped","order_id":"o","reason":"broken"}`,
		want{ID: "r-2", Event: "ReturnRequested", JSON: `{"order_id":"o","reason":"broken"}`}},
	// every member it doesn't declare left out, the queue's own id and type among them
	{"undeclared members left out, id and type among them", "warehouse_queue",
		`{"type":"invoice_paid","amount":1,"id":"i-1","invoice_id":"0f8fad5b-d9cb-469f-a165-70867728950e","CANARY":"x"}`,
		want{ID: "i-1", WireType: "invoice_paid", Event: "Billing.InvoicePaid",
			JSON: `{"amount":1,"invoice_id":"0f8fad5b-d9cb-469f-a165-70867728950e"}`}},
	{"a member the event declares is read even where the id is", "audit_queue", `{"id":"a-1","what":"x","other":1}`,
		want{ID: "a-1", Event: "Audit", JSON: `{"id":"a-1","what":"x"}`}},

	// Parked, never dropped: a message whose type the queue doesn't list (unlisted_type)
	{"unlisted_type", "warehouse_queue", `{"id":"m-4","type":"order_cancelled","order_id":"CANARY"}`,
		want{Park: true, Reason: UnlistedType, ID: "m-4", WireType: "order_cancelled"}},
	{"unlisted_type: empty type", "warehouse_queue", `{"id":"m-4","type":""}`,
		want{Park: true, Reason: UnlistedType, ID: "m-4", WireType: ""}},
	// one that can't be read as its event (unreadable): not JSON
	{"unreadable: not JSON", "warehouse_queue", `not json CANARY`, notJSON()},
	{"unreadable: empty body", "warehouse_queue", ``, notJSON()},
	{"unreadable: cut short", "warehouse_queue", `{"id":"m","type":"order_shipped"`, notJSON()},
	{"unreadable: trailing comma", "warehouse_queue", `{"id":"m","type":"order_shipped",}`, notJSON()},
	{"unreadable: text after the value", "warehouse_queue", `{"id":"m"} {}`, notJSON()},
	{"unreadable: JSON but not an object", "warehouse_queue", `["CANARY"]`, notJSON()},
	{"unreadable: a bare text", "warehouse_queue", `"CANARY"`, notJSON()},
	{"unreadable: a byte order mark", "warehouse_queue", "\xef\xbb\xbf{}", notJSON()},
	{"unreadable: single quotes", "warehouse_queue", `{'id':'m'}`, notJSON()},
	{"unreadable: a leading zero", "warehouse_queue", `{"id":01}`, notJSON()},
	{"unreadable: NaN", "warehouse_queue", `{"id":NaN}`, notJSON()},
	{"unreadable: invalid UTF-8", "warehouse_queue", "{\"id\":\"m\",\"note\":\"\xff\"}", notJSON()},
	{"unreadable: UTF-8 of a surrogate", "warehouse_queue", "{\"id\":\"m\",\"note\":\"\xed\xa0\x80\"}", notJSON()},
	{"unreadable: an escaped lone surrogate", "warehouse_queue", `{"id":"m","note":"\ud800"}`, notJSON()},
	{"unreadable: an escaped lone low surrogate", "warehouse_queue", `{"id":"m","note":"\udc00x"}`, notJSON()},
	{"unreadable: a raw control character", "warehouse_queue", "{\"id\":\"m\",\"note\":\"a\nb\"}", notJSON()},
	{"unreadable: an unknown escape", "warehouse_queue", `{"id":"m","note":"\x41"}`, notJSON()},
	{"unreadable: a member given twice", "warehouse_queue", `{"id":"m","type":"order_shipped","id":"n"}`, notJSON()},
	{"unreadable: a member given twice, once escaped", "warehouse_queue", `{"id":"m","\u0069d":"n"}`, notJSON()},
	{"unreadable: a member given twice in an undeclared member", "returns_queue",
		`{"meta":{"return_id":"r"},"order_id":"o","x":{"a":1,"a":2}}`, notJSONOneKind()},
	{"unreadable: a member given twice in a large object", "returns_queue",
		`{"meta":{"return_id":"r"},"order_id":"o","x":{` + manyMembers(40) + `,"m7":0}}`, notJSONOneKind()},
	{"unreadable: nested past 128", "returns_queue",
		`{"meta":{"return_id":"r"},"order_id":"o","x":` + nested("[", "]", 128) + `}`, notJSONOneKind()},
	{"nested to 128 is read", "returns_queue",
		`{"meta":{"return_id":"r"},"order_id":"o","x":` + nested("[", "]", 127) + `}`,
		want{ID: "r", Event: "ReturnRequested", JSON: `{"order_id":"o"}`}},
	// no id or type where the queue says
	{"unreadable: no id", "warehouse_queue", `{"type":"order_shipped","order_id":"CANARY"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleRequired)}, WireType: "order_shipped", Event: "OrderShipped"}},
	{"unreadable: a null id", "warehouse_queue", `{"id":null,"type":"order_shipped"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleRequired)}, WireType: "order_shipped", Event: "OrderShipped"}},
	{"unreadable: an empty id", "warehouse_queue", `{"id":"","type":"order_shipped"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleRequired)}, WireType: "order_shipped", Event: "OrderShipped"}},
	{"unreadable: no id at a nested id_at", "returns_queue", `{"meta":{"id":"CANARY"},"order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleRequired)}, Event: "ReturnRequested"}},
	{"unreadable: id_at through a text", "returns_queue", `{"meta":"CANARY","order_id":"o"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("meta.return_id", RuleRequired)}, Event: "ReturnRequested"}},
	{"unreadable: no type", "warehouse_queue", `{"id":"m-5","order_id":"CANARY"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("type", RuleRequired)}, ID: "m-5"}},
	{"unreadable: a type that is no text", "warehouse_queue", `{"id":"m-5","type":["CANARY"]}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("type", RuleType)}, ID: "m-5"}},
	{"unreadable: no id and no type", "warehouse_queue", `{"order_id":"CANARY"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleRequired), pr("type", RuleRequired)}}},
	{"unreadable: no id beats an unlisted type", "warehouse_queue", `{"type":"CANARY"}`,
		want{Park: true, Reason: Unreadable, Problems: []Problem{pr("id", RuleRequired)}, WireType: "CANARY"}},
	// a field its event refuses, each problem kept by field and rule, never a value
	{"unreadable: a field its event refuses", "warehouse_queue",
		`{"id":"m-6","type":"order_shipped","order_id":"A","shipped_at":"2024-05-01T10:00:00Z","carrier":"dhl",` +
			`"lines":[{"sku":"A","quantity":0}]}`,
		shippedBad("m-6", pr("lines.0.quantity", RuleMin))},
	{"unreadable: every problem, sorted by field then rule", "warehouse_queue",
		`{"id":"m-2","type":"order_shipped","order_id":"","shipped_at":"CANARY-yesterday","carrier":"CANARY_fedex",` +
			`"lines":[{"sku":"ok-CANARY","quantity":0},{"sku":"A","quantity":1001},{"sku":"B","quantity":2.5},{"quantity":"CANARY"}],` +
			`"note":"` + strings.Repeat(canary, 100) + `"}`,
		shippedBad("m-2",
			pr("carrier", RuleEnum),
			pr("lines.0.quantity", RuleMin),
			pr("lines.0.sku", RulePattern),
			pr("lines.1.quantity", RuleMax),
			pr("lines.2.quantity", RuleType),
			pr("lines.3.quantity", RuleType),
			pr("lines.3.sku", RuleRequired),
			pr("note", RuleMaxLength),
			pr("order_id", RuleMinLength),
			pr("shipped_at", RuleFormat),
		)},
	{"unreadable: every required member missing", "warehouse_queue", `{"id":"m-3","type":"order_shipped"}`,
		shippedBad("m-3", pr("carrier", RuleRequired), pr("lines", RuleRequired), pr("order_id", RuleRequired), pr("shipped_at", RuleRequired))},
	{"unreadable: null for a required member", "warehouse_queue",
		`{"id":"m-7","type":"order_shipped","order_id":null,"shipped_at":"2024-05-01T10:00:00Z","carrier":"dhl","lines":[]}`,
		shippedBad("m-7", pr("order_id", RuleRequired))},
	{"unreadable: wrong JSON kinds", "warehouse_queue",
		`{"id":"m-8","type":"order_shipped","order_id":5,"shipped_at":1714557600,"carrier":0,"lines":{"sku":"CANARY"},"note":false}`,
		shippedBad("m-8", pr("carrier", RuleType), pr("lines", RuleType), pr("note", RuleType), pr("order_id", RuleType), pr("shipped_at", RuleType))},
	{"unreadable: a line that is no object", "warehouse_queue",
		`{"id":"m-9","type":"order_shipped","order_id":"A","shipped_at":"2024-05-01T10:00:00Z","carrier":"dhl","lines":["CANARY",null]}`,
		shippedBad("m-9", pr("lines.0", RuleType), pr("lines.1", RuleRequired))},
}

// kindCases cover every type and rule of docs/reference/language.md, "Types".
var kindCases = []readCase{
	{"optional: missing is none", "", kinds(""), kindsKept(`{}`)},
	{"optional: null is none", "", kinds(`"text":null,"int":null,"tags":null,"address":null`), kindsKept(`{}`)},
	{"members found through escapes", "", kinds(`"\u0074ext":"abc"`), kindsKept(`{"text":"abc"}`)},

	{"text", "", kinds(`"text":"abc"`), kindsKept(`{"text":"abc"}`)},
	{"text: length in code points", "", kinds(`"text":"ééééé"`), kindsKept(`{"text":"ééééé"}`)},
	{"text: not a string", "", kinds(`"text":5`), kindsBad(pr("text", RuleType))},
	{"text: min_length", "", kinds(`"text":"a"`), kindsBad(pr("text", RuleMinLength))},
	{"text: max_length", "", kinds(`"text":"abcdef"`), kindsBad(pr("text", RuleMaxLength))},
	{"text: max_length in code points", "", kinds(`"text":"éééééé"`), kindsBad(pr("text", RuleMaxLength))},
	{"text: pattern matches the whole text", "", kinds(`"text":"abc1"`), kindsBad(pr("text", RulePattern))},
	{"text: every pattern must match", "", kinds(`"text":"aqa"`), kindsBad(pr("text", RulePattern))},
	{"text: several rules at once", "", kinds(`"text":"q"`), kindsBad(pr("text", RuleMinLength), pr("text", RulePattern))},
	{"text: an alternation anchored whole", "", kinds(`"alt":"xb"`), kindsBad(pr("alt", RulePattern))},
	{"text: an alternation anchored whole, both", "", kinds(`"alt":"ab"`), kindsBad(pr("alt", RulePattern))},
	{"text: an alternation", "", kinds(`"alt":"b"`), kindsKept(`{"alt":"b"}`)},
	{"text: format email", "", kinds(`"email_text":"a@example.com"`), kindsKept(`{"email_text":"a@example.com"}`)},
	{"text: format email refused", "", kinds(`"email_text":"CANARY"`), kindsBad(pr("email_text", RuleFormat))},
	{"text: format email takes a bare address", "", kinds(`"email_text":"Bob <a@example.com>"`), kindsBad(pr("email_text", RuleFormat))},
	{"text: escapes written as encoding/json writes them", "",
		kinds(`"tags":["<a&b>","\u2028","\u0001","\"\\\/","\u00e9","\ud83d\ude00","\b\f\n\r\t"]`),
		kindsKept(`{"tags":["<a&b>","\u2028","\u0001","\"\\/","é","😀","\b\f\n\r\t"]}`)},

	{"email", "", kinds(`"email":"a@b.co"`), kindsKept(`{"email":"a@b.co"}`)},
	{"email: validated", "", kinds(`"email":"CANARY"`), kindsBad(pr("email", RuleFormat))},
	{"email: a display name is refused", "", kinds(`"email":"CANARY <a@b.co>"`), kindsBad(pr("email", RuleFormat))},
	{"email: max_length", "", kinds(`"email":"aaaaaaaaaaaaaaaaaaaa@b.co"`), kindsBad(pr("email", RuleMaxLength))},
	{"email: a bidirectional control is refused", "", kinds(`"email":"\u202emoc.live@ann"`), kindsBad(pr("email", RuleFormat))},
	{"email: a C1 control is refused", "", kinds(`"email":"a\u009b@b.co"`), kindsBad(pr("email", RuleFormat))},
	{"email: not a string", "", kinds(`"email":1`), kindsBad(pr("email", RuleType))},

	{"url", "", kinds(`"url":"https://x.y/z"`), kindsKept(`{"url":"https://x.y/z"}`)},
	{"url: min_length", "", kinds(`"url":"http:/"`), kindsBad(pr("url", RuleMinLength))},
	{"url: not a string", "", kinds(`"url":5`), kindsBad(pr("url", RuleType))},

	{"uuid: written in lower case", "", kinds(`"uuid":"0F8FAD5B-D9CB-469F-A165-70867728950E"`), kindsKept(`{"uuid":"0f8fad5b-d9cb-469f-a165-70867728950e"}`)},
	{"uuid: too short", "", kinds(`"uuid":"0f8fad5b-d9cb-469f-a165-70867728950"`), kindsBad(pr("uuid", RuleFormat))},
	{"uuid: no hyphens", "", kinds(`"uuid":"0f8fad5bd9cb469fa16570867728950e0000"`), kindsBad(pr("uuid", RuleFormat))},
	{"uuid: braces", "", kinds(`"uuid":"{0f8fad5b-d9cb-469f-a165-70867728950e}"`), kindsBad(pr("uuid", RuleFormat))},
	{"uuid: not hex", "", kinds(`"uuid":"0f8fad5b-d9cb-469f-a165-70867728950g"`), kindsBad(pr("uuid", RuleFormat))},
	{"uuid: not a string", "", kinds(`"uuid":1`), kindsBad(pr("uuid", RuleType))},

	{"int", "", kinds(`"int":5`), kindsKept(`{"int":5}`)},
	{"int: a zero fraction", "", kinds(`"int":5.000`), kindsKept(`{"int":5}`)},
	{"int: an exponent", "", kinds(`"int":1e2`), kindsKept(`{"int":100}`)},
	{"int: a negative exponent, whole", "", kinds(`"int":12300e-2`), kindsKept(`{"int":123}`)},
	{"int: minus zero", "", kinds(`"int":-0`), kindsKept(`{"int":0}`)},
	{"int: at min", "", kinds(`"int":-5`), kindsKept(`{"int":-5}`)},
	{"int: at max", "", kinds(`"int":1000`), kindsKept(`{"int":1000}`)},
	{"int: min", "", kinds(`"int":-6`), kindsBad(pr("int", RuleMin))},
	{"int: max", "", kinds(`"int":1001`), kindsBad(pr("int", RuleMax))},
	{"int: max with an exponent", "", kinds(`"int":1.001e3`), kindsBad(pr("int", RuleMax))},
	{"int: a fraction", "", kinds(`"int":1.5`), kindsBad(pr("int", RuleType))},
	{"int: a tiny fraction", "", kinds(`"int":1e-400`), kindsBad(pr("int", RuleType))},
	{"int: text", "", kinds(`"int":"5"`), kindsBad(pr("int", RuleType))},
	{"int: int64's largest", "", kinds(`"big":9223372036854775807`), kindsKept(`{"big":9223372036854775807}`)},
	{"int: int64's smallest", "", kinds(`"big":-9223372036854775808`), kindsKept(`{"big":-9223372036854775808}`)},
	{"int: past int64", "", kinds(`"big":9223372036854775808`), kindsBad(pr("big", RuleType))},
	{"int: below int64", "", kinds(`"big":-9223372036854775809`), kindsBad(pr("big", RuleType))},
	{"int: far past int64", "", kinds(`"big":100000000000000000000000`), kindsBad(pr("big", RuleType))},
	{"int: past int64 with an exponent", "", kinds(`"big":1e19`), kindsBad(pr("big", RuleType))},
	{"int: a huge exponent", "", kinds(`"big":1e400`), kindsBad(pr("big", RuleType))},
	{"int: never through float64", "", kinds(`"big":9007199254740993`), kindsKept(`{"big":9007199254740993}`)},

	{"decimal: exact text kept", "", kinds(`"decimal":12.50`), kindsKept(`{"decimal":12.50}`)},
	{"decimal: an exponent kept as written", "", kinds(`"decimal":1E+2`), kindsKept(`{"decimal":1E+2}`)},
	{"decimal: at max", "", kinds(`"decimal":1000000.00`), kindsKept(`{"decimal":1000000.00}`)},
	{"decimal: at min", "", kinds(`"decimal":-0.5`), kindsKept(`{"decimal":-0.5}`)},
	{"decimal: just over max", "", kinds(`"decimal":1000000.000000000000000000001`), kindsBad(pr("decimal", RuleMax))},
	{"decimal: just under min", "", kinds(`"decimal":-0.50000000000000000001`), kindsBad(pr("decimal", RuleMin))},
	{"decimal: a huge exponent", "", kinds(`"decimal":1e999999999999999`), kindsBad(pr("decimal", RuleMax))},
	{"decimal: a huge negative exponent", "", kinds(`"decimal":-1e-999999999999999`), kindsKept(`{"decimal":-1e-999999999999999}`)},
	{"decimal: text", "", kinds(`"decimal":"1.5"`), kindsBad(pr("decimal", RuleType))},

	{"bool: true", "", kinds(`"flag":true`), kindsKept(`{"flag":true}`)},
	{"bool: false", "", kinds(`"flag":false`), kindsKept(`{"flag":false}`)},
	{"bool: text", "", kinds(`"flag":"true"`), kindsBad(pr("flag", RuleType))},
	{"bool: a number", "", kinds(`"flag":1`), kindsBad(pr("flag", RuleType))},

	{"instant: in UTC", "", kinds(`"at":"2024-05-01T10:00:00+02:00"`), kindsKept(`{"at":"2024-05-01T08:00:00Z"}`)},
	{"instant: lower case t and z, fraction kept", "", kinds(`"at":"2024-05-01t10:00:00.120z"`), kindsKept(`{"at":"2024-05-01T10:00:00.12Z"}`)},
	{"instant: a zero fraction dropped", "", kinds(`"at":"2024-05-01T10:00:00.000Z"`), kindsKept(`{"at":"2024-05-01T10:00:00Z"}`)},
	{"instant: nanoseconds", "", kinds(`"at":"2024-05-01T10:00:00.123456789-00:30"`), kindsKept(`{"at":"2024-05-01T10:30:00.123456789Z"}`)},
	{"instant: across a day", "", kinds(`"at":"2024-01-01T00:30:00+01:00"`), kindsKept(`{"at":"2023-12-31T23:30:00Z"}`)},
	{"instant: a space", "", kinds(`"at":"2024-05-01 10:00:00Z"`), kindsBad(pr("at", RuleFormat))},
	{"instant: no offset", "", kinds(`"at":"2024-05-01T10:00:00"`), kindsBad(pr("at", RuleFormat))},
	{"instant: no such day", "", kinds(`"at":"2024-02-30T10:00:00Z"`), kindsBad(pr("at", RuleFormat))},
	{"instant: hour 24", "", kinds(`"at":"2024-05-01T24:00:00Z"`), kindsBad(pr("at", RuleFormat))},
	{"instant: a comma", "", kinds(`"at":"2024-05-01T10:00:00,5Z"`), kindsBad(pr("at", RuleFormat))},
	{"instant: ten fractional digits", "", kinds(`"at":"2024-05-01T10:00:00.1234567891Z"`), kindsBad(pr("at", RuleFormat))},
	{"instant: an offset of 24 hours", "", kinds(`"at":"2024-05-01T10:00:00+24:00"`), kindsBad(pr("at", RuleFormat))},
	{"instant: a year before 0000 in UTC", "", kinds(`"at":"0000-01-01T00:00:00+01:00"`), kindsBad(pr("at", RuleFormat))},
	{"instant: a date alone", "", kinds(`"at":"2024-05-01"`), kindsBad(pr("at", RuleFormat))},
	{"instant: a number", "", kinds(`"at":1714557600`), kindsBad(pr("at", RuleType))},

	{"duration: seconds", "", kinds(`"wait":"30s"`), kindsKept(`{"wait":"30s"}`)},
	{"duration: minutes", "", kinds(`"wait":"10m"`), kindsKept(`{"wait":"10m"}`)},
	{"duration: hours", "", kinds(`"wait":"1h"`), kindsKept(`{"wait":"1h"}`)},
	{"duration: days", "", kinds(`"wait":"30d"`), kindsKept(`{"wait":"30d"}`)},
	{"duration: milliseconds", "", kinds(`"wait":"250ms"`), kindsKept(`{"wait":"250ms"}`)},
	{"duration: zero", "", kinds(`"wait":"0s"`), kindsKept(`{"wait":"0s"}`)},
	{"duration: the longest", "", kinds(`"wait":"106751d"`), kindsKept(`{"wait":"106751d"}`)},
	{"duration: too long", "", kinds(`"wait":"106752d"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: a fraction", "", kinds(`"wait":"1.5h"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: negative", "", kinds(`"wait":"-1s"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: two units", "", kinds(`"wait":"1h30m"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: no unit", "", kinds(`"wait":"30"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: an unknown unit", "", kinds(`"wait":"30us"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: a leading zero", "", kinds(`"wait":"030s"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: a space", "", kinds(`"wait":"30 s"`), kindsBad(pr("wait", RuleFormat))},
	{"duration: a number", "", kinds(`"wait":30`), kindsBad(pr("wait", RuleType))},

	{"enum", "", kinds(`"carrier":"royal_mail"`), kindsKept(`{"carrier":"royal_mail"}`)},
	{"enum: an unknown variant", "", kinds(`"carrier":"CANARY"`), kindsBad(pr("carrier", RuleEnum))},
	{"enum: case matters", "", kinds(`"carrier":"DHL"`), kindsBad(pr("carrier", RuleEnum))},
	{"enum: not a string", "", kinds(`"carrier":1`), kindsBad(pr("carrier", RuleType))},

	{"list", "", kinds(`"tags":["b","a"]`), kindsKept(`{"tags":["b","a"]}`)},
	{"list: empty", "", kinds(`"tags":[]`), kindsKept(`{"tags":[]}`)},
	{"list: not an array", "", kinds(`"tags":"CANARY"`), kindsBad(pr("tags", RuleType))},
	{"list: an element refused", "", kinds(`"tags":["a",1,"b",{}]`), kindsBad(pr("tags.1", RuleType), pr("tags.3", RuleType))},
	{"list: a null element", "", kinds(`"tags":["a",null]`), kindsBad(pr("tags.1", RuleRequired))},
	{"list: optional elements", "", kinds(`"maybes":[1,null,3.0]`), kindsKept(`{"maybes":[1,null,3]}`)},

	{"map: keys sorted", "", kinds(`"counts":{"b":2,"a":1,"é":3,"z":4}`), kindsKept(`{"counts":{"a":1,"b":2,"z":4,"é":3}}`)},
	{"map: empty", "", kinds(`"counts":{}`), kindsKept(`{"counts":{}}`)},
	{"map: keys escaped on the way out", "", kinds(`"counts":{"a\"b":1,"\u2028":2}`), kindsKept(`{"counts":{"a\"b":1,"\u2028":2}}`)},
	{"map: a value refused, by its key", "", kinds(`"counts":{"ok":1,"low":-1,"no":null,"t":"CANARY"}`),
		kindsBad(pr("counts.low", RuleMin), pr("counts.no", RuleRequired), pr("counts.t", RuleType))},
	{"map: not an object", "", kinds(`"counts":[1]`), kindsBad(pr("counts", RuleType))},
	{"map: a long key cut in the path", "", kinds(`"counts":{"` + strings.Repeat("k", 300) + `":-1}`),
		kindsBad(pr("counts."+strings.Repeat("k", maxKeyInPath)+"…", RuleMin))},

	{"value: nested, undeclared members left out", "", kinds(`"address":{"zip":null,"city":"Paris","extra":"CANARY"}`), kindsKept(`{"address":{"city":"Paris"}}`)},
	{"value: a member missing", "", kinds(`"address":{"zip":"CANARY"}`), kindsBad(pr("address.city", RuleRequired))},
	{"value: a rule", "", kinds(`"address":{"city":""}`), kindsBad(pr("address.city", RuleMinLength))},
	{"value: not an object", "", kinds(`"address":"CANARY"`), kindsBad(pr("address", RuleType))},
	{"value: holding itself", "", kinds(`"tree":{"name":"a","children":[{"name":"b","children":[{"name":"c","x":1}]}]}`),
		kindsKept(`{"tree":{"children":[{"children":[{"name":"c"}],"name":"b"}],"name":"a"}}`)},
	{"value: holding itself, a problem deep down", "", kinds(`"tree":{"name":"a","children":[{"name":"b","children":[{"CANARY":1}]}]}`),
		kindsBad(pr("tree.children.0.children.0.name", RuleRequired))},

	{"everything at once, sorted", "",
		kinds(`"wait":"CANARY","uuid":"CANARY","url":1,"tree":2,"text":"CANARY","tags":3,"maybes":[4.5],"int":"CANARY","flag":null,` +
			`"email_text":"CANARY","email":"CANARY","decimal":"CANARY","counts":{"x":-1},"carrier":"CANARY","big":1.5,"at":"CANARY","alt":"CANARY","address":[]`),
		kindsBad(pr("address", RuleType), pr("alt", RulePattern), pr("at", RuleFormat), pr("big", RuleType), pr("carrier", RuleEnum),
			pr("counts.x", RuleMin), pr("decimal", RuleType), pr("email", RuleFormat), pr("email_text", RuleFormat),
			pr("int", RuleType), pr("maybes.0", RuleType), pr("tags", RuleType), pr("text", RuleMaxLength), pr("text", RulePattern),
			pr("tree", RuleType), pr("url", RuleType), pr("uuid", RuleFormat), pr("wait", RuleFormat))},
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":%d`, i, i)
	}
	return b.String()
}

func allCases() []readCase {
	out := slices.Clone(seedCases)
	for _, c := range kindCases {
		c.queue = "warehouse_queue"
		out = append(out, c)
	}
	return out
}

func TestRead(t *testing.T) {
	rs := readers(t)
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			o := rs[c.queue].Read([]byte(c.body))
			if g := got(o); !reflect.DeepEqual(g, c.want) {
				t.Errorf("body %s\n got  %+v\n want %+v", c.body, g, c.want)
			}
			checkInvariants(t, []byte(c.body), o)
		})
	}
}

// checkInvariants holds for every body: an event or a reason, never both;
// the event valid JSON within MaxEventBytes; problems only when unreadable,
// sorted, without repeats, never a value from the body.
func checkInvariants(t testing.TB, body []byte, o Outcome) {
	t.Helper()
	if o.Park == (o.EventJSON != nil) {
		t.Fatalf("Park %v with EventJSON %q", o.Park, o.EventJSON)
	}
	if o.Park {
		switch o.Reason {
		case UnlistedType, TooLarge:
			if len(o.Problems) != 0 {
				t.Fatalf("%s with problems %v", o.Reason, o.Problems)
			}
		case Unreadable:
			if len(o.Problems) == 0 || len(o.Problems) > MaxProblems {
				t.Fatalf("unreadable with %d problems", len(o.Problems))
			}
		default:
			t.Fatalf("reason %q", o.Reason)
		}
		if o.Reason == UnlistedType && o.Event != nil {
			t.Fatalf("unlisted type matched %v", o.Event)
		}
	} else {
		if o.Reason != "" || o.Problems != nil || o.Event == nil || o.ID == "" {
			t.Fatalf("kept with reason %q problems %v event %v id %q", o.Reason, o.Problems, o.Event, o.ID)
		}
		if !json.Valid(o.EventJSON) || len(o.EventJSON) > MaxEventBytes {
			t.Fatalf("event JSON invalid or too large (%d bytes)", len(o.EventJSON))
		}
		if !json.Valid(body) {
			t.Fatalf("kept a body encoding/json refuses")
		}
		// canonical: encoding/json reads it back to the same bytes
		var v any
		d := json.NewDecoder(bytes.NewReader(o.EventJSON))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		if again := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(again, o.EventJSON) {
			t.Fatalf("event JSON not canonical:\n%s\n%s", o.EventJSON, again)
		}
	}
	rules := []string{RuleJSON, RuleRequired, RuleType, RuleMin, RuleMax, RuleMinLength, RuleMaxLength, RulePattern, RuleFormat, RuleEnum}
	for i, p := range o.Problems {
		if !slices.Contains(rules, p.Rule) {
			t.Fatalf("rule %q", p.Rule)
		}
		if strings.Contains(p.Field, canary) || strings.Contains(p.Rule, canary) {
			t.Fatalf("problem %v repeats a value", p)
		}
		if i > 0 {
			q := o.Problems[i-1]
			if q.Field > p.Field || q.Field == p.Field && q.Rule >= p.Rule {
				t.Fatalf("problems not sorted or repeated: %v", o.Problems)
			}
		}
	}
}

func TestProblemsJSON(t *testing.T) {
	b, err := json.Marshal([]Problem{pr("lines.2.quantity", RuleMin)})
	if err != nil || string(b) != `[{"field":"lines.2.quantity","rule":"min"}]` {
		t.Fatalf("%s %v", b, err)
	}
}

// linesBody is an OrderShipped message with n lines and a note of the given
// length.
func linesBody(n, note int) string {
	var b strings.Builder
	b.WriteString(`{"id":"big","type":"order_shipped","order_id":"A-1","shipped_at":"2024-05-01T10:00:00Z","carrier":"ups","lines":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%06d","quantity":%d}`, i, i%1000+1)
	}
	b.WriteString(`]`)
	if note > 0 {
		b.WriteString(`,"note":"` + strings.Repeat("n", note) + `"`)
	}
	b.WriteString(`}`)
	return b.String()
}

// TestTooLarge: one over 64 KB as its event is parked too_large; the
// canonical event is measured, to the byte, not the body.
func TestTooLarge(t *testing.T) {
	r := readers(t)["warehouse_queue"]
	// find a line count whose event is a note's length under the limit
	lines := 1750
	var base int
	for {
		o := r.Read([]byte(linesBody(lines, 0)))
		if o.Park {
			t.Fatalf("%d lines: %+v", lines, o)
		}
		base = len(o.EventJSON)
		if MaxEventBytes-base <= 400 {
			break
		}
		lines++
	}
	note := MaxEventBytes - base - len(`,"note":""`)
	o := r.Read([]byte(linesBody(lines, note)))
	if o.Park || len(o.EventJSON) != MaxEventBytes {
		t.Fatalf("at the limit: park %v reason %s, %d bytes", o.Park, o.Reason, len(o.EventJSON))
	}
	o = r.Read([]byte(linesBody(lines, note+1)))
	if g := got(o); !reflect.DeepEqual(g, want{Park: true, Reason: TooLarge, ID: "big", WireType: "order_shipped", Event: "OrderShipped"}) {
		t.Fatalf("one byte over: %+v", g)
	}
	checkInvariants(t, []byte(linesBody(lines, note+1)), o)

	// a large body whose event is small is kept
	body := `{"id":"b","type":"order_shipped","padding":"` + strings.Repeat("p", 200_000) + `",` + shippedBody[len(`{"id":"m-1","type":"order_shipped",`):]
	if o := r.Read([]byte(body)); o.Park || string(o.EventJSON) != shippedEvent {
		t.Fatalf("large body, small event: %+v", got(o))
	}

	// a body under 64 KB whose event is over it: U+2028 takes 3 bytes in the
	// body and 6 in the event
	body = `{"id":"s","type":"invoice_paid","invoice_id":"0f8fad5b-d9cb-469f-a165-70867728950e","amount":1,` +
		`"attributes":{"a":"` + strings.Repeat("\u2028", 12000) + `"}}`
	if len(body) >= MaxEventBytes {
		t.Fatalf("body %d bytes", len(body))
	}
	if g := got(r.Read([]byte(body))); !reflect.DeepEqual(g, want{Park: true, Reason: TooLarge, ID: "s", WireType: "invoice_paid", Event: "Billing.InvoicePaid"}) {
		t.Fatalf("small body, large event: %+v", g)
	}

	// problems come before size: an over-large event with a problem is unreadable
	o = r.Read([]byte(strings.Replace(linesBody(3000, 0), `"carrier":"ups"`, `"carrier":"CANARY"`, 1)))
	if g := got(o); !reflect.DeepEqual(g, shippedBad("big", pr("carrier", RuleEnum))) {
		t.Fatalf("large and refused: %+v", g)
	}
}

func TestProblemsCapped(t *testing.T) {
	r := readers(t)["warehouse_queue"]
	tags := strings.TrimSuffix(strings.Repeat(`1,`, 500), ",")
	o := r.Read([]byte(kinds(`"tags":[` + tags + `]`)))
	if !o.Park || o.Reason != Unreadable || len(o.Problems) != MaxProblems {
		t.Fatalf("park %v %s, %d problems", o.Park, o.Reason, len(o.Problems))
	}
	checkInvariants(t, nil, o)
}

// TestStringsAsEncodingJSON writes texts as encoding/json does with
// SetEscapeHTML(false).
func TestStringsAsEncodingJSON(t *testing.T) {
	var all []byte
	for c := range 0x80 {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", string(all), "é😀\u2028\u2029\u2027", "<>&'", "\x7f", "a\x00b"} {
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		if g, w := string(jsonstring.Append(nil, []byte(s))), strings.TrimSuffix(buf.String(), "\n"); g != w {
			t.Errorf("%q: got %s want %s", s, g, w)
		}
	}
}

func TestDecimalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0", "-0", 0}, {"0.0", "0e5", 0}, {"1", "1.0", 0}, {"1e2", "100", 0}, {"100", "1e2", 0},
		{"1", "2", -1}, {"-1", "-2", 1}, {"0.1", "0.09", 1}, {"-0.1", "-0.09", -1},
		{"1e400", "9e399", 1}, {"1e-400", "0", 1}, {"-1e-400", "0", -1},
		{"123.45", "123.450001", -1}, {"12", "123", -1}, {"1000000.00", "1000000.000000000000000000001", -1},
		{"1e999999999999999999999", "1e999999999999999999998", 0}, // both saturate: past any body's digits
	} {
		a, _ := parseDec(nil, []byte(c.a))
		b, _ := parseDec(nil, []byte(c.b))
		if g := cmpDec(a, b); g != c.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", c.a, c.b, g, c.want)
		}
	}
}

func TestNewReaderRefusesAnInconsistentPlan(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(p *ir.Program, q *ir.Queue)
		want   string
	}{
		{"unknown record", func(p *ir.Program, q *ir.Queue) { q.Events[0].Event = "nowhere.Gone" }, `unknown record "nowhere.Gone"`},
		{"unknown nested record", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderShipped").Fields[3].Type.Elem.Name = "nowhere.Line"
		}, `unknown record "nowhere.Line"`},
		{"not an event", func(p *ir.Program, q *ir.Queue) { q.Events[0].Event = "stock/events.OrderLine" }, "is not an event"},
		{"no wire_name", func(p *ir.Program, q *ir.Queue) { q.Events[1].WireName = "" }, "has no wire_name"},
		{"wire_name twice", func(p *ir.Program, q *ir.Queue) { q.Events[1].WireName = "order_shipped" }, "given twice"},
		{"several events without type_at", func(p *ir.Program, q *ir.Queue) { q.TypeAt = nil }, "without type_at"},
		{"no events", func(p *ir.Program, q *ir.Queue) { q.Events = nil }, "lists no event"},
		{"no id_at", func(p *ir.Program, q *ir.Queue) { q.IDAt = nil }, "empty id_at"},
		{"an empty type_at element", func(p *ir.Program, q *ir.Queue) { q.TypeAt = []string{""} }, "empty type_at"},
		{"a pattern that does not compile", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderLine").Fields[0].Type.Rules.Patterns = []string{"(["}
		}, "pattern"},
		{"a pattern that only compiles once wrapped", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderLine").Fields[0].Type.Rules.Patterns = []string{"A)|(B"}
		}, "pattern"},
		{"min on text", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderLine").Fields[0].Type.Rules.Min = sp("1")
		}, "min or max on text"},
		{"a bound that is no number", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderLine").Fields[1].Type.Rules.Max = sp("lots")
		}, "not a number"},
		{"an unknown format", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderLine").Fields[0].Type.Rules.Format = "phone"
		}, "unknown format"},
		{"an enum without variants", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderShipped").Fields[2].Type.Variants = nil
		}, "without variants"},
		{"a list without its element", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderShipped").Fields[3].Type.Elem = nil
		}, "without an element type"},
		{"an unknown kind", func(p *ir.Program, q *ir.Queue) {
			p.RecordByID("stock/events.OrderShipped").Fields[0].Type.Kind = "money"
		}, `unknown kind "money"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := program()
			q := &p.Queues[2]
			c.change(p, q)
			_, err := NewReader(p, q)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestConcurrentReads shares one Reader between goroutines (run with -race).
func TestConcurrentReads(t *testing.T) {
	r := readers(t)["warehouse_queue"]
	cases := allCases()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				c := cases[(i+g*7)%len(cases)]
				if c.queue != "warehouse_queue" {
					continue
				}
				if g := got(r.Read([]byte(c.body))); !reflect.DeepEqual(g, c.want) {
					t.Errorf("%s: %+v", c.name, g)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestOutcomeOwnsItsBytes: nothing in an outcome aliases the body or the
// reader's reused memory.
func TestOutcomeOwnsItsBytes(t *testing.T) {
	r := readers(t)["warehouse_queue"]
	body := []byte(shippedBody)
	o := r.Read(body)
	for i := range body {
		body[i] = 'x'
	}
	r.Read([]byte(kinds(`"tags":["zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"]`)))
	if string(o.EventJSON) != shippedEvent || o.ID != "m-1" || o.WireType != "order_shipped" {
		t.Fatalf("%+v", got(o))
	}
}
