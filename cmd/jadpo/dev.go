package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/cfqueuesfake"
	"github.com/jadpo/jadpo/providers/sqsfake"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// jadpo dev runs the whole loop on this machine: the embedded store, a local
// SQS fake standing in for each queue received over AWS's JSON protocol, a
// local Cloudflare Queues fake for each queue of the cloudflare_queues
// driver, a local stand-in for each json_http service, ticking. Lines on standard
// input send messages: `<queue> <json body>`.
func (e *env) devCommand() *cobra.Command {
	var f appFlags
	var demo bool
	var dirFlag string
	c := &cobra.Command{
		Use:   "dev [dir]",
		Short: "Run the app on this machine against local stand-ins for its queues and services",
		Long: "Dev runs the app with the embedded store, in-process SQS and Cloudflare Queues fakes for its\n" +
			"queues and a local stand-in for its json_http services, ticking every second. It never leaves this\n" +
			"machine: every connection goes to a stand-in however its host is written, and a store or SQL inbox\n" +
			"database on another host is refused. A SQL inbox's table is created in its database when missing.\n" +
			"Each line typed on standard input, `<queue> <json body>`, sends a message to that queue (a SQL\n" +
			"inbox's body is its row, {\"column\": value, ...}); at the end of input dev receives and delivers\n" +
			"what was sent, then exits. --demo runs a scripted tour instead.",
		Example: "  jadpo dev examples/warehouse\n  jadpo dev examples/warehouse --demo",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			ctx, stop := e.stopOnSignals(&f)
			defer stop()
			if demo {
				return e.runDemo(ctx, dir)
			}
			w, err := e.startDev(ctx, dir, &f, false)
			if err != nil {
				return err
			}
			defer w.close()
			var fakes []string
			if len(w.queueURLs) > 0 {
				fakes = append(fakes, "SQS fake on "+w.fake.URL)
			}
			if w.cf != nil {
				fakes = append(fakes, "Cloudflare Queues fake on "+w.cf.URL)
			}
			for _, q := range sortedKeys(w.inboxes) {
				in := w.inboxes[q]
				fakes = append(fakes, "SQL inbox table "+in.name+" in "+in.where)
			}
			fakes = append(fakes, w.mail.describe()...)
			fakes = append(fakes, "store "+shownStore(w.storeURL))
			fmt.Fprintf(e.stderr, "jadpo dev: %s\n", strings.Join(fakes, ", "))
			for _, q := range sortedKeys(w.inboxes) {
				if in := w.inboxes[q]; in.created != "" {
					fmt.Fprintf(e.stderr, "jadpo dev: created the SQL inbox table %s in %s: %s\n", in.name, in.where, in.created)
				}
			}
			rows := ""
			if len(w.inboxes) > 0 {
				rows = ` (a SQL inbox's body is its row: {"column": value, ...})`
			}
			fmt.Fprintf(e.stderr, "jadpo dev: queues: %s; type `<queue> <json body>` to send%s; end of input stops dev\n",
				w.queueList(), rows)
			// End of input stops the loop like a signal; what was sent is
			// then received and delivered before dev exits.
			run, eof := context.WithCancel(ctx)
			defer eof()
			go func() { w.readInput(ctx, e); eof() }()
			if err := w.rt.Run(run, time.Second); err != nil {
				return err
			}
			for ctx.Err() == nil {
				rep, err := w.rt.Tick(ctx)
				if err != nil {
					w.log.Warn("the last tick did not finish everything", "error", err)
				}
				if err != nil || !rep.Busy {
					break
				}
			}
			return nil
		},
	}
	f.add(c, false)
	addDirFlag(c, &dirFlag, false)
	c.Flags().BoolVar(&demo, "demo", false, "run the scripted tour of the receive loop (examples/warehouse)")
	return c
}

