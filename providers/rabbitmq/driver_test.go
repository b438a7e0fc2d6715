package rabbitmq_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/internal/tcpproxy"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/rabbitmq"
)

func opts() queue.Options {
	return queue.Options{Queue: "jobs", MaxBatch: 10, InFlight: 4}
}

// A batch is answered in the fewest frames: one multiple ack when all are
// settled; a frame a run, or a nack each and one ack when fewer; a frame a
// message when another batch holds a lower tag (a multiple frame would
// answer it too).
func TestPlan(t *testing.T) {
	tags := func(from, n int) []uint64 {
		var out []uint64
		for i := range n {
			out = append(out, uint64(from+i))
		}
		return out
	}
	bools := func(s string) []bool {
		var out []bool
		for _, c := range s {
			out = append(out, c == 'y')
		}
		return out
	}
	for _, c := range []struct {
		name    string
		tags    []uint64
		settled string
		lowest  uint64
		want    []rabbitmq.Frame
	}{
		{"all settled", tags(1, 10), "yyyyyyyyyy", 1, []rabbitmq.Frame{{Tag: 10, Multiple: true, Ack: true, Settled: 10}}},
		{"none settled", tags(11, 3), "nnn", 11, []rabbitmq.Frame{{Tag: 13, Multiple: true}}},
		{"runs", tags(1, 6), "yynnyy", 1, []rabbitmq.Frame{
			{Tag: 2, Multiple: true, Ack: true, Settled: 2}, {Tag: 4, Multiple: true}, {Tag: 6, Multiple: true, Ack: true, Settled: 2}}},
		{"one left in the middle: a nack, then one ack", tags(1, 10), "yyyynyyyyy", 1, []rabbitmq.Frame{
			{Tag: 5}, {Tag: 10, Multiple: true, Ack: true, Settled: 9}}},
		{"alternating: a nack each and one ack", tags(1, 6), "ynynyn", 1, []rabbitmq.Frame{
			{Tag: 2}, {Tag: 4}, {Tag: 6}, {Tag: 5, Multiple: true, Ack: true, Settled: 3}}},
		{"a lower batch outstanding", tags(11, 3), "yny", 1, []rabbitmq.Frame{
			{Tag: 11, Ack: true, Settled: 1}, {Tag: 12}, {Tag: 13, Ack: true, Settled: 1}}},
		{"empty", nil, "", 0, nil},
	} {
		if got := rabbitmq.Plan(c.tags, bools(c.settled), c.lowest); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestSettings(t *testing.T) {
	s, err := rabbitmq.SettingsOf(map[string]any{"queue": "jobs"})
	if err != nil || s.Queue != "jobs" || s.Declare != rabbitmq.DeclareExisting {
		t.Fatalf("%+v %v", s, err)
	}
	for _, c := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{}, "setting queue is empty: name the broker's queue"},
		{map[string]any{"queue": strings.Repeat("q", 256)}, "at most 255"},
		{map[string]any{"queue": "jobs", "declare": "stream"}, `"stream" is not one of existing, classic and quorum`},
	} {
		if _, err := rabbitmq.SettingsOf(c.settings); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.settings, err, c.want)
		}
	}
}

