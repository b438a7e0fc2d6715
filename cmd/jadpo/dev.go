package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/lang/termtext"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/standin"
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
			"inbox's body is its row, {\"column\": value, ...}); a body that is not JSON is refused before it is sent.\n" +
			"Each call the service stand-in takes is printed (method, path, headers with secrets redacted, body).\n" +
			"Lines starting with / are dev's commands:\n" +
			"  /answer TARGET STATUS [TIMES]  answer STATUS (say 503) to the calls of TARGET, a subscriber or an\n" +
			"                                 operation (connection.resource.operation), the next TIMES calls or every\n" +
			"                                 call; /answer TARGET ok answers with samples again\n" +
			"  /retry ID...                   as jadpo deliveries retry (d4, p1)\n" +
			"  /help                          list them\n" +
			"While dev runs it retries deliveries as they come due, and reads what jadpo deliveries retry makes\n" +
			"pending, from this or another terminal. At the end of input dev receives and delivers what is due,\n" +
			"then exits. --demo runs a scripted tour instead. docs/guide/when-something-fails.md walks a failing call.",
		Example: "  jadpo dev examples/warehouse\n  jadpo dev examples/warehouse --demo\n" +
			"  printf '/answer pack_order 503 2\\nwarehouse_queue {\"id\":\"m1\",\"type\":\"order_shipped\",...}\\n' | jadpo dev examples/warehouse",
		Args: cobra.MaximumNArgs(1),
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
			fakes := append(w.Describe(), "store "+shownStore(w.storeURL))
			fmt.Fprintf(e.stderr, "jadpo dev: %s\n", strings.Join(fakes, ", "))
			for _, in := range w.Inboxes() {
				if in.Created != "" {
					fmt.Fprintf(e.stderr, "jadpo dev: created the SQL inbox table %s in %s: %s\n", in.Name, in.Where, in.Created)
				}
			}
			rows := ""
			if len(w.Inboxes()) > 0 {
				rows = ` (a SQL inbox's body is its row: {"column": value, ...})`
			}
			fmt.Fprintf(e.stderr, "jadpo dev: queues: %s; type `<queue> <json body>` to send%s, /help for dev's commands; end of input stops dev\n",
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

// devWorld is the app running against local stand-ins (runtime/standin).
type devWorld struct {
	*standin.World
	storeURL string
	st       store.Store
	rt       *runtime.Runtime
	log      *slog.Logger
}

func (w *devWorld) close() {
	if w.rt != nil {
		w.rt.Close()
	}
	if w.st != nil {
		w.st.Close()
	}
	w.World.Close()
}

// devDial is what every connection jadpo dev's app opens goes through, once
// the stand-ins' loopback-only guard has let it pass. Tests replace it with
// one that records each address dialled.
var devDial standin.DialFunc = (&net.Dialer{Timeout: 30 * time.Second}).DialContext

// startDev builds the plan, starts the stand-ins and a runtime on the project's store
// (storeURL's rule, as every command); fresh removes a SQLite store first.
func (e *env) startDev(ctx context.Context, dir string, f *appFlags, fresh bool) (*devWorld, error) {
	p, err := e.loadPlan(dir, f)
	if err != nil {
		return nil, err
	}
	sw, err := standin.Start(ctx, p, standin.Options{
		EnvFile: filepath.Join(dir, ".env.local"),
		Mail:    e.stderr,
		Shown:   termtext.Line,
		Calls:   e.stderr,
		Dial:    devDial,
		Store: func(cfg *runtime.Config) (string, error) {
			u, _, err := storeURL(dir, p, cfg, f.database)
			if err != nil {
				return "", startupError{msg: "cannot start: " + err.Error()}
			}
			if path, ok := strings.CutPrefix(u, "sqlite:"); ok && fresh {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					_ = os.Remove(path + suffix)
				}
			}
			return u, nil
		},
	})
	if err != nil {
		var se startupError
		if !errors.As(err, &se) {
			err = startupError{msg: err.Error()}
		}
		return nil, err
	}
	w := &devWorld{World: sw, storeURL: sw.StoreURL}
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
	if w.rt, err = runtime.New(runtime.Options{Plan: w.Plan, Store: w.st, Config: w.Config, Logger: log, Dial: w.Dial}); err != nil {
		w.close()
		return nil, startupError{msg: "cannot start: " + err.Error()}
	}
	return w, nil
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

// send acts on one typed line: a dev command (/answer, /retry, /help), or a message to
// the queue it names, its body checked as JSON first.
func (w *devWorld) send(ctx context.Context, e *env, line string) {
	if strings.HasPrefix(line, "/") {
		w.command(ctx, e, line)
		return
	}
	queue, body, _ := strings.Cut(line, " ")
	body = strings.TrimSpace(body)
	if !slices.Contains(w.Queues(), queue) {
		fmt.Fprintf(e.stderr, "jadpo dev: no queue %q; type `<queue> <json body>` to send (queues: %s), or /help for dev's commands\n", termtext.Line(queue), w.queueList())
		return
	}
	if body == "" {
		fmt.Fprintf(e.stderr, "jadpo dev: %s: no message body; type `<queue> <json body>`, say `%s {\"id\": \"1\", ...}` (queues: %s)\n", queue, queue, w.queueList())
		return
	}
	if err := checkJSON(body); err != nil {
		fmt.Fprintf(e.stderr, "jadpo dev: %s: the body is not JSON (%v), so nothing was sent; type `<queue> <json body>` (queues: %s)\n", queue, err, w.queueList())
		return
	}
	what, err := w.Send(ctx, queue, body)
	if errors.Is(err, standin.ErrNoQueue) {
		fmt.Fprintf(e.stderr, "jadpo dev: no queue %q; queues: %s\n", termtext.Line(queue), w.queueList())
		return
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "jadpo dev: sending to %s: %v\n", queue, err)
		return
	}
	if what != "" {
		what = " (row " + what + ")"
	}
	fmt.Fprintf(e.stderr, "jadpo dev: sent to %s%s\n", queue, what)
}

