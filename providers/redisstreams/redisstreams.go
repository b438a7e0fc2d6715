// Package redisstreams is the redis_streams queue driver
// (docs/guide/receiving.md, "Redis Streams"): a Redis stream received
// through a consumer group with github.com/redis/go-redis/v9. Its
// contract, settings and stand-in are in driver.go.
//
// A receive is one round trip: a script reclaims up to ten entries that
// other consumers (or this one) left pending longer than claim_idle
// (XAUTOCLAIM, with each one's delivery count from XPENDING), then reads
// new ones up to ten in all (XREADGROUP ... >), so retried entries come
// first. The settled entries of a batch are acknowledged by one XACK after
// the keep commits; the others are left pending, and come back once
// claim_idle has passed: the stream's visibility timeout. An entry
// delivered more than max_deliveries times is handed on OverDeliveryLimit,
// so the runtime parks it once (and counts it apart) and it is
// acknowledged: Redis has no dead-letter queue of its own.
package redisstreams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// PruneIdle is how long a consumer of the group with nothing pending must
// have been idle for Open to delete it: one a process that ended left
// behind (a consumer name is a process's own). A live consumer of this
// driver asks at least every tick.
const PruneIdle = time.Hour

// go-redis prints its pool's troubles on standard error; every one is
// also the error its call returns, which the driver reports (jadpo's
// output is its own).
func init() { redis.SetLogger(silent{}) }

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// Source receives one stream through its consumer group.
type Source struct {
	log      *slog.Logger
	queue    string
	maxBatch int
	set      Settings
	client   *redis.Client
	consumer string

	mu sync.Mutex // guards the reclaim's cursor
	// cursor is where the next XAUTOCLAIM goes on scanning the group's
	// pending entries ("0-0": from the start).
	cursor string
}

// ConsumerName is the consumer this process receives as: its host, its
// process id and a random part, so that each process (and each queue of
// it) is one consumer of the group and another can reclaim what it left.
func ConsumerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("jadpo-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Open reads the connection's settings and URL, connects and makes sure
// the consumer group exists (creating it with create_group), so that a
// stream or group the server lacks stops the start, naming the fix.
func Open(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	set, err := SettingsOf(conn.Settings)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	o, err := ClientOptions(conn.Credentials[ir.MemberURL])
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	if opts.Dial != nil {
		o.Dialer = opts.Dial
	}
	// Every call is bounded by its context (a receive by the tick's
	// budget), not by go-redis's own read timeout.
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	// RESP2: every answer an array, field lists kept in order with any
	// field given twice (RESP3 and go-redis's entry type read them as maps).
	o.Protocol = 2
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 10*time.Second + set.Block
	}
	if o.PoolSize == 0 {
		o.PoolSize = max(opts.InFlight, 1) + 2 // the batches being acknowledged, and the receive
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxBatch := opts.MaxBatch
	if maxBatch <= 0 {
		maxBatch = 10
	}
	s := &Source{log: log, queue: opts.Queue, maxBatch: maxBatch, set: set, client: redis.NewClient(o), consumer: ConsumerName(), cursor: "0-0"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.ensureGroup(ctx); err != nil {
		s.client.Close()
		return nil, fmt.Errorf("connection %s: %w", conn.Name, err)
	}
	if n, err := pruneScript.Run(ctx, s.client, []string{set.Stream}, set.Group, PruneIdle.Milliseconds()).Int64(); err != nil {
		s.log.Warn("cannot delete the group's consumers left by ended processes", "queue", s.queue, "stream", set.Stream, "error", err)
	} else if n > 0 {
		s.log.Info("deleted consumers left by ended processes (nothing pending, idle an hour)", "queue", s.queue, "stream", set.Stream, "consumers", n)
	}
	return s, nil
}

// Consumer is the consumer name the source receives as.
func (s *Source) Consumer() string { return s.consumer }

// ensureGroup creates the group (create_group: from the stream's first
// entry, the stream too when there is none) or checks that it exists.
func (s *Source) ensureGroup(ctx context.Context) error {
	if s.set.CreateGroup {
		err := s.client.XGroupCreateMkStream(ctx, s.set.Stream, s.set.Group, "0").Err()
		if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("creating the consumer group %q of stream %q: %w", s.set.Group, s.set.Stream, err)
		}
		return nil
	}
	groups, err := s.client.XInfoGroups(ctx, s.set.Stream).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return s.noGroup("there is no stream %q", s.set.Stream)
		}
		return fmt.Errorf("reading the consumer groups of stream %q: %w", s.set.Stream, err)
	}
	for _, g := range groups {
		if g.Name == s.set.Group {
			return nil
		}
	}
	return s.noGroup("stream %q has no consumer group %q", s.set.Stream, s.set.Group)
}

func (s *Source) noGroup(format string, args ...any) error {
	return fmt.Errorf(format+": create it with `XGROUP CREATE %s %s 0 MKSTREAM` (0: from the stream's first entry; $: only entries added after), "+
		"or set create_group: true in the connection's settings", append(args, s.set.Stream, s.set.Group)...)
}

