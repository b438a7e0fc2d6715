// Package queue is how a queue is received, whatever its wire: a Source
// receives a batch, acknowledges the messages the runtime settled (in as few
// calls as the queue allows, handing the others back) and says what to park
// a message with. Each driver lives beside its wire code:
//
//   - providers/receiving: a package's `receive:`/`acknowledge:` mapping
//     (SQS and its like), with its `acknowledge_batch:` when it maps one;
//   - providers/cfqueues: Cloudflare Queues' HTTP pull consumer;
//   - providers/sqlinbox: a table of a SQL database.
//
// providers.OpenQueue opens the one the plan names. A Source knows no
// store: the runtime reads each body and decides what is kept, parked or
// left, and marks the messages to acknowledge.
//
// This package imports check/ir for the plan's receiving mapping, which is
// what a driver is built from; ir is plain data importing nothing of the
// checker, so the wire still learns no rule and reads no source.
package queue

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// Source is one queue on its wire.
type Source interface {
	// Receive asks for one batch. A batch as long as Options.MaxBatch means
	// the queue may hold more.
	Receive(ctx context.Context) (*Batch, error)
	// Acknowledge acknowledges the batch's Settled messages, many at once
	// where the queue allows, and hands back the others as it allows. An
	// acknowledgement that did not take is logged, and the message comes
	// back, a repeat; Acks says how many took. What a driver needs of a
	// batch to acknowledge it beyond its messages' handles (a SQL inbox's
	// claim: its transaction or locks) it keeps itself, by the batch.
	Acknowledge(ctx context.Context, b *Batch) Acks
	// LongPoll is how long a receive may wait on purpose for messages (SQS's
	// wait_time_seconds); 0 for none.
	LongPoll() time.Duration
	// Close lets go of what the source holds (a database pool).
	Close()
}

// ParkedBodies is implemented by a Source whose deliveries of one message
// differ in their bodies, so that parking must keep something else to know
// the message when it comes again (a SQL inbox row's body holds the columns
// each claim changes: its attempt, its lease). The runtime asks for it with
// a type assertion; a Source without it parks the body as received.
type ParkedBodies interface {
	// ParkedBody is what parking keeps of m instead of its body, the same
	// for every delivery of m; nil means m's body. It is asked only when m
	// is parked.
	ParkedBody(m *Message) []byte
}

// ParkedHeaders is implemented by a Source whose messages' headers are
// part of what parking keeps (a SQL inbox row's header columns are columns
// of its parked copy), so that a parked message an operator retries, read
// again and kept, travels with the headers its first read gave it. The
// runtime asks for it with a type assertion; a Source without it has its
// retried messages kept without headers.
type ParkedHeaders interface {
	// ParkedHeaders gives the headers of parked, what parking kept of a
	// message (ParkedBody, else its body); nil or empty for none.
	ParkedHeaders(parked []byte) map[string]string
}

// Batch is what one receive brought.
type Batch struct {
	Messages []Message
}

// Message is one received message.
type Message struct {
	Body string
	// Handle acknowledges the message ("" when the queue gave none that can
	// be sent back: then it cannot be acknowledged, and comes back).
	Handle string
	// Headers are values that travel with the kept event, nil when the
	// message has none the connection keeps: a general concept, as AMQP's
	// and NATS's message headers, Kafka's record headers and SQS's message
	// attributes are; the SQL inbox fills it from its header columns.
	Headers map[string]string
	// WireID is the provider's own id of the message, for logs ("" when
	// none was read).
	WireID string
	// Unfit lists, sorted, the fields of the message's item in the
	// provider's answer that did not fit their shape ("" for the whole
	// item), or its handle when that is missing or not valid text: the
	// message is parked whatever its body reads as.
	Unfit []string
	// OverDeliveryLimit means the broker's own delivery count of the
	// message passed the limit its connection sets, and the broker keeps no
	// dead letters to take it (Redis Streams' max_deliveries against
	// XPENDING's count): it is parked whatever its body reads as, with a
	// delivery_count problem, and acknowledged, and the runtime counts it
	// apart (jadpo_messages_parked_delivery_limit_total). A broker that
	// enforces its limit itself (a RabbitMQ quorum queue's delivery limit,
	// JetStream's MaxDeliver, SQS's redrive policy) never hands such a
	// message over, and its driver leaves this false. Never with NotFound.
	OverDeliveryLimit bool
	// Damaged means the body does not match the checksum the queue sent
	// with it: the message is left on the queue, to be sent again.
	Damaged bool
	// NotFound means the driver claimed the message but found no body for
	// it: it is parked, its Handle as its id, and acknowledged, never
	// dropped. Its Body, when the driver has one, is what else it could
	// read of the message (a SQL inbox's table row, every column), parked
	// as it, so each such message keeps its own; it is read only for its
	// type, never kept. Any driver that claims ids before it reads bodies may meet
	// it: a SQL inbox row gone between its claim and its fetch, a Redis
	// stream entry trimmed before XAUTOCLAIM handed over its id.
	NotFound bool
	// ContentType names the encoding the queue says the body is in when it
	// is one the driver cannot read as JSON text (Cloudflare Queues' "v8",
	// a Worker's own serialization): the message is parked unreadable with
	// the problem `content_type: <it>`, whatever its body reads as, and
	// acknowledged. "" for a body read as it came.
	ContentType string

	// Set by the receiver before Acknowledge:

	// ID is the id read from the body, for the driver's logs.
	ID string
	// Settled means kept, repeated or parked: acknowledge it.
	Settled bool
}

