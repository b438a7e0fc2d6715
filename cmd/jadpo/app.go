package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/codegen"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
	_ "github.com/jadpo/jadpo/runtime/store/postgres" // postgres:// stores
	_ "github.com/jadpo/jadpo/runtime/store/sqlite"   // sqlite: stores, the default
)

// appFlags are the flags of every command that runs against the store.
type appFlags struct {
	plan      string
	database  string
	logFormat string
}

func (f *appFlags) add(c *cobra.Command, withPlan bool) {
	if withPlan {
		c.Flags().StringVar(&f.plan, "plan", "", "run this plan (build/plan.json) instead of building the project in memory")
	}
	c.Flags().StringVar(&f.database, "database", "", "the events' store: postgres://... or sqlite:PATH (default: the store's database, DATABASE_URL, or build/local.sqlite)")
	c.Flags().StringVar(&f.logFormat, "log-format", "", "log format: text or json (default: text on a terminal, json otherwise)")
	_ = c.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

// startupError is a start-up problem: one clear line, never a secret, then
// the items of a list (several config problems), one a line.
type startupError struct {
	msg  string
	list []string
	hint string // a last line: what to do
}

// Error is the message on one line (a cause that spans several, like pgx's
// dial errors with one line per address tried, is joined with "; "), then
// each item of the list on a line of its own.
func (e startupError) Error() string {
	s := oneLine(e.msg)
	for _, item := range e.list {
		s += "\n  - " + oneLine(item)
	}
	if e.hint != "" {
		s += "\n" + e.hint
	}
	return s
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var b strings.Builder
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// loadPlan builds the project in memory, or reads --plan.
func (e *env) loadPlan(dir string, f *appFlags) (*ir.Program, error) {
	if f.plan != "" {
		b, err := os.ReadFile(f.plan)
		if err != nil {
			return nil, startupError{msg: fmt.Sprintf("cannot read the plan %s: %v", f.plan, errors.Unwrap(err))}
		}
		p, err := codegen.DecodePlan(b)
		if err != nil {
			return nil, startupError{msg: fmt.Sprintf("%s: %v", f.plan, err)}
		}
		return p, nil
	}
	if err := needProject(dir); err != nil {
		return nil, err
	}
	res := check.Check(loadProject(dir))
	if res.Diags.HasErrors() {
		e.report("check", dir, "text", res)
		return nil, exitError{exitFound}
	}
	return res.Program, nil
}

// openStore opens the store, creating it if need be, and migrates it: for the commands
// that run the app (run, tick, dev).
func openStore(ctx context.Context, url string) (store.Store, error) {
	if rest, ok := strings.CutPrefix(url, "sqlite:"); ok && filepath.IsAbs(rest) {
		if err := os.MkdirAll(filepath.Dir(rest), 0o755); err != nil {
			return nil, startupError{msg: fmt.Sprintf("cannot make the events' store's folder: %v", err)}
		}
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, startupError{msg: fmt.Sprintf("cannot open the events' store %s: %v", shownStore(url), err)}
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, startupError{msg: fmt.Sprintf("cannot migrate the events' store %s: %v", shownStore(url), err)}
	}
	return st, nil
}

// openExistingStore opens a store that is there already, creating and migrating nothing:
// for the commands that read it or change its rows (deliveries).
func openExistingStore(ctx context.Context, url string) (store.Store, error) {
	st, err := store.OpenExisting(ctx, url)
	if errors.Is(err, store.ErrNoStore) {
		why := err.Error()
		why = why[strings.LastIndex(why, ": ")+2:] // the adapter's reason; the path is shown as typed
		return nil, cmdError{code: "store_missing", exit: exitFound, msg: fmt.Sprintf(
			"no events' store at %s: %s; jadpo tick or jadpo run makes it, or --database names another", shownStore(url), why)}
	}
	if err != nil {
		return nil, startupError{msg: fmt.Sprintf("cannot open the events' store %s: %v", shownStore(url), err)}
	}
	return st, nil
}

// configProblems is the start-up error of LoadConfig's err: one problem alone on the
// line, several as a list, one a line.
func configProblems(err error) startupError {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) == 1 {
		return startupError{msg: "cannot start: " + lines[0]}
	}
	return startupError{msg: fmt.Sprintf("cannot start: %d config problems:", len(lines)), list: lines}
}

// logger builds the structured logger: text on a terminal, JSON otherwise
// or with --log-format json.
func (e *env) logger(format string) (*slog.Logger, error) {
	var w io.Writer = e.stderr
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "":
		if colorFor(e.stderr) || isTerminal(e.stderr) {
			return slog.New(slog.NewTextHandler(w, nil)), nil
		}
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usageError{fmt.Errorf("--log-format must be text or json, not %q", format)}
}

// session is a plan with its config and store, ready to run.
type session struct {
	dir   string
	plan  *ir.Program
	cfg   *runtime.Config
	store store.Store
	log   *slog.Logger
}

func (e *env) openSession(ctx context.Context, dir string, f *appFlags) (*session, error) {
	log, err := e.logger(f.logFormat)
	if err != nil {
		return nil, err
	}
	p, err := e.loadPlan(dir, f)
	if err != nil {
		return nil, err
	}
	cfg, err := runtime.LoadConfig(p, os.Environ(), filepath.Join(dir, ".env.local"))
	if err != nil {
		se := configProblems(err)
		if strings.Contains(err.Error(), "is not set") && f.plan == "" {
			// The README's `jadpo run examples/warehouse` on a fresh clone: say what it needs,
			// and that trying the app locally is dev's.
			se.hint = fmt.Sprintf("jadpo run and jadpo tick reach the app's real queues and services: set each in the environment or in %s.\n"+
				"To try the app on this machine first, jadpo dev %s runs it against local stand-ins.", filepath.Join(shownPath(dir), ".env.local"), shownPath(dir))
		}
		return nil, se
	}
	url, from, err := storeURL(dir, p, cfg, f.database)
	if err != nil {
		return nil, startupError{msg: "cannot start: " + err.Error()}
	}
	st, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
	log.Info("store", "store", shownStore(url), "from", from)
	return &session{dir: dir, plan: p, cfg: cfg, store: st, log: log}, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
