package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
	"github.com/jadpo/jadpo/runtime/store"
)

// Delivery engine limits (docs/design/runtime.md, "Deliveries").
const (
	// ClaimLimit bounds the deliveries one claim asks for.
	ClaimLimit = 64
	// AheadWait is how long a delivery claimed ahead of a free worker is
	// meant to wait for one: the engine claims ahead only as many as its
	// workers start within AheadWait at the pace its handlers have kept,
	// and at most MaxAheadPerWorker a worker. A handler that starts later
	// than half the lease's margin over the handler timeout is not started:
	// its claim is released (store.SettleReleased).
	AheadWait         = time.Second
	MaxAheadPerWorker = 8
	// Lease is a claim's default lease (Options.Lease).
	Lease = 60 * time.Second
	// HandlerTimeout is the default time a handler may take
	// (Options.HandlerTimeout); it is shorter than the lease so that the
	// settlement is written while the lease still holds.
	HandlerTimeout = 45 * time.Second
	// Workers is how many handlers run at once in one process.
	Workers = 8
)

// Error codes the delivery engine gives itself (a provider's refusal gives
// its own code, "http_<status>" when it names none).
const (
	CodeHandlerMissing = "handler_missing" // the plan running now has no handler for the delivery
	CodeLeaseExpired   = "lease_expired"   // the budget was spent by attempts that never settled (a crash)
	CodeTimeout        = "timeout"         // the handler ran out of time
	CodeTransport      = "transport"       // a call got no answer
	CodeInputInvalid   = "input_invalid"   // the handler's arguments do not fit the operation's input
	CodeHandler        = "handler"         // anything else the handler could not do
)

// DeliverReport counts one tick's deliveries.
type DeliverReport struct {
	Claimed, Succeeded, Retried, Failed, Lost int
	// Released: claimed ahead of a free worker and handed back unrun, the
	// attempt uncounted (counted in Claimed too).
	Released int
	// Full: claiming stopped while claims still came back full, so more may
	// be due.
	Full bool
}

// deliverer runs due deliveries: claim in a short transaction, run the
// handler with no lock held, settle under the claim's fencing token.
type deliverer struct {
	shared
	budget   time.Duration // a run claims no more once it is spent
	conns    map[string]*connection
	cfg      *Config
	handlers map[string]map[string]*ir.Handler // subscriber -> event name -> handler
	retry    map[string]ir.Retry
	lease    time.Duration
	timeout  time.Duration
	workers  int

	// randMu guards rand: the jitter of each claim is drawn by the
	// claiming goroutine, in claim order, under it.
	randMu sync.Mutex
	rand   *rand.Rand

	// pace is the handlers' recent wall time (an exponential moving
	// average, nanoseconds; 0 until one has run): how soon a worker comes
	// free, for claiming ahead.
	pace atomic.Int64

	// queuedHook, when set (by tests), is called each time a handler has
	// handed its settlement to the run loop.
	queuedHook func()
}

func newDeliverer(sh shared, p *ir.Program, conns map[string]*connection, opts Options, budget time.Duration, rnd *rand.Rand) (*deliverer, error) {
	d := &deliverer{shared: sh, budget: budget, rand: rnd, conns: conns, cfg: opts.Config, handlers: map[string]map[string]*ir.Handler{}, retry: map[string]ir.Retry{},
		lease: opts.Lease, timeout: opts.HandlerTimeout, workers: Workers}
	switch {
	case d.lease < 0 || d.timeout < 0:
		return nil, fmt.Errorf("runtime: the delivery lease and handler timeout must not be negative")
	case d.lease == 0 && d.timeout == 0:
		d.lease, d.timeout = Lease, HandlerTimeout
	case d.lease == 0:
		d.lease = d.timeout * 4 / 3
	case d.timeout == 0:
		d.timeout = d.lease * 3 / 4
	}
	if d.timeout >= d.lease {
		return nil, fmt.Errorf("runtime: the handler timeout (%v) must be shorter than the delivery lease (%v)", d.timeout, d.lease)
	}
	for i := range p.Subscribers {
		s := &p.Subscribers[i]
		d.retry[s.Name] = s.Retry
		d.handlers[s.Name] = map[string]*ir.Handler{}
		for j := range s.Handlers {
			h := &s.Handlers[j]
			for _, st := range h.Steps {
				c := conns[st.Connection]
				if c == nil {
					return nil, fmt.Errorf("subscriber %s: the plan has no connection %s", s.Name, st.Connection)
				}
				ref := st.Operation
				if ref == "send" {
					if c.plan.Email == nil {
						return nil, fmt.Errorf("subscriber %s: connection %s has no email mapping in the plan", s.Name, st.Connection)
					}
					ref = c.plan.Email.Operation
				}
				if _, ok := c.ops[ref]; !ok {
					return nil, fmt.Errorf("subscriber %s: the plan lacks operation %s of connection %s", s.Name, ref, st.Connection)
				}
			}
			d.handlers[s.Name][h.Name] = h
		}
	}
	return d, nil
}

