// Package standin is the world of local stand-ins `jadpo dev`, its demo and
// the tests' worlds (runtime/runtimetest, through Options) run an app
// against: an SQS fake, each queue driver's own stand-in (a Cloudflare
// Queues fake: providers.Drivers' StandIn), a stand-in for json_http
// services and one for each email connection, a copy of the plan with every
// connection pointed at them however its values are written, a dialer that
// refuses every address off this machine, and the SQL inbox tables created
// in a local database. It reads plans, never source.
package standin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/fakes/emailfake"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/runtime"
)

// Options change what Start sets up.
type Options struct {
	// EnvFile is read for config values the environment does not set
	// (the project's .env.local); "" reads none.
	EnvFile string
	// Mail is where each mail the email stand-ins take is printed; nil
	// prints none.
	Mail io.Writer
	// Shown is how a producer's text (a mail's recipient and first line, a
	// call's path, headers and body) is written on Mail and Calls: the CLI passes lang/termtext.Line, which the
	// runtime may not import. Nil writes it quoted as strconv.QuoteToASCII
	// does; either way no control or bidirectional character reaches a
	// terminal.
	Shown func(string) string
	// Store names the events' store once the config is loaded (the CLI's
	// rule); Start refuses it unless it is on this machine. Its error is
	// returned as it is. Nil: no store is looked for.
	Store func(*runtime.Config) (string, error)
	// Dial is what the loopback-only guard passes an address on this
	// machine to; nil dials directly, with a 30 s timeout.
	Dial DialFunc
	// Environ is the environment the app's is made from; nil: this
	// process's.
	Environ []string
	// SQS builds the SQS fake: the credentials it accepts (the app is given
	// the key id that sorts first, and its secret; none: sqsfake's default
	// pair), its clock, a hook on each request. Its BaseURL is its own.
	SQS sqsfake.Options
	// QueueAttributes are what each of the app's queues is created with on
	// the SQS fake, by queue name ({"VisibilityTimeout": "2"}); "{arn:NAME}"
	// in a value is the ARN of the fake's queue NAME, one of
	// DeadLetterQueues, say, for a RedrivePolicy.
	QueueAttributes map[string]map[string]string
	// DeadLetterQueues are further queues created on the SQS fake, before
	// the app's, for a RedrivePolicy to name.
	DeadLetterQueues []string
	// Services answers the calls to the app's json_http services; nil: a
	// stand-in answering each call with a sample of its operation's output.
	Services http.Handler
	// Calls is where each call the service stand-in takes is printed (method, path,
	// headers with secrets redacted, body, answer); nil prints none. Not with Services.
	Calls io.Writer
	// EmailToken is the token the email stand-ins take, and the app is
	// given; "": emailfake.DefaultToken.
	EmailToken string
}

// Error is a start refused or failed: its message says why and how to fix
// it, on the lines the CLI prints.
type Error struct{ Msg string }

func (e Error) Error() string { return e.Msg }

// ErrNoQueue is Send's answer for a queue that is not the app's.
var ErrNoQueue = errors.New("no such queue")

// World is the app's plan pointed at local stand-ins, and the stand-ins.
type World struct {
	// Plan is a copy of the plan given to Start, each connection's literal
	// host (or package's fixed host), credential and queue settings
	// replaced by the stand-in's.
	Plan *ir.Program
	// Config is the plan's config, loaded from Environ and the EnvFile.
	Config *runtime.Config
	// Environ is the environment given to the app: the process's, each
	// config field a connection takes set to its stand-in's value, and a
	// placeholder for each other required field that is unset.
	Environ []string
	// StoreURL is Options.Store's answer, checked to be on this machine.
	StoreURL string
	// SQS is the SQS fake; each queue received over AWS's JSON protocol is
	// one of its queues, by the app's queue name.
	SQS *sqsfake.Server
	// ServicesURL is where the app's json_http services are pointed:
	// Options.Services, or the sample-answering stand-in.
	ServicesURL string

	dial DialFunc
	// standIns are the drivers' own stand-ins, started for the first
	// connection received by their driver, in the order started.
	standIns  []driverStandIn
	sink      *http.Server
	queueURLs map[string]string // by app queue
	inboxes   map[string]*inbox // SQL inbox tables, by app queue
	locals    map[string]*local // queues on a server of this machine a driver sends to (LocalSend), by app queue
	mail      mail              // email.go
	calls     calls             // calls.go
}

