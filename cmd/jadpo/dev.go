package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
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

// send sends one typed line to the queue it names.
func (w *devWorld) send(ctx context.Context, e *env, line string) {
	queue, body, _ := strings.Cut(line, " ")
	body = strings.TrimSpace(body)
	what, err := w.Send(ctx, queue, body)
	if errors.Is(err, standin.ErrNoQueue) {
		fmt.Fprintf(e.stderr, "jadpo dev: no queue %q; queues: %s\n", queue, w.queueList())
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

// queueList names the queues for a message: "none" when the app receives none.
func (w *devWorld) queueList() string {
	if q := w.Queues(); len(q) > 0 {
		return strings.Join(q, ", ")
	}
	return "none (the app receives no queue)"
}