// defaultHTTPClient is the client provider calls use when Options.HTTP is
// nil: a 30 s timeout, and idle connections kept for every worker (and a
// queue's receive) per host. http.DefaultTransport keeps 2 per host, so 8
// workers calling one service would open a new connection (and TLS
// session) for most calls.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2 * Workers
	return &http.Client{Timeout: 30 * time.Second, Transport: t}
}

// Deliver runs due deliveries, as the fourth step of a tick does, and
// nothing else.
func (r *Runtime) Deliver(ctx context.Context) (DeliverReport, error) {
	var rep DeliverReport
	err := r.deliver.run(ctx, &rep)
	return rep, err
}

// claim is one claimed delivery and the jitter drawn for it at the claim.
type claim struct {
	c      store.Claimed
	budget int
	// leaseEnd is the soonest the lease can end, on the process's clock: the
	// lease from when the claim was asked for. The store's clock, not the
	// process's, ends the lease; measuring it from the request, with the
	// process's own (monotonic) clock, can only make it look shorter than it
	// is, whatever the two clocks say.
	leaseEnd time.Time
	// jitter is the pause before the next attempt should this one fail
	// temporarily; drawn only when the budget allows another attempt.
	jitter time.Duration
}

// run keeps the workers busy with due deliveries until a claim comes back
// short, the tick's budget is spent or ctx is done, and returns when every
// delivery it claimed has settled or been released.
//
// The loop writes every settlement itself: the handlers that finished
// while it was writing are settled together in the next transaction, each
// under its own fencing token, and the deliveries for the workers they
// free are claimed in the same transaction (store.SettleAndClaim): one
// commit serves many deliveries. Up to MaxWritesInFlight such
// transactions run at once, so the workers are not idle while one commits.
//
// A freed worker would still wait for the commit of the write that claims
// its next delivery; so, while handlers are quick, the loop claims ahead:
// up to ahead() deliveries beyond the workers wait in ready, and a worker
// that comes free starts the next at once. One that waits past
// releaseAfter is released instead of started, so the settlement of every
// handler started is written well inside its lease.
func (d *deliverer) run(ctx context.Context, rep *DeliverReport) error {
	if len(d.handlers) == 0 {
		return nil
	}
	deadline := time.Now().Add(d.budget)
	// A claimed delivery starts only while its lease (as the process
	// measures it, from the claim's request) has its handler timeout and
	// half the margin over that left; one that waited longer is released.
	releaseAfter := (d.lease - d.timeout) / 2
	mustLeave := d.lease - releaseAfter
	results := make(chan attempted, d.workers)
	writes := make(chan written, MaxWritesInFlight)
	running := 0  // handlers running
	reserved := 0 // deliveries the claims of writes in flight may bring
	inFlight := 0
	more := true
	aheadOff := false       // set once this run has released a delivery
	var ready []claim       // claimed, waiting for a worker
	var pending []attempted // handlers finished (or claims released), settlements not yet written
	// marks are the starts of handlers already running, not yet written:
	// they go with the next write, and make one of their own only when no
	// write is in flight.
	var marks []attempted
	// A settlement waits while its delivery's start is in a write in
	// flight: two transactions updating the same rows in different orders
	// could deadlock.
	marking := map[int64]bool{} // deliveries whose start is in a write in flight
	var behind []attempted      // settlements waiting for such a write
	var errs []error
	hctx := context.WithoutCancel(ctx) // a signal lets the handlers in hand finish
	// Ready deliveries are looked at while they wait, on the lease's
	// clock, so that one waiting too long is released though no worker
	// comes free.
	wake := time.NewTicker(max(min(releaseAfter/4, 100*time.Millisecond), time.Millisecond))
	defer wake.Stop()
	stop := ctx.Done()
	launch := func(cl claim) {
		go func() {
			results <- d.attempt(hctx, cl)
			if h := d.queuedHook; h != nil {
				h()
			}
		}()
	}
	start := func() {
		now, stopping := d.now(), ctx.Err() != nil
		waiting := ready[:0]
		for _, cl := range ready {
			if stopping || cl.leaseEnd.Sub(now) < mustLeave {
				aheadOff = true
				pending = append(pending, attempted{cl: cl, s: store.Settlement{ID: cl.c.ID, Token: cl.c.Token, Outcome: store.SettleReleased}})
			} else {
				waiting = append(waiting, cl)
			}
		}
		ready = waiting
		for len(ready) > 0 && running < d.workers {
			cl := ready[0]
			ready = ready[1:]
			running++
			if !d.calls(cl) {
				launch(cl) // settled without a call: no start to write
				continue
			}
			// The handler's start is written with the next write, so that a
			// claim whose handler never started (the process killed while it
			// waited) is not an attempt. A delivery on its last attempt
			// waits for that write, so that an attempt that may have
			// reached the target is always counted; an earlier one starts
			// at once (docs/design/runtime.md, "Claiming ahead").
			mark := attempted{cl: cl, s: store.Settlement{ID: cl.c.ID, Token: cl.c.Token, Outcome: store.SettleStarted}}
			if cl.c.Attempt >= cl.budget {
				mark.gated = true
				pending = append(pending, mark)
			} else {
				marks = append(marks, mark)
				launch(cl)
			}
		}
	}
	finished := func(a attempted) {
		running--
		if marking[a.s.ID] {
			behind = append(behind, a)
		} else {
			pending = append(pending, a)
		}
		if a.took > 0 {
			d.paced(a.took)
		}
	}
	written := func(w written) {
		inFlight--
		reserved -= w.want
		for _, a := range w.done {
			if a.s.Outcome == store.SettleStarted {
				delete(marking, a.s.ID)
			}
		}
		if len(behind) > 0 {
			still := behind[:0]
			for _, a := range behind {
				if marking[a.s.ID] {
					still = append(still, a)
				} else {
					pending = append(pending, a)
				}
			}
			behind = still
		}
		for i, a := range w.done {
			if a.s.Outcome == store.SettleStarted {
				switch {
				case !a.gated:
				case w.errs[i] == nil && w.ok[i]:
					launch(a.cl)
				default:
					// Its start could not be written, or another claim took
					// the delivery over: the handler does not run.
					running--
					if w.errs[i] != nil {
						pending = append(pending, attempted{cl: a.cl, s: store.Settlement{ID: a.cl.c.ID, Token: a.cl.c.Token, Outcome: store.SettleReleased}})
					} else {
						d.finish(hctx, attempted{cl: a.cl, s: a.s}, false, nil, rep, &errs)
					}
				}
				continue
			}
			d.finish(hctx, a, w.ok[i], w.errs[i], rep, &errs)
		}
		if w.want == 0 {
			return
		}
		if w.claimErr != nil {
			if ctx.Err() == nil {
				errs = append(errs, fmt.Errorf("claiming deliveries: %w", w.claimErr))
			}
			more = false
			return
		}
		more = more && len(w.claimed) == w.want
		rep.Claimed += len(w.claimed)
		ready = append(ready, d.prepare(w.claimed, w.asked)...)
	}
	for {
		for drained := false; !drained; {
			select {
			case a := <-results:
				finished(a)
			case w := <-writes:
				written(w)
			default:
				drained = true
			}
		}
		start()
		ahead := 0
		if !aheadOff {
			ahead = d.ahead()
		}
		held := running + reserved + len(ready)
		free := d.workers + ahead - held
		canClaim := more && ctx.Err() == nil && time.Now().Before(deadline) &&
			(held == 0 || free >= max(1, d.workers/2))
		if inFlight < MaxWritesInFlight && (len(pending) > 0 || canClaim || len(marks) > 0 && inFlight == 0) {
			want := 0
			if canClaim {
				want = min(free, ClaimLimit)
			}
			done := append(unsettled(marks, pending), pending...)
			marks, pending = nil, nil
			for _, a := range done {
				if a.s.Outcome == store.SettleStarted {
					marking[a.s.ID] = true
				}
			}
			inFlight++
			reserved += want
			go func() { writes <- d.write(hctx, done, want) }()
			continue
		}
		if running == 0 && inFlight == 0 && len(ready) == 0 && len(marks) == 0 && len(behind) == 0 {
			break
		}
		var tick <-chan time.Time
		if len(ready) > 0 {
			tick = wake.C
		}
		select {
		case a := <-results:
			finished(a)
		case w := <-writes:
			written(w)
		case <-tick:
		case <-stop:
			stop = nil // start releases what waits
		}
	}
	rep.Full = more && ctx.Err() == nil
	return errors.Join(errs...)
}

