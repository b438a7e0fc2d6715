package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
)

// devSession is a real `jadpo dev` in process, typed at over a pipe, its standard error
// read as it grows. It runs wholly on the wall clock.
type devSession struct {
	t      *testing.T
	typed  *io.PipeWriter
	errOut *syncBuffer
	exited chan int
	cancel context.CancelFunc
}

func startDev(t *testing.T, dir string) *devSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in, typed := io.Pipe()
	s := &devSession{t: t, typed: typed, errOut: &syncBuffer{}, exited: make(chan int, 1), cancel: cancel}
	go func() {
		s.exited <- runContext(ctx, []string{"dev", dir, "--log-format", "text"}, in, io.Discard, s.errOut)
	}()
	t.Cleanup(func() { cancel(); typed.Close() })
	s.waitFor(`end of input stops dev`)
	return s
}

func (s *devSession) typeLine(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.typed, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// waitFor waits until standard error matches pattern (a regexp) and returns the match.
func (s *devSession) waitFor(pattern string) string {
	s.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindString(s.errOut.String()); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("jadpo dev never printed %q:\n%s", pattern, s.errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends input: dev delivers what is due and exits 0.
func (s *devSession) stop() string {
	s.t.Helper()
	s.typed.Close()
	select {
	case code := <-s.exited:
		if code != 0 {
			s.t.Fatalf("jadpo dev: exit %d\n%s", code, s.errOut.String())
		}
	case <-time.After(60 * time.Second):
		s.t.Fatal("jadpo dev did not stop at the end of input")
	}
	return s.errOut.String()
}

const devShipped = `warehouse_queue {"id":"m-1","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":1}]}`

// Issue 30, item 6, the recorded run docs/guide/when-something-fails.md walks: inside one
// `jadpo dev`, the service stand-in is told to answer 503 twice; the subscriber's call is
// printed (its token redacted) and fails, is retried and fails again, and the delivery is
// given up (failed, with its error in `deliveries show`); `jadpo deliveries retry`, from
// another command while dev runs, makes it pending, and dev runs it: it succeeds.
func TestDevLoopFailsRetriesGivesUpAndSucceeds(t *testing.T) {
	dir := checktest.CopyExample(t, "warehouse", t.TempDir(), checktest.Edit{
		File: "app.jadpo",
		Old:  "retry: { max_attempts: 8 first_delay: 10s max_delay: 1h }",
		New:  "retry: { max_attempts: 2 first_delay: 1s max_delay: 1s }",
	})
	t.Setenv("PACKING_TOKEN", "tok-very-secret-123")
	dev := startDev(t, dir)
	dev.typeLine("/answer pack_order 503 2")
	dev.waitFor(`packing\.jobs\.create_job: the next 2 calls answered 503, then samples again`)
	dev.typeLine(devShipped)
	dev.waitFor(`sent to warehouse_queue`)
	dev.waitFor(`(?s)call to packing\.jobs\.create_job: POST /accounts/warehouse-1/jobs\n  headers: [^\n]*Authorization: \[redacted\][^\n]*\n  body: \{"order_id":"o-1"[^\n]*\n  answered 503 as /answer asked \(1 more call\)`)
	dev.waitFor(`delivery settled" delivery=d1 subscriber=pack_order [^\n]*attempt=1 outcome=retry_wait error_code=http_503`)
	dev.waitFor(`answered 503 as /answer asked \(samples again from the next call\)`)
	dev.waitFor(`delivery settled" delivery=d1 subscriber=pack_order [^\n]*attempt=2 outcome=failed error_code=http_503`)

	// The operator's view while dev runs: failed, with the last error's text and status.
	out, errOut, code := runCLI("deliveries", "show", "d1", "--dir", dir)
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "last error:  jobs.create_job refused: http_503 (HTTP 503, temporary)") {
		t.Fatalf("deliveries show d1 while dev runs: exit %d\n%s%s", code, out, errOut)
	}
	// Each attempt with its time, number, outcome, code and text (issue 27).
	if !regexp.MustCompile(`(?m)^  attempt:     \d{4}-\d\d-\d\dT[0-9:]+Z  #1  retry_wait  http_503  jobs\.create_job refused: http_503 \(HTTP 503, temporary\)\n  attempt:     \S+  #2  failed  http_503  jobs\.create_job refused`).MatchString(out) {
		t.Fatalf("deliveries show d1 lists not both attempts:\n%s", out)
	}
	out, errOut, code = runCLI("deliveries", "retry", "d1", "--dir", dir)
	if code != 0 || !strings.Contains(out, "d1 is pending again") {
		t.Fatalf("deliveries retry d1 while dev runs: exit %d\n%s%s", code, out, errOut)
	}
	dev.waitFor(`answered 200 with a sample of its output`)
	dev.waitFor(`delivery settled" delivery=d1 subscriber=pack_order [^\n]*outcome=succeeded`)
	transcript := dev.stop()
	if strings.Contains(transcript, "tok-very-secret-123") {
		t.Fatalf("the token was printed:\n%s", transcript)
	}
	out, _, _ = runCLI("deliveries", "--state", "succeeded", "--dir", dir)
	if !regexp.MustCompile(`d1\s+succeeded\s+subscriber pack_order`).MatchString(out) {
		t.Fatalf("deliveries --state succeeded:\n%s", out)
	}
	out, _, _ = runCLI("deliveries", "--state", "all", "--dir", dir)
	if !regexp.MustCompile(`d1\s+succeeded`).MatchString(out) {
		t.Fatalf("deliveries --state all leaves out the succeeded delivery:\n%s", out)
	}
	if out, _, _ := runCLI("deliveries", "show", "d1", "--dir", dir); strings.Contains(out, "last error") {
		t.Fatalf("a succeeded delivery shows an error:\n%s", out)
	}
	out, _, _ = runCLI("deliveries", "show", "d1", "--dir", dir, "--json")
	var shown struct {
		Entry struct {
			AttemptLog []struct {
				Attempt int    `json:"attempt"`
				At      string `json:"at"`
				Outcome string `json:"outcome"`
				Code    string `json:"code"`
				Error   string `json:"error"`
			} `json:"attemptLog"`
		} `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("deliveries show --json: %v\n%s", err, out)
	}
	var got []string
	for _, a := range shown.Entry.AttemptLog {
		got = append(got, fmt.Sprintf("%d %s %s %t", a.Attempt, a.Outcome, a.Code, a.At != "" && (a.Error != "") == (a.Outcome != "succeeded")))
	}
	if strings.Join(got, ", ") != "1 retry_wait http_503 true, 2 failed http_503 true, 1 succeeded  true" {
		t.Fatalf("deliveries show --json's attemptLog = %q\n%s", got, out)
	}
	if os.Getenv("JADPO_WRITE_TRANSCRIPT") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("JADPO_WRITE_TRANSCRIPT")), []byte(transcript), 0o644)
	}
	t.Logf("the recorded run:\n%s", transcript)
}

// Issue 30, item 6: a typed line is checked before anything is sent: a body that is not
// JSON, a queue name with no body (it printed the SQS fake's raw
// com.amazon.coral.validate#ValidationException), an unknown queue or command each get
// the `<queue> <json body>` form and the queue list; /answer refuses an unknown target,
// naming the known ones; /retry retries inside dev.
func TestDevChecksTypedLines(t *testing.T) {
	dir := checktest.CopyExample(t, "warehouse", t.TempDir())
	dev := startDev(t, dir)
	dev.typeLine(`warehouse_queue {'a':1}`)
	dev.typeLine(`warehouse_queue`)
	dev.typeLine(`nope {}`)
	dev.typeLine(`/frobnicate`)
	dev.typeLine(`/answer nobody 503`)
	dev.typeLine(`/answer pack_order teapot`)
	dev.typeLine(`/retry d99`)
	dev.typeLine(`/help`)
	dev.waitFor(`/help                           this list`)
	got := dev.stop()
	for _, want := range []string{
		"jadpo dev: warehouse_queue: the body is not JSON (at byte 2: ",
		"so nothing was sent; type `<queue> <json body>` (queues: returns_queue, warehouse_queue)",
		"jadpo dev: warehouse_queue: no message body; type `<queue> <json body>`",
		`jadpo dev: no queue "nope"; type ` + "`<queue> <json body>`" + ` to send (queues: returns_queue, warehouse_queue)`,
		"jadpo dev: no command /frobnicate; dev's commands are /answer, /retry and /help",
		`jadpo dev: /answer: no subscriber or service operation "nobody"; the stand-in answers: pack_order, packing.jobs.create_job`,
		`jadpo dev: /answer: "teapot" is not an HTTP status`,
		"jadpo dev: /retry: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "com.amazon") || strings.Contains(got, "ValidationException") || strings.Contains(got, "sent to") {
		t.Errorf("a bad line reached the queue:\n%s", got)
	}
}
