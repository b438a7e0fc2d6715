package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/runtime/console"
)

// consoleTokenEnv is the environment variable that gives the console's access token.
const consoleTokenEnv = "JADPO_CONSOLE_TOKEN"

// consoleCommand is `jadpo console`: the operator's web console (runtime/console) on the
// store deliveries finds.
func (e *env) consoleCommand() *cobra.Command {
	var f appFlags
	var dirFlag, addr, tokenFile, metricsURL string
	var hosts []string
	var readOnly, behindTLS bool
	var refresh time.Duration
	c := &cobra.Command{
		Use:   "console [dir]",
		Short: "Serve the operator's web console: what was kept, parked and delivered; retry and dismiss",
		Long: "Console serves a web console for the project's events' store (found by the rule of jadpo deliveries:\n" +
			"docs/guide/operating.md) until SIGINT or SIGTERM. It never creates or migrates a store.\n\n" +
			"Each start makes a random access token and prints a login link holding it, once; --token-file (or\n" +
			consoleTokenEnv + ") gives the token instead, and is then never printed. Off loopback (--addr\n" +
			"0.0.0.0:8484) it refuses to start without a token file, and answers only to the --host names given.\n" +
			"Everything it serves is inside the binary (docs/guide/console.md).",
		Example: "  jadpo console examples/warehouse\n" +
			"  jadpo console examples/warehouse --read-only\n" +
			"  jadpo console examples/warehouse --metrics-url http://127.0.0.1:9090/metrics\n" +
			"  jadpo console --database postgres://ops@db/events --addr 127.0.0.1:9000\n" +
			"  jadpo console --addr 0.0.0.0:8484 --host ops.example.com:8484 --token-file /run/secrets/console-token --behind-tls",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			if refresh < 100*time.Millisecond {
				return usageError{fmt.Errorf("--refresh %s: give at least 100ms", refresh)}
			}
			if metricsURL != "" && !strings.HasPrefix(metricsURL, "http://") && !strings.HasPrefix(metricsURL, "https://") {
				return usageError{fmt.Errorf("--metrics-url %q: give jadpo run's metrics page as http://HOST:PORT/metrics (its --metrics-addr)", metricsURL)}
			}
			token, given, err := consoleToken(tokenFile)
			if err != nil {
				return usageError{err}
			}
			if !console.IsLoopback(addr) && !given {
				return usageError{fmt.Errorf("--addr %s is reachable from other machines, so the console will not make up a token and print it there: give one with --token-file FILE (or %s), shared only with the operators", addr, consoleTokenEnv)}
			}
			allowed, err := consoleHosts(addr, hosts)
			if err != nil {
				return usageError{err}
			}
			ctx := e.ctx
			if ctx == nil {
				ctx = c.Context()
			}
			st, url, plan, err := e.openOperatorStore(ctx, dir, &f, "text")
			if err != nil {
				return err
			}
			defer st.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return startupError{msg: fmt.Sprintf("cannot serve the console on %s: %v (another program may hold the port: choose one with --addr)", addr, err)}
			}
			served := ln.Addr().String()
			if strings.HasSuffix(addr, ":0") {
				// The port the system chose.
				if allowed, err = consoleHosts(served, hosts); err != nil {
					ln.Close()
					return usageError{err}
				}
			}
			log := slog.New(slog.NewTextHandler(e.stderr, nil))
			h, err := console.New(console.Options{
				Store: st, Token: token, ReadOnly: readOnly, Hosts: allowed, SecureCookie: behindTLS,
				StoreName: shownStore(url), Log: log, MaxAttempts: planBudgets(plan), Refresh: refresh, MetricsURL: metricsURL,
			})
			if err != nil {
				ln.Close()
				return err
			}
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
			base := "http://" + served
			if len(hosts) > 0 && !console.IsLoopback(served) {
				base = "http://" + allowed[0]
			}
			mode := ""
			if readOnly {
				mode = ", read-only"
			}
			fmt.Fprintf(e.stdout, "jadpo console: serving the store %s on %s%s (Ctrl-C stops)\n", shownStore(url), base, mode)
			if given {
				fmt.Fprintf(e.stdout, "log in at %s/login with the access token given\n", base)
			} else {
				fmt.Fprintf(e.stdout, "open this link to log in (it holds this run's access token; it is printed only once):\n    %s%s\n", base, console.LoginPath("", token))
			}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return startupError{msg: fmt.Sprintf("the console stopped: %v", err)}
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			fmt.Fprintln(e.stdout, "jadpo console: stopped")
			return nil
		},
	}
	addDirFlag(c, &dirFlag, false)
	c.Flags().StringVar(&f.database, "database", "", "the events' store: postgres://... or sqlite:PATH (default: as jadpo run finds it)")
	c.Flags().StringVar(&f.plan, "plan", "", "read the store's database from this plan")
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8484", "the address to serve on (off loopback, --token-file is required)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "read the access token from this file (at least 16 characters) instead of making one; or set "+consoleTokenEnv)
	c.Flags().BoolVar(&readOnly, "read-only", false, "show everything, change nothing: no retry or dismiss")
	c.Flags().StringArrayVar(&hosts, "host", nil, "also answer to this Host header (host:port), the name operators reach the console by; repeatable")
	c.Flags().StringVar(&metricsURL, "metrics-url", "", "jadpo run's metrics (http://127.0.0.1:9090/metrics): show its repeats and what housekeeping deleted")
	c.Flags().DurationVar(&refresh, "refresh", 5*time.Second, "how often the overview refreshes itself")
	c.Flags().BoolVar(&behindTLS, "behind-tls", false, "a proxy serves the console over HTTPS: mark the session cookie Secure")
	return c
}

// consoleToken is the access token: the token file's, else the environment's, else a new
// one; given says it came from the operator (and so is not printed).
func consoleToken(file string) (token string, given bool, err error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", false, fmt.Errorf("--token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
		if len(token) < 16 {
			return "", false, fmt.Errorf("--token-file %s holds %d characters: an access token needs at least 16 (openssl rand -hex 32 > %s makes one)", file, len(token), file)
		}
		return token, true, nil
	}
	if v := strings.TrimSpace(os.Getenv(consoleTokenEnv)); v != "" {
		if len(v) < 16 {
			return "", false, fmt.Errorf("%s holds %d characters: an access token needs at least 16", consoleTokenEnv, len(v))
		}
		return v, true, nil
	}
	return console.NewToken(), false, nil
}

// consoleHosts are the Host header values the console answers to: on loopback the
// address and its localhost names; elsewhere the address when it names one interface,
// and each --host.
func consoleHosts(addr string, extra []string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q is not host:port (127.0.0.1:8484): %v", addr, err)
	}
	var out []string
	if console.IsLoopback(addr) {
		out = append(out, net.JoinHostPort(host, port), "localhost:"+port, "127.0.0.1:"+port, "[::1]:"+port)
	} else if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		out = append(out, net.JoinHostPort(host, port))
	}
	for _, h := range extra {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, port)
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--addr %s listens on every interface: name the host operators reach it by with --host NAME:%s (the console answers to no other Host header, against DNS rebinding)", addr, port)
	}
	return out, nil
}

// planBudgets gives a delivery's attempt budget from the plan where the store holds 0.
func planBudgets(p *ir.Program) func(string, int) int {
	if p == nil {
		return nil
	}
	b := map[string]ir.Retry{}
	for _, s := range p.Subscribers {
		b[s.Name] = s.Retry
	}
	return func(sub string, stored int) int { return b[sub].Budget(stored) }
}
