package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
)

// FuzzDevTypedLine: whatever line is typed at `jadpo dev`, dev answers with its own
// lines, never a panic and never a provider's raw error (the SQS fake's
// com.amazon.coral.validate#ValidationException reached the user).
func FuzzDevTypedLine(f *testing.F) {
	for _, seed := range []string{
		"warehouse_queue", "warehouse_queue {'a':1}", "warehouse_queue {}", `warehouse_queue "x"`, "nope {}",
		devShipped, "/answer pack_order 503 2", "/answer pack_order ok", "/answer packing.jobs.create_job 599",
		"/answer x y z w v", "/retry d1 p2", "/retry", "/retry x", "/help", "/", "warehouse_queue \x1b[2J",
		"warehouse_queue {\"a\":1} {\"b\":2}", "returns_queue [1,2,3]",
	} {
		f.Add(seed)
	}
	dir := checktest.CopyExample(f, "warehouse", f.TempDir())
	var errOut bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errOut}
	w, err := e.startDev(context.Background(), dir, &appFlags{logFormat: "json"}, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(w.close)
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.TrimSpace(line)
		if line == "" || strings.ContainsAny(line, "\n\r") {
			return
		}
		errOut.Reset()
		w.send(context.Background(), e, line)
		got := errOut.String()
		if !strings.HasPrefix(got, "jadpo dev: ") {
			t.Fatalf("%q: dev answered %q", line, got)
		}
		if strings.Contains(got, "com.amazon") || strings.Contains(got, "Exception") {
			t.Fatalf("%q: a provider's raw error reached the user: %q", line, got)
		}
	})
}
