package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// A receive waits at most FirstWait for its first delivery (a short poll,
// never a tick's worth: an empty queue answers with an empty batch), then
// at most RestWait for each next one: the broker sends what it holds for
// the consumer in one burst, so a gap that long means it holds no more now,
// and a batch shorter than MaxBatch means the queue is drained for now.
const (
	FirstWait = 100 * time.Millisecond
	RestWait  = 10 * time.Millisecond
)

// DialTimeout bounds a connection's dial and handshake when the caller's
// context has no deadline.
const DialTimeout = 30 * time.Second

// Source is the rabbitmq queue driver (docs/guide/receiving.md,
// "RabbitMQ"): one AMQP connection and one channel consuming the queue with
// manual acknowledgements. The channel's prefetch (basic.qos) is what the
// runtime holds at once, MaxBatch messages for each of its InFlight
// batches, so the broker pushes no more than the runtime can take; a
// receive gathers up to MaxBatch of the deliveries pushed.
//
// A batch is answered in as few frames as AMQP allows: basic.ack with
// multiple=true acknowledges every outstanding delivery tag up to its own,
// so a batch whose messages were all settled is one frame, and one with
// messages to hand back is a frame for each run of settled or unsettled
// tags (basic.nack with requeue=true hands those back; the queue's own
// dead-letter exchange and a quorum queue's delivery limit take one that
// keeps coming back), or a nack for each unsettled one and one ack,
// whichever is fewer. A multiple frame would answer a lower batch too, so
// a batch answered before the one below it waits for that one (the
// runtime's batches commit in any order), and is answered a frame a
// message only when its context ends first.
//
// Deliveries belong to their channel: when the connection drops, the
// broker hands back every unacknowledged message (they come back as
// repeats), the acknowledgements of batches still being kept fail and are
// counted (FailedAcks), and the next Receive connects again.
type Source struct {
	log      *slog.Logger
	name     string // the connection's, for errors
	queue    string // the app's queue, for logs
	settings Settings
	url      string
	host     string // host:port, for errors
	secret   []string
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	maxBatch int
	prefetch int

	mu sync.Mutex
	// ch is the current connection's consuming channel; nil before the
	// first connect and after Close.
	ch     *channel
	held   map[string]delivery // by handle: the deliveries of batches not yet answered
	closed bool
	// wake is closed (and replaced) when a batch is answered, for the
	// batches above it waiting to be.
	wake chan struct{}

	failedAcks atomic.Int64
}

// channel is one connection's consuming channel and what it holds.
type channel struct {
	gen  uint64
	conn *amqp.Connection
	ch   *amqp.Channel
	// buf holds the deliveries pushed and not yet in a batch, in tag order.
	buf chan amqp.Delivery
	// outstanding are the delivery tags in batches not yet answered.
	outstanding map[uint64]bool
	// ended is set when the channel's deliveries end (the connection or
	// channel closed, the consumer cancelled by the broker).
	ended atomic.Bool
}

type delivery struct {
	ch  *channel
	tag uint64
}

var gens atomic.Uint64

// Open connects to the broker, finds (or declares) the queue and starts
// consuming it, so a broker that refuses the credential or a queue that
// does not exist stops the start.
func Open(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	st, err := SettingsOf(conn.Settings)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	raw := conn.Credentials[ir.MemberURL]
	u, err := parseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("connection %s: the credential's url is %w", conn.Name, err)
	}
	maxBatch := opts.MaxBatch
	if maxBatch <= 0 {
		maxBatch = 10
	}
	inFlight := max(opts.InFlight, 1)
	s := &Source{
		log: opts.Log, name: conn.Name, queue: opts.Queue, settings: st, url: raw,
		host: net.JoinHostPort(u.Host, strconv.Itoa(u.Port)), dial: opts.Dial,
		maxBatch: maxBatch, prefetch: maxBatch * inFlight, held: map[string]delivery{}, wake: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if u.Password != "" {
		s.secret = append(s.secret, u.Password, url.QueryEscape(u.Password), url.PathEscape(u.Password))
	}
	ctx, cancel := context.WithTimeout(context.Background(), DialTimeout)
	defer cancel()
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// redact is err's text without the password, whatever quoted it.
func (s *Source) redact(err error) error {
	msg := err.Error()
	for _, p := range s.secret {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "[password]")
		}
	}
	return errors.New(msg)
}

