package redisstreams_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/redisstreams"
)

// dev's stand-in: Wire points the url at miniredis and makes the stream
// and group (a literal stream is used as written, one from config named
// after the connection, its setting wired), Send adds dev's typed input as
// the body field, and the driver reads it back.
func TestStandIn(t *testing.T) {
	s, err := redisstreams.Driver.StandIn()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lit := func(v string) ir.Value { b, _ := json.Marshal(v); return ir.Value{Literal: b} }
	literal := &ir.Connection{Name: "orders", Settings: map[string]ir.Value{"stream": lit("shop:orders"), "group": lit("g"), "field": lit("payload")},
		Credential: map[string]ir.Value{ir.MemberURL: {Config: "redis_url"}}}
	fromConfig := &ir.Connection{Name: "returns", Settings: map[string]ir.Value{"stream": {Config: "stream"}, "group": {Config: "group"}},
		Credential: map[string]ir.Value{ir.MemberURL: {Config: "redis_url"}}}
	w1, err := s.Wire(literal)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := s.Wire(fromConfig)
	if err != nil {
		t.Fatal(err)
	}
	url := w1.Credential[ir.MemberURL]
	if !strings.HasPrefix(url, "redis://127.0.0.1:") || w2.Credential[ir.MemberURL] != url || len(w1.Settings) != 0 ||
		w2.Settings["stream"] != "returns" || w2.Settings["group"] != "jadpo" {
		t.Fatalf("wirings %+v %+v", w1, w2)
	}
	if got := strings.Join(s.Queues(), ","); got != "orders,returns" || !strings.Contains(s.Describe(), url) {
		t.Fatalf("queues %q, describe %q", got, s.Describe())
	}
	ctx := context.Background()
	if ok, err := s.Send(ctx, "orders", `{"id":"o-1"}`); !ok || err != nil {
		t.Fatalf("send: %v %v", ok, err)
	}
	if ok, _ := s.Send(ctx, "nope", `{}`); ok {
		t.Fatal("sent to a connection it did not wire")
	}
	opts, _ := options(t)
	src, err := redisstreams.Open(&queue.Conn{Name: "orders", Settings: map[string]any{"stream": "shop:orders", "group": "g", "field": "payload"},
		Credentials: map[string]string{ir.MemberURL: url}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b := receive(t, src)
	if len(b.Messages) != 1 || b.Messages[0].Body != `{"id":"o-1"}` {
		t.Fatalf("received %+v", b.Messages)
	}
	ack(t, src, b)
}
