// Package runtime executes a plan: on each tick it receives every queue,
// keeps each message exactly once in the events' store (with its outbox row
// and a delivery per subscriber), parks what it cannot read, acknowledges
// only after the commit, runs due deliveries and does the housekeeping.
//
// It never reads .jadpo source: everything comes from the plan (check/ir),
// the config values and the store. The wire is providers': each queue is
// received through its driver, a providers/queue.Source, and the runtime
// keeps the policy (what is kept, parked, left and acknowledged); the store
// is runtime/store's. The tick's parts (each queue's runner, the delivery
// engine, the housekeeping) get the store, log, clock and metrics they use
// (shared), not the *Runtime.
package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/wire"
	"github.com/jadpo/jadpo/runtime/store"
)

// Limits from the seed ("When it is received").
const (
	MaxBatch         = 10               // messages asked for at a time
	MaxAsksPerTick   = 10               // asks per queue per tick
	MaxRetriedParked = 20               // operator-retried parked messages read first
	MaxTickInterval  = 10 * time.Second // an app that receives a queue ticks at least this often
	DefaultBudget    = 5 * time.Second
	// AckTimeout bounds the acknowledgements of one batch after its commit
	// (every call and retry of them): one not answered by then comes back,
	// a repeat.
	AckTimeout = 10 * time.Second
	// UnhealthyAfter is how long the events' store must have failed, without
	// an answer between, before Healthy says so: a killed backend the pool
	// replaces on the next call is not an outage.
	UnhealthyAfter = MaxTickInterval
)

// Options configure a Runtime.
type Options struct {
	Plan   *ir.Program
	Store  store.Store
	Config *Config
	// HTTP sends provider calls; nil means a client with a 30 s timeout that
	// keeps a connection per delivery worker open to each host.
	HTTP *http.Client
	// Dial, when set, opens every network connection the runtime makes
	// itself: provider calls (when HTTP is nil; then no proxy is used
	// either) and a SQL inbox's database (no name is looked up before it:
	// Dial gets the host as written). jadpo dev passes one that refuses
	// every address off the machine.
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// After is Run's pause between ticks; nil means time.After. Tests give
	// one that records the pauses asked for.
	After func(time.Duration) <-chan time.Time
	// Rand draws retry jitter; nil means a randomly seeded source.
	Rand *rand.Rand
	// Budget bounds the receiving part of a tick; 0 means DefaultBudget.
	Budget time.Duration
	// AckTimeout bounds one batch's acknowledgements; 0 means AckTimeout.
	AckTimeout time.Duration
	Metrics    *Metrics
	// Lease is how long a claimed delivery is held before another claim may
	// take it over; HandlerTimeout is how long its handler may run (shorter
	// than Lease). 0 means the defaults (runtime.Lease, runtime.HandlerTimeout),
	// or the other one's 4/3 or 3/4 when only one is given. A delivery
	// claimed ahead of a free worker waits at most half their difference
	// before it is released unrun (docs/design/runtime.md, "Claiming ahead").
	Lease, HandlerTimeout time.Duration
	// StatsEvery is how often (on Now's clock) a tick refreshes the store's
	// gauges with Store.Stats, which counts rows; 0 means DefaultStatsEvery.
	StatsEvery time.Duration
}

// DefaultStatsEvery: the store's gauges are at most a minute old, and a large
// store is counted at most once a minute.
const DefaultStatsEvery = time.Minute

// Runtime runs one plan against one store.
type Runtime struct {
	shared
	plan       *ir.Program
	after      func(time.Duration) <-chan time.Time
	budget     time.Duration
	ackTimeout time.Duration
	health     health

	queues   []*queueRunner
	bySource map[string]*queueRunner
	deliver  *deliverer
	house    *housekeeper
}

// shared is what the runtime's parts (each queue's runner, the delivery
// engine, the housekeeping) use of it: the store, the log, the clock and
// the metrics. None of them holds the *Runtime.
type shared struct {
	store   store.Store
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics
}

