package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/runtime/reading"
	"github.com/jadpo/jadpo/runtime/store"
)

// queueRunner receives one queue: its driver (a queue.Source) receives and
// acknowledges batches, the runner reads, keeps and parks them.
type queueRunner struct {
	shared
	receiving
	q       *ir.Queue
	reader  *reading.Reader
	driver  queue.Source
	source  string
	metrics *queueMetrics
}

// receiving is what every queue's runner is given besides shared: the
// tick's budget, the acknowledgements' timeout, the subscribers of each
// event (a kept event's deliveries) and the dialer a driver's own
// connections go through.
type receiving struct {
	budget, ackTimeout time.Duration
	subscribers        map[string][]string
	dial               func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newQueueRunner(sh shared, p *ir.Program, q *ir.Queue, conn *connection, rc receiving) (*queueRunner, error) {
	if conn == nil {
		return nil, fmt.Errorf("queue %s: the plan has no connection %s", q.Name, q.Connection)
	}
	if conn.plan.Receiving == nil {
		return nil, fmt.Errorf("queue %s: connection %s has no receiving mapping in the plan", q.Name, conn.name)
	}
	reader, err := reading.NewReader(p, q)
	if err != nil {
		return nil, err
	}
	qr := &queueRunner{shared: sh, receiving: rc, q: q, reader: reader, source: q.Source, metrics: sh.metrics.queue(q.Name)}
	qr.driver, err = providers.OpenQueue(conn.queueConn(), queue.Options{
		Queue: q.Name, Log: sh.log, MaxBatch: MaxBatch, InFlight: MaxBatchesInFlight, Dial: rc.dial, Kinds: queueKinds(q),
	})
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", q.Name, err)
	}
	return qr, nil
}

// queueKinds are the wire names of the events q lists, nil for a queue of
// one kind (which has none).
func queueKinds(q *ir.Queue) []string {
	if q.TypeAt == nil {
		return nil
	}
	kinds := make([]string, 0, len(q.Events))
	for _, e := range q.Events {
		kinds = append(kinds, e.WireName)
	}
	return kinds
}

// message is one received message in hand: what its driver brought, and
// what reading its body gave.
type message struct {
	*queue.Message
	out reading.Outcome
}

// MaxBatchesInFlight bounds the batches of one queue being kept and
// acknowledged at once. The next batch is asked for as soon as one comes
// back full, while the ones before it are still being kept: their
// transactions commit together (sharing the store's flushes to disk) and
// their acknowledgements overlap the next keep. Each message is still
// acknowledged only after its own batch's transaction commits.
const MaxBatchesInFlight = 4

// receive asks the queue for batches while they come back full, at most
// MaxAsksPerTick times and within the tick's budget, keeping up to
// MaxBatchesInFlight of them at once. It returns once every batch it
// received is settled.
//
// Each ask (the HTTP call and its retries) is bounded by what is left of
// the budget, stretched for the queue's long poll (askDeadline), so a
// queue that does not answer holds up only itself, and only until the
// deadline. Keeping and acknowledging are not cut by the budget: a batch
// received is always settled, its acknowledgements bounded by AckTimeout.
func (qr *queueRunner) receive(ctx context.Context, deadline time.Time, rep *TickReport) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards rep while batches are in flight
		slots = make(chan struct{}, MaxBatchesInFlight)
	)
	defer wg.Wait()
	busy := func() { mu.Lock(); rep.Busy = true; mu.Unlock() }
	for ask := 0; ask < MaxAsksPerTick; ask++ {
		if ctx.Err() != nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			busy()
			return nil
		}
		slots <- struct{}{}
		// A signal does not cut an ask halfway: a receive cut after the queue
		// answered hides its messages for their visibility timeout (SQS), and a
		// claim cut between its statements leaves its rows locked until the
		// server notices the dropped connection; the budget (and a long poll's
		// stretch) still bounds it, so a signal waits at most that long.
		askCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), qr.askDeadline(time.Now(), deadline))
		b, msgs, err := qr.ask(askCtx)
		cut := askCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil && b == nil && cut {
			err = fmt.Errorf("queue %s: receiving: no answer within the tick's budget (%s); asked again next tick", qr.q.Name, qr.budget)
		}
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(msgs) == 0 {
			<-slots
		} else {
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				var own TickReport
				qr.settle(context.WithoutCancel(ctx), b, msgs, &own)
				mu.Lock()
				rep.addReceived(own)
				mu.Unlock()
			}()
		}
		if len(msgs) < MaxBatch {
			return nil
		}
		if ask == MaxAsksPerTick-1 {
			busy()
		}
	}
	return nil
}