// unsettled drops from marks the starts of deliveries whose settlement is
// in pending: settling writes the start too.
func unsettled(marks, pending []attempted) []attempted {
	if len(marks) == 0 || len(pending) == 0 {
		return marks
	}
	settled := make(map[int64]int64, len(pending))
	for _, a := range pending {
		settled[a.s.ID] = a.s.Token
	}
	out := marks[:0]
	for _, m := range marks {
		if tok, ok := settled[m.s.ID]; !ok || tok != m.s.Token {
			out = append(out, m)
		}
	}
	return out
}

// ahead is how many deliveries to claim beyond the workers: as many as
// they start within AheadWait at the handlers' pace, none before one has
// run.
func (d *deliverer) ahead() int {
	pace := d.pace.Load()
	if pace <= 0 {
		return 0
	}
	return int(min(int64(d.workers)*int64(AheadWait)/pace, int64(MaxAheadPerWorker*d.workers)))
}

// paced takes a handler's wall time into the pace (weight 1/8).
func (d *deliverer) paced(took time.Duration) {
	p := d.pace.Load()
	if p <= 0 {
		d.pace.Store(int64(took))
		return
	}
	d.pace.Store(p + (int64(took)-p)/8)
}

// MaxWritesInFlight bounds the settle-and-claim transactions the delivery
// loop runs at once.
const MaxWritesInFlight = 2

