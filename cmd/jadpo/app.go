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
	"github.com/jadpo/jadpo/lang/project"
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
}

// startupError is a start-up problem: one clear line, never a secret.
type startupError struct{ msg string }

// Error is the message on one line: a cause that spans several (pgx's dial
// errors, one line per address tried) is joined with "; ".
func (e startupError) Error() string { return oneLine(e.msg) }

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
			return nil, startupError{fmt.Sprintf("cannot read the plan %s: %v", f.plan, errors.Unwrap(err))}
		}
		p, err := codegen.DecodePlan(b)
		if err != nil {
			return nil, startupError{fmt.Sprintf("%s: %v", f.plan, err)}
		}
		return p, nil
	}
	res := check.Check(project.Load(dir))
	if res.Diags.HasErrors() {
		e.report("check", dir, "text", res)
		return nil, exitError{exitFound}
	}
	return res.Program, nil
}

// databaseURL decides where the events are kept: --database, then the
// store's `database:`, then DATABASE_URL, then build/local.sqlite.
func databaseURL(dir string, p *ir.Program, cfg *runtime.Config, flag string) (string, error) {
	u := flag
	if u == "" && p != nil && p.Store != nil && p.Store.Database != nil {
		v, err := cfg.Value(*p.Store.Database)
		if err != nil {
			return "", err
		}
		if s, _ := v.(string); s != "" {
			u = s
		}
	}
	if u == "" {
		u = os.Getenv("DATABASE_URL")
	}
	if u == "" {
		u = "sqlite:" + filepath.Join(dir, "build", "local.sqlite")
	}
	if rest, ok := strings.CutPrefix(u, "sqlite:"); ok && !filepath.IsAbs(rest) && !strings.HasPrefix(rest, "file:") && flag == "" {
		u = "sqlite:" + filepath.Join(dir, rest)
	}
	if rest, ok := strings.CutPrefix(u, "sqlite:"); ok {
		if err := os.MkdirAll(filepath.Dir(rest), 0o755); err != nil {
			return "", err
		}
	}
	return u, nil
}

// openStore opens and migrates the store.
func openStore(ctx context.Context, url string) (store.Store, error) {
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, startupError{fmt.Sprintf("cannot open the events' store %s: %v", store.RedactURL(url), err)}
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, startupError{fmt.Sprintf("cannot migrate the events' store %s: %v", store.RedactURL(url), err)}
	}
	return st, nil
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
		return nil, startupError{"cannot start: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	url, err := databaseURL(dir, p, cfg, f.database)
	if err != nil {
		return nil, startupError{"cannot start: " + err.Error()}
	}
	st, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
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
