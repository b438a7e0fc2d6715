package runtimetest

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/emailfake"
	"github.com/jadpo/jadpo/providers/sqsfake"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
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

// NewMail builds examples/shipmail's world on the given store ("sqlite" or
// "postgres").
func NewMail(t testing.TB, storeKind string) *MailEnv {
	t.Helper()
	e := &Env{T: t, Root: RepoRoot(t), QueueURLs: map[string]string{}}
	res := check.Check(project.Load(filepath.Join(e.Root, "examples", "shipmail")))
	if res.Diags.HasErrors() {
		t.Fatalf("examples/shipmail does not check: %v", res.Diags)
	}
	e.Plan = res.Program
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
	switch storeKind {
	case "sqlite":
		e.StoreURL = "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	case "postgres":
		e.StoreURL = pgtest.FreshURL(t)
	default:
		t.Fatalf("unknown store %q", storeKind)
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