// receiveScript reclaims, then reads: KEYS[1] the stream; ARGV the group,
// the consumer, claim_idle in milliseconds, XAUTOCLAIM's cursor and the
// batch's size. It answers {next cursor, {{id, fields, deliveries}...}
// reclaimed, {{id, fields}...} new, {id...} reclaimed ids whose entries
// were deleted from the stream}.
var receiveScript = redis.NewScript(`
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local count = tonumber(ARGV[5])
local c = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[3], ARGV[4], 'COUNT', count)
local claimed = {}
for _, e in ipairs(c[2]) do
  if e and e[2] then
    local p = redis.call('XPENDING', stream, group, e[1], e[1], 1)
    local n = 0
    if p[1] then n = p[1][4] end
    claimed[#claimed + 1] = {e[1], e[2], n}
  end
end
local fresh = {}
if #claimed < count then
  local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count - #claimed, 'STREAMS', stream, '>')
  if r and r[1] then fresh = r[1][2] end
end
return {c[1], claimed, fresh, c[3] or {}}
`)

// pruneScript deletes the group's consumers with nothing pending, idle
// longer than ARGV[2] milliseconds; it answers how many.
var pruneScript = redis.NewScript(`
local n = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if tonumber(info['pending']) == 0 and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    n = n + 1
  end
end
return n
`)

// leaveScript deletes the consumer ARGV[2] when it holds nothing pending
// (deleting one that does would drop its pending entries for good); it
// answers 1 when it did.
var leaveScript = redis.NewScript(`
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) == 0 then
  redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
`)

// LongPoll is the block setting: how long a receive that finds nothing
// waits for an entry.
func (s *Source) LongPoll() time.Duration { return s.set.Block }

// Receive reclaims and reads up to MaxBatch entries in one round trip;
// with block, a receive that brought none waits for one, within ctx.
func (s *Source) Receive(ctx context.Context) (*queue.Batch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.receive(ctx)
	if err != nil && isNoGroup(err) {
		// The stream or group went away since the start.
		if gerr := s.ensureGroup(ctx); gerr != nil {
			return nil, gerr
		}
		res, err = s.receive(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("receiving from stream %q: %w", s.set.Stream, err)
	}
	b, err := s.batch(res)
	if err != nil {
		return nil, err
	}
	if len(b.Messages) == 0 && s.set.Block > 0 {
		return s.block(ctx, b)
	}
	return b, nil
}

func (s *Source) receive(ctx context.Context) ([]any, error) {
	return receiveScript.Run(ctx, s.client, []string{s.set.Stream},
		s.set.Group, s.consumer, s.set.ClaimIdle.Milliseconds(), s.cursor, s.maxBatch).Slice()
}

func isNoGroup(err error) bool { return strings.Contains(err.Error(), "NOGROUP") }

// block waits for new entries with XREADGROUP's BLOCK, until the block
// setting or ctx's deadline (less the answer's way back) ends.
func (s *Source) block(ctx context.Context, b *queue.Batch) (*queue.Batch, error) {
	wait := s.set.Block
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 250*time.Millisecond; left < wait {
			wait = left
		}
	}
	if wait < time.Millisecond {
		return b, nil
	}
	res, err := s.client.Do(ctx, "XREADGROUP", "GROUP", s.set.Group, s.consumer, "COUNT", s.maxBatch,
		"BLOCK", wait.Milliseconds(), "STREAMS", s.set.Stream, ">").Slice()
	if errors.Is(err, redis.Nil) {
		return b, nil
	}
	if err != nil {
		return nil, fmt.Errorf("receiving from stream %q: %w", s.set.Stream, err)
	}
	// {{stream, {{id, fields}...}}}
	if len(res) > 0 {
		st, _ := res[0].([]any)
		if len(st) == 2 {
			entries, _ := st[1].([]any)
			return s.add(b, entries, false)
		}
	}
	return b, nil
}

// batch reads the receive script's answer.
func (s *Source) batch(res []any) (*queue.Batch, error) {
	if len(res) != 4 {
		return nil, s.badAnswer("not four parts")
	}
	cursor, ok := res[0].(string)
	if !ok {
		return nil, s.badAnswer("no cursor")
	}
	s.cursor = cursor
	b := &queue.Batch{}
	claimed, _ := res[1].([]any)
	fresh, _ := res[2].([]any)
	b, err := s.add(b, claimed, true)
	if err != nil {
		return nil, err
	}
	if b, err = s.add(b, fresh, false); err != nil {
		return nil, err
	}
	if gone, _ := res[3].([]any); len(gone) > 0 {
		// Deleted (XDEL, or trimmed) while pending: Redis has dropped them
		// from the group's pending entries, and nothing can bring them back.
		ids := make([]string, 0, len(gone))
		for _, g := range gone {
			if id, ok := g.(string); ok {
				ids = append(ids, id)
			}
		}
		s.log.Warn("pending entries were deleted from the stream before they were kept (XDEL or trimming): they are lost",
			"queue", s.queue, "stream", s.set.Stream, "entries", strings.Join(ids, ","))
	}
	return b, nil
}