// Start starts the stand-ins, points a copy of plan's connections at them
// and loads its config. A connection of a kind with no stand-in, a host,
// database or store off this machine, or a config that does not load is
// refused with an Error naming the connection and the fix. On an error,
// what was started is stopped.
func Start(ctx context.Context, plan *ir.Program, opts Options) (*World, error) {
	p := *plan
	p.Connections = append([]ir.Connection(nil), plan.Connections...)
	dial := opts.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	}
	w := &World{Plan: &p, queueURLs: map[string]string{}, dial: LoopbackOnly(dial)}
	w.mail.out, w.mail.token, w.mail.shown = opts.Mail, opts.EmailToken, opts.Shown
	if w.mail.shown == nil {
		w.mail.shown = strconv.QuoteToASCII
	}
	w.calls.out, w.calls.escape = opts.Calls, opts.Shown
	if w.mail.token == "" {
		w.mail.token = emailfake.DefaultToken
	}
	sqsOpts := opts.SQS
	sqsOpts.BaseURL = ""
	var err error
	if w.SQS, err = sqsfake.Start("", sqsOpts); err != nil {
		return nil, Error{"cannot start the SQS fake: " + err.Error()}
	}
	if err := w.startSink(opts.Services); err != nil {
		w.Close()
		return nil, Error{"cannot start the service stand-in: " + err.Error()}
	}
	if err := w.wire(opts); err != nil {
		w.Close()
		return nil, Error{"jadpo dev: " + err.Error()}
	}
	if w.Config, err = runtime.LoadConfig(w.Plan, w.Environ, opts.EnvFile); err != nil {
		w.Close()
		return nil, Error{"cannot start: " + strings.ReplaceAll(err.Error(), "\n", "; ") + w.inboxHint(err.Error())}
	}
	if err := w.checkLocal(w.Config); err != nil {
		w.Close()
		return nil, Error{"jadpo dev: " + err.Error()}
	}
	if opts.Store != nil {
		if w.StoreURL, err = opts.Store(w.Config); err != nil {
			w.Close()
			return nil, err
		}
		if err := checkLocalStore(w.StoreURL); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.prepareInboxes(ctx, w.Config); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.prepareLocals(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Dial opens a connection for the app, refusing every address that is not
// on this machine: give it to runtime.Options.Dial.
func (w *World) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return w.dial(ctx, network, addr)
}

// Close stops every stand-in and closes the inboxes' databases.
func (w *World) Close() {
	if w.SQS != nil {
		w.SQS.Close()
	}
	for _, s := range w.standIns {
		s.Close()
	}
	if w.sink != nil {
		w.sink.Close()
	}
	w.mail.close()
	for _, in := range w.inboxes {
		in.pool.Close()
	}
}

// wire points every connection of the app at a local stand-in, whatever its
// values are written as: a config field is set in the environment dev gives
// the app, a literal (or a package's fixed host) is replaced in dev's plan.
// Each SQS connection gets its host, credential and queue_url; a connection
// received by a driver with a stand-in of its own what the stand-in says
// (a Cloudflare queue its host and token); each json_http service its host. A
// connection with no stand-in refuses the start, naming it and the fix.
// Other config fields keep their environment values, or a dev placeholder
// when unset.
func (w *World) wire(opts Options) error {
	keyID, secret := sqsCredential(opts.SQS.Credentials)
	for _, q := range opts.DeadLetterQueues {
		if _, err := w.SQS.CreateQueue(q, nil); err != nil {
			return err
		}
	}
	set := map[string]string{}
	real := map[string]bool{} // config fields that must come from the environment
	point := func(v *ir.Value, to string) *ir.Value {
		if v != nil && v.Config != "" {
			set[v.Config] = to
			return v
		}
		lit, _ := json.Marshal(to)
		return &ir.Value{Literal: lit}
	}
	for i := range w.Plan.Connections {
		c := &w.Plan.Connections[i]
		switch {
		case c.Provider.Protocol == ir.ProtocolAWSJSON && c.Provider.AWSTarget == "AmazonSQS":
			c.Host = point(c.Host, w.SQS.URL)
			c.Credential = maps.Clone(c.Credential)
			for member, to := range map[string]string{ir.MemberKeyID: keyID, ir.MemberSecret: secret} {
				if v, ok := c.Credential[member]; ok {
					c.Credential[member] = *point(&v, to)
				}
			}
			if v, ok := c.Settings["queue_url"]; ok {
				u, err := w.SQS.CreateQueue(c.Name, w.queueAttributes(opts.QueueAttributes[c.Name]))
				if err != nil {
					return err
				}
				c.Settings = maps.Clone(c.Settings)
				c.Settings["queue_url"] = *point(&v, u)
				w.queueURLs[c.Name] = u
			}
		case c.Receiving != nil && providers.DriverNamed(c.Receiving.Driver) != nil && providers.DriverNamed(c.Receiving.Driver).StandIn != nil:
			if err := w.wireStandIn(providers.DriverNamed(c.Receiving.Driver), c, point); err != nil {
				return err
			}
		case c.Email != nil && c.Receiving == nil:
			if err := w.wireEmail(c, point); err != nil {
				return err
			}
		case c.Provider.Protocol == ir.ProtocolJSONHTTP:
			c.Host = point(c.Host, w.ServicesURL)
		case localURL(c) != "":
			// A driver run against a real server (a SQL inbox's database):
			// no stand-in, and no placeholder, so an unset URL is named at
			// start-up. The server must be on this machine (checkLocal).
			if v, ok := c.Credential[localURL(c)]; ok && v.Config != "" {
				real[v.Config] = true
			}
		default:
			what := string(c.Provider.Protocol)
			if c.Provider.AWSTarget != "" {
				what += " (" + c.Provider.AWSTarget + ")"
			}
			return fmt.Errorf("connection %s (package %s) speaks %s, which has no local stand-in, and dev never leaves this machine: "+
				"run the app with `jadpo run` against a test account, or leave the connection out while developing", c.Name, c.Package, what)
		}
	}
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	given := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		given[k] = v
	}
	env = slices.Clone(env)
	for _, cf := range w.Plan.Config {
		if v, ok := set[cf.Name]; ok {
			env = append(env, cf.Binding+"="+v)
		} else if given[cf.Binding] == "" && cf.Default == nil && !cf.Type.Optional && !real[cf.Name] {
			env = append(env, cf.Binding+"="+placeholder(cf))
		}
	}
	w.Environ = env
	return nil
}

