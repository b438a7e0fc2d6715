package runtime_test

// `provide email` end to end, on every store adapter: examples/shipmail
// receives an order_shipped message, keeps it, and its subscriber's
// `attempt mail.send(...)` goes through Resend.v1's mapping to emails.send,
// on a local stand-in (providers/fakes/emailfake) that records each request.

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/emailfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// The example's retry (examples/shipmail: mail_customer).
var mailRetry = ir.Retry{MaxAttempts: 4, FirstDelayMS: 30_000, MaxDelayMS: 600_000}

const mailFrom = "Shop <orders@shop.example>"

// mailWorld is an email test's world: examples/shipmail, a store, an
// injected clock, a seeded rand and its mirror, the runtime's log.
type mailWorld struct {
	t      *testing.T
	env    *runtimetest.MailEnv
	st     store.Store
	clock  *deliverClock
	rt     *runtime.Runtime
	mirror *rand.Rand
	log    *bytes.Buffer
}

func newMailWorld(t *testing.T, kind string) *mailWorld {
	t.Helper()
	w := &mailWorld{t: t, env: runtimetest.NewMail(t, kind, checktest.ExamplePlan(t, "shipmail")), clock: &deliverClock{t: deliverT0},
		mirror: rand.New(rand.NewPCG(deliverSeed1, deliverSeed2)), log: &bytes.Buffer{}}
	if s := w.env.Plan.Subscribers; len(s) != 1 || s[0].Name != "mail_customer" || s[0].Retry != mailRetry {
		t.Fatalf("the example's subscribers are %+v, the tests expect mail_customer with retry %+v", s, mailRetry)
	}
	w.st = w.env.Store()
	w.st.SetClock(w.clock.Now)
	w.rt = w.runtime()
	return w
}

