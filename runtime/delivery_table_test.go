package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/providers/wire"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// deliveryTablePath is the table of delivery rules shared with the Worker
// (codegen/workers/test/delivery.test.mjs runs the same file): the lease,
// the handler's budget, the backoff and its jitter's bounds, the attempt
// budget and the order in which a settlement is decided.
var deliveryTablePath = filepath.Join("testdata", "delivery", "table.json") // from the repository's root

// DeliveryTable is testdata/delivery/table.json; providers/wire reads its
// transport rows.
type deliveryTable struct {
	Engine struct {
		LeaseMS          int64 `json:"lease_ms"`
		HandlerTimeoutMS int64 `json:"handler_timeout_ms"`
		RequestTimeoutMS int64 `json:"request_timeout_ms"`
	} `json:"engine"`
	Budget []struct {
		Name                       string
		Stored, Subscriber, Budget int
	} `json:"budget"`
	Backoff []struct {
		Name         string
		FirstDelayMS int64 `json:"first_delay_ms"`
		MaxDelayMS   int64 `json:"max_delay_ms"`
		Attempt      int   `json:"attempt"`
		CeilingMS    int64 `json:"ceiling_ms"`
	} `json:"backoff"`
	Settle []struct {
		Name            string
		Attempt, Budget int
		Handler         bool
		Result          string
		State           string
		Code            string
		Calls           *int
	} `json:"settle"`
}

func readDeliveryTable(t *testing.T) deliveryTable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(reporoot.Dir(t), deliveryTablePath))
	if err != nil {
		t.Fatal(err)
	}
	var tb deliveryTable
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatalf("%s: %v", deliveryTablePath, err)
	}
	if len(tb.Backoff) == 0 || len(tb.Settle) == 0 || len(tb.Budget) == 0 {
		t.Fatalf("%s holds no cases", deliveryTablePath)
	}
	return tb
}

// drawAt answers every Int64N with n-1 (or 0): the ends of the draw.
type drawAt struct {
	top  bool
	asks []int64
}

func (d *drawAt) Int64N(n int64) int64 {
	d.asks = append(d.asks, n)
	if d.top {
		return n - 1
	}
	return 0
}

func TestDeliveryTable(t *testing.T) {
	tb := readDeliveryTable(t)
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	t.Run("engine", func(t *testing.T) {
		if runtime.Lease != ms(tb.Engine.LeaseMS) || runtime.HandlerTimeout != ms(tb.Engine.HandlerTimeoutMS) {
			t.Errorf("lease %v and handler timeout %v, the table says %d ms and %d ms", runtime.Lease, runtime.HandlerTimeout,
				tb.Engine.LeaseMS, tb.Engine.HandlerTimeoutMS)
		}
		if tb.Engine.HandlerTimeoutMS >= tb.Engine.LeaseMS {
			t.Error("the table's handler timeout is not shorter than its lease")
		}
		if got := runtime.DefaultHTTPTimeout(); got != ms(tb.Engine.RequestTimeoutMS) {
			t.Errorf("a request's timeout is %v, the table says %d ms", got, tb.Engine.RequestTimeoutMS)
		}
	})
	for _, c := range tb.Budget {
		t.Run("budget/"+c.Name, func(t *testing.T) {
			if got := (ir.Retry{MaxAttempts: c.Subscriber}).Budget(c.Stored); got != c.Budget {
				t.Errorf("budget %d, want %d", got, c.Budget)
			}
		})
	}
	for _, c := range tb.Backoff {
		t.Run("backoff/"+c.Name, func(t *testing.T) {
			r := ir.Retry{MaxAttempts: 1000, FirstDelayMS: c.FirstDelayMS, MaxDelayMS: c.MaxDelayMS}
			if got := runtime.BackoffCeiling(r, c.Attempt); got != ms(c.CeilingMS) {
				t.Fatalf("ceiling %v, want %d ms", got, c.CeilingMS)
			}
			// Full jitter: both ends of [0, ceiling] can be drawn, nothing beyond.
			low, high := &drawAt{}, &drawAt{top: true}
			if got := runtime.BackoffDraw(r, c.Attempt, low); got != 0 {
				t.Errorf("the lowest draw is %v, want 0", got)
			}
			if got := runtime.BackoffDraw(r, c.Attempt, high); got != ms(c.CeilingMS) {
				t.Errorf("the highest draw is %v, want %d ms", got, c.CeilingMS)
			}
			if c.CeilingMS > 0 && (len(high.asks) != 1 || high.asks[0] != int64(ms(c.CeilingMS))+1) {
				t.Errorf("drew with %v, want one Int64N(%d)", high.asks, int64(ms(c.CeilingMS))+1)
			}
		})
	}
	for _, c := range tb.Settle {
		t.Run("settle/"+c.Name, func(t *testing.T) {
			deliveryTableSettle(t, c.Attempt, c.Budget, c.Handler, c.Result, c.State, c.Code, c.Calls)
		})
	}
}