// attempted is a delivery whose handler has run: its settlement, to be
// written, and the handler's error for the log. A SettleStarted one is a
// handler's start, to be written; gated: the handler waits for it.
type attempted struct {
	cl      claim
	s       store.Settlement
	callErr error
	took    time.Duration // the handler's wall time, 0 when none ran
	gated   bool
}

// written is what one write did: for each settlement whether it took (ok)
// or could not be written (errs), and the claim of want deliveries.
type written struct {
	done     []attempted
	ok       []bool
	errs     []error
	want     int
	claimed  []store.Claimed
	asked    time.Time // when the claim was asked for, on the process's clock
	claimErr error
}

// write settles done and claims up to want deliveries in one transaction
// (again after a transient failure, three tries). If that fails as a
// whole, each settlement is written on its own, so that one the store
// refuses does not take the others with it, and the claim fails.
func (d *deliverer) write(ctx context.Context, done []attempted, want int) written {
	w := written{done: done, ok: make([]bool, len(done)), errs: make([]error, len(done)), want: want}
	sts := make([]store.Settlement, len(done))
	for i, a := range done {
		sts[i] = a.s
	}
	var ok []bool
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		w.asked = d.now()
		ok, w.claimed, err = d.store.SettleAndClaim(ctx, sts, want, d.lease)
		if err == nil || !store.IsTransient(err) {
			break
		}
	}
	if err == nil {
		copy(w.ok, ok)
		return w
	}
	w.claimed, w.claimErr = nil, err
	if len(done) > 1 || want > 0 && len(done) > 0 {
		d.log.Warn("settling deliveries together failed; settling them one by one", "deliveries", len(done), "error", err)
	}
	for i, a := range done {
		w.ok[i], w.errs[i] = d.settle(ctx, a.s)
	}
	return w
}

// prepare draws each claim's jitter, in claim order, so that a seeded
// Options.Rand gives the same schedule however the handlers interleave.
func (d *deliverer) prepare(claimed []store.Claimed, asked time.Time) []claim {
	out := make([]claim, len(claimed))
	d.randMu.Lock()
	defer d.randMu.Unlock()
	for i, c := range claimed {
		budget := d.retry[c.Subscriber].Budget(c.MaxAttempts)
		out[i] = claim{c: c, budget: budget, leaseEnd: asked.Add(d.lease)}
		if c.Attempt < budget {
			out[i].jitter = d.backoff(d.retry[c.Subscriber], c.Attempt)
		}
	}
	return out
}

// calls reports whether attempt would run cl's handler (and so may reach
// a target), rather than settle it failed at once.
func (d *deliverer) calls(cl claim) bool {
	return cl.c.Attempt <= cl.budget && d.handlers[cl.c.Subscriber][cl.c.EventName] != nil
}