// Acks says what one Acknowledge did: how many acknowledgements took, and
// the calls it made (for metrics).
type Acks struct {
	Acknowledged int
	// BatchCalls acknowledged many messages in one request; SingleCalls one.
	BatchCalls, SingleCalls int
	// FailedEntries are the entries batch answers listed as failed (each is
	// then acknowledged on its own).
	FailedEntries int
	// UnansweredEntries are the entries a batch answer named neither as
	// taken nor as failed (read strictly when the package maps the list of
	// those that took); each is then acknowledged on its own.
	UnansweredEntries int
}

// Options are what a driver is given besides its connection.
type Options struct {
	// Queue is the queue's name, for logs.
	Queue string
	Log   *slog.Logger
	// MaxBatch is the most messages asked for at a time, and acknowledged in
	// one batch call.
	MaxBatch int
	// InFlight is how many of the queue's batches may be held at once (a
	// SQL inbox's row_lock claim holds a database connection until its batch
	// is acknowledged).
	InFlight int
	// Dial, when set, opens every connection a driver makes itself (a SQL
	// inbox's database), with the host as written: no name is looked up
	// before it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Kinds are the wire names of the events the queue lists, nil for a
	// queue of one kind (no type_at). A driver that can receive by kind (a
	// SQL inbox with a group column) takes only messages of these kinds,
	// so that several queues can share one source, each its own kinds.
	Kinds []string
}

// Opener opens a driver's Source for one queue of conn.
type Opener func(conn *Conn, opts Options) (Source, error)

// Conn is a connection as a driver uses it, its values resolved.
type Conn struct {
	Name      string
	Receiving *ir.Receiving
	// Client calls the connection's operations; nil for a SQL database.
	Client *wire.Client
	// Operations are the plan's operations, by resource.operation.
	Operations map[string]wire.Operation
	// Settings are the connection's settings' values.
	Settings map[string]any
	// Credentials are the credential members' values (a SQL database's url).
	Credentials map[string]string
}

// Operation is the operation a mapping's call names.
func (c *Conn) Operation(call *ir.Call) (wire.Operation, error) {
	if call == nil {
		return wire.Operation{}, fmt.Errorf("connection %s's receiving lacks a call in the plan", c.Name)
	}
	o, ok := c.Operations[call.Operation]
	if !ok {
		return wire.Operation{}, fmt.Errorf("the plan lacks operation %s", call.Operation)
	}
	return o, nil
}

// Input resolves a mapping call's inputs; handle fills `message.handle`.
func (c *Conn) Input(call *ir.Call, handle string) (map[string]any, error) {
	in := map[string]any{}
	for k, v := range call.Input {
		switch {
		case v.Setting != "":
			in[k] = c.Settings[v.Setting]
		case v.Message == "handle":
			in[k] = handle
		case v.Literal != nil:
			val, err := ir.DecodeLiteral(v.Literal)
			if err != nil {
				return nil, err
			}
			in[k] = val
		default:
			return nil, fmt.Errorf("connection %s: input %s has a value this runtime cannot give", c.Name, k)
		}
	}
	return in, nil
}