// LongPollGrace is how long past its long poll a receive may take before
// it is cut: the provider's answer travelling back.
const LongPollGrace = 2 * time.Second

// askDeadline bounds one ask begun at now: the tick's deadline, or, when the
// queue's receive long-polls (its driver's LongPoll), the end of that
// poll plus LongPollGrace if that is later. A long poll is the provider
// holding the call open on purpose, so it is never cut short: the tick is
// stretched for it instead (docs/design/runtime.md, "The tick's budget").
func (qr *queueRunner) askDeadline(now, deadline time.Time) time.Time {
	if d := qr.driver.LongPoll(); d > 0 {
		if end := now.Add(d + LongPollGrace); end.After(deadline) {
			return end
		}
	}
	return deadline
}

// addReceived adds the receiving counts of o to rep.
func (rep *TickReport) addReceived(o TickReport) {
	rep.Received += o.Received
	rep.Kept += o.Kept
	rep.Repeats += o.Repeats
	rep.Parked += o.Parked
	rep.Left += o.Left
	rep.Acked += o.Acked
}

// ask receives one batch and reads each message; b is nil when nothing
// was received.
func (qr *queueRunner) ask(ctx context.Context) (b *queue.Batch, msgs []*message, err error) {
	b, err = qr.driver.Receive(ctx)
	if err != nil {
		qr.metrics.receiveErrors.Inc()
		if ctx.Err() != nil {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("queue %s: receiving: %w", qr.q.Name, err)
	}
	msgs = make([]*message, len(b.Messages))
	for i := range b.Messages {
		m := &message{Message: &b.Messages[i]}
		msgs[i] = m
		switch {
		case m.NotFound:
			m.out = notFound(qr.reader, m.Handle, m.Body)
		case m.Damaged:
			continue // left on the queue, to be sent again
		default:
			m.out = qr.reader.Read([]byte(m.Body))
			if m.ContentType != "" {
				// The body is the producer's encoding, not its text: the
				// body's own problems would only mislead.
				m.out.Problems = nil
				m.out = parkWith(m.out, []reading.Problem{{Field: FieldContentType, Rule: m.ContentType}})
			}
			if m.OverDeliveryLimit {
				m.out = parkForAnswer(m.out, append(slices.Clone(m.Unfit), FieldDeliveryCount))
			} else if len(m.Unfit) > 0 {
				m.out = parkForAnswer(m.out, m.Unfit)
			}
		}
		m.ID = m.out.ID
	}
	return b, msgs, nil
}

// settle keeps or parks, then acknowledges one batch. The messages in hand
// are finished even when a signal came (ctx is not cancelled), so nothing
// received is left half-done.
func (qr *queueRunner) settle(ctx context.Context, b *queue.Batch, msgs []*message, rep *TickReport) {
	rep.Received += len(msgs)
	qr.metrics.received.Add(float64(len(msgs)))
	qr.keepAndPark(ctx, msgs, rep)
	for _, m := range msgs {
		if !m.Settled {
			rep.Left++
		}
	}
	// The acknowledgements are never skipped for the budget, and bounded on
	// their own: one that does not answer in time comes back a repeat.
	ackCtx, cancel := context.WithTimeout(ctx, qr.ackTimeout)
	defer cancel()
	acks := qr.driver.Acknowledge(ackCtx, b)
	rep.Acked += acks.Acknowledged
	qr.metrics.acknowledged(acks)
}

// keepAndPark keeps the readable messages of a batch in one transaction and
// parks the others; each message it settles is marked for acknowledgement.
func (qr *queueRunner) keepAndPark(ctx context.Context, msgs []*message, rep *TickReport) {
	var keeps []store.Keep
	var keptMsgs []*message
	for _, m := range msgs {
		if m.Damaged {
			continue
		}
		if m.out.Park {
			qr.park(ctx, m, m.out.Reason, m.out.Problems, 0, rep)
			continue
		}
		keeps = append(keeps, qr.keepOf(m.out, m.Headers, 0))
		keptMsgs = append(keptMsgs, m)
	}
	if len(keeps) == 0 {
		return
	}
	// Keep in the order of the ids, so that batches kept at once (here or in
	// other processes) wait for the ids they share in the same order, and
	// never deadlock on them.
	order := make([]int, len(keeps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return keeps[order[a]].ReceivedID < keeps[order[b]].ReceivedID })
	sortedKeeps, sortedMsgs := make([]store.Keep, len(keeps)), make([]*message, len(keeps))
	for i, j := range order {
		sortedKeeps[i], sortedMsgs[i] = keeps[j], keptMsgs[j]
	}
	keeps, keptMsgs = sortedKeeps, sortedMsgs
	results, err := qr.store.KeepBatch(ctx, keeps)
	if err != nil {
		// Nothing was committed: the messages stay on the queue, which sends
		// them again; its dead-letter queue takes one that keeps failing.
		qr.log.Warn("the store cannot take messages now; they stay on the queue", "queue", qr.q.Name, "messages", len(keeps), "error", err)
		qr.metrics.storeUnavailable.Add(float64(len(keeps)))
		return
	}
	for i, res := range results {
		m := keptMsgs[i]
		switch res.Outcome {
		case store.Kept:
			m.Settled = true
			rep.Kept++
			qr.metrics.kept.Inc()
			qr.log.Info("kept", "queue", qr.q.Name, "message_id", m.out.ID, "event", m.out.Event.Name)
		case store.Repeat:
			m.Settled = true
			rep.Repeats++
			qr.metrics.repeats.Inc()
			qr.log.Info("repeat: already kept", "queue", qr.q.Name, "message_id", m.out.ID)
		case store.Refused:
			// The store refuses the statement as it would every time.
			qr.park(ctx, m, store.ReasonUnreadable, []store.Problem{{Field: "", Rule: "store"}}, 0, rep)
		}
	}
}

// keepOf is what keeping a read message writes; headers are the values that
// travel with it (a SQL inbox's header columns), nil for most queues.
func (qr *queueRunner) keepOf(out reading.Outcome, headers map[string]string, retriedParkedID int64) store.Keep {
	return store.Keep{
		Source: qr.source, ReceivedID: out.ID, EventName: out.Event.Name, EventJSON: out.EventJSON,
		Subscribers: qr.subscribers[out.Event.Name], RetriedParkedID: retriedParkedID, Headers: headers,
	}
}

// park parks m, or, with retried not 0, sets that retried parked row back to
// failed. Its error is the store's: a received message then stays on its
// queue (the caller leaves it unsettled), a retried one stays pending.
func (qr *queueRunner) park(ctx context.Context, m *message, reason store.Reason, problems []store.Problem, retried int64, rep *TickReport) error {
	p := store.Parked{Source: qr.source, ReceivedID: m.out.ID, WireType: m.out.WireType, Reason: reason, Problems: problems,
		Body: qr.parkedBody(m), RetriedParkedID: retried}
	if m.out.Event != nil {
		p.EventName = m.out.Event.Name
	}
	res, id, err := qr.store.Park(ctx, p)
	if err != nil && retried != 0 {
		// Not on a queue (nor counted as left on one): its row is still
		// pending, so the next tick reads it again.
		qr.log.Warn("the store cannot park a retried message now; it stays pending and is read again next tick",
			"queue", qr.q.Name, "message_id", m.out.ID, "parked_id", store.ParkedID(retried).String(), "error", err)
		return fmt.Errorf("queue %s: parking retried message %s again: %w", qr.q.Name, store.ParkedID(retried), err)
	}
	if err != nil {
		qr.log.Warn("the store cannot park a message now; it stays on the queue", "queue", qr.q.Name, "message_id", m.out.ID, "error", err)
		qr.metrics.storeUnavailable.Inc()
		return err
	}
	if res == store.ParkGone {
		// Another process read the same retried row and settled it first
		// (or it was deleted since): this read changed nothing, and is not
		// counted.
		qr.log.Info("parked already: the retried message is no longer pending; nothing changed", "queue", qr.q.Name, "parked_id", store.ParkedID(retried).String(), "message_id", m.out.ID)
		return nil
	}
	// The tick's count and the metric are of messages settled by parking;
	// the log says when the body was parked already and nothing was added.
	m.Settled = true
	rep.Parked++
	qr.metrics.parked(string(reason)).Inc()
	if m.OverDeliveryLimit {
		// Also counted apart: its reason (unreadable) says nothing of why.
		qr.metrics.parkedDeliveryLimit.Inc()
	}
	if res == store.ParkAlready {
		qr.log.Info("parked already: the same body from this queue; nothing added", "queue", qr.q.Name, "parked_id", id.String(), "message_id", m.out.ID, "reason", string(reason))
		return nil
	}
	qr.log.Info("parked", "queue", qr.q.Name, "parked_id", id.String(), "message_id", m.out.ID, "reason", string(reason), "problems", ProblemsText(problems))
	return nil
}

// ProblemsText names each problem by field and rule, never a value:
// "order_id: required; lines[0].quantity: min". A problem of the whole body
// has no field: "(body): json".
func ProblemsText(ps []store.Problem) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		f := p.Field
		if f == "" {
			f = "(body)"
		}
		b.WriteString(f + ": " + p.Rule)
	}
	return b.String()
}

