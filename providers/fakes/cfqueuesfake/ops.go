package cfqueuesfake

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jadpo/jadpo/providers/fakes/visibility"
)

type queueKey struct{ account, id string }

// Limits of Cloudflare Queues the fake keeps.
const (
	maxBatch         = 100
	maxVisibilityMs  = 43_200_000 // 12 h
	maxDelaySeconds  = 43_200     // 12 h
	maxMessageBytes  = 128 << 10
	maxMaxRetries    = 100
	defaultRetries   = 3
	defaultBatchSize = 5
	defaultVisMs     = 30_000
)

type queue struct {
	key  queueKey
	opts QueueOptions // as given, for CreateQueue's idempotency
	// maxDeliveries is how many times a message may be delivered before the
	// redelivery limit takes it (MaxRetries+1).
	maxDeliveries int
	dlq           *queue // nil: messages at the limit are deleted

	// held is the queue's messages (a dead-letter queue's in the order moved
	// in), delivered earliest visible first: a message retried with a delay
	// waits behind those visible before it.
	held *visibility.Queue[*message]
}

// message is a message the fake holds: ID, VisibleAt, Deliveries (the
// attempts so far) and Handle (its latest lease, current only while it is
// in flight) are the queue's (visibility.Message).
type message struct {
	visibility.Message
	body        string
	contentType string // "text", "json", "bytes" or "v8" (SendAs)
	sent        time.Time
}

// current finds the message whose current lease is lease, or nil: a lease
// is current until the message is pulled again, retried, acked or its
// visibility timeout runs out.
func (q *queue) current(lease string, now time.Time) *message {
	id, ok := leaseMessageID(lease)
	if !ok {
		return nil
	}
	m, _ := q.held.Current(id, lease, now)
	return m
}

// leases: base64url of "<message id>|<seq>|<account>/<queue>"; the seq makes
// each pull's lease new. Only the id is read back: a lease is checked by
// comparing it whole with the message's.

func (f *Fake) newLease(q *queue, m *message) string {
	f.seq++
	return base64.RawURLEncoding.EncodeToString([]byte(m.ID + "|" + strconv.FormatUint(f.seq, 10) + "|" + q.key.account + "/" + q.key.id))
}

func leaseMessageID(lease string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(lease)
	if err != nil {
		return "", false
	}
	id, _, ok := strings.Cut(string(raw), "|")
	return id, ok && id != ""
}

func newMessageID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lookup finds a queue; the caller holds f.mu.
func (f *Fake) lookup(key queueKey) (*queue, *apiError) {
	q, ok := f.queues[key]
	if !ok {
		return nil, queueNotFound()
	}
	return q, nil
}

// ---- pull ----

type pullInput struct {
	BatchSize           *int `json:"batch_size"`
	VisibilityTimeoutMs *int `json:"visibility_timeout_ms"`
}

type pulledMessage struct {
	ID          string            `json:"id"`
	Body        string            `json:"body"`
	TimestampMs int64             `json:"timestamp_ms"`
	Attempts    int               `json:"attempts"`
	LeaseID     string            `json:"lease_id"`
	Metadata    map[string]string `json:"metadata"`
}

type pullResult struct {
	MessageBacklogCount int             `json:"message_backlog_count"`
	Messages            []pulledMessage `json:"messages"`
}

func intField(name string, v *int, def, lo, hi int) (int, *apiError) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, invalid("%s: must be between %d and %d, got %d", name, lo, hi, *v)
	}
	return *v, nil
}