// dev refuses a broker off this machine: the host is read as the client
// reads the URL, and an error never quotes the URL.
func TestRemoteHost(t *testing.T) {
	for raw, want := range map[string]string{
		"amqp://guest:guest@127.0.0.1:5672/":      "",
		"amqp://u:p@localhost/vhost":              "",
		"amqps://u:p@[::1]:5671/":                 "",
		"amqp://localhost":                        "",
		"amqp://u:s3cret@rabbit.example.com/":     "rabbit.example.com",
		"AMQPS://u:s3cret@10.1.2.3:5671/%2f":      "10.1.2.3",
		"amqp://u:s3cret@127.0.0.1.evil.example/": "127.0.0.1.evil.example",
	} {
		got, err := rabbitmq.RemoteHost(raw)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"postgres://u:s3cret@localhost/db", "amqp://u:s3cret@host:notaport/", "s3cret", "amqp://u:s3cret@host/ spaced"} {
		_, err := rabbitmq.RemoteHost(raw)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "amqp://user:password@host:5672/vhost") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// The password never shows in an error: a broker refusing it, a host that
// is not there, a URL that is not one.
func TestPasswordNeverInErrors(t *testing.T) {
	b := newBroker(t)
	q := queueName("secret")
	b.declare(t, q, nil)
	const pw = "Pa55-w0rd-not-guest"
	u, _ := url.Parse(b.url)
	u.User = url.UserPassword("guest", pw)
	wrong := u.String()

	// A closed port on this machine: refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "amqp://guest:" + pw + "@" + ln.Addr().String() + "/"
	ln.Close()
	for name, c := range map[string]struct{ url, want string }{
		"wrong password": {wrong, "cannot connect to the broker at 127.0.0.1:"},
		"unreachable":    {closed, "connection refused"},
		"not a URL":      {"amqp://guest:" + pw + "@host:port/", "not an AMQP URL"},
		// amqps:// speaks TLS: to the broker's plain port, the handshake fails.
		"amqps to a plain port": {strings.Replace(wrong, "amqp://", "amqps://", 1), "tls: "},
		"not AMQP":              {"https://guest:" + pw + "@host/", "not an AMQP URL"},
	} {
		_, err := rabbitmq.Driver.Open(conn(c.url, q, rabbitmq.DeclareExisting), opts())
		if err == nil {
			t.Errorf("%s: opened", name)
			continue
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), url.QueryEscape(pw)) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "connection jobs: ") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A connection's dial and handshake end with the caller's context: a
// reconnect to a server that accepts and never answers does not hold the
// receive past it.
func TestHandshakeBounded(t *testing.T) {
	b := newBroker(t)
	q := queueName("silent")
	b.declare(t, q, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	// The first connection reaches the broker; the next ones the silent server.
	var first net.Conn
	o := opts()
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if first == nil {
			c, err := d.DialContext(ctx, network, addr)
			first = c
			return c, err
		}
		return d.DialContext(ctx, network, ln.Addr().String())
	}
	src, err := rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareExisting), o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	first.Close()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = src.Receive(ctx)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || time.Since(start) > 10*time.Second {
		t.Fatalf("a receive reconnecting to a silent server: %v after %s", err, time.Since(start))
	}
}

// A queue that must exist and does not stops the start, naming the fix; a
// declare that does not match the queue too.
func TestQueueMissingOrDifferent(t *testing.T) {
	b := newBroker(t)
	_, err := rabbitmq.Driver.Open(conn(b.url, queueName("missing"), rabbitmq.DeclareExisting), opts())
	if err == nil || !strings.Contains(err.Error(), "the broker has no queue") || !strings.Contains(err.Error(), "set the connection's setting declare to classic or quorum") {
		t.Fatalf("a missing queue: %v", err)
	}
	q := queueName("quorum")
	b.declare(t, q, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeQuorum})
	_, err = rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareClassic), opts())
	if err == nil || !strings.Contains(err.Error(), "exists with other properties than `declare: classic` asks for") || !strings.Contains(err.Error(), "set declare to existing") {
		t.Fatalf("a quorum queue declared classic: %v", err)
	}
	// declare: quorum declares one that is not there; it is then there.
	q2 := queueName("declared")
	t.Cleanup(func() { b.delete(q2) })
	src, err := rabbitmq.Driver.Open(conn(b.url, q2, rabbitmq.DeclareQuorum), opts())
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	if _, err := rabbitmq.Driver.Open(conn(b.url, q2, rabbitmq.DeclareExisting), opts()); err != nil {
		t.Fatalf("the declared queue: %v", err)
	}
}

func receive(t *testing.T, src queue.Source) *queue.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bt, err := src.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

func receiveN(t *testing.T, src queue.Source, n int) *queue.Batch {
	t.Helper()
	var all queue.Batch
	for range 50 {
		bt := receive(t, src)
		all.Messages = append(all.Messages, bt.Messages...)
		if len(all.Messages) >= n {
			break
		}
	}
	if len(all.Messages) != n {
		t.Fatalf("received %d, want %d", len(all.Messages), n)
	}
	return &all
}

func settleAll(bt *queue.Batch, settled bool) {
	for i := range bt.Messages {
		bt.Messages[i].Settled = settled
	}
}

