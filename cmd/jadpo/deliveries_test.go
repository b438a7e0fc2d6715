package main

// jadpo deliveries (docs/guide/operating.md, "jadpo deliveries"): list as an aligned table,
// --state, --json, show with and without --body, retry and dismiss, and
// their refusals (unknown ID, wrong state): a clear message, a non-zero
// exit and nothing changed.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// cli runs the command line in process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// deliveriesWorld is a store holding one failed delivery, one succeeded
// delivery and two parked messages (unlisted_type, unreadable).
type deliveriesWorld struct {
	env                 *runtimetest.Env
	st                  store.Store
	failed, succeeded   store.ID
	unlisted, unreadble store.ID
	failedMsg           string // the failed delivery's message id
}

const delayedBody = `{"id":"m-3","type":"order_delayed","order_id":"o-3"}`

func newDeliveriesWorld(t *testing.T, kind string) *deliveriesWorld {
	t.Helper()
	env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	rt := env.Runtime(st, runtime.Options{})
	env.Target.Script(400) // the first delivery is refused for good
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	env.Send("warehouse_queue", runtimetest.OrderShipped("m-2"))
	env.Send("warehouse_queue", delayedBody)
	env.Send("warehouse_queue", "not json")
	rep, err := rt.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kept != 2 || rep.Parked != 2 || rep.Delivered.Failed != 1 || rep.Delivered.Succeeded != 1 {
		t.Fatalf("tick %+v", rep)
	}
	w := &deliveriesWorld{env: env, st: st}
	all, err := st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		switch {
		case e.ID.Kind == store.KindDelivery && e.State == store.ListFailed:
			w.failed, w.failedMsg = e.ID, e.ReceivedID
		case e.ID.Kind == store.KindParked && e.Code == "unlisted_type":
			w.unlisted = e.ID
		case e.ID.Kind == store.KindParked && e.Code == "unreadable":
			w.unreadble = e.ID
		case e.ID.Kind == store.KindDelivery && e.State == store.ListSucceeded:
			// Issue 30, item 7: listed in all (it was left out).
			w.succeeded = e.ID
		}
	}
	if w.failed.N == 0 || w.succeeded.N == 0 || w.unlisted.N == 0 || w.unreadble.N == 0 {
		t.Fatalf("store holds %+v", all)
	}
	return w
}

// cli runs a deliveries command on the world's store. Its stderr is returned without the
// line naming the store, which every text run prints first (checked here).
func (w *deliveriesWorld) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errs := cli(t, append(args, "--database", w.env.StoreURL)...)
	if line, rest, ok := strings.Cut(errs, "\n"); ok && strings.HasPrefix(line, "store: ") {
		if !strings.HasSuffix(line, " (--database)") {
			t.Errorf("the store line %q does not say it came from --database", line)
		}
		errs = rest
	}
	return code, out, errs
}