func (w *mailWorld) runtime() *runtime.Runtime {
	return w.env.Runtime(w.st, runtime.Options{Now: w.clock.Now, Rand: rand.New(rand.NewPCG(deliverSeed1, deliverSeed2)),
		Logger: slog.New(slog.NewJSONHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
}

// keep keeps an OrderShipped event for mail_customer, as a tick would.
func (w *mailWorld) keep(n, to, text, html string) store.ID {
	w.t.Helper()
	fields := map[string]string{"order_id": "o-" + n, "customer_email": to, "carrier": "dhl", "summary": text}
	if html != "" {
		fields["summary_html"] = html
	}
	ev, _ := json.Marshal(fields)
	res, err := w.st.KeepBatch(context.Background(), []store.Keep{{Source: "queue orders_queue", ReceivedID: n,
		EventName: "OrderShipped", EventJSON: ev, Subscribers: []string{"mail_customer"}}})
	if err != nil || res[0].Outcome != store.Kept {
		w.t.Fatalf("keep: %+v %v", res, err)
	}
	entries, err := w.st.List(context.Background(), store.Filter{State: store.ListPending})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range entries {
		if e.ReceivedID == n {
			return e.ID
		}
	}
	w.t.Fatalf("no pending delivery for %s", n)
	return store.ID{}
}

func (w *mailWorld) deliver(want runtime.DeliverReport) {
	w.t.Helper()
	rep, err := w.rt.Deliver(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	rep.Full = false
	if rep != want {
		w.t.Fatalf("deliver report %+v, want %+v", rep, want)
	}
}

// claimed draws what the runtime draws when it claims attempt n of a
// mail_customer delivery: the pause should it fail temporarily, uniform in
// [0, min(30s*2^(n-1), 10m)], and nothing for the last attempt.
func (w *mailWorld) claimed(n int) time.Duration {
	if n >= mailRetry.MaxAttempts {
		return 0
	}
	ceil := min(30*time.Second<<(n-1), 10*time.Minute)
	return time.Duration(w.mirror.Int64N(int64(ceil) + 1))
}

func (w *mailWorld) expect(id store.ID, state store.DeliveryState, attempts int, code string, next time.Time) {
	w.t.Helper()
	e, err := w.st.Show(context.Background(), id, false)
	if err != nil {
		w.t.Fatal(err)
	}
	if e.RowState != string(state) || e.Attempts != attempts || e.Code != code {
		w.t.Fatalf("%s: %s after %d attempts (code %q), want %s after %d (code %q)", id, e.RowState, e.Attempts, e.Code, state, attempts, code)
	}
	if !next.IsZero() && !e.NextAttemptAt.Equal(next.Truncate(time.Microsecond)) {
		w.t.Fatalf("%s: next attempt at %v, want %v", id, e.NextAttemptAt, next.Truncate(time.Microsecond))
	}
}

// noToken fails when the API key appears in the runtime's log.
func (w *mailWorld) noToken() {
	w.t.Helper()
	if w.log.Len() == 0 {
		w.t.Fatal("the runtime logged nothing")
	}
	if bytes.Contains(w.log.Bytes(), []byte(runtimetest.Canary)) {
		w.t.Errorf("the API key appears in the log:\n%s", w.log)
	}
}

// Acceptance 1: a tick receives and keeps the shipped order, and in its
// delivery step the stand-in gets one mail: POST /emails with the bearer
// key, from the connection's sender, to the event's customer_email, the
// handler's subject, the event's text and HTML.
func TestEmailTickSendsTheMappedMail(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newMailWorld(t, kind)
		text, html := "Your order o-1 is on its way with DHL.\nThank you for shopping with us.", "<p>Your order o-1 is on its way.</p>"
		w.env.Send("orders_queue", runtimetest.ShippedMail("1", "ann@example.com", text, html))
		// The tick receives from the SQS fake, which runs on the wall clock:
		// so does this test's runtime.
		rt := w.env.Runtime(w.st, runtime.Options{Logger: slog.New(slog.NewJSONHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		rep, err := rt.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Kept != 1 || rep.Delivered.Claimed != 1 || rep.Delivered.Succeeded != 1 {
			t.Fatalf("tick %+v", rep)
		}
		mails := w.env.Mail.Mails()
		if len(mails) != 1 {
			t.Fatalf("the stand-in got %d mails, want 1: %+v", len(mails), mails)
		}
		m := mails[0]
		if m.Method != "POST" || m.Path != "/emails" || m.Auth != "Bearer "+runtimetest.MailToken || m.Status != 200 {
			t.Errorf("request %s %s, Authorization %q, answered %d", m.Method, m.Path, m.Auth, m.Status)
		}
		want := map[string]any{"from": mailFrom, "to": "ann@example.com", "subject": "Your order has shipped", "text": text, "html": html}
		if !reflect.DeepEqual(m.Body, want) {
			t.Errorf("body\n got %v\nwant %v", m.Body, want)
		}
		stats, err := w.st.Stats(context.Background())
		if err != nil || stats.Outbox != 1 || stats.Deliveries[store.DeliverySucceeded] != 1 || len(stats.Deliveries) != 1 {
			t.Fatalf("stats %+v %v", stats, err)
		}
		w.noToken()
	})
}

// A text-only message leaves html out of the request, and an html-only
// send (the handler given no text) leaves text out.
func TestEmailTextOnlyAndHTMLOnly(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newMailWorld(t, kind)
		w.keep("1", "ann@example.com", "Only text.", "")
		w.claimed(1)
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		sent := w.env.Mail.Sent()
		if len(sent) != 1 {
			t.Fatalf("sent %+v", sent)
		}
		if want := map[string]any{"from": mailFrom, "to": "ann@example.com", "subject": "Your order has shipped", "text": "Only text."}; !reflect.DeepEqual(sent[0].Body, want) {
			t.Errorf("text-only body\n got %v\nwant %v", sent[0].Body, want)
		}

		// The handler as `send(to: subject: html:)`.
		step := &w.env.Plan.Subscribers[0].Handlers[0].Steps[0]
		if _, ok := step.Args["text"]; !ok || step.Operation != "send" {
			t.Fatalf("the example's step changed: %+v", step)
		}
		delete(step.Args, "text")
		w.rt = w.runtime()
		w.keep("2", "bob@example.com", "Not sent.", "<p>Only HTML.</p>")
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		sent = w.env.Mail.Sent()
		if len(sent) != 2 {
			t.Fatalf("sent %+v", sent)
		}
		if want := map[string]any{"from": mailFrom, "to": "bob@example.com", "subject": "Your order has shipped", "html": "<p>Only HTML.</p>"}; !reflect.DeepEqual(sent[1].Body, want) {
			t.Errorf("html-only body\n got %v\nwant %v", sent[1].Body, want)
		}
		if sent[1].FirstLine() != "<p>Only HTML.</p>" {
			t.Errorf("first line %q", sent[1].FirstLine())
		}
	})
}

// Resend's temporary refusals (429 rate_limit_exceeded, 5xx) are retried
// after the subscriber's backoff, to the microsecond the mirror predicts;
// the mail is sent on the attempt that is taken.
func TestEmailTemporaryRefusalRetriedWithBackoff(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newMailWorld(t, kind)
		id := w.keep("1", "ann@example.com", "Hello.", "")
		w.env.Mail.Refuse(emailfake.Refusal{Status: 429, Name: "rate_limit_exceeded"}, emailfake.Refusal{Status: 500, Name: "application_error"})

		pause := w.claimed(1)
		if pause > 30*time.Second {
			t.Fatalf("the first pause %v is above first_delay", pause)
		}
		next := deliverT0.Add(pause)
		w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
		w.expect(id, store.DeliveryRetryWait, 1, "rate_limit_exceeded", next)

		// Not due a microsecond before its time; due at it.
		w.clock.Set(next.Truncate(time.Microsecond).Add(-time.Microsecond))
		w.deliver(runtime.DeliverReport{})
		w.clock.Set(next.Truncate(time.Microsecond))
		pause = w.claimed(2)
		if pause > time.Minute {
			t.Fatalf("the second pause %v is above twice first_delay", pause)
		}
		next = w.clock.Now().Add(pause)
		w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
		w.expect(id, store.DeliveryRetryWait, 2, "application_error", next)

		w.clock.Set(next.Truncate(time.Microsecond))
		w.claimed(3)
		w.deliver(runtime.DeliverReport{Claimed: 1, Succeeded: 1})
		w.expect(id, store.DeliverySucceeded, 3, "", time.Time{})
		if n, s := len(w.env.Mail.Mails()), len(w.env.Mail.Sent()); n != 3 || s != 1 {
			t.Errorf("the stand-in got %d requests and sent %d mails, want 3 and 1", n, s)
		}
		w.noToken()
	})
}

// Temporary refusals that outlast the budget fail the delivery with the
// last code after max_attempts.
func TestEmailTemporaryRefusalsSpendTheBudget(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newMailWorld(t, kind)
		id := w.keep("1", "ann@example.com", "Hello.", "")
		for range mailRetry.MaxAttempts {
			w.env.Mail.Refuse(emailfake.Refusal{Status: 429, Name: "daily_quota_exceeded"})
		}
		for n := 1; n < mailRetry.MaxAttempts; n++ {
			next := w.clock.Now().Add(w.claimed(n))
			w.deliver(runtime.DeliverReport{Claimed: 1, Retried: 1})
			w.expect(id, store.DeliveryRetryWait, n, "daily_quota_exceeded", next)
			w.clock.Set(next.Truncate(time.Microsecond))
		}
		w.claimed(mailRetry.MaxAttempts)
		w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
		w.expect(id, store.DeliveryFailed, mailRetry.MaxAttempts, "daily_quota_exceeded", time.Time{})
		if n := len(w.env.Mail.Mails()); n != mailRetry.MaxAttempts {
			t.Errorf("the stand-in got %d requests, want %d", n, mailRetry.MaxAttempts)
		}
	})
}