// The prefetch is what the runtime holds at once (InFlight batches of
// MaxBatch): the broker pushes no more; a receive brings at most MaxBatch.
// Batches answered out of order still take one frame each.
func TestPrefetch(t *testing.T) {
	b := newBroker(t)
	q := queueName("prefetch")
	b.declare(t, q, nil)
	for i := range 55 {
		b.publish(t, q, fmt.Sprintf(`{"id":%d}`, i), "")
	}
	src, err := rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareExisting), opts())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var held []*queue.Batch
	for range 4 {
		bt := receive(t, src)
		if len(bt.Messages) != 10 {
			t.Fatalf("a receive with 55 waiting brought %d, want 10", len(bt.Messages))
		}
		held = append(held, bt)
	}
	// The fifth receive finds nothing pushed: 40 are held unacknowledged.
	if bt := receive(t, src); len(bt.Messages) != 0 {
		t.Fatalf("a receive past the prefetch brought %d", len(bt.Messages))
	}
	if ready, _ := b.counts(t, q); ready != 15 {
		t.Fatalf("%d ready on the broker, want 15", ready)
	}
	// Answered out of order: the second batch waits for the first, so one
	// multiple frame answers each (a multiple frame of the second's would
	// answer the first too).
	for _, bt := range held {
		settleAll(bt, true)
	}
	second := make(chan queue.Acks)
	go func() { second <- src.Acknowledge(context.Background(), held[1]) }()
	select {
	case a := <-second:
		t.Fatalf("the second batch was answered before the first: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	if a := src.Acknowledge(context.Background(), held[0]); a.Acknowledged != 10 || a.BatchCalls != 1 || a.SingleCalls != 0 {
		t.Fatalf("the first batch: %+v", a)
	}
	if a := <-second; a.Acknowledged != 10 || a.BatchCalls != 1 || a.SingleCalls != 0 {
		t.Fatalf("the second batch, after the first: %+v", a)
	}
	// The fourth, while the third is never answered: past its context, a
	// frame a message.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if a := src.Acknowledge(ctx, held[3]); a.Acknowledged != 10 || a.SingleCalls != 10 || a.BatchCalls != 0 {
		t.Fatalf("the fourth batch, the third unanswered: %+v", a)
	}
	if a := src.Acknowledge(context.Background(), held[2]); a.Acknowledged != 10 || a.BatchCalls != 1 || a.SingleCalls != 0 {
		t.Fatalf("the third: %+v", a)
	}
	rest := receiveN(t, src, 15)
	settleAll(rest, true)
	src.Acknowledge(context.Background(), rest)
	waitReady(t, b, q, 0)
}

func waitReady(t *testing.T, b *broker, q string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ready, _ := b.counts(t, q)
		if ready == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ready on %s, want %d", ready, q, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// One message handed back in a batch of ten: two frames (a nack, then one
// multiple ack), and it comes back, its message-id as the WireID.
func TestHandBackOne(t *testing.T) {
	b := newBroker(t)
	q := queueName("handback")
	b.declare(t, q, nil)
	for i := range 10 {
		b.publish(t, q, fmt.Sprintf(`{"id":%d}`, i), fmt.Sprintf("m-%d", i))
	}
	src, err := rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareExisting), opts())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bt := receiveN(t, src, 10)
	settleAll(bt, true)
	bt.Messages[4].Settled = false
	left := bt.Messages[4]
	if a := src.Acknowledge(context.Background(), bt); a.Acknowledged != 9 || a.BatchCalls != 1 || a.SingleCalls != 1 {
		t.Fatalf("acks %+v, want 9 acknowledged in 2 frames", a)
	}
	again := receiveN(t, src, 1)
	if m := again.Messages[0]; m.Body != left.Body || m.WireID != left.WireID || m.WireID != "m-4" {
		t.Fatalf("came back %q id %q, want %q id %q", m.Body, m.WireID, left.Body, left.WireID)
	}
	settleAll(again, true)
	src.Acknowledge(context.Background(), again)
	waitReady(t, b, q, 0)
}

