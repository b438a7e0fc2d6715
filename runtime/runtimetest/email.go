package runtimetest

import (
	"encoding/json"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/fakes/emailfake"
	"github.com/jadpo/jadpo/runtime/standin"
)

// MailToken is the Resend API key the mail world's app is given: a canary,
// so tests can look for it in every output.
const MailToken = "re_" + Canary

// MailEnv is examples/shipmail's world: its orders queue on an SQS fake,
// its Resend connection on an email stand-in that records each mail.
type MailEnv struct {
	*Env
	Mail *emailfake.Fake
}

// NewMail builds examples/shipmail's world for its plan on the given store
// ("sqlite" or "postgres").
func NewMail(t testing.TB, storeKind string, plan *ir.Program) *MailEnv {
	t.Helper()
	e := newEnv(t, storeKind, plan, standin.Options{
		Environ:    []string{"MAIL_FROM=Shop <orders@shop.example>"},
		EmailToken: MailToken,
	})
	mail := e.World.Email("mail")
	if mail == nil {
		t.Fatal("the plan has no email connection named mail")
	}
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
