package cfqueuesfake

import (
	"bytes"
	"container/heap"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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

	// msgs is in send order (a dead-letter queue's in the order moved in),
	// for Messages; a removed message is marked gone and left in place until
	// tidy, so that removing costs the same however long the queue is.
	msgs    []*message
	byID    map[string]*message // the messages not gone
	removed int                 // gone messages still in msgs

	// due orders the messages by when they are next visible, so that a
	// pull looks only at the messages it delivers (and at stale entries,
	// each looked at once). Each message not gone has exactly one live entry;
	// an entry is stale once its message is gone or its visibility changed
	// (message.gen moved on). stale counts those still in due.
	due   dueHeap
	stale int
}

type message struct {
	id          string
	body        string
	contentType string // "text" or "json"
	sent        time.Time
	seq         uint64    // orders messages visible at the same instant
	visibleAt   time.Time // when it may next be delivered
	attempts    int       // deliveries so far
	lease       string    // the latest lease; current only while visibleAt is ahead
	gen         uint64    // bumped on each change of visibleAt
	gone        bool      // removed from its queue (see queue.msgs)
}

type dueEntry struct {
	at  time.Time
	seq uint64
	m   *message
	gen uint64
}

type dueHeap []dueEntry

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = dueEntry{}
	*h = old[:len(old)-1]
	return e
}

func (e dueEntry) live() bool { return !e.m.gone && e.gen == e.m.gen }

// add appends m to q and schedules it; the caller holds f.mu.
func (q *queue) add(m *message) {
	if q.byID == nil {
		q.byID = map[string]*message{}
	}
	q.msgs = append(q.msgs, m)
	q.byID[m.id] = m
	heap.Push(&q.due, dueEntry{at: m.visibleAt, seq: m.seq, m: m, gen: m.gen})
}

// reschedule makes m visible at at; its earlier entry in due goes stale.
func (q *queue) reschedule(m *message, at time.Time) {
	m.visibleAt = at
	m.gen++
	q.stale++
	heap.Push(&q.due, dueEntry{at: at, seq: m.seq, m: m, gen: m.gen})
	q.compact()
}

// remove takes m off q. inDue says whether m's live entry is still in due
// (false when a pull has just popped it).
func (q *queue) remove(m *message, inDue bool) {
	m.gone = true
	delete(q.byID, m.id)
	q.removed++
	if inDue {
		q.stale++
	}
}

// tidy drops gone messages from msgs once they are at least half of it, so
// the copying is paid once per as many removals as there are messages left.
func (q *queue) tidy() {
	if q.removed < 32 || q.removed*2 < len(q.msgs) {
		return
	}
	n := len(q.msgs)
	q.msgs = slices.DeleteFunc(q.msgs, func(m *message) bool { return m.gone })
	clear(q.msgs[len(q.msgs):n])
	q.removed = 0
}

// compact drops stale entries from due on the same terms as tidy (acked
// messages' entries would otherwise wait there until their timeout).
func (q *queue) compact() {
	if q.stale < 32 || q.stale*2 < len(q.due) {
		return
	}
	n := len(q.due)
	q.due = slices.DeleteFunc(q.due, func(e dueEntry) bool { return !e.live() })
	clear(q.due[len(q.due):n])
	heap.Init(&q.due)
	q.stale = 0
}

// current finds the message whose current lease is lease, or nil: a lease
// is current until the message is pulled again, retried, acked or its
// visibility timeout runs out.
func (q *queue) current(lease string, now time.Time) *message {
	id, ok := leaseMessageID(lease)
	if !ok {
		return nil
	}
	m := q.byID[id]
	if m == nil || m.lease != lease || !m.visibleAt.After(now) {
		return nil
	}
	return m
}

// leases: base64url of "<message id>|<seq>|<account>/<queue>"; the seq makes
// each pull's lease new. Only the id is read back: a lease is checked by
// comparing it whole with the message's.

