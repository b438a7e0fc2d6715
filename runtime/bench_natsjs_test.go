package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/brokertest"
	"github.com/jadpo/jadpo/runtime/store/pgtest"
)

// BenchmarkReceiveNATS is BenchmarkReceive for the nats_jetstream driver,
// against the NATS server with JetStream on this machine: examples/natsorders
// pulling a fresh work-queue stream (file storage) through its durable pull
// consumer, keeping into PostgreSQL with fsync on (the app has no
// subscriber: a kept message writes a received id and an outbox row),
// beside a raw loop of the same client (nats.go's jetstream: a no-wait fetch
// of 10, one pgx transaction inserting the received id and outbox row of
// each, then the 10 acknowledgements, each confirmed by the server, sent at
// once). One op is a batch of 10 messages. Each side's NATS connection goes
// through a counting proxy: fetches/op and acks/op are the requests it
// sent that wait for the server's answer (a pull request, an
// acknowledgement), the broker round trips per 10 messages.
func BenchmarkReceiveNATS(b *testing.B) {
	pgtest.Require(b)
	b.Run("runtime", benchReceiveNATSRuntime)
	b.Run("raw_nats_pgx", func(b *testing.B) { benchReceiveNATSRaw(b, false) })
	// The other way to acknowledge: each Ack a publish the server does not
	// answer, then one flush (a PING's PONG) per batch, which says only that
	// the server read them, not that they took.
	b.Run("raw_nats_pgx_ack_flush", func(b *testing.B) { benchReceiveNATSRaw(b, true) })
}

