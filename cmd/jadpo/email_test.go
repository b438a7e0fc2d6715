package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/providers/fakes/emailfake"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// The shipmail example's plan: a connection with an email mapping, and a
// handler step `send` through it.
func TestBuildShipmailPlan(t *testing.T) { testBuildPlan(t, "shipmail") }

// Acceptance 2: jadpo dev points the Resend connection at a local stand-in
// and prints each mail it would send: recipient, subject, the text's first
// line; nothing leaves the machine (the host is the stand-in's, and the
// key sent is the stand-in's own, not the environment's).
func TestDevPrintsTheMail(t *testing.T) {
	t.Setenv("RESEND_HOST", "https://api.resend.com")
	t.Setenv("RESEND_API_KEY", "re_"+runtimetest.Canary)
	body := `{"id":"d-1","type":"order_shipped","order_id":"o-1","customer_email":"ann@example.com","carrier":"dhl",` +
		`"summary":"Your order o-1 is on its way with DHL.\nThank you for shopping with us."}`
	errOut := runDevUntil(t, "shipmail", "orders_queue "+body+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 && s.Deliveries[store.DeliverySucceeded] == 1 })
	want := `jadpo dev: mail (mail, not sent) to ann@example.com: "Your order has shipped" — Your order o-1 is on its way with DHL.` + "\n"
	if !strings.Contains(errOut, want) {
		t.Fatalf("the mail was not shown as\n%s\nin:\n%s", want, errOut)
	}
	if strings.Contains(errOut, "Thank you") {
		t.Errorf("more than the text's first line was printed:\n%s", errOut)
	}
	if !strings.Contains(errOut, "email stand-in for mail on http://127.0.0.1:") {
		t.Errorf("the stand-in's address is not shown:\n%s", errOut)
	}
	if strings.Contains(errOut, runtimetest.Canary) {
		t.Errorf("the environment's API key was printed:\n%s", errOut)
	}
}

// Issue 24: a mail's recipient and first line come from an event; dev
// writes them escaped (lang/termtext), so an ESC sequence, OSC 52 (which
// writes the clipboard) or U+202E reaches the terminal as text a reader can
// see. A recipient holding U+202E is no email address: that event is parked
// and nothing is mailed for it.
func TestDevEscapesTheMailLine(t *testing.T) {
	t.Setenv("RESEND_HOST", "https://api.resend.com")
	t.Setenv("RESEND_API_KEY", "re_"+runtimetest.Canary)
	body := `{"id":"d-1","type":"order_shipped","order_id":"o-1","customer_email":"ann@example.com","carrier":"dhl",` +
		`"summary":"On \u001b[2Jits \u001b]52;c;cHduZWQ=\u0007way \u202eLHD\u009b."}`
	spoof := `{"id":"d-2","type":"order_shipped","order_id":"o-2","customer_email":"\u202emoc.live@ann","carrier":"dhl","summary":"Spoofed."}`
	errOut := runDevUntil(t, "shipmail", "orders_queue "+body+"\norders_queue "+spoof+"\n",
		func(s store.Stats) bool {
			settled := s.Outbox+s.ParkedTotal() == 2 && s.Deliveries[store.DeliverySucceeded] == s.Outbox
			if settled && (s.Outbox != 1 || s.ParkedTotal() != 1) {
				t.Errorf("kept %d, parked %d: want the spoofed recipient parked", s.Outbox, s.ParkedTotal())
			}
			return settled
		})
	want := `jadpo dev: mail (mail, not sent) to ann@example.com: "Your order has shipped" — On \x1b[2Jits \x1b]52;c;cHduZWQ=\x07way \u202eLHD\u009b.` + "\n"
	if !strings.Contains(errOut, want) {
		t.Fatalf("the mail was not shown as\n%s\nin:\n%s", want, errOut)
	}
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(errOut, raw) {
			t.Errorf("%q reached the terminal:\n%s", raw, errOut)
		}
	}
	if strings.Contains(errOut, "Spoofed") {
		t.Errorf("a recipient with U+202E was mailed:\n%s", errOut)
	}
}