// sqsCredential is the access key id and secret the app is given for the
// SQS fake: of those it accepts, the key id that sorts first.
func sqsCredential(accepted map[string]string) (keyID, secret string) {
	if len(accepted) == 0 {
		return sqsfake.DefaultKeyID, sqsfake.DefaultSecret
	}
	keyID = sortedKeys(accepted)[0]
	return keyID, accepted[keyID]
}

// queueAttributes are a queue's attributes with each "{arn:NAME}" replaced
// by the ARN of the fake's queue NAME.
func (w *World) queueAttributes(given map[string]string) map[string]string {
	if given == nil {
		return nil
	}
	out := make(map[string]string, len(given))
	for k, v := range given {
		out[k] = arnRef.ReplaceAllStringFunc(v, func(ref string) string {
			return w.SQS.QueueArn(strings.TrimSuffix(strings.TrimPrefix(ref, "{arn:"), "}"))
		})
	}
	return out
}

var arnRef = regexp.MustCompile(`\{arn:[A-Za-z0-9_-]+\}`)

// placeholder is an unset config field's dev value, of its type; a URL is on
// this machine.
func placeholder(cf ir.ConfigField) string {
	name := "dev-" + strings.ReplaceAll(cf.Name, "_", "-")
	switch cf.Type.Kind {
	case ir.Url:
		return "http://127.0.0.1/" + name
	case ir.Int, ir.Decimal:
		return "1"
	case ir.Bool:
		return "false"
	case ir.Email:
		return name + "@example.com"
	}
	return name
}

