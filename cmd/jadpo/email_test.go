package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A connection whose host is the package's own cannot be pointed at the
// stand-in: dev refuses to start rather than send real mail.
func TestDevRefusesAnEmailHostItCannotPoint(t *testing.T) {
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
	// Were it to start, it would run until cancelled: the guard ends it, and
	// exit 0 fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut syncBuffer
	code := runContext(ctx, []string{"dev", dir}, strings.NewReader(""), &out, &errOut)
	errs := errOut.String()
	if code == 0 || !strings.Contains(errs, "connection mail sends email to its package's own host") ||
		!strings.Contains(errs, "host: config.<field>") {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
}