// A connection whose host is the package's own (no `host:` line, so
// https://api.resend.com) is pointed at the stand-in all the same: dev
// replaces it in its own copy of the plan, and the mail is printed, not sent.
func TestDevPointsAnEmailPackagesOwnHost(t *testing.T) {
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "shipmail"), dir); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.jadpo")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "    host: config.resend_host\n", "", 1)
	if edited == string(b) {
		t.Fatal("the example's mail connection changed")
	}
	if err := os.WriteFile(app, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `{"id":"d-2","type":"order_shipped","order_id":"o-2","customer_email":"bob@example.com","carrier":"dhl",` +
		`"summary":"On its way."}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut syncBuffer
	// At the end of input dev receives and delivers what was sent, then exits.
	code := runContext(ctx, []string{"dev", dir}, strings.NewReader("orders_queue "+body+"\n"), &out, &errOut)
	errs := errOut.String()
	if code != 0 || !strings.Contains(errs, `mail (mail, not sent) to bob@example.com: "Your order has shipped" — On its way.`) {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
}

// The Resend API key (a secret config value in .env.local) is sent as the
// bearer token and printed nowhere: ticks that send, have a mail refused
// permanently, and meet a service that echoes the key in its refusal;
// deliveries list and show; check and build and the files it writes.
func TestNoResendKeyInAnyOutput(t *testing.T) {
	env := runtimetest.NewMail(t, "sqlite", checktest.ExamplePlan(t, "shipmail"))
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "shipmail"), dir); err != nil {
		t.Fatal(err)
	}
	var dotenv strings.Builder
	for _, kv := range env.Environ {
		k, v, _ := strings.Cut(kv, "=")
		dotenv.WriteString(k + `="` + v + "\"\n")
	}
	if err := os.WriteFile(filepath.Join(dir, ".env.local"), []byte(dotenv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "events.sqlite")
	w := &secretsWorld{dir: dir, s: &seen{}}
	env.Send("orders_queue", runtimetest.ShippedMail("1", "ann@example.com", "Sent.", "<p>Sent.</p>"))
	env.Send("orders_queue", "not json")
	w.inProcess(t, 0, "tick", dir, "--database", db, "--log-format", "json")
	sent := env.Mail.Sent()
	if len(sent) != 1 || sent[0].Auth != "Bearer "+runtimetest.MailToken {
		t.Fatalf("the key from .env.local was not sent: %+v", sent)
	}
	env.Mail.Refuse(emailfake.Refusal{Status: 422, Name: "validation_error"})
	env.Send("orders_queue", runtimetest.ShippedMail("2", "bob@example.com", "Refused.", ""))
	w.inProcess(t, 0, "tick", dir, "--database", db, "--log-format", "text")

	// A service that repeats the key it was sent in its refusal.
	echo := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(rw, `{"statusCode":403,"name":"invalid_api_key","message":"API key %s is invalid."}`, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := copyProject(dir, wrong); err != nil {
		t.Fatal(err)
	}
	mailURL := ""
	for _, kv := range env.Environ {
		if v, ok := strings.CutPrefix(kv, "RESEND_HOST="); ok {
			mailURL = v
		}
	}
	if err := os.WriteFile(filepath.Join(wrong, ".env.local"), []byte(strings.Replace(dotenv.String(), mailURL, echo.URL, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Send("orders_queue", runtimetest.ShippedMail("3", "cy@example.com", "Echoed.", ""))
	for _, format := range []string{"json", "text"} {
		w.inProcess(t, 0, "tick", wrong, "--database", db, "--log-format", format)
	}

	w.inProcess(t, 0, "deliveries", "--database", db)
	w.inProcess(t, 0, "deliveries", "list", "--state", "all", "--json", "--database", db)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.List(context.Background(), store.Filter{State: store.ListAll})
	if err != nil || len(entries) != 4 { // a parked message, and three deliveries, one succeeded
		t.Fatalf("entries %+v (%v)", entries, err)
	}
	for _, en := range entries {
		w.inProcess(t, 0, "deliveries", "show", en.ID.String(), "--body", "--database", db)
		w.inProcess(t, 0, "deliveries", "show", en.ID.String(), "--body", "--json", "--database", db)
	}
	w.inProcess(t, 0, "check", dir, "--format", "json")
	w.inProcess(t, 0, "build", dir)
	w.s.addFiles(t, filepath.Join(dir, "build"))
	w.s.check(t, []string{runtimetest.Canary}, map[string]string{
		"a kept message's log line":    `"msg":"kept"`,
		"a parked message's body":      "not json",
		"the permanent refusal":        "validation_error",
		"the echoing refusal's code":   "invalid_api_key",
		"the key's config in the plan": `"resend_api_key"`,
	})
}

// Issue 30, item 9: docs/guide/email.md said dev refuses a connection whose host does not
// come from config; dev points every email connection at its stand-in however its host is
// written (config, a literal, the package's own), and the guide now says so.
func TestDevPointsEveryEmailHostAtTheStandIn(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "guide", "email.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(guide), "refuses to start") {
		t.Fatal("docs/guide/email.md still says dev refuses a host that is not from config")
	}
	const sample = `orders_queue {"id":"o-1","type":"order_shipped","order_id":"o-1","customer_email":"ada@example.com","carrier":"dhl","summary":"Your order o-1 is on its way."}` + "\n"
	for name, host := range map[string]string{
		"config":  "    host: config.resend_host\n",
		"literal": "    host: \"https://api.resend.com\"\n",
		"package": "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t, "shipmail")
			app := filepath.Join(dir, "app.jadpo")
			b, _ := os.ReadFile(app)
			s := strings.Replace(string(b), "    host: config.resend_host\n", host, 1)
			if err := os.WriteFile(app, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			errOut, code := runDevToEnd(t, dir, sample, "--log-format", "json")
			if code != 0 || !strings.Contains(errOut, `jadpo dev: mail (mail, not sent) to ada@example.com: "Your order has shipped"`) {
				t.Fatalf("dev with the host written as %s: exit %d\n%s", name, code, errOut)
			}
		})
	}
}
