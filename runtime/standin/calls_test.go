package standin

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/project"
)

// Issue 30, item 6: the service stand-in prints each call it takes — operation, method,
// path, headers, body, answer — with every credential redacted (the Authorization header,
// a header named like a key, and any config secret's value wherever it appears), and
// answers a status set by Answer, for an operation or a subscriber, the times asked.
func TestServiceStandInPrintsCallsAndAnswersAStatus(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	if res.Diags.HasErrors() {
		t.Fatal("examples/warehouse does not check")
	}
	var calls bytes.Buffer
	w, err := Start(context.Background(), res.Program, Options{Calls: &calls, Environ: []string{"PACKING_TOKEN=tok-s3cr3t-value"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	post := func() int {
		req, _ := http.NewRequest("POST", w.ServicesURL+"/accounts/warehouse-1/jobs", strings.NewReader(`{"order_id":"o-1","note":"tok-s3cr3t-value"}`))
		req.Header.Set("Authorization", "Bearer tok-s3cr3t-value")
		req.Header.Set("X-Api-Key", "another-key")
		req.Header.Set("Idempotency-Key", "k-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if _, err := w.Answer("nobody", 503, 1); err == nil || !strings.Contains(err.Error(), "the stand-in answers: pack_order, packing.jobs.create_job") {
		t.Fatalf("an unknown target: %v", err)
	}
	if _, err := w.Answer("pack_order", 99, 1); err == nil || !strings.Contains(err.Error(), "from 200 to 599") {
		t.Fatalf("status 99: %v", err)
	}
	what, err := w.Answer("pack_order", 503, 2)
	if err != nil || what != "packing.jobs.create_job: the next 2 calls answered 503, then samples again" {
		t.Fatalf("Answer = %q, %v", what, err)
	}
	if got := []int{post(), post(), post()}; got[0] != 503 || got[1] != 503 || got[2] != 200 {
		t.Fatalf("statuses %v, want 503 503 200", got)
	}
	if _, err := w.Answer("packing.jobs.create_job", 429, 0); err != nil {
		t.Fatal(err)
	}
	if post() != 429 || post() != 429 {
		t.Fatal("every call is not answered 429")
	}
	if _, err := w.Answer("packing.jobs.create_job", 0, 0); err != nil || post() != 200 {
		t.Fatalf("ok does not bring the samples back: %v", err)
	}
	out := calls.String()
	for _, want := range []string{
		"jadpo dev: call to packing.jobs.create_job: POST /accounts/warehouse-1/jobs\n",
		"Authorization: [redacted]", "X-Api-Key: [redacted]", "Idempotency-Key: k-1",
		`  body: {"order_id":"o-1","note":"[redacted]"}`,
		"  answered 503 as /answer asked (1 more call)\n",
		"  answered 503 as /answer asked (samples again from the next call)\n",
		"  answered 200 with a sample of its output\n",
		"  answered 429 as /answer asked (every call, until /answer ... ok)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the calls printed lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tok-s3cr3t-value") || strings.Contains(out, "another-key") {
		t.Fatalf("a secret was printed:\n%s", out)
	}
}

// A producer's text in a call (its path, a header, the body) reaches the terminal
// escaped: no control or bidirectional character, with Options.Shown or without.
func TestServiceStandInEscapesWhatItPrints(t *testing.T) {
	res := check.Check(project.Load(filepath.Join(reporoot.Dir(t), "examples", "warehouse")))
	if res.Diags.HasErrors() {
		t.Fatal("examples/warehouse does not check")
	}
	for _, shown := range []func(string) string{nil, func(s string) string { return strings.NewReplacer("\x1b", `\x1b`, "\u202e", `\u202e`).Replace(s) }} {
		var calls bytes.Buffer
		w, err := Start(context.Background(), res.Program, Options{Calls: &calls, Shown: shown, Environ: []string{"PACKING_TOKEN=tok-s3cr3t-value"}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", w.ServicesURL+"/accounts/warehouse-1/jobs", strings.NewReader(`{"order_id":"o-1","note":"\u001b]52;c;cHduZWQ=\u0007 \u202eLHD"}`))
		req.Header.Set("X-Note", "\u202eevil")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		w.Close()
		out := calls.String()
		if !strings.Contains(out, "call to packing.jobs.create_job") {
			t.Fatalf("the call was not printed:\n%s", out)
		}
		for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
			if strings.Contains(out, raw) {
				t.Errorf("%q reached the terminal (Shown set: %v):\n%s", raw, shown != nil, out)
			}
		}
	}
}