// entryOf reads a show --format json: its envelope, then its entry.
func entryOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Kind, Status  string
		Entry         map[string]any `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.SchemaVersion != 1 || doc.Kind != "delivery_entry" || doc.Status != "ok" || doc.Entry == nil {
		t.Fatalf("not a delivery_entry envelope:\n%s", out)
	}
	return doc.Entry
}

// listJSON reads a --format json listing: its envelope, then its entries.
func listJSON(t *testing.T, out string) []map[string]any {
	t.Helper()
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Kind, Status  string
		Entries       []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.SchemaVersion != 1 || doc.Kind != "delivery_list" || doc.Status != "ok" || doc.Entries == nil {
		t.Fatalf("not a delivery_list envelope:\n%s", out)
	}
	return doc.Entries
}

// states reads each id's listing state ("" when not listed at all).
func (w *deliveriesWorld) states(t *testing.T) map[store.ID]store.ListState {
	t.Helper()
	all, err := w.st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil {
		t.Fatal(err)
	}
	out := map[store.ID]store.ListState{}
	for _, e := range all {
		out[e.ID] = e.State
	}
	return out
}

func TestDeliveriesList(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newDeliveriesWorld(t, kind)
			for _, args := range [][]string{{"deliveries"}, {"deliveries", "list"}, {"deliveries", "list", "--state", "failed"}} {
				code, out, errs := w.cli(t, args...)
				if code != 0 || errs != "" {
					t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
				}
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				if len(lines) != 4 {
					t.Fatalf("%v:\n%s", args, out)
				}
				checkAligned(t, lines)
				want := []*regexp.Regexp{
					regexp.MustCompile(`^ID +STATE +WHAT +CODE +ATTEMPTS +SINCE$`),
					regexp.MustCompile(`^` + w.failed.String() + ` +failed +subscriber pack_order · OrderShipped +status_400 +1 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`),
					regexp.MustCompile(`^` + w.unlisted.String() + ` +failed +queue warehouse_queue · order_delayed +unlisted_type +- +\d{4}-`),
					regexp.MustCompile(`^` + w.unreadble.String() + ` +failed +queue warehouse_queue · \? +unreadable +- +\d{4}-`),
				}
				for _, re := range want[1:] {
					if !slices.ContainsFunc(lines[1:], re.MatchString) {
						t.Errorf("%v: no line matches %s:\n%s", args, re, out)
					}
				}
				if !want[0].MatchString(lines[0]) {
					t.Errorf("header %q", lines[0])
				}
			}
			// With the project at hand, a delivery's budget is the plan's
			// (the store holds 0 for "the plan's"): 1/8, never 1/0.
			_, out, _ := w.cli(t, "deliveries", "--dir", exampleDir(t))
			if !regexp.MustCompile(`(?m)^` + w.failed.String() + ` +failed +subscriber pack_order · OrderShipped +status_400 +1/8 +`).MatchString(out) {
				t.Errorf("with --dir:\n%s", out)
			}
			// --state: nothing pending or dismissed yet; all lists the failed ones too.
			code, out, _ := w.cli(t, "deliveries", "list", "--state", "pending")
			if code != 0 || out != "no pending deliveries or parked messages\n" {
				t.Fatalf("pending: %d %q", code, out)
			}
			code, out, _ = w.cli(t, "deliveries", "--state", "dismissed")
			if code != 0 || out != "no dismissed deliveries or parked messages\n" {
				t.Fatalf("dismissed: %d %q", code, out)
			}
			if code, _, _ := w.cli(t, "deliveries", "retry", w.unlisted.String()); code != 0 {
				t.Fatal("retry failed")
			}
			if code, _, _ := w.cli(t, "deliveries", "dismiss", w.unreadble.String()); code != 0 {
				t.Fatal("dismiss failed")
			}
			for state, want := range map[string][]string{
				"failed":    {w.failed.String()},
				"pending":   {w.unlisted.String()},
				"dismissed": {w.unreadble.String()},
				"succeeded": {w.succeeded.String()},
				"all":       {w.failed.String(), w.succeeded.String(), w.unlisted.String(), w.unreadble.String()},
			} {
				code, out, _ := w.cli(t, "deliveries", "list", "--state", state)
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				var ids []string
				for _, l := range lines[1:] {
					ids = append(ids, strings.Fields(l)[0])
					if f := strings.Fields(l); state != "all" && f[1] != state {
						t.Errorf("--state %s lists %q", state, l)
					}
				}
				slices.Sort(ids)
				slices.Sort(want)
				if code != 0 || !slices.Equal(ids, want) {
					t.Errorf("--state %s: exit %d, ids %v, want %v\n%s", state, code, ids, want, out)
				}
			}
			code, out, errs := w.cli(t, "deliveries", "list", "--state", "lost")
			if code != 2 || out != "" || !strings.Contains(errs, "--state must be failed, pending, succeeded, dismissed or all") {
				t.Fatalf("--state lost: %d %q %q", code, out, errs)
			}
		})
	}
}

// checkAligned checks that every column of a table starts at the same
// character offset on each line: a space before it and text at it.
func checkAligned(t *testing.T, lines []string) {
	t.Helper()
	header := []rune(lines[0])
	var starts []int
	for i := 1; i < len(header); i++ {
		if header[i-1] == ' ' && header[i] != ' ' {
			starts = append(starts, i)
		}
	}
	if len(starts) != 5 {
		t.Fatalf("header %q has %d columns after the first", lines[0], len(starts))
	}
	for _, l := range lines[1:] {
		r := []rune(l)
		for _, s := range starts {
			if s >= len(r) || r[s-1] != ' ' || r[s] == ' ' {
				t.Fatalf("not aligned at character %d:\n%s\n%s", s, lines[0], l)
			}
		}
		if utf8.RuneCountInString(l) < starts[len(starts)-1] {
			t.Fatalf("short line %q", l)
		}
	}
}

func TestDeliveriesJSON(t *testing.T) {
	w := newDeliveriesWorld(t, "sqlite")
	code, out, errs := w.cli(t, "deliveries", "--json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d %q", code, errs)
	}
	got := listJSON(t, out)
	byID := map[string]map[string]any{}
	for _, e := range got {
		byID[e["id"].(string)] = e
		if _, has := e["body"]; has {
			t.Errorf("a listed entry holds its body: %v", e)
		}
	}
	d := byID[w.failed.String()]
	if d == nil || d["kind"] != "delivery" || d["state"] != "failed" || d["what"] != "subscriber pack_order · OrderShipped" ||
		d["code"] != "status_400" || d["subscriber"] != "pack_order" || d["attempts"] != 1.0 || d["maxAttempts"] != nil ||
		d["messageId"] != w.failedMsg || d["source"] != "queue warehouse_queue" {
		t.Errorf("delivery %v", d)
	}
	p := byID[w.unreadble.String()]
	if p == nil || p["kind"] != "parked_message" || p["code"] != "unreadable" || p["what"] != "queue warehouse_queue · ?" {
		t.Errorf("parked %v", p)
	}
	if ps, _ := p["problems"].([]any); len(ps) != 1 || ps[0].(map[string]any)["rule"] != "json" {
		t.Errorf("problems %v", p["problems"])
	}
	if len(got) != 3 {
		t.Errorf("listed %d entries", len(got))
	}
	_, out, _ = w.cli(t, "deliveries", "--json", "--dir", exampleDir(t))
	if !strings.Contains(out, `"maxAttempts": 8`) {
		t.Errorf("with --dir, the plan's budget:\n%s", out)
	}
	// --state with --json, and nothing listed is an empty list.
	code, out, _ = w.cli(t, "deliveries", "list", "--state", "pending", "--json")
	if code != 0 || len(listJSON(t, out)) != 0 {
		t.Fatalf("pending --json: %d %q", code, out)
	}
}

func TestDeliveriesShow(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newDeliveriesWorld(t, kind)
			code, out, errs := w.cli(t, "deliveries", "show", w.unlisted.String())
			if code != 0 || errs != "" {
				t.Fatalf("exit %d %q", code, errs)
			}
			for _, want := range []string{
				w.unlisted.String() + "  failed  queue warehouse_queue · order_delayed\n",
				"  source:      queue warehouse_queue\n",
				"  wire type:   order_delayed\n",
				"  code:        unlisted_type\n",
				"  body sha256: ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("show lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "body:") || strings.Contains(out, "o-3") {
				t.Errorf("show without --body shows the body:\n%s", out)
			}
			code, out, _ = w.cli(t, "deliveries", "show", w.unlisted.String(), "--body")
			if code != 0 || !strings.Contains(out, "  body:\n"+delayedBody+"\n") {
				t.Errorf("show --body: %d\n%s", code, out)
			}
			// An unreadable message shows its problems, field and rule.
			_, out, _ = w.cli(t, "deliveries", "show", w.unreadble.String())
			if !strings.Contains(out, "  problem:     (body): json\n") {
				t.Errorf("show unreadable:\n%s", out)
			}
			// A delivery: its message id, attempts and, with --body, the event.
			_, out, _ = w.cli(t, "deliveries", "show", w.failed.String())
			for _, want := range []string{"subscriber pack_order · OrderShipped", "  message id:  " + w.failedMsg, "  event:       OrderShipped", "  code:        status_400", "  attempts:    1\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("show delivery lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, `"order_id"`) {
				t.Errorf("show without --body shows the event:\n%s", out)
			}
			// Its one attempt, with its time, outcome and code (issue 27).
			if !regexp.MustCompile(`(?m)^  attempt:     \d{4}-\d\d-\d\dT[0-9:]+Z  #1  failed  status_400  \S`).MatchString(out) {
				t.Errorf("show delivery lacks its attempt:\n%s", out)
			}
			_, out, _ = w.cli(t, "deliveries", "show", w.failed.String(), "--json")
			if log, ok := entryOf(t, out)["attemptLog"].([]any); !ok || len(log) != 1 || log[0].(map[string]any)["outcome"] != "failed" || log[0].(map[string]any)["code"] != "status_400" {
				t.Errorf("show --json's attemptLog:\n%s", out)
			}
			_, out, _ = w.cli(t, "deliveries", "show", w.unlisted.String(), "--json")
			if _, ok := entryOf(t, out)["attemptLog"]; ok {
				t.Errorf("a parked message has an attemptLog:\n%s", out)
			}
			if _, out, _ := w.cli(t, "deliveries", "show", w.failed.String(), "--dir", exampleDir(t)); !strings.Contains(out, "  attempts:    1 of 8\n") {
				t.Errorf("show with --dir:\n%s", out)
			}
			_, out, _ = w.cli(t, "deliveries", "show", w.failed.String(), "--body")
			if !strings.Contains(out, `"order_id":"o-`+w.failedMsg+`"`) {
				t.Errorf("show --body of a delivery:\n%s", out)
			}
			_, out, _ = w.cli(t, "deliveries", "show", w.failed.String(), "--body", "--json")
			m := entryOf(t, out)
			if body, _ := m["body"].(string); !strings.Contains(body, `"order_id"`) {
				t.Errorf("show --body --json:\n%s", out)
			}
			// A succeeded delivery is shown too.
			if code, out, _ := w.cli(t, "deliveries", "show", w.succeeded.String()); code != 0 || !strings.Contains(out, "subscriber pack_order") {
				t.Errorf("show succeeded: %d\n%s", code, out)
			}
			// Unknown and malformed ids.
			code, out, errs = w.cli(t, "deliveries", "show", "p999")
			if code != 1 || out != "" || errs != "jadpo: p999: no such delivery or parked message\n" {
				t.Errorf("show p999: %d %q %q", code, out, errs)
			}
			code, _, errs = w.cli(t, "deliveries", "show", "x7")
			if code != 2 || !strings.Contains(errs, `"x7" is not an id`) {
				t.Errorf("show x7: %d %q", code, errs)
			}
		})
	}
}