func (f *Fake) servePull(key queueKey, body []byte) (any, *apiError) {
	var in pullInput
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	n, e := intField("batch_size", in.BatchSize, defaultBatchSize, 1, maxBatch)
	if e != nil {
		return nil, e
	}
	vis, e := intField("visibility_timeout_ms", in.VisibilityTimeoutMs, defaultVisMs, 1, maxVisibilityMs)
	if e != nil {
		return nil, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(key)
	if e != nil {
		return nil, e
	}
	got := f.pull(q, n, time.Duration(vis)*time.Millisecond)
	out := pullResult{MessageBacklogCount: q.held.Len(), Messages: make([]pulledMessage, 0, len(got))}
	for _, m := range got {
		out.Messages = append(out.Messages, pulledMessage{
			ID: m.ID, Body: m.body, TimestampMs: m.sent.UnixMilli(), Attempts: m.Deliveries, LeaseID: m.Handle,
			Metadata: map[string]string{"CF-sourceMessageSource": "api", "CF-Content-Type": m.contentType},
		})
	}
	return out, nil
}

// pull delivers up to n visible messages of q, earliest visible first,
// applying the redelivery limit to those it reaches; the caller holds f.mu.
func (f *Fake) pull(q *queue, n int, vis time.Duration) []*message {
	now := f.clock.Now()
	limit := func(m *message) bool {
		if m.Deliveries < q.maxDeliveries {
			return false
		}
		if q.dlq != nil {
			// A copy: q keeps m, gone, until it is tidied.
			q.dlq.held.Add(&message{Message: visibility.Message{ID: m.ID, VisibleAt: now},
				body: m.body, contentType: m.contentType, sent: m.sent})
		}
		return true
	}
	got, _ := q.held.Receive(now, n, vis, limit, func(m *message) string { return f.newLease(q, m) })
	return got
}

// ---- ack ----

type ackInput struct {
	Acks []struct {
		LeaseID string `json:"lease_id"`
	} `json:"acks"`
	Retries []struct {
		LeaseID      string `json:"lease_id"`
		DelaySeconds *int   `json:"delay_seconds"`
	} `json:"retries"`
}

type ackResult struct {
	AckCount   int      `json:"ackCount"`
	RetryCount int      `json:"retryCount"`
	Warnings   []string `json:"warnings"`
}

func (f *Fake) serveAck(key queueKey, body []byte) (any, *apiError) {
	var in ackInput
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if n := len(in.Acks) + len(in.Retries); n > maxBatch {
		return nil, invalid("acks, retries: at most %d entries in all, got %d", maxBatch, n)
	}
	delays := make([]time.Duration, len(in.Retries))
	for i, a := range in.Acks {
		if a.LeaseID == "" {
			return nil, invalid("acks[%d].lease_id: required", i)
		}
	}
	for i, r := range in.Retries {
		if r.LeaseID == "" {
			return nil, invalid("retries[%d].lease_id: required", i)
		}
		d, e := intField(fmt.Sprintf("retries[%d].delay_seconds", i), r.DelaySeconds, 0, 0, maxDelaySeconds)
		if e != nil {
			return nil, e
		}
		delays[i] = time.Duration(d) * time.Second
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(key)
	if e != nil {
		return nil, e
	}
	now := f.clock.Now()
	out := ackResult{Warnings: []string{}}
	for _, a := range in.Acks {
		if m := q.current(a.LeaseID, now); m != nil {
			q.held.Delete(m)
			out.AckCount++
		}
	}
	for i, r := range in.Retries {
		if m := q.current(r.LeaseID, now); m != nil {
			q.held.Release(m, now.Add(delays[i]))
			out.RetryCount++
		}
	}
	return out, nil
}

// ---- push ----

type pushInput struct {
	Body         json.RawMessage `json:"body"`
	ContentType  *string         `json:"content_type"`
	DelaySeconds *int            `json:"delay_seconds"`
}

// newMessage checks a message to send and makes it.
func (f *Fake) newMessage(body, contentType string, delay time.Duration) (*message, *apiError) {
	if len(body) > maxMessageBytes {
		return nil, invalid("body: a message is at most %d bytes, got %d", maxMessageBytes, len(body))
	}
	now := f.clock.Now()
	return &message{Message: visibility.Message{ID: newMessageID(), VisibleAt: now.Add(delay)},
		body: body, contentType: contentType, sent: now}, nil
}

func (f *Fake) servePush(key queueKey, raw []byte) (any, *apiError) {
	var in pushInput
	if e := decode(raw, &in); e != nil {
		return nil, e
	}
	in.Body = bytes.TrimSpace(in.Body)
	if len(in.Body) == 0 || string(in.Body) == "null" {
		return nil, invalid("body: required")
	}
	var body, contentType string
	if in.Body[0] == '"' {
		if err := json.Unmarshal(in.Body, &body); err != nil {
			return nil, invalid("body: %v", err)
		}
		contentType = "text"
	} else {
		var b bytes.Buffer
		if err := json.Compact(&b, in.Body); err != nil {
			return nil, invalid("body: %v", err)
		}
		body, contentType = b.String(), "json"
	}
	if in.ContentType != nil {
		switch *in.ContentType {
		case "text":
			if contentType != "text" {
				return nil, invalid(`content_type: "text" needs a string body`)
			}
		case "json":
			contentType = "json"
		default:
			return nil, invalid(`content_type: must be "text" or "json", got %q`, *in.ContentType)
		}
	}
	delay, e := intField("delay_seconds", in.DelaySeconds, 0, 0, maxDelaySeconds)
	if e != nil {
		return nil, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(key)
	if e != nil {
		return nil, e
	}
	m, e := f.newMessage(body, contentType, time.Duration(delay)*time.Second)
	if e != nil {
		return nil, e
	}
	q.held.Add(m)
	return nil, nil
}

// ---- direct access, for tests and demos ----

// QueueOptions configure a queue made with CreateQueue.
type QueueOptions struct {
	// MaxRetries is how many times a message is redelivered after its first
	// delivery before the redelivery limit takes it: 0 means 3 (Cloudflare's
	// default), -1 means none (one delivery only), at most 100.
	MaxRetries int
	// DeadLetterQueue is the id of a queue in the same account, created
	// before, that receives messages at the limit; "" deletes them.
	DeadLetterQueue string
}

// CreateQueue makes the queue queueID of account accountID. Making it again
// with the same options does nothing; with others it is an error.
func (f *Fake) CreateQueue(accountID, queueID string, opts QueueOptions) error {
	for _, id := range []string{accountID, queueID} {
		if id == "" || strings.ContainsAny(id, "/") {
			return fmt.Errorf("cfqueuesfake: account and queue ids must be non-empty and without '/', got %q", id)
		}
	}
	if opts.MaxRetries < -1 || opts.MaxRetries > maxMaxRetries {
		return fmt.Errorf("cfqueuesfake: MaxRetries must be -1..%d, got %d", maxMaxRetries, opts.MaxRetries)
	}
	key := queueKey{accountID, queueID}
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.queues[key]; ok {
		if q.opts != opts {
			return fmt.Errorf("cfqueuesfake: queue %s/%s exists with other options", accountID, queueID)
		}
		return nil
	}
	q := &queue{key: key, opts: opts, held: visibility.New[*message](visibility.EarliestVisible)}
	switch opts.MaxRetries {
	case 0:
		q.maxDeliveries = defaultRetries + 1
	case -1:
		q.maxDeliveries = 1
	default:
		q.maxDeliveries = opts.MaxRetries + 1
	}
	if opts.DeadLetterQueue != "" {
		if opts.DeadLetterQueue == queueID {
			return errors.New("cfqueuesfake: a queue cannot be its own dead-letter queue")
		}
		dlq, ok := f.queues[queueKey{accountID, opts.DeadLetterQueue}]
		if !ok {
			return fmt.Errorf("cfqueuesfake: dead-letter queue %s/%s does not exist", accountID, opts.DeadLetterQueue)
		}
		q.dlq = dlq
	}
	f.queues[key] = q
	return nil
}

// Send pushes a text message as the push operation does, and returns its id.
func (f *Fake) Send(accountID, queueID, body string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(queueKey{accountID, queueID})
	if e != nil {
		return "", e
	}
	m, e := f.newMessage(body, "text", 0)
	if e != nil {
		return "", e
	}
	q.held.Add(m)
	return m.ID, nil
}

// SendAs pushes a message a producer sent with contentType ("text",
// "json", "bytes" or "v8", as a Worker's send({contentType}) does), and
// returns its id. payload is what the producer's content type made of its
// body (for v8, the Workers runtime's serialization); a pull answers it as
// Cloudflare does: text and json as they are, bytes and v8 in base64.
func (f *Fake) SendAs(accountID, queueID, contentType string, payload []byte) (string, error) {
	body := string(payload)
	switch contentType {
	case "text", "json":
	case "bytes", "v8":
		body = base64.StdEncoding.EncodeToString(payload)
	default:
		return "", fmt.Errorf("cfqueuesfake: content type %q is none of text, json, bytes, v8", contentType)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(queueKey{accountID, queueID})
	if e != nil {
		return "", e
	}
	m, e := f.newMessage(body, contentType, 0)
	if e != nil {
		return "", e
	}
	q.held.Add(m)
	return m.ID, nil
}

// QueueStats counts a queue's messages.
type QueueStats struct {
	Visible  int // may be pulled now (including any the redelivery limit will take)
	InFlight int // pulled, with a lease not yet run out
	Delayed  int // pushed with a delay, or retried with one, not yet over
}

// Stats counts the messages of a queue; false when there is no such queue.
func (f *Fake) Stats(accountID, queueID string) (QueueStats, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.queues[queueKey{accountID, queueID}]
	if !ok {
		return QueueStats{}, false
	}
	c := q.held.Count(f.clock.Now())
	return QueueStats{Visible: c.Visible, InFlight: c.InFlight, Delayed: c.Delayed}, true
}

// MessageInfo describes a message held by the fake.
type MessageInfo struct {
	ID       string
	Body     string
	Attempts int // deliveries so far (0 again after a move to a dead-letter queue)
	Visible  bool
}

// Messages lists a queue's messages in send order (a dead-letter queue's in
// the order they were moved in); nil when there is no such queue.
func (f *Fake) Messages(accountID, queueID string) []MessageInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.queues[queueKey{accountID, queueID}]
	if !ok {
		return nil
	}
	now := f.clock.Now()
	out := make([]MessageInfo, 0, q.held.Len())
	for m := range q.held.All() {
		out = append(out, MessageInfo{ID: m.ID, Body: m.body, Attempts: m.Deliveries, Visible: !m.InFlight(now)})
	}
	return out
}
