package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/runtime"
)

func (e *env) runCommand() *cobra.Command {
	var f appFlags
	var metricsAddr string
	var interval, lease time.Duration
	var dir string
	c := &cobra.Command{
		Use:   "run [dir]",
		Short: "Receive the app's queues and run its subscribers until stopped",
		Long: "Run builds the project in memory (or reads --plan), migrates the events' store, then ticks\n" +
			"at least every 10 seconds until SIGINT or SIGTERM, which let the message in hand finish and exit 0;\n" +
			"a second signal stops at once (exit 130 after SIGINT, 143 after SIGTERM).",
		Example: "  jadpo run examples/warehouse\n" +
			"  jadpo run examples/warehouse --metrics-addr 127.0.0.1:9090 --interval 5s\n" +
			"  jadpo run --plan build/plan.json --database postgres://app@db/app",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if interval > runtime.MaxTickInterval || interval <= 0 {
				return usageError{fmt.Errorf("--interval %s: an app receiving a queue ticks at least every %s (runtime.md); give a positive interval of at most %s", interval, runtime.MaxTickInterval, runtime.MaxTickInterval)}
			}
			project, err := projectArg(args, dir)
			if err != nil {
				return err
			}
			ctx, stop := e.stopOnSignals(&f)
			defer stop()
			s, rt, err := e.startRuntime(ctx, project, &f, runtime.Options{Lease: lease})
			if err != nil {
				return err
			}
			defer s.store.Close()
			defer rt.Close()
			if metricsAddr != "" {
				srv, err := serveMetrics(metricsAddr, rt, s.log)
				if err != nil {
					return startupError{msg: fmt.Sprintf("cannot serve metrics on %s: %v", metricsAddr, err)}
				}
				defer srv.Close()
			}
			s.log.Info("running", "queues", len(s.plan.Queues), "subscribers", len(s.plan.Subscribers))
			err = rt.Run(ctx, interval)
			s.log.Info("stopped")
			return err
		},
	}
	f.add(c, true)
	addDirFlag(c, &dir, false)
	c.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this address (host:port)")
	c.Flags().DurationVar(&interval, "interval", runtime.MaxTickInterval, "time between ticks (at most 10s)")
	// Hidden: crash tests shorten the delivery lease (docs/design/runtime.md, Deliveries).
	c.Flags().DurationVar(&lease, "delivery-lease", 0, "a claimed delivery's lease (default 60s; the handler gets 3/4 of it)")
	_ = c.Flags().MarkHidden("delivery-lease")
	return c
}

func (e *env) tickCommand() *cobra.Command {
	var f appFlags
	var dir string
	c := &cobra.Command{
		Use:     "tick [dir]",
		Short:   "Run one tick, then exit (for cron and tests)",
		Example: "  jadpo tick examples/warehouse\n  jadpo tick --dir examples/warehouse --log-format json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			project, err := projectArg(args, dir)
			if err != nil {
				return err
			}
			ctx, stop := e.stopOnSignals(&f)
			defer stop()
			s, rt, err := e.startRuntime(ctx, project, &f, runtime.Options{})
			if err != nil {
				return err
			}
			defer s.store.Close()
			defer rt.Close()
			rep, err := rt.Tick(ctx)
			if err != nil && ctx.Err() != nil {
				// Stopped by a signal: what was in hand was finished; what the
				// tick did not reach waits for the next one.
				s.log.Info("stopped", "error", err)
				err = nil
			}
			fmt.Fprintf(e.stdout, "received %d, %s; retried parked: kept %d, parked again %d%s; deliveries: %d succeeded, %d to retry, %d failed%s\n",
				rep.Received, receivedCounts(rep), rep.RetriedKept, rep.RetriedParked, retriedRepeats(rep),
				rep.Delivered.Succeeded, rep.Delivered.Retried, rep.Delivered.Failed, releasedCount(rep.Delivered))
			if err != nil {
				s.log.Warn("the tick did not finish everything", "error", err)
				return exitError{exitFound}
			}
			if n := rep.Unacknowledged(); n > 0 {
				// Kept, but still on the queue: they come back as repeats. A
				// cron job should hear of it, so this is a failed tick (exit 1).
				s.log.Warn("acknowledging failed; those messages will come back as repeats",
					"unacknowledged", n, "acknowledged", rep.Acked)
				return exitError{exitFound}
			}
			return nil
		},
	}
	f.add(c, true)
	addDirFlag(c, &dir, false)
	return c
}

// startRuntime opens the session and starts a runtime with opts' other fields.
func (e *env) startRuntime(ctx context.Context, dir string, f *appFlags, opts runtime.Options) (*session, *runtime.Runtime, error) {
	s, err := e.openSession(ctx, dir, f)
	if err != nil {
		return nil, nil, err
	}
	opts.Plan, opts.Store, opts.Config, opts.Logger = s.plan, s.store, s.cfg, s.log
	rt, err := runtime.New(opts)
	if err != nil {
		s.store.Close()
		return nil, nil, startupError{msg: "cannot start: " + err.Error()}
	}
	return s, rt, nil
}

// stopOnSignals gives run, tick and dev their context: done at the first
// SIGINT or SIGTERM, after which they finish the messages in hand (a
// batch's keep, and its acknowledgements within runtime.AckTimeout) and
// exit 0. A second signal exits at once: 130 after SIGINT, 143 after
// SIGTERM, whatever is in hand (a message kept but not acknowledged comes
// back as a repeat).
func (e *env) stopOnSignals(f *appFlags) (context.Context, func()) {
	ctx, cancel := context.WithCancel(e.ctx)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs: // main's handler sees it too, and cancels e.ctx
		case <-done:
			return
		}
		// Said before the context is done: the run's "stopped" comes after it.
		if log, err := e.logger(f.logFormat); err == nil {
			log.Info("stopping: finishing the messages in hand; a second signal stops at once")
		}
		cancel()
		select {
		case sig := <-sigs:
			code := 130
			if sig == syscall.SIGTERM {
				code = 143
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func serveMetrics(addr string, rt *runtime.Runtime, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(rt.Metrics().Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := rt.Healthy(r.Context()); err != nil {
			http.Error(w, "unhealthy: the events' store does not answer", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the metrics server stopped", "error", err)
		}
	}()
	return srv, nil
}

// retriedRepeats is ", repeats R" when R retried parked messages were already
// kept (nothing added), else nothing: the summary's common form stays as it was.
func retriedRepeats(rep runtime.TickReport) string {
	if rep.RetriedRepeats == 0 {
		return ""
	}
	return fmt.Sprintf(", repeats %d", rep.RetriedRepeats)
}