// A delivery of a message kept with header values (a SQL inbox's header
// columns) shows them, one line each sorted by name after the event line, and
// its --json holds them; a delivery without any shows no header line and no
// "headers" key. The values are printed as they are; the body still only
// with --body.
func TestDeliveriesShowHeaders(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newDeliveriesWorld(t, kind)
			ctx := context.Background()
			headers := map[string]string{"tenant": "acme", "attempt_note": "a=b c", "région": "Zürich"}
			res, err := w.st.KeepBatch(ctx, []store.Keep{{
				Source: "sql_inbox jobs", ReceivedID: "job-7", EventName: "JobQueued",
				EventJSON: []byte(`{"job_id":"job-7","card":"4111"}`), Subscribers: []string{"run_job"}, Headers: headers,
			}})
			if err != nil || res[0].Outcome != store.Kept {
				t.Fatalf("KeepBatch = %+v, %v", res, err)
			}
			var id store.ID
			pending, err := w.st.List(ctx, store.Filter{State: store.ListPending})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pending {
				if e.ReceivedID == "job-7" {
					id = e.ID
				}
			}
			if id.N == 0 {
				t.Fatalf("the kept message's delivery is not listed: %+v", pending)
			}

			code, out, errs := w.cli(t, "deliveries", "show", id.String())
			if code != 0 || errs != "" {
				t.Fatalf("exit %d %q", code, errs)
			}
			want := "  event:       JobQueued\n" +
				"  header:      attempt_note=a=b c\n" +
				"  header:      région=Zürich\n" +
				"  header:      tenant=acme\n"
			if !strings.Contains(out, want) {
				t.Errorf("show lacks, after the event line:\n%s\ngot:\n%s", want, out)
			}
			if strings.Contains(out, "4111") || strings.Contains(out, "body:") {
				t.Errorf("show without --body shows the event:\n%s", out)
			}
			if _, out, _ := w.cli(t, "deliveries", "show", id.String(), "--body"); !strings.Contains(out, want) || !strings.Contains(out, `"job_id":"job-7"`) {
				t.Errorf("show --body:\n%s", out)
			}

			_, out, _ = w.cli(t, "deliveries", "show", id.String(), "--json")
			m := entryOf(t, out)
			got, _ := m["headers"].(map[string]any)
			if len(got) != len(headers) {
				t.Errorf("--json headers = %v, want %v", m["headers"], headers)
			}
			for k, v := range headers {
				if got[k] != v {
					t.Errorf("--json headers[%q] = %v, want %q", k, got[k], v)
				}
			}
			if _, has := m["body"]; has || strings.Contains(out, "4111") {
				t.Errorf("show --json without --body holds the body:\n%s", out)
			}
			if !strings.Contains(out, `"région": "Zürich"`) {
				t.Errorf("--json escapes the header values:\n%s", out)
			}

			// Without headers: no line, no key; parked messages neither.
			for _, other := range []store.ID{w.failed, w.unlisted} {
				_, out, _ = w.cli(t, "deliveries", "show", other.String())
				if strings.Contains(out, "header:") {
					t.Errorf("show %s shows headers:\n%s", other, out)
				}
				_, out, _ = w.cli(t, "deliveries", "show", other.String(), "--json")
				if strings.Contains(out, `"headers"`) {
					t.Errorf("show %s --json holds headers:\n%s", other, out)
				}
			}
			// The listing is as before: no headers.
			if _, out, _ := w.cli(t, "deliveries", "list", "--state", "pending", "--json"); strings.Contains(out, `"headers"`) {
				t.Errorf("list --json holds headers:\n%s", out)
			}
		})
	}
}