// attempt runs one delivery's handler and says how to settle it.
func (d *deliverer) attempt(ctx context.Context, cl claim) attempted {
	c := cl.c
	s := store.Settlement{ID: c.ID, Token: c.Token, Outcome: store.SettleSucceeded}
	h := d.handlers[c.Subscriber][c.EventName]
	var callErr error
	var took time.Duration
	switch {
	case c.Attempt > cl.budget:
		// Earlier attempts were claimed and never settled (their process
		// died or lost its lease): the budget is spent without this one.
		s.Outcome, s.ErrorCode = store.SettleFailed, CodeLeaseExpired
	case h == nil:
		s.Outcome, s.ErrorCode = store.SettleFailed, CodeHandlerMissing
		callErr = errHandlerMissing(c.Subscriber, c.EventName)
		s.Error = callErr.Error()
	default:
		began := time.Now()
		hctx, cancel := context.WithTimeout(ctx, d.timeout)
		callErr = d.runHandler(hctx, h, c.EventJSON)
		cancel()
		took = max(time.Since(began), 1)
		if callErr != nil {
			code, temporary := classify(callErr)
			s.ErrorCode, s.Error = code, callErr.Error()
			if temporary && c.Attempt < cl.budget {
				s.Outcome = store.SettleRetryWait
				s.RetryAfter = cl.jitter
			} else {
				s.Outcome = store.SettleFailed
			}
		}
	}
	return attempted{cl: cl, s: s, callErr: callErr, took: took}
}

// errHandlerMissing is a delivery's error when the plan running now has no
// handler for it. The Worker words it the same (codegen/workers/jadpo.mjs,
// errorTexts; testdata/delivery/table.json's errors hold both).
func errHandlerMissing(subscriber, event string) error {
	return fmt.Errorf("the plan running now has no handler of %s for %s", subscriber, event)
}

// finish counts and logs one written settlement: ok false means the lease
// was taken over and nothing was settled; err that it could not be written.
func (d *deliverer) finish(ctx context.Context, a attempted, ok bool, err error, rep *DeliverReport, errs *[]error) {
	c, s := a.cl.c, a.s
	if err != nil {
		*errs = append(*errs, fmt.Errorf("settling delivery %d: %w", c.ID, err))
		return
	}
	if !ok {
		d.log.Warn("delivery taken over by another claim; this settlement changes nothing", "delivery", store.DeliveryID(c.ID).String(), "subscriber", c.Subscriber,
			"attempt", c.Attempt)
		rep.Lost++
		return
	}
	if s.Outcome == store.SettleReleased {
		rep.Released++
		d.metrics.released.WithLabelValues(c.Subscriber).Inc()
		d.log.Debug("delivery released unrun: it waited too long for a worker, or the process is stopping", "delivery", store.DeliveryID(c.ID).String(),
			"subscriber", c.Subscriber, "event", c.EventName)
		return
	}
	switch s.Outcome {
	case store.SettleSucceeded:
		rep.Succeeded++
	case store.SettleRetryWait:
		rep.Retried++
	case store.SettleFailed:
		rep.Failed++
	}
	d.metrics.deliveries.WithLabelValues(c.Subscriber, s.Outcome.String()).Inc()
	if d.log.Enabled(ctx, slog.LevelInfo) {
		args := []any{"delivery", store.DeliveryID(c.ID).String(), "subscriber", c.Subscriber, "event", c.EventName,
			"message_id", c.ReceivedID, "attempt", c.Attempt, "outcome", s.Outcome.String()}
		if s.ErrorCode != "" {
			args = append(args, "error_code", s.ErrorCode)
		}
		if a.callErr != nil {
			args = append(args, "error", a.callErr.Error())
		}
		if s.Outcome == store.SettleRetryWait {
			args = append(args, "retry_after", s.RetryAfter)
		}
		d.log.Info("delivery settled", args...)
	}
}

// settle writes a settlement, again after a transient store failure while
// the lease leaves time (three tries).
func (d *deliverer) settle(ctx context.Context, s store.Settlement) (bool, error) {
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		var ok bool
		ok, err = d.store.SettleDelivery(ctx, s)
		if err == nil || !store.IsTransient(err) {
			return ok, err
		}
	}
	return false, err
}

// backoff is the pause before the next attempt after attempt n: the ceiling
// doubles from first_delay (attempt 1) up to max_delay, and the pause is
// drawn uniformly from [0, ceiling] (full jitter).
func (d *deliverer) backoff(r ir.Retry, n int) time.Duration {
	return backoffDraw(r, n, d.rand)
}