func (f *Fake) newLease(q *queue, m *message) string {
	f.seq++
	return base64.RawURLEncoding.EncodeToString([]byte(m.id + "|" + strconv.FormatUint(f.seq, 10) + "|" + q.key.account + "/" + q.key.id))
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

func (f *Fake) nextSeq() uint64 {
	f.seq++
	return f.seq
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
	out := pullResult{MessageBacklogCount: len(q.byID), Messages: make([]pulledMessage, 0, len(got))}
	for _, m := range got {
		out.Messages = append(out.Messages, pulledMessage{
			ID: m.id, Body: m.body, TimestampMs: m.sent.UnixMilli(), Attempts: m.attempts, LeaseID: m.lease,
			Metadata: map[string]string{"CF-sourceMessageSource": "api", "CF-Content-Type": m.contentType},
		})
	}
	return out, nil
}

// pull delivers up to n visible messages of q, earliest visible first,
// applying the redelivery limit to those it reaches; the caller holds f.mu.
func (f *Fake) pull(q *queue, n int, vis time.Duration) []*message {
	now := f.clock.Now()
	var got []*message
	for len(got) < n && len(q.due) > 0 {
		e := q.due[0]
		if !e.live() {
			heap.Pop(&q.due)
			q.stale--
			continue
		}
		if e.at.After(now) {
			break // nothing else is visible yet
		}
		heap.Pop(&q.due)
		m := e.m
		if m.attempts >= q.maxDeliveries {
			q.remove(m, false)
			if q.dlq != nil {
				// A copy: q.msgs keeps m, gone, until it is tidied.
				q.dlq.add(&message{id: m.id, body: m.body, contentType: m.contentType, sent: m.sent,
					seq: f.nextSeq(), visibleAt: now})
			}
			continue
		}
		m.attempts++
		m.visibleAt = now.Add(vis)
		m.gen++
		m.lease = f.newLease(q, m)
		heap.Push(&q.due, dueEntry{at: m.visibleAt, seq: m.seq, m: m, gen: m.gen})
		got = append(got, m)
	}
	q.tidy()
	q.compact()
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
			q.remove(m, true)
			out.AckCount++
		}
	}
	for i, r := range in.Retries {
		if m := q.current(r.LeaseID, now); m != nil {
			m.lease = ""
			q.reschedule(m, now.Add(delays[i]))
			out.RetryCount++
		}
	}
	q.tidy()
	q.compact()
	return out, nil
}

// ---- push ----

type pushInput struct {
	Body         json.RawMessage `json:"body"`
	ContentType  *string         `json:"content_type"`
	DelaySeconds *int            `json:"delay_seconds"`
}

// newMessage checks a message to send and makes it; the caller holds f.mu
// (for the sequence number).
func (f *Fake) newMessage(body, contentType string, delay time.Duration) (*message, *apiError) {
	if len(body) > maxMessageBytes {
		return nil, invalid("body: a message is at most %d bytes, got %d", maxMessageBytes, len(body))
	}
	now := f.clock.Now()
	return &message{id: newMessageID(), body: body, contentType: contentType, sent: now,
		seq: f.nextSeq(), visibleAt: now.Add(delay)}, nil
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
	q.add(m)
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
	q := &queue{key: key, opts: opts}
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
	q.add(m)
	return m.id, nil
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
	now := f.clock.Now()
	var s QueueStats
	for _, m := range q.msgs {
		switch {
		case m.gone:
		case !m.visibleAt.After(now):
			s.Visible++
		case m.lease != "":
			s.InFlight++
		default:
			s.Delayed++
		}
	}
	return s, true
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
	out := make([]MessageInfo, 0, len(q.byID))
	for _, m := range q.msgs {
		if !m.gone {
			out = append(out, MessageInfo{ID: m.id, Body: m.body, Attempts: m.attempts, Visible: !m.visibleAt.After(now)})
		}
	}
	return out
}