func TestDeliveriesRetryAndDismiss(t *testing.T) {
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			w := newDeliveriesWorld(t, kind)
			before := w.states(t)
			refusals := []struct {
				args []string
				want string // in stderr
			}{
				{[]string{"retry", "p999"}, "p999 is unknown"},
				{[]string{"dismiss", "d999"}, "d999 is unknown"},
				{[]string{"retry", w.succeeded.String()}, w.succeeded.String() + " is succeeded"},
				{[]string{"dismiss", w.succeeded.String()}, w.succeeded.String() + " is succeeded"},
				// One refused id refuses the whole call: the failed ones are untouched.
				{[]string{"retry", w.failed.String(), w.unlisted.String(), "p999"}, "p999 is unknown"},
				{[]string{"dismiss", w.unreadble.String(), w.succeeded.String()}, w.succeeded.String() + " is succeeded"},
			}
			for _, r := range refusals {
				code, out, errs := w.cli(t, append([]string{"deliveries"}, r.args...)...)
				if code != 1 || out != "" || !strings.Contains(errs, r.want) || !strings.Contains(errs, "nothing changed") ||
					!strings.HasPrefix(errs, "jadpo: "+r.args[0]+" refused") {
					t.Errorf("%v: exit %d, stdout %q, stderr %q", r.args, code, out, errs)
				}
				if after := w.states(t); !mapsEqual(after, before) {
					t.Fatalf("%v changed the store: %v -> %v", r.args, before, after)
				}
			}
			// A malformed id is a usage error and changes nothing either.
			if code, _, _ := w.cli(t, "deliveries", "retry", w.failed.String(), "q1"); code != 2 || !mapsEqual(w.states(t), before) {
				t.Fatalf("retry q1: exit %d", code)
			}

			// Retry: failed -> pending, a delivery with a fresh attempt budget.
			code, out, errs := w.cli(t, "deliveries", "retry", w.failed.String(), w.unlisted.String())
			if code != 0 || errs != "" || out != w.failed.String()+" is pending again\n"+w.unlisted.String()+" is pending again\n" {
				t.Fatalf("retry: %d %q %q", code, out, errs)
			}
			st := w.states(t)
			if st[w.failed] != store.ListPending || st[w.unlisted] != store.ListPending || st[w.unreadble] != store.ListFailed {
				t.Fatalf("after retry %v", st)
			}
			en, err := w.st.Show(context.Background(), w.failed, false)
			if err != nil || en.Attempts != 0 {
				t.Fatalf("a retried delivery keeps %d attempts (%v)", en.Attempts, err)
			}
			// Pending ids are in the wrong state for either.
			for _, op := range []string{"retry", "dismiss"} {
				before := w.states(t)
				code, _, errs := w.cli(t, "deliveries", op, w.unlisted.String())
				if code != 1 || !strings.Contains(errs, w.unlisted.String()+" is pending") || !mapsEqual(w.states(t), before) {
					t.Errorf("%s a pending one: %d %q", op, code, errs)
				}
			}

			// Dismiss: failed -> dismissed; then neither again.
			code, out, _ = w.cli(t, "deliveries", "dismiss", w.unreadble.String())
			if code != 0 || out != w.unreadble.String()+" is dismissed\n" || w.states(t)[w.unreadble] != store.ListDismissed {
				t.Fatalf("dismiss: %d %q", code, out)
			}
			for _, op := range []string{"retry", "dismiss"} {
				before := w.states(t)
				code, _, errs := w.cli(t, "deliveries", op, w.unreadble.String())
				if code != 1 || !strings.Contains(errs, w.unreadble.String()+" is dismissed") || !mapsEqual(w.states(t), before) {
					t.Errorf("%s a dismissed one: %d %q", op, code, errs)
				}
			}
			if code, _, _ := w.cli(t, "deliveries", "retry"); code != 2 {
				t.Errorf("retry with no id: exit %d", code)
			}
		})
	}
}