// parkedBody is what parking keeps of m: its body, or what the queue's
// driver keeps instead when it says (queue.ParkedBodies: a SQL inbox row
// without the columns each claim changes). Worked out only when a message
// is parked, never on the way to a keep.
func (qr *queueRunner) parkedBody(m *message) []byte {
	if p, ok := qr.driver.(queue.ParkedBodies); ok {
		if b := p.ParkedBody(m.Message); b != nil {
			return b
		}
	}
	return []byte(m.Body)
}

// parkedHeaders are the headers of a parked body, when the queue's driver
// keeps them in it (queue.ParkedHeaders: a SQL inbox row's header columns),
// so a retried message is kept with the headers a first read gives; nil
// otherwise.
func (qr *queueRunner) parkedHeaders(body []byte) map[string]string {
	if p, ok := qr.driver.(queue.ParkedHeaders); ok {
		return p.ParkedHeaders(body)
	}
	return nil
}

// rereadRetried reads up to MaxRetriedParked operator-retried parked
// messages with the plan running now: each is kept (its parked row goes in
// the same transaction) or parked again. They come from the store, not a
// queue: each is counted once, in RetriedKept, RetriedRepeats or
// RetriedParked, never in
// the received counts (Parked, Kept), so nothing is waited on as an
// acknowledgement (issue 24: `parked 1 ... parked again 1` and a failed
// acknowledgement for one message that needed none).
func (r *Runtime) rereadRetried(ctx context.Context, rep *TickReport) error {
	pending, err := r.store.RetriedParked(ctx, MaxRetriedParked)
	if err != nil || len(pending) == 0 {
		return err
	}
	var errs []error
	for _, pm := range pending {
		qr := r.bySource[pm.Source]
		m := &message{Message: &queue.Message{Body: string(pm.Body)}}
		if qr == nil {
			// The queue is gone from the plan: park it again, as it was.
			_, _, err := r.store.Park(ctx, store.Parked{Source: pm.Source, ReceivedID: pm.ReceivedID, WireType: pm.WireType, EventName: pm.EventName,
				Reason: pm.Reason, Problems: append(pm.Problems, store.Problem{Field: "", Rule: "queue"}), Body: pm.Body, RetriedParkedID: pm.ID})
			if err == nil {
				rep.RetriedParked++
			}
			errs = append(errs, err)
			continue
		}
		// park counts into a report of its own: this message was not
		// received from the queue and awaits no acknowledgement.
		var parked TickReport
		m.out = qr.reader.Read(pm.Body)
		if m.out.Park {
			errs = append(errs, qr.park(ctx, m, m.out.Reason, m.out.Problems, pm.ID, &parked))
			rep.RetriedParked += parked.Parked
			continue
		}
		results, err := r.store.KeepBatch(ctx, []store.Keep{qr.keepOf(m.out, qr.parkedHeaders(pm.Body), pm.ID)})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch results[0].Outcome {
		case store.Kept:
			rep.RetriedKept++
			r.log.Info("kept after retry", "queue", qr.q.Name, "message_id", m.out.ID, "parked_id", store.ParkedID(pm.ID).String())
		case store.Repeat:
			// Its id was kept already (a copy came from the queue, or another
			// process read this row too): nothing was added, and its parked
			// row went all the same.
			rep.RetriedRepeats++
			qr.metrics.repeats.Inc()
			r.log.Info("repeat after retry: already kept", "queue", qr.q.Name, "message_id", m.out.ID, "parked_id", store.ParkedID(pm.ID).String())
		case store.Refused:
			errs = append(errs, qr.park(ctx, m, store.ReasonUnreadable, []store.Problem{{Field: "", Rule: "store"}}, pm.ID, &parked))
			rep.RetriedParked += parked.Parked
		}
	}
	return errors.Join(errs...)
}
