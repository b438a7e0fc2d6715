// Package natsjs is the nats_jetstream queue driver (docs/guide/receiving.md,
// "NATS JetStream"): a durable pull consumer of a JetStream stream, read
// with github.com/nats-io/nats.go's jetstream package.
//
// A receive fetches up to MaxBatch messages that are there at once (a
// no-wait pull); when none are, it waits for one within the receive's
// context (the tick's budget), then takes what else is there, so it returns
// as soon as messages are there and a batch shorter than MaxBatch means the
// consumer is drained for now. The settled messages are acknowledged after
// the runtime kept them: JetStream has no acknowledgement of many messages
// under the explicit ack policy, so each is one acknowledgement the server
// confirms (AckSync), all of a batch sent at once; the others are naked
// with the nak_delay, to come back. The consumer's AckWait is this broker's
// visibility timeout, its MaxDeliver its dead-letter rule.
package natsjs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jadpo/jadpo/providers/queue"
)

// Source is one JetStream consumer as a queue.
type Source struct {
	log      *slog.Logger
	queue    string
	maxBatch int
	set      Settings
	cred     Credential
	nc       *nats.Conn
	cons     jetstream.Consumer

	mu sync.Mutex
	// held are the messages received and not yet answered, by Handle.
	held map[string]jetstream.Msg
	next atomic.Uint64
}

// Open connects to the connection's server (its credential), finds the
// stream and its durable pull consumer (creating the consumer when the
// settings say so), so that a missing one stops the start with the fix.
func Open(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	set, err := SettingsOf(conn.Settings)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	cred, err := CredentialOf(conn.Credentials)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	max := opts.MaxBatch
	if max <= 0 {
		max = 10
	}
	s := &Source{log: log, queue: opts.Queue, maxBatch: max, set: set, cred: cred, held: map[string]jetstream.Msg{}}
	nc, err := s.connect(conn.Name, opts.Dial)
	if err != nil {
		return nil, fmt.Errorf("connection %s: cannot connect to NATS on %s: %w", conn.Name, cred.hosts(), s.redact(err))
	}
	s.nc = nc
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.cons, err = s.consumer(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("connection %s: %w", conn.Name, s.redact(err))
	}
	return s, nil
}

func (s *Source) connect(name string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*nats.Conn, error) {
	o := []nats.Option{
		nats.Name("jadpo " + name),
		nats.Timeout(10 * time.Second),
		// A server gone is waited for: the consumer holds the messages.
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.NoCallbacksAfterClientClose(),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				s.log.Warn("NATS connection lost; reconnecting", "queue", s.queue, "err", s.redact(err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { s.log.Info("NATS connection back", "queue", s.queue) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			s.log.Warn("NATS client error (a slow consumer, a permission refused)", "queue", s.queue, "err", s.redact(err))
		}),
	}
	switch {
	case s.cred.Token != "":
		o = append(o, nats.Token(s.cred.Token))
	case s.cred.User != "":
		o = append(o, nats.UserInfo(s.cred.User, s.cred.Password))
	case s.cred.Creds != "":
		o = append(o, nats.UserCredentials(s.cred.Creds))
	}
	if dial != nil {
		o = append(o, nats.SetCustomDialer(dialer(dial)))
	}
	return nats.Connect(s.cred.URL, o...)
}

// dialer makes a queue.Options.Dial a nats.CustomDialer.
type dialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (d dialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return d(ctx, network, addr)
}

// consumer finds the stream's durable pull consumer, or creates it.
func (s *Source) consumer(ctx context.Context) (jetstream.Consumer, error) {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, s.set.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("JetStream has no stream %q: create it (`nats stream add %s --subjects '<subject>'`), or set %s to the stream that holds the messages",
			s.set.Stream, s.set.Stream, settingStream)
	}
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders) {
		return nil, fmt.Errorf("the NATS server answers no JetStream request for this account: start the server with JetStream (`nats-server -js`), or enable JetStream for the account")
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read stream %q: %w", s.set.Stream, err)
	}
	c, err := st.Consumer(ctx, s.set.Consumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if !s.set.Create {
			return nil, fmt.Errorf("stream %q has no consumer %q: create it (`nats consumer add %s %s --pull --ack explicit`), or set %s: true to have jadpo create it",
				s.set.Stream, s.set.Consumer, s.set.Stream, s.set.Consumer, settingCreate)
		}
		c, err = st.CreateConsumer(ctx, ConsumerConfig(s.set))
		if err != nil {
			return nil, fmt.Errorf("cannot create consumer %q on stream %q: %w", s.set.Consumer, s.set.Stream, err)
		}
		s.log.Info("created the JetStream consumer", "queue", s.queue, "stream", s.set.Stream, "consumer", s.set.Consumer)
	} else if err != nil {
		return nil, fmt.Errorf("cannot read consumer %q of stream %q: %w", s.set.Consumer, s.set.Stream, err)
	}
	cfg := c.CachedInfo().Config
	if cfg.DeliverSubject != "" {
		return nil, fmt.Errorf("consumer %q of stream %q is a push consumer (it delivers to %q): jadpo pulls; make a pull consumer (`nats consumer add %s <name> --pull --ack explicit`) and name it in %s",
			s.set.Consumer, s.set.Stream, cfg.DeliverSubject, s.set.Stream, settingConsumer)
	}
	if cfg.AckPolicy != jetstream.AckExplicitPolicy {
		return nil, fmt.Errorf("consumer %q of stream %q acknowledges with policy %s: jadpo acknowledges each message after keeping it, and needs the explicit policy (`nats consumer add %s <name> --pull --ack explicit`)",
			s.set.Consumer, s.set.Stream, cfg.AckPolicy, s.set.Stream)
	}
	return c, nil
}

