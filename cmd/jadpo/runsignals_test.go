package main

// Issue 11, signals of run, tick and dev: the first SIGINT or SIGTERM
// finishes the message in hand (bounded) and exits 0; a second exits at
// once. These start the binary and run wholly on the wall clock; they wait
// for conditions (bounded by the test's own deadline), never for a time.

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/jadpoproc"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/runtime/runtimetest"
)

// waitFor polls cond until it holds; the test's deadline bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if d, ok := t.Deadline(); ok && time.Until(d) < 5*time.Second {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// child is a started jadpo process and what it printed.
type child struct {
	*jadpoproc.Proc
	stdin io.WriteCloser // nil unless asked for
	out   *syncBuffer
}

func startChild(t *testing.T, bin string, environ []string, withStdin bool, args ...string) *child {
	t.Helper()
	cmd := exec.Command(bin, args...)
	c := &child{out: &syncBuffer{}}
	cmd.Env, cmd.Stdout, cmd.Stderr = environ, c.out, c.out
	if withStdin {
		// A pipe of the child's own: Wait does not wait for a copy from it.
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.stdin = w
		t.Cleanup(func() { w.Close() })
	}
	c.Proc = jadpoproc.Start(t, cmd, nil)
	return c
}

// exitCode waits for the process (bounded by the test's deadline) and
// returns its exit code.
func (c *child) exitCode(t *testing.T) int {
	t.Helper()
	bound := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		bound = time.Until(d) - 5*time.Second
	}
	return c.ExitCode(t, "jadpo "+strings.Join(c.Cmd.Args[1:], " "), bound)
}

// The first signal while a message's delete is in hand (the fake answers it
// a second late): the delete is finished, the queue is empty, exit 0.
func TestRunAndTickFinishTheMessageInHandOnASignal(t *testing.T) {
	bin := jadpoproc.Binary(t)
	for _, cmd := range []string{"run", "tick"} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(cmd+"_"+sig.String(), func(t *testing.T) {
				env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
				env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultSlow, Operation: "DeleteMessageBatch", Next: 1, Delay: time.Second})
				env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
				c := startChild(t, bin, runtimetest.ChildEnviron(env.Environ), false, cmd, filepath.Join(reporoot.Dir(t), "examples", "warehouse"),
					"--database", env.StoreURL, "--log-format", "json")
				waitFor(t, "the delete in hand", func() bool { return env.Fake.Calls("DeleteMessageBatch") >= 1 })
				c.Signal(t, sig)
				if code := c.exitCode(t); code != 0 {
					t.Fatalf("exit %d, want 0\n%s", code, c.out.String())
				}
				if !env.QueueEmpty() {
					t.Fatalf("the message in hand was not finished: the queue holds it\n%s", c.out.String())
				}
				// Issue 30, item 7: the shutdown lines in order.
				if out := c.out.String(); cmd == "run" {
					stopping, stopped := strings.Index(out, `"msg":"stopping: finishing the messages in hand`), strings.Index(out, `"msg":"stopped"`)
					if stopping < 0 || stopped < stopping {
						t.Fatalf("the shutdown lines are out of order:\n%s", out)
					}
				}
			})
		}
	}
}

// dev: a signal exits 0.
func TestDevExitsZeroOnASignal(t *testing.T) {
	bin := jadpoproc.Binary(t)
	dir := checktest.CopyExample(t, "warehouse", filepath.Join(t.TempDir(), "warehouse"))
	c := startChild(t, bin, childEnv(), true, "dev", dir, "--log-format", "json")
	waitFor(t, "dev to start", func() bool { return strings.Contains(c.out.String(), "jadpo dev: ") })
	if _, err := io.WriteString(c.stdin, "warehouse_queue "+runtimetest.OrderShipped("m-1")+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message kept", func() bool { return strings.Contains(c.out.String(), `"msg":"kept"`) })
	c.Signal(t, syscall.SIGINT)
	if code := c.exitCode(t); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, c.out.String())
	}
}

// A second signal exits at once, while the first waits for a delete that
// hangs (it would wait out runtime.AckTimeout, then exit 0): 143 after
// SIGTERM, 130 after SIGINT.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	bin := jadpoproc.Binary(t)
	for _, cmd := range []string{"run", "tick"} {
		for _, c := range []struct {
			sig  syscall.Signal
			code int
		}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
			t.Run(cmd+"_"+c.sig.String(), func(t *testing.T) {
				env := runtimetest.New(t, "sqlite", checktest.ExamplePlan(t, "warehouse"))
				env.Fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultHang, Operation: "DeleteMessageBatch", Fraction: 1})
				env.Send("warehouse_queue", runtimetest.OrderShipped("m-1"))
				p := startChild(t, bin, runtimetest.ChildEnviron(env.Environ), false, cmd, filepath.Join(reporoot.Dir(t), "examples", "warehouse"),
					"--database", env.StoreURL, "--log-format", "json")
				waitFor(t, "the delete in hand", func() bool { return env.Fake.Calls("DeleteMessageBatch") >= 1 })
				p.Signal(t, c.sig)
				waitFor(t, "the first signal seen", func() bool { return strings.Contains(p.out.String(), "a second signal stops at once") })
				p.Signal(t, c.sig)
				if code := p.exitCode(t); code != c.code {
					t.Fatalf("exit %d, want %d\n%s", code, c.code, p.out.String())
				}
			})
		}
	}
}

// Issue 30, item 7: the shutdown lines in order. `stopping: finishing the messages in
// hand` is logged before the run's context ends, so the run's `stopped` (written once Run
// returns on that context) always comes after it; it came first when nothing was in hand.
// Standard error is a slow writer here, so that the order does not hang on scheduling:
// with the line written after the context ended, the end is seen first every time.
func TestStoppingIsLoggedBeforeTheRunEnds(t *testing.T) {
	var mu sync.Mutex
	var order []string
	slow := writerFunc(func(p []byte) (int, error) {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		order = append(order, "logged: "+strings.TrimSpace(string(p)))
		return len(p), nil
	})
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: slow}
	ctx, stop := e.stopOnSignals(&appFlags{logFormat: "json"})
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	mu.Lock()
	order = append(order, "the run's context ended")
	mu.Unlock()
	waitFor(t, "the stopping line", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(order[0], `"msg":"stopping: finishing the messages in hand; a second signal stops at once"`) {
		t.Fatalf("the run's context ended before stopping was logged: %q", order)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
