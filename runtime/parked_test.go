package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// Issue 12 point 6: a parked message keeps the producer's id when one was
// read, so that an operator can tie it to the sender's record; one whose id
// could not be read has none. Point 7: the parked log line names the parked
// row and each failing field by name and rule, never a value.
func TestParkedMessagesKeepTheMessageID(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
			st := env.Store()
			var logged bytes.Buffer
			rt := env.Runtime(st, runtime.Options{Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
			ctx := context.Background()
			const value = "BODYVALUE-41"
			env.Send("warehouse_queue", `{"id":"m-2","type":"order_delayed","order_id":"o-2"}`)
			env.Send("warehouse_queue", `{"id":"m-3","type":"order_shipped","order_id":"`+value+`","carrier":"`+value+`"}`)
			env.Send("warehouse_queue", `not json`)
			if _, err := rt.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			entries, err := st.List(ctx, store.Filter{State: store.ListFailed})
			if err != nil {
				t.Fatal(err)
			}
			byCode := map[string][]string{}
			ids := map[string]store.ID{}
			for _, en := range entries {
				byCode[en.Code] = append(byCode[en.Code], en.ReceivedID)
				ids[en.ReceivedID] = en.ID
			}
			if got := byCode["unlisted_type"]; len(got) != 1 || got[0] != "m-2" {
				t.Fatalf("the unlisted type's parked message id = %q, want m-2", got)
			}
			if got := strings.Join(byCode["unreadable"], ","); got != "m-3," && got != ",m-3" {
				t.Fatalf("the unreadable ones' message ids = %q, want m-3 and none (not JSON)", got)
			}
			if strings.Contains(logged.String(), value) {
				t.Fatalf("a body value was logged:\n%s", logged.String())
			}
			var m3 map[string]any
			for _, l := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("not a JSON log line: %q", l)
				}
				if rec["msg"] == "parked" && rec["message_id"] == "m-3" {
					m3 = rec
				}
			}
			if m3 == nil {
				t.Fatalf("no parked line for m-3:\n%s", logged.String())
			}
			problems, _ := m3["problems"].(string)
			if m3["parked_id"] != ids["m-3"].String() || !strings.Contains(problems, "lines: required") ||
				!strings.Contains(problems, "carrier: ") || !strings.Contains(problems, "shipped_at: required") {
				t.Fatalf("the parked line names %v and problems %q; want %s and each field with its rule", m3["parked_id"], problems, ids["m-3"])
			}
		})
	}
}
