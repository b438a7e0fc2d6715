package main

import (
	"net"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/runtime/store"
)

// jadpo dev with a Redis stream (examples/streams): dev starts miniredis in
// process and makes the stream and group there; a typed line is added to the
// stream (XADD, its body field) and the app reads and keeps it. The URL set
// in the environment (a remote server, with a password) is not used: dev
// points the connection at the stand-in, dials only this machine, and never
// shows the password.
func TestDevRedisStream(t *testing.T) {
	t.Setenv("ORDERS_REDIS_URL", "redis://ada:s3cr3t-pw@redis.example.com:6379/0")
	dials := recordDials(t)
	errOut := runDevUntil(t, "streams",
		`orders_stream {"id":"o-1","type":"order_placed","order_id":"o-1","customer_email":"ada@example.com","total_cents":1200}`+"\n"+
			`orders_stream {"id":"o-2","type":"order_cancelled","order_id":"o-1"}`+"\n",
		func(s store.Stats) bool { return s.Outbox == 2 })
	if !strings.Contains(errOut, "Redis stand-in (miniredis) on redis://127.0.0.1:") {
		t.Fatalf("the stand-in's address is not shown:\n%s", errOut)
	}
	if strings.Contains(errOut, "s3cr3t") || strings.Contains(errOut, "redis.example.com") {
		t.Fatalf("dev shows the environment's URL:\n%s", errOut)
	}
	got := dials()
	if len(got) == 0 {
		t.Fatal("no address was dialled: the test saw nothing")
	}
	for _, a := range got {
		_, addr, _ := strings.Cut(a, " ")
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("dev dialled %s, off the machine", a)
		}
	}
}
