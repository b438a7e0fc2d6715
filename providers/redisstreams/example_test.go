package redisstreams_test

import (
	"context"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/redisstreams"
)

// examples/streams checks clean, and its connection's settings, as the
// plan carries them (a bool, an int, durations, the package's defaults
// filled in), open the driver: the runtime's path (providers.OpenQueue)
// receives from the real Redis.
func TestExampleOpens(t *testing.T) {
	srv := realRedis(t)
	key := uniqueKey(t)
	plan := checktest.ExamplePlan(t, "streams", checktest.Edit{File: "app.jadpo", Old: `stream: "orders"`, New: `stream: "` + key + `"`})
	admin := srv.client(t)
	t.Cleanup(func() { admin.Del(context.Background(), key) })
	var c *ir.Connection
	for i := range plan.Connections {
		if plan.Connections[i].Name == "orders_stream" {
			c = &plan.Connections[i]
		}
	}
	if c == nil || c.Receiving == nil || c.Receiving.Driver != redisstreams.Name || c.Provider.Protocol != redisstreams.Protocol {
		t.Fatalf("the plan's connection: %+v", c)
	}
	settings := map[string]any{}
	for name, v := range c.Settings {
		val, err := ir.DecodeLiteral(v.Literal)
		if err != nil {
			t.Fatalf("setting %s: %v", name, err)
		}
		settings[name] = val
	}
	set, err := redisstreams.SettingsOf(settings)
	if err != nil {
		t.Fatal(err)
	}
	want := redisstreams.Settings{Stream: key, Group: "jadpo", CreateGroup: true, Field: "body", ClaimIdle: time.Minute, MaxDeliveries: 5}
	if set != want {
		t.Fatalf("settings %+v, want %+v", set, want)
	}
	opts, _ := options(t)
	src, err := providers.OpenQueue(&queue.Conn{Name: c.Name, Receiving: c.Receiving, Settings: settings,
		Credentials: map[string]string{ir.MemberURL: srv.url}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	st := &stream{t: t, srv: srv, admin: admin, key: key, group: "jadpo"}
	st.send(t, "body", `{"id":"o-1"}`)
	b := receive(t, src)
	if len(b.Messages) != 1 || b.Messages[0].Body != `{"id":"o-1"}` {
		t.Fatalf("received %+v", b.Messages)
	}
	if a := ack(t, src, b); a.Acknowledged != 1 {
		t.Fatalf("acks %+v", a)
	}
}