// A permanent refusal parks the delivery as failed at once, with Resend's
// code; nothing is tried again.
func TestEmailPermanentRefusalParksWithItsCode(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		for i, r := range []emailfake.Refusal{{Status: 422, Name: "validation_error"}, {Status: 403, Name: "invalid_from_address"},
			{Status: 401, Name: "restricted_api_key"}} {
			w := newMailWorld(t, kind)
			id := w.keep("1", "ann@example.com", "Hello.", "")
			w.env.Mail.Refuse(r)
			w.claimed(1)
			w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
			w.expect(id, store.DeliveryFailed, 1, r.Name, time.Time{})
			w.clock.Advance(24 * time.Hour)
			w.deliver(runtime.DeliverReport{})
			if n := len(w.env.Mail.Mails()); n != 1 {
				t.Errorf("%d: the stand-in got %d requests, want 1", i, n)
			}
			w.noToken()
		}
	})
}

// A wrong API key is Resend's 403 invalid_api_key: permanent, and the key
// sent is in no log line.
func TestEmailWrongKeyIsPermanent(t *testing.T) {
	w := newMailWorld(t, "sqlite")
	for i, kv := range w.env.Environ {
		if strings.HasPrefix(kv, "RESEND_API_KEY=") {
			w.env.Environ[i] = "RESEND_API_KEY=re_wrong_" + runtimetest.Canary
		}
	}
	w.rt = w.runtime()
	id := w.keep("1", "ann@example.com", "Hello.", "")
	w.claimed(1)
	w.deliver(runtime.DeliverReport{Claimed: 1, Failed: 1})
	w.expect(id, store.DeliveryFailed, 1, "invalid_api_key", time.Time{})
	w.noToken()
	// The kept error and the log say what to check, by the config field's
	// name.
	e, err := w.st.Show(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	const hint = "(HTTP 403, permanent); check the credential's config field resend_api_key"
	if !strings.HasSuffix(e.Error, hint) || !strings.Contains(w.log.String(), hint) {
		t.Errorf("last error %q, want it to end %q; log:\n%s", e.Error, hint, w.log)
	}
}