// ConsumerConfig is the durable pull consumer the driver creates.
func ConsumerConfig(set Settings) jetstream.ConsumerConfig {
	cfg := jetstream.ConsumerConfig{Durable: set.Consumer, AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverAllPolicy,
		FilterSubject: set.Subject, AckWait: set.AckWait, MaxDeliver: set.MaxDeliver}
	if cfg.MaxDeliver == 0 {
		cfg.MaxDeliver = -1
	}
	return cfg
}

// LongPoll is 0: a receive waits only within its context, the tick's budget.
func (s *Source) LongPoll() time.Duration { return 0 }

// MaxWait is the longest a receive waits for a first message (the
// runtime's default tick budget): a longer budget is not held by one
// empty receive.
const MaxWait = 5 * time.Second

// minWait is the shortest wait worth a waiting pull.
const minWait = 20 * time.Millisecond

// Receive fetches one batch: what is there at once, or, when nothing is,
// the first message to come within ctx and what is there with it.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	msgs, err := s.fetch(ctx, s.maxBatch, false)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 2*minWait {
			wctx, cancel := context.WithTimeout(ctx, MaxWait)
			msgs, err = s.fetch(wctx, 1, true)
			cancel()
			if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
				// Nothing came within the wait (the server's own expiry
				// answer late on a loaded machine, or MaxWait): the no-wait
				// fetch just before was answered, so the consumer is there
				// and empty, not hanging.
				err = nil
			}
			if err != nil {
				return nil, err
			}
			if len(msgs) == 1 && s.maxBatch > 1 {
				more, err := s.fetch(ctx, s.maxBatch-1, false)
				if err != nil {
					// The one in hand is kept; the rest come next time.
					s.log.Warn("NATS: fetching the rest of a batch failed", "queue", s.queue, "err", err)
				}
				msgs = append(msgs, more...)
			}
		}
	}
	b := &queue.Batch{Messages: make([]queue.Message, len(msgs))}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range msgs {
		h := strconv.FormatUint(s.next.Add(1), 10)
		s.held[h] = m
		b.Messages[i] = queue.Message{Body: string(m.Data()), Handle: h}
		if md, err := m.Metadata(); err == nil {
			b.Messages[i].WireID = strconv.FormatUint(md.Sequence.Stream, 10)
		}
	}
	return b, nil
}

