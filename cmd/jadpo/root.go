package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// Exit codes, as diagnostics.md fixes them.
const (
	exitOK    = 0
	exitFound = 1 // errors found, or the command failed
	exitUsage = 2 // the command was used wrongly
)

// version is set at link time by `make build`.
var version = "dev"

// usageError marks a mistake in how a command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }

// exitError carries an exit code out of a command that already printed why.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type env struct {
	ctx            context.Context // done on SIGINT or SIGTERM
	stdin          io.Reader
	stdout, stderr io.Writer
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext runs the command line; ctx is done on SIGINT or SIGTERM.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "jadpo",
		Short:         "The jadpo toolchain: check, build and run apps that receive events",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(e.checkCommand(), e.buildCommand(), e.runCommand(), e.tickCommand(), e.deliveriesCommand(), e.storeCommand(), e.devCommand(), e.packageCommand(), e.lspCommand(), e.versionCommand())
	var wrapAll func(cs []*cobra.Command)
	wrapAll = func(cs []*cobra.Command) {
		for _, c := range cs {
			c.Args = wrapArgs(c.Args)
			wrapAll(c.Commands()) // `deliveries retry` with no id is a usage error too
		}
	}
	wrapAll(root.Commands())
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	isUsage := errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "unknown flag") || strings.Contains(err.Error(), "accepts ")
	if wantsJSON(args) && len(args) > 0 && args[0] == "check" {
		l := diag.List{}
		l.Addf("toolchain.usage_invalid", source.Range{}, "the command was used wrongly: %s", err.Error())
		_ = diag.WriteJSON(stdout, diag.NewReport("check", "", 0, 0, l))
	} else {
		fmt.Fprintf(stderr, "jadpo: %s\n", err)
		if isUsage {
			fmt.Fprintln(stderr, "Run 'jadpo --help' for usage.")
		}
	}
	if isUsage {
		return exitUsage
	}
	return exitFound
}

// wrapArgs makes positional-argument mistakes usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// wantsJSON spots --format json before flags are parsed, so that even a
// usage error answers an editor in JSON.
func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "--format=json" || (a == "--format" && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

func (e *env) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toolchain's version",
		Args:  cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintf(e.stdout, "jadpo %s\n", version)
		},
	}
}

// colorFor says whether human text to w may use colour: a terminal, and no NO_COLOR.
func colorFor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	if os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