// deliveryTableSettle runs one settle case on the warehouse's pack_order
// (budget 8): attempt-1 claims whose handlers started and never settled, then one delivery run
// against a target answering as the case says.
func deliveryTableSettle(t *testing.T, attempt, budget int, handler bool, result, state, code string, calls *int) {
	if budget != packOrderRetry.MaxAttempts {
		t.Fatalf("the case's budget is %d; the Go engine's world runs pack_order, whose budget is %d", budget, packOrderRetry.MaxAttempts)
	}
	w := newDeliverWorld(t, "sqlite", runtime.Options{})
	ctx := context.Background()
	event := "OrderShipped"
	if !handler {
		event = "NoSuchEvent"
	}
	res, err := w.st.KeepBatch(ctx, []store.Keep{{Source: "queue warehouse_queue", ReceivedID: "1",
		EventName: event, EventJSON: orderJSON("1"), Subscribers: []string{"pack_order"}}})
	if err != nil || res[0].Outcome != store.Kept {
		t.Fatalf("keep: %+v %v", res, err)
	}
	pending, err := w.st.List(ctx, store.Filter{State: store.ListPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	for n := 1; n < attempt; n++ {
		c, err := w.st.ClaimDeliveries(ctx, 10, runtime.Lease)
		if err != nil || len(c) != 1 || c[0].Attempt != n {
			t.Fatalf("claim %d: %+v %v", n, c, err)
		}
		// Its handler started (so the attempt counts) and never settled: a kill mid-run.
		if ok, err := w.st.SettleDelivery(ctx, store.Settlement{ID: c[0].ID, Token: c[0].Token, Outcome: store.SettleStarted}); !ok || err != nil {
			t.Fatalf("start %d: %v %v", n, ok, err)
		}
		w.clock.Advance(runtime.Lease + time.Second)
	}
	switch result {
	case "temporary":
		w.env.Target.Script(503)
	case "permanent":
		w.env.Target.Script(400)
	}
	if _, err := w.rt.Deliver(ctx); err != nil {
		t.Fatal(err)
	}
	e := w.show(pending[0].ID)
	if e.RowState != state || e.Attempts != attempt || (code != "" && e.Code != code) {
		t.Errorf("%s after %d attempts (code %q), want %s after %d (code %q)", e.RowState, e.Attempts, e.Code, state, attempt, code)
	}
	if n := len(w.env.Target.Calls()); calls != nil && n != *calls || calls == nil && n != 1 {
		t.Errorf("the target saw %d calls", n)
	}
}

// TestDeliveryTableErrors holds the engine's error texts and their codes to
// the table's errors, which the Worker's deliveryErrors are held to as well
// (codegen/workers/test/delivery.test.mjs): what `jadpo deliveries` shows of a
// failure is worded the same whichever engine ran it.
func TestDeliveryTableErrors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(reporoot.Dir(t), deliveryTablePath))
	if err != nil {
		t.Fatal(err)
	}
	var tb struct {
		Errors []struct {
			Name, Error, Operation string
			Status                 int
			RefusalCode            string   `json:"refusal_code"`
			CredentialFields       []string `json:"credential_fields"`
			Attempts               int
			TimedOut               bool `json:"timed_out"`
			Path, Rule             string
			Subscriber, Event      string
			EventJSON              string `json:"event_json"`
			Text                   string
			TextBeforeCause        string `json:"text_before_cause"`
			Code                   string
			Temporary              bool
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, c := range tb.Errors {
		t.Run(c.Name, func(t *testing.T) {
			kinds[c.Error] = true
			var e error
			switch c.Error {
			case "refused":
				e = wire.NewRefusal(c.Operation, c.Status, c.RefusalCode, "").WithCredential(wire.CredentialHint{Fields: c.CredentialFields})
			case "no_answer":
				cause := errors.New("EOF")
				if c.TimedOut {
					cause = context.DeadlineExceeded
				}
				e = &wire.TransportError{Operation: c.Operation, Attempts: c.Attempts, Retried: c.Attempts > 1, Err: cause}
			case "input_unfit":
				e = &wire.DecodeError{Operation: c.Operation, Input: true, Path: c.Path, Rule: c.Rule}
			case "handler_missing":
				e = runtime.ErrHandlerMissing(c.Subscriber, c.Event)
			case "event_not_json":
				e = runtime.KeptEventError([]byte(c.EventJSON))
			default:
				t.Fatalf("the table's error %q is unknown here", c.Error)
			}
			if e == nil {
				t.Fatal("no error")
			}
			got := e.Error()
			if c.Text != "" && got != c.Text {
				t.Errorf("text %q, the table says %q", got, c.Text)
			}
			if c.TextBeforeCause != "" && (!strings.HasPrefix(got, c.TextBeforeCause) || len(got) == len(c.TextBeforeCause)) {
				t.Errorf("text %q, the table says %q and a cause", got, c.TextBeforeCause)
			}
			code, temporary := runtime.Classify(e)
			if c.Error == "handler_missing" {
				// Told at the settlement, not by the error.
				code, temporary = runtime.CodeHandlerMissing, false
			}
			if code != c.Code || temporary != c.Temporary {
				t.Errorf("code %q (temporary %v), the table says %q (%v)", code, temporary, c.Code, c.Temporary)
			}
		})
	}
	for _, k := range []string{"refused", "no_answer", "input_unfit", "handler_missing", "event_not_json"} {
		if !kinds[k] {
			t.Errorf("the table has no %s error", k)
		}
	}
	// Every code the engine writes of its own has a case, so the Worker is
	// held to it too.
	codes := map[string]bool{}
	for _, c := range tb.Errors {
		codes[c.Code] = true
	}
	for _, c := range readDeliveryTable(t).Settle {
		codes[c.Code] = true
	}
	for _, c := range []string{runtime.CodeHandlerMissing, runtime.CodeLeaseExpired, runtime.CodeTimeout, runtime.CodeTransport,
		runtime.CodeInputInvalid, runtime.CodeHandler} {
		if !codes[c] {
			t.Errorf("the table has no case of the code %s", c)
		}
	}
}

// TestDeliveryTableInputs runs the table's inputs through a delivery of the
// native engine: each case's arguments are pack_order's step, the case's
// input type is jobs.create_job's input, and its event is kept and
// delivered. A case with a body is sent as exactly those bytes; one with a
// text fails at once with it as the last error and its code, and nothing is
// sent. The Worker is held to the same cases (codegen/workers/test/delivery.test.mjs).
func TestDeliveryTableInputs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(reporoot.Dir(t), deliveryTablePath))
	if err != nil {
		t.Fatal(err)
	}
	var tb struct {
		Records []ir.Record `json:"input_records"`
		Type    ir.Type     `json:"input_type"`
		Inputs  []struct {
			Name      string
			EventJSON string `json:"event_json"`
			Args      map[string]ir.Expr
			Body      *string
			Text      string
			Code      string
			Temporary bool
		} `json:"inputs"`
	}
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Inputs) == 0 {
		t.Fatal("the table has no inputs")
	}
	for _, c := range tb.Inputs {
		t.Run(c.Name, func(t *testing.T) {
			p := checktest.ExamplePlan(t, "warehouse")
			p.Records = append(p.Records, tb.Records...)
			found := false
			for i := range p.Connections {
				for j := range p.Connections[i].Operations {
					if o := &p.Connections[i].Operations[j]; p.Connections[i].Name == "packing" && o.Ref == "jobs.create_job" {
						in := tb.Type
						o.Input = &in
						found = true
					}
				}
			}
			for i := range p.Subscribers {
				if p.Subscribers[i].Name == "pack_order" {
					p.Subscribers[i].Handlers[0].Steps[0].Args = c.Args
				}
			}
			if !found {
				t.Fatal("the warehouse's plan has no packing jobs.create_job")
			}
			w := newDeliverWorldOf(t, "sqlite", p, runtime.Options{})
			ctx := context.Background()
			res, err := w.st.KeepBatch(ctx, []store.Keep{{Source: "queue warehouse_queue", ReceivedID: "1",
				EventName: "OrderShipped", EventJSON: []byte(c.EventJSON), Subscribers: []string{"pack_order"}}})
			if err != nil || res[0].Outcome != store.Kept {
				t.Fatalf("keep: %+v %v", res, err)
			}
			pending, err := w.st.List(ctx, store.Filter{State: store.ListPending})
			if err != nil || len(pending) != 1 {
				t.Fatalf("pending: %+v %v", pending, err)
			}
			if _, err := w.rt.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			e := w.show(pending[0].ID)
			calls := w.env.Target.Calls()
			if c.Body != nil {
				if e.RowState != "succeeded" || len(calls) != 1 {
					t.Fatalf("%s (code %q, %q) after %d calls, want succeeded after 1", e.RowState, e.Code, e.Error, len(calls))
				}
				if string(calls[0].Raw) != *c.Body {
					t.Errorf("sent %s\nthe table says %s", calls[0].Raw, *c.Body)
				}
				return
			}
			if len(calls) != 0 {
				t.Errorf("the target saw %d calls", len(calls))
			}
			state := "failed"
			if c.Temporary {
				state = "retry_wait"
			}
			if e.RowState != state || e.Code != c.Code || e.Error != c.Text {
				t.Errorf("%s, code %q, last error %q; the table says %s, %q, %q", e.RowState, e.Code, e.Error, state, c.Code, c.Text)
			}
		})
	}
}