func (s *Source) badAnswer(what string) error {
	return fmt.Errorf("receiving from stream %q: the server's answer is not a receive's (%s)", s.set.Stream, what)
}

// add appends entries ({id, fields} each, and the delivery count when
// reclaimed) to b.
func (s *Source) add(b *queue.Batch, entries []any, reclaimed bool) (*queue.Batch, error) {
	for _, raw := range entries {
		e, _ := raw.([]any)
		if len(e) < 2 || reclaimed && len(e) < 3 {
			return nil, s.badAnswer("an entry without its fields or delivery count")
		}
		id, ok := e[0].(string)
		if !ok {
			return nil, s.badAnswer("an entry without its id")
		}
		fields, _ := e[1].([]any)
		var deliveries int64 = 1
		if reclaimed {
			deliveries, _ = e[2].(int64)
		}
		b.Messages = append(b.Messages, s.message(id, fields, deliveries))
	}
	return b, nil
}

// message is one entry as the runtime reads it: its body the field named
// by the field setting, byte for byte; its id the entry's id. An entry
// without that field (or with it twice) is unfit, its body its fields as a
// JSON object, for the parked copy; one delivered more than
// max_deliveries times (the count XPENDING answers with) is over the
// delivery limit.
func (s *Source) message(id string, flat []any, deliveries int64) queue.Message {
	m := queue.Message{Handle: id, WireID: id}
	body, found := "", 0
	for i := 0; i+1 < len(flat); i += 2 {
		if name, _ := flat[i].(string); name == s.set.Field {
			body, _ = flat[i+1].(string)
			found++
		}
	}
	if found == 1 {
		m.Body = body
	} else {
		m.Body = fieldsJSON(flat)
		m.Unfit = append(m.Unfit, s.set.Field)
		if found == 0 {
			s.log.Warn("an entry has no body field; it is parked", "queue", s.queue, "stream", s.set.Stream, "entry", id, "field", s.set.Field)
		} else {
			s.log.Warn("an entry has its body field more than once; it is parked", "queue", s.queue, "stream", s.set.Stream, "entry", id, "field", s.set.Field)
		}
	}
	if s.set.MaxDeliveries > 0 && deliveries > s.set.MaxDeliveries {
		m.OverDeliveryLimit = true
		s.log.Warn("an entry was delivered more than max_deliveries times; it is parked", "queue", s.queue, "stream", s.set.Stream,
			"entry", id, "deliveries", deliveries, "max_deliveries", s.set.MaxDeliveries)
	}
	return m
}

// fieldsJSON is an entry's fields as a JSON object (the first of a field
// given twice), for the parked copy of an entry without its body field.
func fieldsJSON(flat []any) string {
	obj := map[string]string{}
	for i := 0; i+1 < len(flat); i += 2 {
		name, _ := flat[i].(string)
		if _, dup := obj[name]; !dup {
			obj[name], _ = flat[i+1].(string)
		}
	}
	out, _ := json.Marshal(obj)
	return string(out)
}

// Acknowledge acknowledges the batch's settled entries with one XACK; the
// others are left pending, reclaimed after claim_idle.
func (s *Source) Acknowledge(ctx context.Context, b *queue.Batch) queue.Acks {
	var ids []string
	for _, m := range b.Messages {
		if m.Settled && m.Handle != "" {
			ids = append(ids, m.Handle)
		}
	}
	if len(ids) == 0 {
		return queue.Acks{}
	}
	n, err := s.client.XAck(ctx, s.set.Stream, s.set.Group, ids...).Result()
	if err != nil {
		s.log.Warn("acknowledging entries failed; they stay pending and come back after claim_idle, the kept ones as repeats",
			"queue", s.queue, "stream", s.set.Stream, "entries", len(ids), "error", err)
		return queue.Acks{BatchCalls: 1}
	}
	if int(n) < len(ids) {
		s.log.Info("some entries were no longer pending: reclaimed by another consumer after claim_idle and acknowledged there",
			"queue", s.queue, "stream", s.set.Stream, "acknowledged", n, "settled", len(ids))
	}
	return queue.Acks{Acknowledged: int(n), BatchCalls: 1}
}

// ParkedBody is nil: an entry is parked with its body.
func (s *Source) ParkedBody(*queue.Message) []byte { return nil }

// Close deletes this process's consumer from the group when it holds
// nothing pending (what it holds is reclaimed by the next process after
// claim_idle), and closes the connections.
func (s *Source) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := leaveScript.Run(ctx, s.client, []string{s.set.Stream}, s.set.Group, s.consumer).Err(); err != nil {
		s.log.Debug("cannot delete this process's consumer from the group", "queue", s.queue, "error", err)
	}
	s.client.Close()
}