// checkLocal refuses a start that would leave this machine, once the config
// is loaded: a connection whose host is not a local stand-in (wire points
// each one; this catches what it could not), a SQL inbox's database or the
// store on another host. Each refusal names the connection and the fix,
// never a URL (it may hold a password).
func (w *World) checkLocal(cfg *runtime.Config) error {
	for _, c := range w.Plan.Connections {
		if d := localDriver(&c); d != nil {
			v, ok := c.Credential[d.LocalURL]
			if !ok {
				continue
			}
			u, err := cfg.Value(v)
			if err != nil {
				return err
			}
			s, _ := u.(string)
			host, err := d.RemoteHost(s)
			if err == nil && host == "" {
				continue
			}
			where := "its credential's " + d.LocalURL
			if v.Config != "" {
				where = w.binding(v.Config)
			}
			if err != nil {
				return fmt.Errorf("connection %s: %s is %s", c.Name, where, err)
			}
			return fmt.Errorf("connection %s: its %s is on %s, not this machine, and dev never leaves it: set %s to %s", c.Name, d.LocalWhat, host, where, d.LocalFix)
		}
		if d := standInDriver(&c); d != nil && d.Contract.NoHost != "" {
			// A broker's stand-in (its connections take no host): wire
			// pointed the credential at it, and dev's dialer reaches
			// nothing off this machine.
			continue
		}
		host := c.Provider.Host
		if c.Host != nil {
			v, err := cfg.Value(*c.Host)
			if err != nil {
				return err
			}
			host, _ = v.(string)
		}
		if !loopbackURL(host) {
			return fmt.Errorf("connection %s would call %s, not a local stand-in, and dev never leaves this machine", c.Name, hostOf(host))
		}
	}
	return nil
}

// checkLocalStore refuses a store that is not on this machine.
func checkLocalStore(u string) error {
	host, err := remoteDatabaseHost(u)
	switch {
	case err != nil:
		return Error{"jadpo dev: the events' store: " + err.Error()}
	case host != "":
		return Error{fmt.Sprintf("jadpo dev: the events' store is on %s, not this machine, and dev never leaves it: "+
			"leave DATABASE_URL and the store's database unset (dev keeps events in build/), or give --database sqlite:PATH or a PostgreSQL URL on 127.0.0.1", host)}
	}
	return nil
}

// binding is the environment variable of a config field.
func (w *World) binding(field string) string {
	for _, cf := range w.Plan.Config {
		if cf.Name == field {
			return cf.Binding
		}
	}
	return "config." + field
}

// hostOf is the host of a URL, for naming it without its path or user.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return fmt.Sprintf("%q", u)
}

// driverStandIn is a driver's stand-in, started.
type driverStandIn struct {
	driver ir.Driver
	queue.StandIn
}

// localDriver is the driver of a connection that dev runs against a server
// on this machine, named by a credential member's URL
// (queue.Driver.LocalURL); nil for none.
func localDriver(c *ir.Connection) *queue.Driver {
	if c.Receiving == nil {
		return nil
	}
	if d := providers.DriverNamed(c.Receiving.Driver); d != nil && d.StandIn == nil && d.LocalURL != "" {
		return d
	}
	return nil
}

// standInDriver is the driver of a connection that dev runs against the
// driver's own stand-in (queue.Driver.StandIn); nil for none.
func standInDriver(c *ir.Connection) *queue.Driver {
	if c.Receiving == nil {
		return nil
	}
	if d := providers.DriverNamed(c.Receiving.Driver); d != nil && d.StandIn != nil {
		return d
	}
	return nil
}

// localURL is localDriver's credential member, "" for none.
func localURL(c *ir.Connection) string {
	if d := localDriver(c); d != nil {
		return d.LocalURL
	}
	return ""
}

// wireStandIn points a connection at its driver's stand-in, started on the
// driver's first connection: the host, credential members and settings the
// stand-in names, each as the connection writes it (config or literally).
func (w *World) wireStandIn(d *queue.Driver, c *ir.Connection, point func(*ir.Value, string) *ir.Value) error {
	var s queue.StandIn
	for _, started := range w.standIns {
		if started.driver == d.Name() {
			s = started.StandIn
		}
	}
	if s == nil {
		var err error
		if s, err = d.StandIn(); err != nil {
			return err
		}
		w.standIns = append(w.standIns, driverStandIn{d.Name(), s})
	}
	wiring, err := s.Wire(c)
	if err != nil {
		return err
	}
	if wiring.Host != "" {
		c.Host = point(c.Host, wiring.Host)
	}
	for _, member := range sortedKeys(wiring.Credential) {
		if v, ok := c.Credential[member]; ok {
			c.Credential = maps.Clone(c.Credential)
			c.Credential[member] = *point(&v, wiring.Credential[member])
		}
	}
	for _, name := range sortedKeys(wiring.Settings) {
		if v, ok := c.Settings[name]; ok {
			c.Settings = maps.Clone(c.Settings)
			c.Settings[name] = *point(&v, wiring.Settings[name])
		}
	}
	return nil
}