// backoffCeiling is the ceiling of the pause after attempt n (from 1):
// first_delay * 2^(n-1), at most max_delay.
func backoffCeiling(r ir.Retry, n int) time.Duration {
	ceil := time.Duration(r.FirstDelayMS) * time.Millisecond
	maxD := time.Duration(r.MaxDelayMS) * time.Millisecond
	for i := 1; i < n && ceil < maxD; i++ {
		ceil *= 2
	}
	if ceil > maxD {
		ceil = maxD
	}
	return max(ceil, 0)
}

// backoffDraw draws the pause after attempt n from [0, backoffCeiling] with
// one rnd.Int64N; a zero ceiling draws nothing.
func backoffDraw(r ir.Retry, n int, rnd interface{ Int64N(int64) int64 }) time.Duration {
	ceil := backoffCeiling(r, n)
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rnd.Int64N(int64(ceil) + 1))
}

// classify turns a handler's error into an error code and whether a retry
// may succeed.
func classify(err error) (string, bool) {
	var ref *wire.Refusal
	if errors.As(err, &ref) {
		return ref.Code, ref.Temporary
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeTimeout, true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return CodeTimeout, true
	}
	var te *wire.TransportError
	if errors.As(err, &te) {
		return CodeTransport, true
	}
	var de *wire.DecodeError
	if errors.As(err, &de) && de.Input {
		return CodeInputInvalid, false
	}
	return CodeHandler, false
}

// runHandler runs each step of a handler in order; the first step that
// fails ends the handler. A retried delivery runs every step again.
func (d *deliverer) runHandler(ctx context.Context, h *ir.Handler, eventJSON []byte) error {
	dec := json.NewDecoder(bytes.NewReader(eventJSON))
	dec.UseNumber()
	var event map[string]any
	if err := dec.Decode(&event); err != nil {
		return fmt.Errorf("the kept event is not JSON: %w", err)
	}
	for _, st := range h.Steps {
		conn := d.conns[st.Connection]
		args := make(map[string]any, len(st.Args))
		for name, x := range st.Args {
			v, err := d.eval(x, event, eventJSON)
			if err != nil {
				return err
			}
			args[name] = v
		}
		ref, input := st.Operation, args
		if ref == "send" {
			ref = conn.plan.Email.Operation
			in := map[string]any{}
			for k, v := range conn.plan.Email.Input {
				switch {
				case v.Message != "":
					if a, ok := args[v.Message]; ok {
						in[k] = a
					}
				case v.Setting != "":
					in[k] = conn.settings[v.Setting]
				case v.Literal != nil:
					lv, err := ir.DecodeLiteral(v.Literal)
					if err != nil {
						return err
					}
					in[k] = lv
				}
			}
			input = in
		}
		if _, err := conn.client.Call(ctx, conn.ops[ref], input); err != nil {
			// A 2xx answer that does not fit the operation's output: the
			// provider did what was asked, and no handler statement reads
			// an answer, so the step succeeded. Say so, and go on.
			var de *wire.DecodeError
			if errors.As(err, &de) && !de.Input {
				d.log.Warn("the answer does not fit the operation's output; the step counts as done",
					"connection", st.Connection, "operation", ref, "path", de.Path, "rule", de.Rule)
				continue
			}
			return err
		}
	}
	return nil
}

// eval computes a handler argument from the event.
func (d *deliverer) eval(x ir.Expr, event map[string]any, eventJSON []byte) (any, error) {
	switch {
	case x.Literal != nil:
		return ir.DecodeLiteral(x.Literal)
	case x.Event:
		return event, nil
	case len(x.Path) > 0:
		var cur any = event
		for _, p := range x.Path {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[p]
			case []any:
				i, err := strconv.Atoi(p)
				if err != nil || i < 0 || i >= len(c) {
					return nil, nil
				}
				cur = c[i]
			default:
				return nil, nil
			}
		}
		if n, ok := cur.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
		return cur, nil
	case x.Config != "":
		return d.cfg.value(ir.Value{Config: x.Config})
	case x.Record != nil:
		out := make(map[string]any, len(x.Record))
		for k, v := range x.Record {
			val, err := d.eval(v, event, eventJSON)
			if err != nil {
				return nil, err
			}
			out[k] = val
		}
		return out, nil
	case x.List != nil:
		out := make([]any, 0, len(x.List))
		for _, v := range x.List {
			val, err := d.eval(v, event, eventJSON)
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	case x.JSON:
		return string(eventJSON), nil
	}
	return nil, fmt.Errorf("the plan holds an argument this runtime cannot compute")
}