// connect opens a connection and its consuming channel, replacing the
// current one (whose unanswered batches' acknowledgements then fail).
func (s *Source) connect(ctx context.Context) error {
	c, err := s.dialBroker(ctx)
	if err != nil {
		return s.redact(fmt.Errorf("connection %s: cannot connect to the broker at %s: %w", s.name, s.host, err))
	}
	ch, err := s.openChannel(c)
	if err != nil {
		c.Close()
		return s.redact(fmt.Errorf("connection %s: %w", s.name, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return fmt.Errorf("connection %s: the source is closed", s.name)
	}
	s.ch = ch
	return nil
}

// dialBroker dials and handshakes within ctx: its deadline bounds the dial
// and the handshake, and its end cuts them.
func (s *Source) dialBroker(ctx context.Context) (*amqp.Connection, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DialTimeout)
		defer cancel()
	}
	var stop func() bool
	cfg := amqp.Config{
		Properties: amqp.Table{"connection_name": "jadpo " + s.name},
		Dial: func(network, addr string) (net.Conn, error) {
			var nc net.Conn
			var err error
			if s.dial != nil {
				nc, err = s.dial(ctx, network, addr)
			} else {
				var d net.Dialer
				nc, err = d.DialContext(ctx, network, addr)
			}
			if err != nil {
				return nil, err
			}
			// The client clears the deadline once the handshake is done.
			deadline, _ := ctx.Deadline()
			if err := nc.SetDeadline(deadline); err != nil {
				nc.Close()
				return nil, err
			}
			stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
			return nc, nil
		},
	}
	c, err := amqp.DialConfig(s.url, cfg)
	if stop != nil && !stop() {
		// ctx ended as the handshake did: the connection's deadline is past.
		if c != nil {
			c.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		if deadline, _ := ctx.Deadline(); ctx.Err() != nil || !time.Now().Before(deadline) {
			cause := ctx.Err()
			if cause == nil {
				cause = context.DeadlineExceeded
			}
			return nil, fmt.Errorf("no answer to the handshake in time: %w", cause)
		}
		return nil, err
	}
	return c, nil
}

// openChannel finds or declares the queue and starts consuming it.
func (s *Source) openChannel(c *amqp.Connection) (*channel, error) {
	setup, err := c.Channel()
	if err != nil {
		return nil, fmt.Errorf("cannot open a channel: %w", err)
	}
	q := s.settings.Queue
	switch s.settings.Declare {
	case DeclareExisting:
		_, err = setup.QueueDeclarePassive(q, true, false, false, false, nil)
		if amqpCode(err) == amqp.NotFound {
			return nil, fmt.Errorf("the broker has no queue %q in this vhost: create it (with its dead-letter exchange and, for a quorum queue, its delivery limit), or set the connection's setting declare to classic or quorum for the driver to declare it", q)
		}
	case DeclareClassic:
		_, err = setup.QueueDeclare(q, true, false, false, false, nil)
	case DeclareQuorum:
		_, err = setup.QueueDeclare(q, true, false, false, false, amqp.Table{amqp.QueueTypeArg: amqp.QueueTypeQuorum})
	}
	if amqpCode(err) == amqp.PreconditionFailed {
		return nil, fmt.Errorf("queue %q exists with other properties than `declare: %s` asks for (%s): set declare to existing to receive from it as it is", q, s.settings.Declare, reason(err))
	}
	if amqpCode(err) == amqp.AccessRefused {
		return nil, fmt.Errorf("the broker refuses the credential's user access to queue %q (%s): grant the user configure, write and read permissions on it", q, reason(err))
	}
	if err != nil {
		return nil, fmt.Errorf("queue %q: %w", q, err)
	}
	_ = setup.Close()
	ch, err := c.Channel()
	if err != nil {
		return nil, fmt.Errorf("cannot open a channel: %w", err)
	}
	if err := ch.Qos(s.prefetch, 0, false); err != nil {
		return nil, fmt.Errorf("basic.qos: %w", err)
	}
	deliveries, err := ch.Consume(q, "", false, false, false, false, nil)
	if err != nil {
		if amqpCode(err) == amqp.AccessRefused {
			return nil, fmt.Errorf("the broker refuses the credential's user reading queue %q (%s): grant it read permission", q, reason(err))
		}
		return nil, fmt.Errorf("cannot consume queue %q: %w", q, err)
	}
	out := &channel{gen: gens.Add(1), conn: c, ch: ch, buf: make(chan amqp.Delivery, s.prefetch), outstanding: map[uint64]bool{}}
	go func() {
		// Never blocks: the broker pushes at most prefetch unacknowledged
		// deliveries, and buf holds the ones not yet in a batch.
		for d := range deliveries {
			out.buf <- d
		}
		out.ended.Store(true)
		close(out.buf)
		// A batch waiting for a lower one on this channel waits no more.
		s.mu.Lock()
		s.answered()
		s.mu.Unlock()
	}()
	return out, nil
}

func amqpCode(err error) int {
	var e *amqp.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func reason(err error) string {
	var e *amqp.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return err.Error()
}

// LongPoll is 0: a receive waits at most FirstWait, within the tick.
func (s *Source) LongPoll() time.Duration { return 0 }

// current is the consuming channel, connected again first when the one
// before ended.
func (s *Source) current(ctx context.Context) (*channel, error) {
	s.mu.Lock()
	ch, closed := s.ch, s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("connection %s: the source is closed", s.name)
	}
	if ch != nil && !ch.ended.Load() && !ch.conn.IsClosed() {
		return ch, nil
	}
	if ch != nil {
		s.log.Warn("the broker's connection was lost; connecting again (the messages it held come back, the kept ones as repeats)",
			"queue", s.queue, "connection", s.name)
		_ = ch.conn.CloseDeadline(time.Now().Add(time.Second))
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch, nil
}

// Receive gathers up to MaxBatch deliveries: waiting at most FirstWait for
// the first and RestWait for each next one.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	ch, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	b := &queue.Batch{}
	first := time.NewTimer(FirstWait)
	defer first.Stop()
	var d amqp.Delivery
	var ok bool
	select {
	case d, ok = <-ch.buf:
	case <-first.C:
		return b, nil
	case <-ctx.Done():
		// A poll's end, not a failure: nothing is held.
		return b, nil
	}
	gap := time.NewTimer(RestWait)
	defer gap.Stop()
	var tags []uint64
	for ok {
		tags = append(tags, d.DeliveryTag)
		b.Messages = append(b.Messages, queue.Message{
			Body:   string(d.Body),
			Handle: strconv.FormatUint(ch.gen, 10) + "." + strconv.FormatUint(d.DeliveryTag, 10),
			WireID: d.MessageId,
		})
		if len(b.Messages) == s.maxBatch {
			break
		}
		select {
		case d, ok = <-ch.buf:
			continue
		default:
		}
		gap.Reset(RestWait)
		select {
		case d, ok = <-ch.buf:
		case <-gap.C:
			ok = false
		case <-ctx.Done():
			ok = false
		}
	}
	s.mu.Lock()
	for i, m := range b.Messages {
		s.held[m.Handle] = delivery{ch: ch, tag: tags[i]}
		ch.outstanding[tags[i]] = true
	}
	s.mu.Unlock()
	return b, nil
}

// Frame is one basic.ack or basic.nack a batch's answer sends.
type Frame struct {
	Tag      uint64
	Multiple bool
	Ack      bool // false: nack, requeue
	// Settled is how many settled messages it acknowledges.
	Settled int
}

// Plan is the frames that answer a batch: tags in ascending order, the
// settled ones acknowledged and the others handed back, given lowest, the
// lowest tag outstanding on the channel (the batch's own or another's).
// With no other batch below, a run of settled or unsettled tags is one
// multiple frame (or each unsettled one a frame and one ack, when fewer);
// else each message is a frame of its own.
func Plan(tags []uint64, settled []bool, lowest uint64) []Frame {
	if len(tags) == 0 {
		return nil
	}
	var out []Frame
	if lowest < tags[0] {
		for i, t := range tags {
			f := Frame{Tag: t, Ack: settled[i]}
			if settled[i] {
				f.Settled = 1
			}
			out = append(out, f)
		}
		return out
	}
	// Runs, each one multiple frame at its highest tag.
	for i := 0; i < len(tags); {
		j := i
		for j+1 < len(tags) && settled[j+1] == settled[i] {
			j++
		}
		f := Frame{Tag: tags[j], Multiple: true, Ack: settled[i]}
		if settled[i] {
			f.Settled = j - i + 1
		}
		out = append(out, f)
		i = j + 1
	}
	// Or a nack for each unsettled one, then one ack of the rest.
	var nacks []Frame
	last, n := uint64(0), 0
	for i, t := range tags {
		if settled[i] {
			last, n = t, n+1
		} else {
			nacks = append(nacks, Frame{Tag: t})
		}
	}
	if n > 0 && len(nacks) > 0 && len(nacks)+1 < len(out) {
		return append(nacks, Frame{Tag: last, Multiple: true, Ack: true, Settled: n})
	}
	return out
}

// Acknowledge answers the batch: its settled messages acknowledged, the
// others handed back (basic.nack, requeue), in the frames Plan gives. A
// batch above one not yet answered (the runtime's batches commit in any
// order) first waits for it, within ctx, so that one multiple frame still
// answers it; past ctx it is answered a frame a message. On a channel that
// ended, nothing can be answered: the broker has handed the messages back
// already, and they come back (the kept ones as repeats).
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	var acks queue.Acks
	if len(b.Messages) == 0 {
		return acks
	}
	type entry struct {
		tag     uint64
		settled bool
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byCh := map[*channel][]entry{}
	for _, m := range b.Messages {
		d, ok := s.held[m.Handle]
		if !ok {
			s.log.Warn("a message to answer was not received by this source, or was answered already", "queue", s.queue, "message_id", m.ID)
			continue
		}
		delete(s.held, m.Handle)
		byCh[d.ch] = append(byCh[d.ch], entry{d.tag, m.Settled})
	}
	for ch, es := range byCh {
		slices.SortFunc(es, func(a, b entry) int { return cmpTag(a.tag, b.tag) })
		lowest := s.waitLower(ctx, ch, es[0].tag)
		tags, settled := make([]uint64, len(es)), make([]bool, len(es))
		want := 0
		for i, e := range es {
			tags[i], settled[i] = e.tag, e.settled
			delete(ch.outstanding, e.tag)
			if e.settled {
				want++
			}
		}
		took := 0
		var err error
		for _, f := range Plan(tags, settled, lowest) {
			if f.Ack {
				err = ch.ch.Ack(f.Tag, f.Multiple)
			} else {
				err = ch.ch.Nack(f.Tag, f.Multiple, true)
			}
			if err != nil {
				break
			}
			if f.Multiple {
				acks.BatchCalls++
			} else {
				acks.SingleCalls++
			}
			took += f.Settled
		}
		s.answered()
		acks.Acknowledged += took
		if err != nil {
			failed := want - took
			s.failedAcks.Add(int64(failed))
			s.log.Warn("the broker's connection was lost before the batch was answered; the broker hands its messages back, and the kept ones come back as repeats",
				"queue", s.queue, "unacknowledged", failed, "error", s.redact(err).Error())
		}
	}
	return acks
}

// waitLower waits, with s.mu held (let go while waiting), until no batch
// below first is outstanding on ch, or ctx ends, or ch ends; it returns the
// lowest tag outstanding then (first when none is lower).
func (s *Source) waitLower(ctx context.Context, ch *channel, first uint64) uint64 {
	for {
		lowest := first
		for t := range ch.outstanding {
			lowest = min(lowest, t)
		}
		if lowest == first || ctx.Err() != nil || ch.ended.Load() {
			return lowest
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		s.mu.Lock()
	}
}

// answered wakes the batches waiting for a lower one (with s.mu held).
func (s *Source) answered() {
	close(s.wake)
	s.wake = make(chan struct{})
}

func cmpTag(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FailedAcks is how many settled messages could not be acknowledged, their
// channel gone (they came back, as repeats).
func (s *Source) FailedAcks() int64 { return s.failedAcks.Load() }

// ParkedBody is nil: a delivery's body is the message's, the same each time.
func (s *Source) ParkedBody(*queue.Message) []byte { return nil }

// Close closes the connection: the broker hands back what was not
// acknowledged.
func (s *Source) Close() {
	s.mu.Lock()
	ch := s.ch
	s.closed, s.ch = true, nil
	s.mu.Unlock()
	if ch != nil {
		_ = ch.conn.CloseDeadline(time.Now().Add(5 * time.Second))
	}
}

// holding is how many messages the source holds unacknowledged: in
// batches not yet answered, and pushed and not yet received.
func (s *Source) holding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.held)
	if s.ch != nil && !s.ch.ended.Load() {
		n += len(s.ch.buf)
	}
	return n
}