// checkJSON says where body stops being one JSON value.
func checkJSON(body string) error {
	dec := json.NewDecoder(strings.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "invalid character "))
		}
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// devHelp is what /help prints: dev's input commands (docs/guide/when-something-fails.md).
const devHelp = `jadpo dev: type
  <queue> <json body>             send a message to the app's queue
  /answer TARGET STATUS [TIMES]   the service stand-in answers STATUS (say 503) to TARGET's calls
                                  the next TIMES calls (every call when left out); TARGET is a
                                  subscriber (the operations its handlers call) or an operation
                                  as connection.resource.operation; /answer TARGET ok undoes it
  /retry ID...                    as jadpo deliveries retry: failed deliveries (d4) and parked
                                  messages (p1) are pending again, and run as they come due
  /help                           this list
`

// command runs one of dev's input commands.
func (w *devWorld) command(ctx context.Context, e *env, line string) {
	f := strings.Fields(line)
	switch f[0] {
	case "/help":
		fmt.Fprint(e.stderr, devHelp)
	case "/answer":
		if len(f) < 3 || len(f) > 4 {
			fmt.Fprintf(e.stderr, "jadpo dev: /answer takes TARGET STATUS [TIMES], say `/answer %s 503 2`; targets: %s\n", firstOr(w.AnswerTargets(), "pack_order"), strings.Join(w.AnswerTargets(), ", "))
			return
		}
		status := 0
		if f[2] != "ok" {
			n, err := strconv.Atoi(f[2])
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo dev: /answer: %q is not an HTTP status: give one, say 503, or ok for the sample answers\n", termtext.Line(f[2]))
				return
			}
			status = n
		}
		times := 0
		if len(f) == 4 {
			n, err := strconv.Atoi(f[3])
			if err != nil || n < 1 {
				fmt.Fprintf(e.stderr, "jadpo dev: /answer: %q is not a number of calls: give a positive number, or leave it out for every call\n", termtext.Line(f[3]))
				return
			}
			times = n
		}
		what, err := w.Answer(f[1], status, times)
		if err != nil {
			fmt.Fprintf(e.stderr, "jadpo dev: /answer: %s\n", termtext.Line(err.Error()))
			return
		}
		fmt.Fprintf(e.stderr, "jadpo dev: %s\n", what)
	case "/retry":
		if len(f) < 2 {
			fmt.Fprintln(e.stderr, "jadpo dev: /retry takes the ids to retry, say `/retry d1 p2` (jadpo deliveries lists them)")
			return
		}
		ids := make([]store.ID, 0, len(f)-1)
		for _, a := range f[1:] {
			id, err := store.ParseID(a)
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo dev: /retry: %s\n", termtext.Line(err.Error()))
				return
			}
			ids = append(ids, id)
		}
		if err := w.st.Retry(ctx, ids); err != nil {
			fmt.Fprintf(e.stderr, "jadpo dev: /retry: %s\n", termtext.Line(err.Error()))
			return
		}
		for _, id := range ids {
			fmt.Fprintf(e.stderr, "jadpo dev: %s is pending again\n", id)
		}
	default:
		fmt.Fprintf(e.stderr, "jadpo dev: no command %s; dev's commands are /answer, /retry and /help, and `<queue> <json body>` sends a message\n", termtext.Line(f[0]))
	}
}

func firstOr(list []string, or string) string {
	if len(list) > 0 {
		return list[0]
	}
	return or
}

// queueList names the queues for a message: "none" when the app receives none.
func (w *devWorld) queueList() string {
	if q := w.Queues(); len(q) > 0 {
		return strings.Join(q, ", ")
	}
	return "none (the app receives no queue)"
}
