package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/runtimetest"
	"github.com/jadpo/jadpo/runtime/store"
)

// jadpo dev: a line typed on standard input is sent to the queue it names,
// the running app keeps it, and its subscriber is run against the json_http
// stand-in; a signal ends it with exit 0.
func TestDevSendsTypedMessages(t *testing.T) {
	errOut := runDevUntil(t, "warehouse", "nope_queue {}\n"+
		`warehouse_queue {"id":"d-1","type":"order_shipped","order_id":"o-1","shipped_at":"2026-11-30T10:00:00Z","carrier":"dhl","lines":[{"sku":"SKU-1","quantity":1}]}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 && s.Deliveries[store.DeliverySucceeded] == 1 })
	if !strings.Contains(errOut, `no queue \"nope_queue\"`) && !strings.Contains(errOut, `no queue "nope_queue"`) {
		t.Fatalf("an unknown queue was not named:\n%s", errOut)
	}
}

// runDevUntil runs `jadpo dev` on a copy of examples/<example>, types input,
// waits until the dev store's stats satisfy done, then stops it with a
// cancelled context (a signal's) and wants exit 0. It returns what dev
// wrote to standard error.
func runDevUntil(t *testing.T, example, input string, done func(store.Stats) bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", example), dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, typed := io.Pipe()
	var out, errOut syncBuffer
	exited := make(chan int, 1)
	go func() { exited <- runContext(ctx, []string{"dev", dir, "--log-format", "json"}, in, &out, &errOut) }()
	if _, err := io.WriteString(typed, input); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "build", "dev.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := st.Stats(context.Background())
		if err == nil && done(s) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the typed messages were not kept and delivered: %+v %v\n%s", s, err, errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	typed.Close()
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jadpo dev did not stop")
	}
	return errOut.String()
}

// syncBuffer is a bytes buffer safe for the command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// jadpo dev with a Cloudflare queue (examples/returns): a typed line goes to
// the local Cloudflare Queues fake, the app pulls and keeps it.
func TestDevCloudflareQueue(t *testing.T) {
	errOut := runDevUntil(t, "returns", `returns_queue {"return_id":"r-1","type":"return_requested","order_id":"o-1","customer_email":"a@example.com","items":{"SKU-1":1},"requested_at":"2026-11-30T10:00:00Z"}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 1 })
	if !strings.Contains(errOut, "Cloudflare Queues fake on http://127.0.0.1:") {
		t.Fatalf("the Cloudflare fake's address is not shown:\n%s", errOut)
	}
}

// Issue 12 point 6: a tick's summary names what its count is: messages the
// store could not take, handed back to the queue; it never says "left on the
// queue" (what waits there is the queue's to say).
func TestTickSummaryNamesWhatItCounts(t *testing.T) {
	env := runtimetest.New(t, "sqlite")
	st := runtimetest.NewFlakyStore(env.Store())
	st.FailKeeps(-1)
	rt := env.Runtime(st, runtime.Options{})
	for i := range 3 {
		env.Send("warehouse_queue", runtimetest.OrderShipped(fmt.Sprintf("m-%d", i)))
	}
	rep, err := rt.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printTick(&b, rep)
	if got := b.String(); !strings.Contains(got, "received 3: kept 0, repeats 0, parked 0, not taken by the store 3, acknowledged 0") ||
		strings.Contains(got, "left on the queue") {
		t.Fatalf("tick summary %q", got)
	}
}
