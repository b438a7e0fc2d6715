package queue_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/wire"
)

var sqsFields = queue.ItemFields{Body: "body", Handle: "receipt_handle", ID: "message_id", MD5: "md5_of_body"}

func TestFromItem(t *testing.T) {
	const body = `{"id":"m-1"}`
	const bodyMD5 = "5f5ea7e2c1d5c8d7d9a0b5e0b0b0b0b0" // not body's: Damaged
	cases := []struct {
		name        string
		item        any
		want        queue.Message
		wantWarning string
	}{
		{"a record that fits", map[string]any{"body": body, "receipt_handle": "h-1", "message_id": "w-1"},
			queue.Message{Body: body, Handle: "h-1", WireID: "w-1"}, ""},
		{"its checksum matches, in any case", map[string]any{"body": "hello", "receipt_handle": "h", "md5_of_body": "5D41402ABC4B2A76B9719D911017C592"},
			queue.Message{Body: "hello", Handle: "h"}, ""},
		{"a body that does not match its checksum is damaged", map[string]any{"body": body, "receipt_handle": "h-1", "md5_of_body": bodyMD5},
			queue.Message{Body: body, Handle: "h-1", Damaged: true}, "MD5OfBody"},
		{"no handle: unfit at the handle, not acknowledged", map[string]any{"body": body},
			queue.Message{Body: body, Unfit: []string{"receipt_handle"}}, "does not fit"},
		{"a handle that is not valid text", map[string]any{"body": body, "receipt_handle": "h\xff"},
			queue.Message{Body: body, Unfit: []string{"receipt_handle"}}, "does not fit"},
		{"an unfit item keeps what was readable, its fields sorted", &wire.Unfit{
			Raw:      []byte(`{"body":7,"receipt_handle":"h-2","zeta":1}`),
			Problems: []wire.ItemProblem{{Path: "zeta", Rule: "type"}, {Path: "body", Rule: "type"}},
			Fields:   map[string]any{"receipt_handle": "h-2"},
			Members:  map[string][]byte{"body": []byte("7")},
		}, queue.Message{Body: "7", Handle: "h-2", Unfit: []string{"body", "zeta"}}, "does not fit"},
		{"an item that is not an object: its raw JSON, one problem", &wire.Unfit{
			Raw: []byte(`"just text"`), Problems: []wire.ItemProblem{{Path: "", Rule: "type"}},
		}, queue.Message{Body: `"just text"`, Unfit: []string{""}}, "does not fit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := queue.FromItem(slog.New(slog.NewTextHandler(&logs, nil)), "warehouse", c.item, sqsFields)
			if got.Body != c.want.Body || got.Handle != c.want.Handle || got.WireID != c.want.WireID ||
				got.Damaged != c.want.Damaged || !slices.Equal(got.Unfit, c.want.Unfit) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if c.wantWarning == "" && logs.Len() > 0 || !strings.Contains(logs.String(), c.wantWarning) {
				t.Fatalf("log %q, want a warning holding %q", logs.String(), c.wantWarning)
			}
			if c.wantWarning != "" && !strings.Contains(logs.String(), "queue=warehouse") {
				t.Fatalf("log %q does not name the queue", logs.String())
			}
		})
	}
}

func TestConnInput(t *testing.T) {
	c := &queue.Conn{Name: "warehouse", Settings: map[string]any{"queue_url": "http://q"}}
	in, err := c.Input(&ir.Call{Operation: "messages.delete", Input: map[string]ir.Value{
		"queue_url": {Setting: "queue_url"}, "receipt_handle": {Message: "handle"},
		"max": {Literal: json.RawMessage(`10`)}, "ratio": {Literal: json.RawMessage(`1.5`)},
	}}, "h-1")
	if err != nil {
		t.Fatal(err)
	}
	if in["queue_url"] != "http://q" || in["receipt_handle"] != "h-1" || in["max"] != int64(10) || in["ratio"] != json.Number("1.5") {
		t.Fatalf("input %#v", in)
	}
	if _, err := c.Input(&ir.Call{Input: map[string]ir.Value{"to": {Message: "to"}}}, ""); err == nil || !strings.Contains(err.Error(), "input to") {
		t.Fatalf("an input the driver cannot give: %v", err)
	}
	if _, err := c.Operation(nil); err == nil || !strings.Contains(err.Error(), "lacks a call") {
		t.Fatalf("no call: %v", err)
	}
	if _, err := c.Operation(&ir.Call{Operation: "messages.gone"}); err == nil || !strings.Contains(err.Error(), "messages.gone") {
		t.Fatalf("an operation the plan lacks: %v", err)
	}
}