// devWorld is the app running against local stand-ins.
type devWorld struct {
	dir       string
	plan      *ir.Program
	fake      *sqsfake.Server
	cf        *cfqueuesfake.Server // started when a connection uses the cloudflare_queues driver
	cfQueues  map[string][2]string // by app queue: its account id and queue id on cf
	sink      *http.Server
	sinkURL   string
	environ   []string
	queueURLs map[string]string    // by app queue
	inboxes   map[string]*devInbox // SQL inbox tables, by app queue
	storeURL  string
	st        store.Store
	rt        *runtime.Runtime
	mail      devMail // dev_email.go
	log       *slog.Logger
}

func (w *devWorld) close() {
	if w.rt != nil {
		w.rt.Close()
	}
	if w.st != nil {
		w.st.Close()
	}
	if w.fake != nil {
		w.fake.Close()
	}
	if w.cf != nil {
		w.cf.Close()
	}
	if w.sink != nil {
		w.sink.Close()
	}
	w.mail.close()
	for _, in := range w.inboxes {
		in.pool.Close()
	}
}

// startDev builds the plan, starts the stand-ins and a runtime on the project's store
// (storeURL's rule, as every command); fresh removes a SQLite store first.
func (e *env) startDev(ctx context.Context, dir string, f *appFlags, fresh bool) (*devWorld, error) {
	w := &devWorld{dir: dir, queueURLs: map[string]string{}, cfQueues: map[string][2]string{}}
	p, err := e.loadPlan(dir, f)
	if err != nil {
		return nil, err
	}
	w.plan = p
	w.mail.out = e.stderr
	if w.fake, err = sqsfake.Start("", sqsfake.Options{}); err != nil {
		return nil, startupError{msg: "cannot start the SQS fake: " + err.Error()}
	}
	if err := w.startSink(); err != nil {
		w.close()
		return nil, startupError{msg: "cannot start the service stand-in: " + err.Error()}
	}
	if err := w.wire(); err != nil {
		w.close()
		return nil, startupError{msg: "jadpo dev: " + err.Error()}
	}
	cfg, err := runtime.LoadConfig(p, w.environ, filepath.Join(dir, ".env.local"))
	if err != nil {
		w.close()
		return nil, startupError{msg: "cannot start: " + strings.ReplaceAll(err.Error(), "\n", "; ") + w.inboxHint(err.Error())}
	}
	if err := w.checkLocal(cfg); err != nil {
		w.close()
		return nil, startupError{msg: "jadpo dev: " + err.Error()}
	}
	if w.storeURL, _, err = storeURL(dir, p, cfg, f.database); err != nil {
		w.close()
		return nil, startupError{msg: "cannot start: " + err.Error()}
	}
	if path, ok := strings.CutPrefix(w.storeURL, "sqlite:"); ok && fresh {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(path + suffix)
		}
	}
	if err := checkLocalStore(w.storeURL); err != nil {
		w.close()
		return nil, err
	}
	if err := w.prepareInboxes(ctx, cfg); err != nil {
		w.close()
		return nil, err
	}
	if w.st, err = openStore(ctx, w.storeURL); err != nil {
		w.close()
		return nil, err
	}
	log, err := e.logger(f.logFormat)
	if err != nil {
		w.close()
		return nil, err
	}
	w.log = log
	if w.rt, err = runtime.New(runtime.Options{Plan: p, Store: w.st, Config: cfg, Logger: log, Dial: loopbackOnly(devDial)}); err != nil {
		w.close()
		return nil, startupError{msg: "cannot start: " + err.Error()}
	}
	return w, nil
}