// A message the store can never take is handed back each time: the quorum
// queue's delivery limit sends it to its dead-letter exchange, and it ends
// in the dead-letter queue, once.
func TestDeliveryLimitDeadLetters(t *testing.T) {
	b := newBroker(t)
	dlq := queueName("dlq")
	b.declare(t, dlq, nil)
	q := queueName("limited")
	b.declare(t, q, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeQuorum, "x-delivery-limit": 2,
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	b.publish(t, q, `{"id":"poison"}`, "poison")
	b.publish(t, q, `{"id":"fine"}`, "fine")
	src, err := rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareExisting), opts())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	handedBack, kept := 0, 0
	for range 20 {
		bt := receive(t, src)
		if len(bt.Messages) == 0 {
			break
		}
		for i, m := range bt.Messages {
			bt.Messages[i].Settled = m.WireID != "poison"
			if m.WireID == "poison" {
				handedBack++
			} else {
				kept++
			}
		}
		src.Acknowledge(context.Background(), bt)
	}
	// The first delivery and two redeliveries (the limit), then dead-lettered.
	if handedBack != 3 || kept != 1 {
		t.Fatalf("the poison message was handed back %d times (want 3), the other kept %d", handedBack, kept)
	}
	waitReady(t, b, q, 0)
	waitReady(t, b, dlq, 1)
	dl := conn(b.url, dlq, rabbitmq.DeclareExisting)
	dsrc, err := rabbitmq.Driver.Open(dl, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer dsrc.Close()
	if bt := receiveN(t, dsrc, 1); bt.Messages[0].Body != `{"id":"poison"}` {
		t.Fatalf("dead-lettered %q", bt.Messages[0].Body)
	}
}

// The broker's connection cut mid-batch: the batch's acknowledgement fails
// and is counted, the next receive connects again, and every message comes
// back (the kept ones as repeats); nothing is lost.
func TestConnectionCutMidBatch(t *testing.T) {
	b := newBroker(t)
	q := queueName("cut")
	b.declare(t, q, nil)
	for i := range 10 {
		b.publish(t, q, fmt.Sprintf(`{"id":%d}`, i), "")
	}
	proxy := tcpproxy.New(t, b.conn.RemoteAddr().String())
	src, err := rabbitmq.Driver.Open(conn(proxy.Via(b.url), q, rabbitmq.DeclareExisting), opts())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bt := receiveN(t, src, 10)
	proxy.Cut()
	settleAll(bt, true)
	// The client may see the cut only as it writes: wait for it.
	time.Sleep(100 * time.Millisecond)
	if a := src.Acknowledge(context.Background(), bt); a.Acknowledged != 0 {
		t.Fatalf("acknowledged %d on a cut connection", a.Acknowledged)
	}
	if n := src.(*rabbitmq.Source).FailedAcks(); n != 10 {
		t.Fatalf("FailedAcks %d, want 10", n)
	}
	// Cut, the next receive fails; restored, it connects again.
	if _, err := src.Receive(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot connect to the broker") {
		t.Fatalf("a receive while cut: %v", err)
	}
	proxy.Restore()
	again := receiveN(t, src, 10)
	seen := map[string]bool{}
	for _, m := range again.Messages {
		seen[m.Body] = true
	}
	for _, m := range bt.Messages {
		if !seen[m.Body] {
			t.Errorf("%s was lost", m.Body)
		}
	}
	settleAll(again, true)
	if a := src.Acknowledge(context.Background(), again); a.Acknowledged != 10 {
		t.Fatalf("after reconnecting: %+v", a)
	}
	waitReady(t, b, q, 0)
}

// A body is the AMQP body byte for byte, valid text or not (the runtime
// parks one it cannot read, as it is).
func TestBodyBytesKept(t *testing.T) {
	b := newBroker(t)
	q := queueName("bytes")
	b.declare(t, q, nil)
	bodies := []string{"{\"id\":\"\xff\xfe\"}", "\x00\x01binary\x80", "", `{"id":1}` + "\r\n"}
	for i, body := range bodies {
		b.publish(t, q, body, fmt.Sprintf("b-%d", i))
	}
	src, err := rabbitmq.Driver.Open(conn(b.url, q, rabbitmq.DeclareExisting), opts())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bt := receiveN(t, src, len(bodies))
	for i, m := range bt.Messages {
		if m.Body != bodies[i] || m.WireID != fmt.Sprintf("b-%d", i) {
			t.Errorf("message %d: body %q id %q, want %q", i, m.Body, m.WireID, bodies[i])
		}
	}
	settleAll(bt, true)
	src.Acknowledge(context.Background(), bt)
	waitReady(t, b, q, 0)
}