func exampleDir(t *testing.T) string {
	return filepath.Join(reporoot.Dir(t), "examples", "warehouse")
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Terminal control sequences a producer sent (issue 11, point 10) are shown
// escaped by `deliveries list` and `show`; `show --body` gives the body's
// exact bytes to a pipe and escapes it on a terminal.
func TestDeliveriesEscapeControlSequences(t *testing.T) {
	const wireType = "\x1b[2J\x1b]0;pwned\x07"
	// SQS refuses C0 controls in a body, not C1 ones: OSC 52 as C1 (OSC ... ST).
	const osc52 = "\u009d52;c;ZXZpbA==\u009c not json"
	env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
	st := env.Store()
	rt := env.Runtime(st, runtime.Options{})
	env.Send("warehouse_queue", `{"id":"m-1","type":"\u001b[2J\u001b]0;pwned\u0007"}`)
	env.Send("warehouse_queue", osc52)
	if rep, err := rt.Tick(context.Background()); err != nil || rep.Parked != 2 {
		t.Fatalf("tick %+v, %v", rep, err)
	}
	all, err := st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil || len(all) != 2 {
		t.Fatalf("store holds %+v, %v", all, err)
	}
	var typed, raw store.ID
	for _, e := range all {
		if e.Code == "unlisted_type" {
			typed = e.ID
		} else {
			raw = e.ID
		}
	}
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := cli(t, append(args, "--database", env.StoreURL)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	noRaw := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\u009d\u009c") {
			t.Errorf("%s prints control characters raw:\n%q", what, out)
		}
	}
	escaped := `\x1b[2J\x1b]0;pwned\x07`
	out := run("deliveries", "list")
	noRaw("list", out)
	if !strings.Contains(out, escaped) {
		t.Errorf("list does not show the wire type escaped:\n%s", out)
	}
	out = run("deliveries", "show", typed.String())
	noRaw("show", out)
	if !strings.Contains(out, "  wire type:   "+escaped+"\n") {
		t.Errorf("show does not show the wire type escaped:\n%s", out)
	}
	// To a pipe: the exact bytes, for scripts.
	if out = run("deliveries", "show", raw.String(), "--body"); !strings.Contains(out, "  body:\n"+osc52+"\n") {
		t.Errorf("show --body to a pipe is not the body as stored:\n%q", out)
	}
	// To a terminal: escaped.
	was := stdoutIsTerminal
	stdoutIsTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { stdoutIsTerminal = was })
	out = run("deliveries", "show", raw.String(), "--body")
	noRaw("show --body on a terminal", out)
	if !strings.Contains(out, "  body:\n"+`\u009d52;c;ZXZpbA==\u009c not json`+"\n") {
		t.Errorf("show --body on a terminal:\n%q", out)
	}
	// JSON stays JSON: encoding/json escapes them.
	out = run("deliveries", "show", typed.String(), "--json")
	noRaw("show --json", out)
	var m struct {
		Entry map[string]any `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Entry["wireType"] != wireType {
		t.Errorf("show --json: %v %v", err, m.Entry["wireType"])
	}
}

// Issue 24: JSON text holds characters, not bytes. A parked body that is not
// valid UTF-8 comes out of `show --body --format json` exactly, as
// bodyBase64 beside body; one that is valid UTF-8 is exact in body, with no
// bodyBase64. Every byte value 0..255, on both stores.
func TestDeliveriesShowJSONBodyEveryByte(t *testing.T) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	var text strings.Builder
	for r := rune(0); r < 0x800; r++ {
		text.WriteRune(r)
	}
	text.WriteString("\u202e☕𝄞\U0010ffff")
	for _, kind := range runtimetest.Stores {
		t.Run(kind, func(t *testing.T) {
			env := runtimetest.New(t, kind, checktest.ExamplePlan(t, "warehouse"))
			st := env.Store()
			for _, body := range [][]byte{every, []byte(text.String()), {0xff}, {'a', 0xc3}} {
				_, id, err := st.Park(context.Background(), store.Parked{Source: "queue warehouse_queue", Reason: store.ReasonUnreadable, Body: body})
				if err != nil {
					t.Fatal(err)
				}
				code, out, errs := cli(t, "deliveries", "show", id.String(), "--body", "--format", "json", "--database", env.StoreURL)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				var doc struct {
					Entry struct {
						Body       *string `json:"body"`
						BodyBase64 *string `json:"bodyBase64"`
					} `json:"entry"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Entry.Body == nil {
					t.Fatalf("%v:\n%s", err, out)
				}
				got := []byte(*doc.Entry.Body)
				if doc.Entry.BodyBase64 != nil {
					if utf8.Valid(body) {
						t.Errorf("a UTF-8 body has bodyBase64")
					}
					if got, err = base64.StdEncoding.DecodeString(*doc.Entry.BodyBase64); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(got, body) {
					t.Errorf("body of %d bytes came out as %d bytes %q", len(body), len(got), got)
				}
			}
		})
	}
}
