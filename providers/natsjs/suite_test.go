package natsjs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/queue/queuetest"
)

// The nats_jetstream driver passes the shared suite against the NATS
// server with JetStream on this machine. Each queue is a fresh stream of
// its own (work-queue retention: an acknowledged message leaves the
// stream, so Held is the stream's count) with a durable pull consumer,
// both deleted when the test ends. Expire deletes the consumer and creates
// it again: JetStream has no call that runs an ack wait or a nak's delay
// out, and a new consumer of a work queue delivers every message the
// stream still holds, at once.

func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// admin connects to the test server.
func admin(t testing.TB) (string, *nats.Conn, jetstream.JetStream) {
	t.Helper()
	u := brokertest.NATS.Require(t)
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatalf("connecting to NATS: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return u, nc, js
}

// testStream makes a fresh work-queue stream, deleted when the test ends,
// and returns its subject.
func testStream(t testing.TB, js jetstream.JetStream, name string, retention jetstream.RetentionPolicy) string {
	t.Helper()
	subject := "jadpotest." + name
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Retention: retention, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatalf("creating stream %s: %v", name, err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), name) })
	return subject
}

// session is one Source's connections, which Kill cuts and Hang freezes.
type session struct {
	mu     sync.Mutex
	conns  []*freezable
	killed bool
}

func (s *session) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed {
		return nil, errors.New("killed")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	f := &freezable{Conn: c}
	s.conns = append(s.conns, f)
	return f, nil
}

// freezable is a connection whose reads can be held, as a server that
// stops answering holds them.
type freezable struct {
	net.Conn
	mu     sync.Mutex
	thawed chan struct{}
	// onWrite, when set, sees what the client writes.
	onWrite func(f *freezable, p []byte)
}

func (f *freezable) Write(p []byte) (int, error) {
	f.mu.Lock()
	hook := f.onWrite
	f.mu.Unlock()
	if hook != nil {
		hook(f, p)
	}
	return f.Conn.Write(p)
}

func (f *freezable) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	f.mu.Lock()
	ch := f.thawed
	f.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return n, err
}

func (f *freezable) freeze(d time.Duration) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.thawed = ch
	f.mu.Unlock()
	time.AfterFunc(d, func() {
		f.mu.Lock()
		f.thawed = nil
		f.mu.Unlock()
		close(ch)
	})
}

func suiteHarness() queuetest.Harness {
	return queuetest.Harness{Caps: queuetest.Caps{Ack: queuetest.AckSingle, Lease: true, Hang: true}, New: func(t *testing.T) *queuetest.Queue {
		u, _, js := admin(t)
		name := unique("qt_")
		subject := testStream(t, js, name, jetstream.WorkQueuePolicy)
		set := Settings{Stream: name, Consumer: name + "_c", AckWait: 30 * time.Second}
		ctx := context.Background()
		if _, err := js.CreateConsumer(ctx, name, ConsumerConfig(set)); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		sessions := map[queue.Source]*session{}
		return &queuetest.Queue{
			Open: func(t *testing.T, opts queue.Options) queue.Source {
				ses := &session{}
				opts.Dial = ses.dial
				conn := &queue.Conn{Name: "jobs", Settings: map[string]any{settingStream: name, settingConsumer: set.Consumer, settingNakDelay: "30s"},
					Credentials: map[string]string{memberURL: u}}
				src, err := Driver.Open(conn, opts)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				sessions[src] = ses
				mu.Unlock()
				return src
			},
			Send: func(t *testing.T, payload string) {
				if _, err := js.Publish(ctx, subject, []byte(payload)); err != nil {
					t.Fatal(err)
				}
			},
			Held: func(t *testing.T) int {
				st, err := js.Stream(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				info, err := st.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return int(info.State.Msgs)
			},
			Expire: func(t *testing.T) {
				if err := js.DeleteConsumer(ctx, name, set.Consumer); err != nil {
					t.Fatal(err)
				}
				if _, err := js.CreateConsumer(ctx, name, ConsumerConfig(set)); err != nil {
					t.Fatal(err)
				}
			},
			Kill: func(t *testing.T, src queue.Source) {
				mu.Lock()
				ses := sessions[src]
				mu.Unlock()
				ses.mu.Lock()
				ses.killed = true
				for _, c := range ses.conns {
					c.Conn.Close()
				}
				ses.mu.Unlock()
				src.(*Source).nc.Close()
			},
			Hang: func(t *testing.T) {
				mu.Lock()
				defer mu.Unlock()
				for _, ses := range sessions {
					ses.mu.Lock()
					for _, c := range ses.conns {
						c.freeze(800 * time.Millisecond)
					}
					ses.mu.Unlock()
				}
			},
		}
	}}
}

func TestSuite(t *testing.T) {
	queuetest.Run(t, suiteHarness())
}