// New prepares a runtime: a reader per queue and a client per connection.
func New(opts Options) (*Runtime, error) {
	if opts.Plan == nil || opts.Store == nil || opts.Config == nil {
		return nil, fmt.Errorf("runtime: a plan, a store and config values are needed")
	}
	r := &Runtime{
		shared: shared{store: opts.Store, log: opts.Logger, now: opts.Now, metrics: opts.Metrics},
		plan:   opts.Plan, after: opts.After, budget: opts.Budget, ackTimeout: opts.AckTimeout,
		bySource: map[string]*queueRunner{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.after == nil {
		r.after = time.After
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if r.budget <= 0 {
		r.budget = DefaultBudget
	}
	if r.ackTimeout <= 0 {
		r.ackTimeout = AckTimeout
	}
	if r.metrics == nil {
		r.metrics = NewMetrics(nil)
	}
	r.house = newHousekeeper(r.shared, opts.Plan.Store, opts.StatsEvery)
	hc := opts.HTTP
	if hc == nil {
		hc = defaultHTTPClient()
		if opts.Dial != nil {
			t := hc.Transport.(*http.Transport)
			t.DialContext, t.Proxy = opts.Dial, nil
		}
	}
	conns := map[string]*connection{}
	for i := range opts.Plan.Connections {
		c, err := newConnection(opts.Plan, &opts.Plan.Connections[i], opts.Config, hc)
		if err != nil {
			return nil, err
		}
		conns[c.name] = c
	}
	subscribers := opts.Plan.SubscribersByEvent()
	for i := range opts.Plan.Queues {
		q := &opts.Plan.Queues[i]
		qr, err := newQueueRunner(r.shared, opts.Plan, q, conns[q.Connection],
			receiving{budget: r.budget, ackTimeout: r.ackTimeout, subscribers: subscribers, dial: opts.Dial})
		if err != nil {
			r.Close() // the queues opened so far
			return nil, err
		}
		r.queues = append(r.queues, qr)
		r.bySource[q.Source] = qr
	}
	d, err := newDeliverer(r.shared, opts.Plan, conns, opts, r.budget, rnd)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.deliver = d
	return r, nil
}

// connection is a connection's client and resolved values.
type connection struct {
	name   string
	plan   *ir.Connection
	client *wire.Client // nil for a SQL database (ProtocolSQL)
	// credentials are the credential members' values (a SQL database's url).
	credentials map[string]string
	settings    map[string]any
	ops         map[string]wire.Operation
}

func newConnection(p *ir.Program, c *ir.Connection, cfg *Config, hc *http.Client) (*connection, error) {
	conn := &connection{name: c.Name, plan: c, ops: map[string]wire.Operation{}}
	fail := func(err error) (*connection, error) { return nil, fmt.Errorf("connection %s: %w", c.Name, err) }
	host := ""
	if c.Host != nil {
		v, err := cfg.value(*c.Host)
		if err != nil {
			return fail(err)
		}
		host = text(v)
	}
	conn.credentials = map[string]string{}
	for k, v := range c.Credential {
		val, err := cfg.value(v)
		if err != nil {
			return fail(err)
		}
		conn.credentials[k] = text(val)
	}
	settings, err := cfg.Settings(c)
	if err != nil {
		return fail(err)
	}
	conn.settings = settings
	if !providers.WireProtocol(c.Provider.Protocol) {
		// A database or a broker, not an HTTP service: its queue driver
		// opens it.
		return conn, nil
	}
	settingsText := make(map[string]string, len(settings))
	for k, v := range settings {
		settingsText[k] = text(v)
	}
	client, err := providers.NewClient(c.Provider, host, conn.credentials, settingsText, hc, credentialFields(c))
	if err != nil {
		return fail(err)
	}
	conn.client = client
	for _, o := range c.Operations {
		w, err := operationOf(p, o)
		if err != nil {
			return fail(err)
		}
		conn.ops[o.Ref] = w
	}
	return conn, nil
}

// credentialFields are the config fields c's credential members are read
// from, sorted and once each: a refusal of the credential names them (never
// their values).
func credentialFields(c *ir.Connection) []string {
	var out []string
	for _, v := range c.Credential {
		if v.Config != "" && !slices.Contains(out, v.Config) {
			out = append(out, v.Config)
		}
	}
	slices.Sort(out)
	return out
}

// queueConn is the connection as a queue driver uses it.
func (c *connection) queueConn() *queue.Conn {
	return &queue.Conn{Name: c.name, Receiving: c.plan.Receiving, Client: c.client, Operations: c.ops,
		Settings: c.settings, Credentials: c.credentials}
}

// Run ticks until ctx is done, at least every MaxTickInterval (sooner when
// a tick found a full batch or due work). A signal lets the message in hand
// finish.
func (r *Runtime) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 || interval > MaxTickInterval {
		interval = MaxTickInterval
	}
	// Deliveries run in a loop of their own: a slow handler never delays
	// receiving, which ticks at least every MaxTickInterval.
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.deliveryLoop(ctx, interval)
	}()
	defer func() { <-done }()
	for {
		rep, err := r.tick(ctx, false)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("tick failed", "error", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := interval
		if rep.Busy {
			wait = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.after(wait):
		}
	}
}

// deliveryLoop runs due deliveries until ctx is done: again at once while
// claims come back full, else after a pause (new deliveries are claimed
// within a second of being kept).
func (r *Runtime) deliveryLoop(ctx context.Context, interval time.Duration) {
	pause := time.Second
	if interval < pause {
		pause = interval
	}
	for ctx.Err() == nil {
		var rep DeliverReport
		if err := r.deliver.run(ctx, &rep); err != nil && ctx.Err() == nil {
			r.log.Warn("running deliveries failed", "error", err)
		}
		if rep.Full && ctx.Err() == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// Close lets go of what the runtime holds besides the store (a SQL inbox's
// database pool); the store is the caller's to close.
func (r *Runtime) Close() {
	for _, q := range r.queues {
		q.driver.Close()
	}
}

// Metrics returns the runtime's metrics.
func (r *Runtime) Metrics() *Metrics { return r.metrics }

// Healthy reports whether the runtime can keep messages: it asks the store,
// and answers an error only when the store has failed, with no answer
// between, for UnhealthyAfter or longer (this probe and the ticks'
// housekeeping both count). A failure younger than that is one the pool
// recovers from by itself (a killed backend), as the next tick would.
func (r *Runtime) Healthy(ctx context.Context) error {
	_, err := r.store.Stats(ctx)
	return r.health.observe(r.now(), err)
}

// health follows how long the store has been failing.
type health struct {
	mu           sync.Mutex
	failingSince time.Time // zero while the store answers
}

// observe records a store call's outcome at now; it returns err once the
// store has been failing for UnhealthyAfter, else nil.
func (h *health) observe(now time.Time, err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.failingSince = time.Time{}
		return nil
	}
	if h.failingSince.IsZero() {
		h.failingSince = now
	}
	if now.Sub(h.failingSince) >= UnhealthyAfter {
		return fmt.Errorf("the events' store has failed for %s: %w", now.Sub(h.failingSince).Truncate(time.Second), err)
	}
	return nil
}

// Now is the runtime's clock.
func (r *Runtime) Now() time.Time { return r.now() }
