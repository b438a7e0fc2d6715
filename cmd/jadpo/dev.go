package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
	c := &cobra.Command{
		Use:   "dev [dir]",
		Short: "Run the app on this machine against local stand-ins for its queues and services",
		Long: "Dev runs the app with the embedded store, in-process SQS and Cloudflare Queues fakes for its\n" +
			"queues and a local stand-in for its json_http services, ticking every second. Each line typed on\n" +
			"standard input, `<queue> <json body>`, sends a message to that queue. --demo runs a scripted tour instead.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, stop := e.stopOnSignals(&f)
			defer stop()
			dir := dirArg(args)
			if demo {
				return e.runDemo(ctx, dir)
			}
			w, err := e.startDev(ctx, dir, &f, "dev.sqlite", false)
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
			for _, c := range w.plan.Connections {
				if c.Provider.Protocol == "sql" {
					fakes = append(fakes, "SQL inbox "+c.Name+" on its own database (insert rows into its table)")
				}
			}
			fakes = append(fakes, "store "+w.storeURL)
			fmt.Fprintf(e.stderr, "jadpo dev: %s; type `<queue> <json body>` to send\n", strings.Join(fakes, ", "))
			go w.readInput(e)
			return w.rt.Run(ctx, time.Second)
		},
	}
	f.add(c, false)
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
	queueURLs map[string]string // by app queue
	storeURL  string
	st        store.Store
	rt        *runtime.Runtime
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
}

// startDev builds the plan, starts the stand-ins and a runtime on a store
// in build/<storeFile>; fresh removes that store first.
func (e *env) startDev(ctx context.Context, dir string, f *appFlags, storeFile string, fresh bool) (*devWorld, error) {
	w := &devWorld{dir: dir, queueURLs: map[string]string{}, cfQueues: map[string][2]string{}}
	p, err := e.loadPlan(dir, f)
	if err != nil {
		return nil, err
	}
	w.plan = p
	if w.fake, err = sqsfake.Start("", sqsfake.Options{}); err != nil {
		return nil, startupError{"cannot start the SQS fake: " + err.Error()}
	}
	if err := w.startSink(); err != nil {
		w.close()
		return nil, startupError{"cannot start the service stand-in: " + err.Error()}
	}
	if err := w.wire(); err != nil {
		w.close()
		return nil, startupError{"jadpo dev: " + err.Error()}
	}
	cfg, err := runtime.LoadConfig(p, w.environ, filepath.Join(dir, ".env.local"))
	if err != nil {
		w.close()
		return nil, startupError{"cannot start: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	w.storeURL = f.database
	if w.storeURL == "" {
		path := filepath.Join(dir, "build", storeFile)
		if fresh {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(path + suffix)
			}
		}
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		w.storeURL = "sqlite:" + path
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
	if w.rt, err = runtime.New(runtime.Options{Plan: p, Store: w.st, Config: cfg, Logger: log}); err != nil {
		w.close()
		return nil, startupError{"cannot start: " + err.Error()}
	}
	return w, nil
}

// wire points the app's config at the stand-ins: each SQS connection's host,
// credential and queue_url, each json_http connection's host. Other config
// fields keep their environment values, or a dev placeholder when unset.
func (w *devWorld) wire() error {
	set := map[string]string{}
	real := map[string]bool{} // config fields that must come from the environment
	cfgRef := func(v *ir.Value) string {
		if v == nil {
			return ""
		}
		return v.Config
	}
	for _, c := range w.plan.Connections {
		switch {
		case c.Provider.Protocol == "aws_json" && c.Provider.AWSTarget == "AmazonSQS":
			if n := cfgRef(c.Host); n != "" {
				set[n] = w.fake.URL
			}
			if v, ok := c.Credential["key_id"]; ok && v.Config != "" {
				set[v.Config] = sqsfake.DefaultKeyID
			}
			if v, ok := c.Credential["secret"]; ok && v.Config != "" {
				set[v.Config] = sqsfake.DefaultSecret
			}
			if v, ok := c.Settings["queue_url"]; ok && v.Config != "" {
				u, err := w.fake.CreateQueue(c.Name, nil)
				if err != nil {
					return err
				}
				set[v.Config] = u
				w.queueURLs[c.Name] = u
			}
		case c.Receiving != nil && c.Receiving.Driver == "cloudflare_queues":
			if err := w.wireCloudflare(c, set); err != nil {
				return err
			}
		case c.Provider.Protocol == "json_http":
			if n := cfgRef(c.Host); n != "" {
				set[n] = w.sinkURL
			}
		case c.Provider.Protocol == "sql":
			// A SQL inbox is a table of a real database: no stand-in, and no
			// placeholder, so an unset URL is named at start-up.
			if v, ok := c.Credential["url"]; ok && v.Config != "" {
				real[v.Config] = true
			}
		}
	}
	env := os.Environ()
	for _, cf := range w.plan.Config {
		if v, ok := set[cf.Name]; ok {
			env = append(env, cf.Binding+"="+v)
		} else if os.Getenv(cf.Binding) == "" && cf.Default == nil && !cf.Type.Optional && !real[cf.Name] {
			env = append(env, cf.Binding+"=dev-"+strings.ReplaceAll(cf.Name, "_", "-"))
		}
	}
	w.environ = env
	return nil
}

// wireCloudflare points a cloudflare_queues connection at a local Cloudflare
// Queues fake: its host and token, and its account_id and queue_id when they
// come from config (a literal one is used as it is).
func (w *devWorld) wireCloudflare(c ir.Connection, set map[string]string) error {
	if w.cf == nil {
		cf, err := cfqueuesfake.Start("", cfqueuesfake.Options{})
		if err != nil {
			return fmt.Errorf("cannot start the Cloudflare Queues fake: %w", err)
		}
		w.cf = cf
	}
	if c.Host != nil && c.Host.Config != "" {
		set[c.Host.Config] = w.cf.URL
	}
	if v, ok := c.Credential["token"]; ok && v.Config != "" {
		set[v.Config] = cfqueuesfake.DefaultToken
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

// readInput sends each `<queue> <json body>` line typed on standard input.
func (w *devWorld) readInput(e *env) {
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 4096)
	for {
		n, err := e.stdin.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			line := strings.TrimSpace(string(buf[:i]))
			buf = buf[i+1:]
			if line == "" {
				continue
			}
			queue, body, _ := strings.Cut(line, " ")
			var err error
			if ids, ok := w.cfQueues[queue]; ok {
				_, err = w.cf.Send(ids[0], ids[1], body)
			} else if _, ok := w.queueURLs[queue]; ok {
				_, err = w.fake.SendMessage(queue, body)
			} else {
				fmt.Fprintf(e.stderr, "jadpo dev: no queue %q on the fakes; queues: %s\n", queue, strings.Join(w.queueNames(), ", "))
				continue
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo dev: sending to %s: %v\n", queue, err)
				continue
			}
			fmt.Fprintf(e.stderr, "jadpo dev: sent to %s\n", queue)
		}
		if err != nil {
			return
		}
	}
}

// queueNames are the app's queues on the fakes, sorted.
func (w *devWorld) queueNames() []string {
	var out []string
	for k := range w.queueURLs {
		out = append(out, k)
	}
	for k := range w.cfQueues {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