// fetch pulls up to n messages: those there now, or with wait, the first n
// to come within ctx. Messages that came when ctx ends are handed back.
func (s *Source) fetch(ctx context.Context, n int, wait bool) ([]jetstream.Msg, error) {
	var mb jetstream.MessageBatch
	var err error
	if wait {
		mb, err = s.cons.Fetch(n, jetstream.FetchContext(ctx))
	} else {
		mb, err = s.cons.FetchNoWait(n)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("NATS: no answer from the consumer in time: %w", ctx.Err())
		}
		return nil, fmt.Errorf("NATS: fetching from consumer %q of stream %q: %w", s.set.Consumer, s.set.Stream, s.redact(err))
	}
	var out []jetstream.Msg
	ch := mb.Messages()
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				if err := mb.Error(); err != nil {
					s.handBack(out)
					if ctx.Err() != nil {
						return nil, fmt.Errorf("NATS: no answer from the consumer in time: %w", ctx.Err())
					}
					return nil, fmt.Errorf("NATS: fetching from consumer %q of stream %q: %w", s.set.Consumer, s.set.Stream, s.redact(err))
				}
				return out, nil
			}
			out = append(out, m)
		case <-ctx.Done():
			// What comes after is handed back as it comes, until the
			// fetch ends (its expiry, a second past for a no-wait one).
			go func() {
				for m := range ch {
					_ = m.Nak()
				}
			}()
			s.handBack(out)
			return nil, fmt.Errorf("NATS: no answer from the consumer in time: %w", ctx.Err())
		}
	}
}

// handBack naks messages received but not handed to the runtime, at once.
func (s *Source) handBack(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.Nak()
	}
}

// Acknowledge acknowledges the settled messages of b, each with an
// acknowledgement the server confirms, all sent at once (one round trip of
// waiting, one request each: SingleCalls), and naks the others with the
// nak_delay (fire and forget: one that is lost comes back after AckWait).
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	var acks queue.Acks
	var settled, back []jetstream.Msg
	var ids []string
	s.mu.Lock()
	for i := range b.Messages {
		m := &b.Messages[i]
		jm, ok := s.held[m.Handle]
		if !ok {
			continue
		}
		delete(s.held, m.Handle)
		if m.Settled {
			settled = append(settled, jm)
			ids = append(ids, m.WireID)
		} else {
			back = append(back, jm)
		}
	}
	s.mu.Unlock()
	for _, m := range back {
		if err := m.NakWithDelay(s.set.NakDelay); err != nil {
			s.log.Warn("NATS: handing a message back failed; it comes back after the consumer's ack wait", "queue", s.queue, "err", s.redact(err))
		}
	}
	errs := make([]error, len(settled))
	var wg sync.WaitGroup
	for i, m := range settled {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.DoubleAck(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		acks.SingleCalls++
		if err != nil {
			s.log.Warn("NATS: an acknowledgement did not take; the message comes back, a repeat", "queue", s.queue, "sequence", ids[i], "err", s.redact(err))
			continue
		}
		acks.Acknowledged++
	}
	if len(settled) == 0 && len(back) > 0 {
		// The naks are sent before Acknowledge returns.
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_ = s.nc.FlushWithContext(fctx)
		cancel()
	}
	return acks
}

// ParkedBody is nil: a parked message keeps its body.
func (s *Source) ParkedBody(*queue.Message) []byte { return nil }

// Close naks what is held unanswered and closes the connection.
func (s *Source) Close() {
	s.mu.Lock()
	var held []jetstream.Msg
	for h, m := range s.held {
		held = append(held, m)
		delete(s.held, h)
	}
	s.mu.Unlock()
	s.handBack(held)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = s.nc.FlushWithContext(ctx)
	cancel()
	s.nc.Close()
}

// redact removes the credential's secrets from err's text, until none is
// left; a text where one keeps coming back is withheld whole.
func (s *Source) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean, ok := redactText(msg, s.cred.secrets())
	if !ok {
		return errors.New(withheld)
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// withheld stands for an error's text that redactText could not clean.
const withheld = "(the error's text is withheld: it held a secret of the credential)"

// redactText replaces each secret in text; ok is false when one is still
// there after a few passes (a replacement making another).
func redactText(text string, secrets []string) (string, bool) {
	for range 4 {
		changed := false
		for _, secret := range secrets {
			if secret != "" && strings.Contains(text, secret) {
				text = strings.ReplaceAll(text, secret, "[redacted]")
				changed = true
			}
		}
		if !changed {
			return text, true
		}
	}
	for _, secret := range secrets {
		if secret != "" && strings.Contains(text, secret) {
			return "", false
		}
	}
	return text, true
}