// startSink serves the app's json_http services: with services, or a
// stand-in whose every call succeeds with an answer shaped like the
// operation's output, unless Answer says otherwise (calls.go).
func (w *World) startSink(services http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.ServicesURL = "http://" + ln.Addr().String()
	if services != nil {
		w.sink = &http.Server{Handler: services, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = w.sink.Serve(ln) }()
		return nil
	}
	w.calls.answers = map[string]*answer{}
	mux := w.sampleHandler()
	w.sink = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = w.sink.Serve(ln) }()
	return nil
}

// sample makes a value of a type: what a service's answer could hold.
func sample(p *ir.Program, t ir.Type, depth int) any {
	switch t.Kind {
	case ir.Int, ir.Decimal:
		if t.Rules != nil && t.Rules.Min != nil {
			return json.Number(*t.Rules.Min)
		}
		return 0
	case ir.Bool:
		return false
	case ir.List:
		return []any{}
	case ir.Map:
		return map[string]any{}
	case ir.Enum:
		return t.Variants[0]
	case ir.Uuid:
		return "00000000-0000-4000-8000-000000000000"
	case ir.Instant:
		return time.Now().UTC().Format(time.RFC3339)
	case ir.Email:
		return "dev@example.com"
	case ir.Url:
		return "http://127.0.0.1/"
	case ir.Duration:
		return "1s"
	case ir.RecordK:
		out := map[string]any{}
		if r := p.RecordByID(t.Name); r != nil && depth < 8 {
			for _, f := range r.Fields {
				if !f.Type.Optional {
					out[f.Name] = sample(p, f.Type, depth+1)
				}
			}
		}
		return out
	}
	return "dev"
}

// Send sends body to the app's queue: a message on the SQS or Cloudflare
// Queues fake, or a row inserted in a SQL inbox table (body is the row,
// {"column": value, ...}); for a row, what names it ("id=7 of jobs").
// A queue that is not the app's is ErrNoQueue.
func (w *World) Send(ctx context.Context, queue, body string) (what string, err error) {
	for _, s := range w.standIns {
		if ok, err := s.Send(ctx, queue, body); ok {
			return "", err
		}
	}
	if _, ok := w.queueURLs[queue]; ok {
		_, err = w.SQS.SendMessage(queue, body)
	} else if in, ok := w.inboxes[queue]; ok {
		var id string
		id, err = in.insert(ctx, body)
		what = fmt.Sprintf("%s=%s of %s", in.table.ID, id, in.name)
	} else if l, ok := w.locals[queue]; ok {
		err = l.driver.LocalSend(ctx, l.conn, w.dial, body)
	} else {
		return "", ErrNoQueue
	}
	return what, err
}

// SQSQueue is the URL of the app's queue on the SQS fake; false when the
// queue is not received over AWS's JSON protocol.
func (w *World) SQSQueue(queue string) (string, bool) {
	u, ok := w.queueURLs[queue]
	return u, ok
}

// Queues are the app's queues Send can send to, sorted: on the fakes and
// the SQL inbox tables.
func (w *World) Queues() []string {
	out := sortedKeys(w.queueURLs)
	for _, s := range w.standIns {
		out = append(out, s.Queues()...)
	}
	out = append(out, sortedKeys(w.inboxes)...)
	out = append(out, sortedKeys(w.locals)...)
	sort.Strings(out)
	return out
}

// Inbox is a SQL inbox table Send inserts rows in.
type Inbox struct {
	Queue   string // the app's queue
	Name    string // the table as the app names it: schema.table or table
	Where   string // the database, as the app names it: "JOBS_DATABASE_URL's database"
	Created string // the columns Start created the table with; "" when it was there
}

// Inboxes are the SQL inbox tables, by queue name.
func (w *World) Inboxes() []Inbox {
	var out []Inbox
	for _, q := range sortedKeys(w.inboxes) {
		in := w.inboxes[q]
		out = append(out, Inbox{Queue: q, Name: in.name, Where: in.where, Created: in.created})
	}
	return out
}

// Describe names each stand-in, for a first line: the fakes, the SQL inbox
// tables and the email stand-ins.
func (w *World) Describe() []string {
	var out []string
	if len(w.queueURLs) > 0 {
		out = append(out, "SQS fake on "+w.SQS.URL)
	}
	for _, s := range w.standIns {
		out = append(out, s.Describe())
	}
	for _, in := range w.Inboxes() {
		out = append(out, "SQL inbox table "+in.Name+" in "+in.Where)
	}
	for _, q := range sortedKeys(w.locals) {
		out = append(out, w.locals[q].describe)
	}
	return append(out, w.mail.describe()...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