// benchNATS makes a fresh stream for one benchmark run, deleted after it.
func benchNATS(b *testing.B) (js jetstream.JetStream, stream, subject string, proxy *natsCountingProxy) {
	u := brokertest.NATS.Require(b)
	nc, err := nats.Connect(u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	if js, err = jetstream.New(nc); err != nil {
		b.Fatal(err)
	}
	run := benchRun.Add(1)
	stream = fmt.Sprintf("bench_%d_%d", time.Now().UnixNano(), run)
	subject = "benchnats." + stream
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: stream, Subjects: []string{subject + ".>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = js.DeleteStream(context.Background(), stream) })
	return js, stream, subject, newNATSCountingProxy(b, brokertest.NATS.Addr())
}

func benchNATSBody(id string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"type":"order.placed","order_id":1,"customer":"c-1","total_cents":1200}`, id))
}

func benchReceiveNATSRuntime(b *testing.B) {
	ctx := context.Background()
	js, stream, subject, proxy := benchNATS(b)
	plan := checktest.ExamplePlan(b, "natsorders",
		checktest.Edit{File: "app.jadpo", Old: `stream: "ORDERS"`, New: `stream: "` + stream + `"`},
		checktest.Edit{File: "app.jadpo", Old: `subject: "orders.>"`, New: `subject: "` + subject + `.>"`})
	cfg, err := LoadConfig(plan, []string{"NATS_URL=nats://" + proxy.addr, "NATS_TOKEN=unused"}, filepath.Join(b.TempDir(), ".env.local"))
	if err != nil {
		b.Fatal(err)
	}
	timed := benchDurableStore(b)
	r, err := New(Options{Plan: plan, Store: timed, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	run := benchRun.Add(1)
	want := b.N * 10
	proxy.reset()
	benchReceiveLoop(ctx, b, r, want, nil, func(i int) error {
		_, err := js.PublishAsync(subject+".orders", benchNATSBody(fmt.Sprintf("n%d-%d", run, i)))
		if err == nil && i%100 == 99 {
			<-js.PublishAsyncComplete()
		}
		if err == nil && i == want-1 {
			<-js.PublishAsyncComplete()
		}
		return err
	})
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(proxy.fetches.Load())/float64(b.N), "fetches/op")
	b.ReportMetric(float64(proxy.acks.Load())/float64(b.N), "acks/op")
}

func benchReceiveNATSRaw(b *testing.B, flush bool) {
	ctx := context.Background()
	js, stream, subject, proxy := benchNATS(b)
	pool := rawPool(b, pgtest.FreshURL(b))
	rc, err := nats.Connect("nats://" + proxy.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	rjs, err := jetstream.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := rjs.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		b.Fatal(err)
	}
	const source = "queue orders"
	run := benchRun.Add(1)
	want := b.N * 10
	sent, done := 0, 0
	topUp := func() {
		for ; sent < want && sent-done < 200; sent++ {
			if _, err := js.PublishAsync(subject+".orders", benchNATSBody(fmt.Sprintf("r%d-%d", run, sent))); err != nil {
				b.Fatal(err)
			}
		}
		<-js.PublishAsyncComplete()
	}
	topUp()
	proxy.reset()
	now := time.Now().UTC().Truncate(time.Microsecond)
	b.ResetTimer()
	for done < want {
		mb, err := cons.FetchNoWait(10)
		if err != nil {
			b.Fatal(err)
		}
		var msgs []jetstream.Msg
		for m := range mb.Messages() {
			msgs = append(msgs, m)
		}
		if mb.Error() != nil {
			b.Fatal(mb.Error())
		}
		if len(msgs) == 0 {
			continue
		}
		kept := make([]rawKept, len(msgs))
		for j, m := range msgs {
			kept[j] = rawKept{ID: fmt.Sprintf("r%d-%d-%d", run, done, j), EventJSON: string(m.Data())}
		}
		if err := rawKeep(ctx, pool, source, "OrderPlaced", kept, now); err != nil {
			b.Fatal(err)
		}
		if flush {
			for _, m := range msgs {
				if err := m.Ack(); err != nil {
					b.Fatal(err)
				}
			}
			if err := rc.FlushTimeout(10 * time.Second); err != nil {
				b.Fatal(err)
			}
			done += len(msgs)
			b.StopTimer()
			topUp()
			b.StartTimer()
			continue
		}
		var wg sync.WaitGroup
		for _, m := range msgs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := m.DoubleAck(ctx); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		done += len(msgs)
		b.StopTimer()
		topUp()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(proxy.fetches.Load())/float64(b.N), "fetches/op")
	b.ReportMetric(float64(proxy.acks.Load())/float64(b.N), "acks/op")
}

// natsCountingProxy forwards NATS connections and counts the requests the
// client sends that the server answers: pull requests
// ($JS.API.CONSUMER.MSG.NEXT) and acknowledgements ($JS.ACK).
type natsCountingProxy struct {
	addr           string
	fetches, acks  atomic.Int64
	fetchOp, ackOp []byte
}

func newNATSCountingProxy(b *testing.B, target string) *natsCountingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	p := &natsCountingProxy{addr: ln.Addr().String(), fetchOp: []byte("PUB $JS.API.CONSUMER.MSG.NEXT."), ackOp: []byte("PUB $JS.ACK.")}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(c, s); c.Close() }()
			go func() { p.count(c, s); s.Close() }()
		}
	}()
	return p
}

func (p *natsCountingProxy) reset() { p.fetches.Store(0); p.acks.Store(0) }

// count copies client to server, counting the operations in whole lines;
// a line split across reads is joined by keeping the last partial one.
func (p *natsCountingProxy) count(c, s net.Conn) {
	buf := make([]byte, 64<<10)
	var carry []byte
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
			data := append(carry, buf[:n]...)
			i := bytes.LastIndexByte(data, '\n')
			p.fetches.Add(int64(bytes.Count(data[:i+1], p.fetchOp)))
			p.acks.Add(int64(bytes.Count(data[:i+1], p.ackOp)))
			carry = append([]byte(nil), data[i+1:]...)
			if len(carry) > 4096 {
				carry = carry[len(carry)-4096:]
			}
		}
		if err != nil {
			return
		}
	}
}
