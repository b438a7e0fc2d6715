package runtimetest

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/emailfake"
	"github.com/jadpo/jadpo/providers/sqsfake"
)

// MailToken is the Resend API key the mail world's app is given: a canary,
// so tests can look for it in every output.
const MailToken = "re_" + Canary

// MailEnv is examples/shipmail's world: its orders queue on an SQS fake,
// its Resend connection on an emailfake that records each mail.
type MailEnv struct {
	*Env
	Mail *emailfake.Fake
}

// NewMail builds examples/shipmail's world for its plan on the given store
// ("sqlite" or "postgres").
func NewMail(t testing.TB, storeKind string, plan *ir.Program) *MailEnv {
	t.Helper()
	e := &Env{T: t, Plan: plan, QueueURLs: map[string]string{}}
	e.Fake = sqsfake.New(sqsfake.Options{Credentials: map[string]string{"AKIDTEST": Canary}})
	e.FakeSrv = httptest.NewServer(e.Fake)
	t.Cleanup(e.FakeSrv.Close)
	u, err := e.Fake.CreateQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.QueueURLs["orders_queue"] = u
	mail, mailURL := emailfake.NewTest(t, emailfake.Options{Method: "POST", Path: "/emails", Token: MailToken})
	e.Environ = []string{
		"AWS_ACCESS_KEY_ID=AKIDTEST",
		"AWS_SECRET_ACCESS_KEY=" + Canary,
		"SQS_HOST=" + e.FakeSrv.URL,
		"ORDERS_QUEUE_URL=" + u,
		"RESEND_API_KEY=" + MailToken,
		"RESEND_HOST=" + mailURL,
		"MAIL_FROM=Shop <orders@shop.example>",
	}
	e.StoreURL = freshStore(t, storeKind)
	return &MailEnv{Env: e, Mail: mail}
}

// ShippedMail is an order_shipped body for examples/shipmail; html "" leaves
// summary_html out.
func ShippedMail(id, to, text, html string) string {
	m := map[string]string{"id": id, "type": "order_shipped", "order_id": "o-" + id, "customer_email": to, "carrier": "dhl", "summary": text}
	if html != "" {
		m["summary_html"] = html
	}
	b, _ := json.Marshal(m)
	return string(b)
}