// wire points every connection of the app at a local stand-in, whatever its
// values are written as: a config field is set in the environment dev gives
// the app, a literal (or a package's fixed host) is replaced in dev's plan.
// Each SQS connection gets its host, credential and queue_url; each
// Cloudflare queue its host and token; each json_http service its host. A
// connection with no stand-in refuses the start, naming it and the fix.
// Other config fields keep their environment values, or a dev placeholder
// when unset.
func (w *devWorld) wire() error {
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
	for i := range w.plan.Connections {
		c := &w.plan.Connections[i]
		switch {
		case c.Provider.Protocol == "aws_json" && c.Provider.AWSTarget == "AmazonSQS":
			c.Host = point(c.Host, w.fake.URL)
			c.Credential = maps.Clone(c.Credential)
			for member, to := range map[string]string{"key_id": sqsfake.DefaultKeyID, "secret": sqsfake.DefaultSecret} {
				if v, ok := c.Credential[member]; ok {
					c.Credential[member] = *point(&v, to)
				}
			}
			if v, ok := c.Settings["queue_url"]; ok {
				u, err := w.fake.CreateQueue(c.Name, nil)
				if err != nil {
					return err
				}
				c.Settings = maps.Clone(c.Settings)
				c.Settings["queue_url"] = *point(&v, u)
				w.queueURLs[c.Name] = u
			}
		case c.Receiving != nil && c.Receiving.Driver == "cloudflare_queues":
			if err := w.wireCloudflare(c, set, point); err != nil {
				return err
			}
		case c.Email != nil && c.Receiving == nil:
			if err := w.wireEmail(c, point); err != nil {
				return err
			}
		case c.Provider.Protocol == "json_http":
			c.Host = point(c.Host, w.sinkURL)
		case c.Provider.Protocol == "sql":
			// A SQL inbox is a table of a real database: no stand-in, and no
			// placeholder, so an unset URL is named at start-up. Its database
			// must be on this machine (checkLocal).
			if v, ok := c.Credential["url"]; ok && v.Config != "" {
				real[v.Config] = true
			}
		default:
			what := c.Provider.Protocol
			if c.Provider.AWSTarget != "" {
				what += " (" + c.Provider.AWSTarget + ")"
			}
			return fmt.Errorf("connection %s (package %s) speaks %s, which has no local stand-in, and dev never leaves this machine: "+
				"run the app with `jadpo run` against a test account, or leave the connection out while developing", c.Name, c.Package, what)
		}
	}
	env := os.Environ()
	for _, cf := range w.plan.Config {
		if v, ok := set[cf.Name]; ok {
			env = append(env, cf.Binding+"="+v)
		} else if os.Getenv(cf.Binding) == "" && cf.Default == nil && !cf.Type.Optional && !real[cf.Name] {
			env = append(env, cf.Binding+"="+placeholder(cf))
		}
	}
	w.environ = env
	return nil
}

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
func (w *devWorld) checkLocal(cfg *runtime.Config) error {
	for _, c := range w.plan.Connections {
		if c.Provider.Protocol == "sql" {
			v, ok := c.Credential["url"]
			if !ok {
				continue
			}
			u, err := cfg.Value(v)
			if err != nil {
				return err
			}
			s, _ := u.(string)
			host, err := remoteDatabaseHost(s)
			if err == nil && host == "" {
				continue
			}
			where := "its credential's url"
			if v.Config != "" {
				where = w.binding(v.Config)
			}
			if err != nil {
				return fmt.Errorf("connection %s: %s is %s", c.Name, where, err)
			}
			return fmt.Errorf("connection %s: its database is on %s, not this machine, and dev never leaves it: set %s to a PostgreSQL database on this machine (postgres://postgres@127.0.0.1:5432/postgres)", c.Name, host, where)
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
		return startupError{msg: "jadpo dev: the events' store: " + err.Error()}
	case host != "":
		return startupError{msg: fmt.Sprintf("jadpo dev: the events' store is on %s, not this machine, and dev never leaves it: "+
			"leave DATABASE_URL and the store's database unset (dev keeps events in build/), or give --database sqlite:PATH or a PostgreSQL URL on 127.0.0.1", host)}
	}
	return nil
}

// binding is the environment variable of a config field.
func (w *devWorld) binding(field string) string {
	for _, cf := range w.plan.Config {
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

// wireCloudflare points a cloudflare_queues connection at a local Cloudflare
// Queues fake: its host and token (written as config or literally), and its
// account_id and queue_id when they come from config (a literal one is used
// as it is: it names the queue on the fake).
func (w *devWorld) wireCloudflare(c *ir.Connection, set map[string]string, point func(*ir.Value, string) *ir.Value) error {
	if w.cf == nil {
		cf, err := cfqueuesfake.Start("", cfqueuesfake.Options{})
		if err != nil {
			return fmt.Errorf("cannot start the Cloudflare Queues fake: %w", err)
		}
		w.cf = cf
	}
	c.Host = point(c.Host, w.cf.URL)
	if v, ok := c.Credential["token"]; ok {
		c.Credential = maps.Clone(c.Credential)
		c.Credential["token"] = *point(&v, cfqueuesfake.DefaultToken)
	}
	ids := [2]string{"dev-account", c.Name}
	for i, name := range []string{"account_id", "queue_id"} {
		v := c.Settings[name]
		switch {
		case v.Config != "":
			set[v.Config] = ids[i]
		case v.Literal != nil:
			if err := json.Unmarshal(v.Literal, &ids[i]); err != nil {
				return fmt.Errorf("connection %s: setting %s: %w", c.Name, name, err)
			}
		}
	}
	if err := w.cf.CreateQueue(ids[0], ids[1], cfqueuesfake.QueueOptions{}); err != nil {
		return err
	}
	w.cfQueues[c.Name] = ids
	return nil
}

// startSink serves a stand-in for json_http services: every call succeeds
// with an answer shaped like the operation's output.
func (w *devWorld) startSink() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.sinkURL = "http://" + ln.Addr().String()
	type route struct {
		method string
		re     *regexp.Regexp
		output *ir.Type
	}
	var routes []route
	for _, c := range w.plan.Connections {
		if c.Provider.Protocol != "json_http" {
			continue
		}
		for _, o := range c.Operations {
			pattern := "^" + regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(regexp.QuoteMeta(o.Path), `[^/]+`) + "$"
			routes = append(routes, route{o.Method, regexp.MustCompile(pattern), o.Output})
		}
	}
	mux := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		for _, rt := range routes {
			if rt.method == r.Method && rt.re.MatchString(r.URL.Path) {
				var v any = map[string]any{}
				if rt.output != nil {
					v = sample(w.plan, *rt.output, 0)
				}
				_ = json.NewEncoder(rw).Encode(v)
				return
			}
		}
		rw.WriteHeader(http.StatusNotFound)
		fmt.Fprint(rw, `{"error":{"code":"not_found"}}`)
	})
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

// readInput sends each `<queue> <json body>` line typed on standard input,
// until the input ends.
func (w *devWorld) readInput(ctx context.Context, e *env) {
	r := bufio.NewReaderSize(e.stdin, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line = strings.TrimSpace(line); line != "" {
			w.send(ctx, e, line)
		}
		if err != nil {
			return
		}
	}
}

// send sends one typed line to the queue it names.
func (w *devWorld) send(ctx context.Context, e *env, line string) {
	queue, body, _ := strings.Cut(line, " ")
	body = strings.TrimSpace(body)
	var err error
	what := ""
	if ids, ok := w.cfQueues[queue]; ok {
		_, err = w.cf.Send(ids[0], ids[1], body)
	} else if _, ok := w.queueURLs[queue]; ok {
		_, err = w.fake.SendMessage(queue, body)
	} else if in, ok := w.inboxes[queue]; ok {
		var id string
		id, err = in.insert(ctx, body)
		what = fmt.Sprintf(" (row %s=%s of %s)", in.table.ID, id, in.name)
	} else {
		fmt.Fprintf(e.stderr, "jadpo dev: no queue %q; queues: %s\n", queue, w.queueList())
		return
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "jadpo dev: sending to %s: %v\n", queue, err)
		return
	}
	fmt.Fprintf(e.stderr, "jadpo dev: sent to %s%s\n", queue, what)
}

// queueNames are the app's queues dev can send to, sorted: on the fakes and
// the SQL inbox tables.
func (w *devWorld) queueNames() []string {
	out := append(sortedKeys(w.queueURLs), sortedKeys(w.cfQueues)...)
	out = append(out, sortedKeys(w.inboxes)...)
	sort.Strings(out)
	return out
}

// queueList names the queues for a message: "none" when the app receives none.
func (w *devWorld) queueList() string {
	if q := w.queueNames(); len(q) > 0 {
		return strings.Join(q, ", ")
	}
	return "none (the app receives no queue)"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
