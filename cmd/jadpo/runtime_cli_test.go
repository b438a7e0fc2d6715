package main

import (
	"strings"
	"testing"

	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// Issue 11, point 12: a start-up error is one line, even when its cause
// spans several (pgx's dial errors: one line per host tried).
func TestStartupErrorIsOneLine(t *testing.T) {
	w := newSecretsWorld(t, "sqlite")
	out, errOut, code := runCLI("tick", w.dir, "--database", "postgres://jadpo@127.0.0.1:1,127.0.0.1:2/events?sslmode=disable", "--log-format", "json")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	line := strings.TrimSuffix(errOut, "\n")
	if strings.ContainsAny(line, "\r\n") || !strings.HasPrefix(line, "jadpo: cannot open the events' store") ||
		!strings.Contains(line, "127.0.0.1:1") || !strings.Contains(line, "127.0.0.1:2") {
		t.Fatalf("the start-up error is not one line naming both hosts:\n%s", errOut)
	}
}

// Issue 11, point 12: `jadpo tick` exits 1 when acknowledgements failed
// (the messages were kept, and come back as repeats): before, it exited 0.
func TestTickExitsOneWhenAcknowledgementsFail(t *testing.T) {
	w := newSecretsWorld(t, "sqlite")
	// The batch call and the single one it falls back to both fail.
	w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultServerError, Operation: "DeleteMessageBatch", Fraction: 1})
	w.env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultServerError, Operation: "DeleteMessage", Fraction: 1})
	w.env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
	db := "sqlite:" + t.TempDir() + "/events.sqlite"
	out, errOut, code := runCLI("tick", w.dir, "--database", db, "--log-format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(out, "received 1, kept 1") || !strings.Contains(errOut, "acknowledging failed; those messages will come back as repeats") {
		t.Fatalf("stdout %s\nstderr %s", out, errOut)
	}
	// With the deletes answering again, a tick with nothing left unacknowledged exits 0.
	w.env.Fake.ClearFaults()
	if out, errOut, code := runCLI("tick", w.dir, "--database", db, "--log-format", "json"); code != 0 {
		t.Fatalf("after the fault: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}
