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

	"github.com/jadpo/jadpo/cmd/internal/jsonout"
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

// cmdError is a command's failure: its message, printed as "jadpo: msg" or, with
// --format json, as the JSON envelope's error with code (docs/reference/json.md).
type cmdError struct {
	code, msg string
	exit      int
}

func (e cmdError) Error() string { return e.msg }

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
	root := e.rootCommand(args)
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
	code, exit := "failed", exitFound
	var ce cmdError
	var se startupError
	if errors.As(err, &ce) {
		code, exit = ce.code, ce.exit
	} else if errors.As(err, &se) {
		code = "cannot_start"
	}
	if isUsage {
		code, exit = "usage", exitUsage
	}
	cmd, _, findErr := root.Find(args)
	if findErr != nil || cmd == nil {
		cmd = root
	}
	switch {
	case wantsJSON(args) && len(args) > 0 && (args[0] == "check" || args[0] == "build"):
		l := diag.List{}
		l.Addf(diag.ToolchainUsageInvalid, source.Range{}, "the command was used wrongly: %s", err.Error())
		_ = jsonout.Write(stdout, jsonout.DiagnosticReport{Report: diag.NewReport(args[0], "", 0, 0, l)})
	case wantsJSON(args):
		writeErrorEnvelope(stdout, commandName(cmd), code, err.Error())
	default:
		fmt.Fprintf(stderr, "jadpo: %s\n", err)
		if isUsage {
			fmt.Fprintf(stderr, "Usage: %s\nRun '%s --help' for more.\n", cmd.UseLine(), cmd.CommandPath())
		}
	}
	return exit
}

// rootCommand builds the command tree: every command, flag and example (the
// CLI reference in docs/cli/ is written from it).
func (e *env) rootCommand(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:           "jadpo",
		Short:         "The jadpo toolchain: check, build and run apps that receive events",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		Example:       "  jadpo check examples/warehouse\n  jadpo run examples/warehouse\n  jadpo deliveries examples/warehouse",
	}
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(e.checkCommand(), e.buildCommand(), e.runCommand(), e.tickCommand(), e.deliveriesCommand(), e.consoleCommand(), e.storeCommand(), e.devCommand(), e.packageCommand(), e.initCommand(), e.explainCommand(), e.fmtCommand(), e.lspCommand(), e.versionCommand())
	root.InitDefaultCompletionCmd()
	completionExamples(root)
	var wrapAll func(cs []*cobra.Command)
	wrapAll = func(cs []*cobra.Command) {
		for _, c := range cs {
			c.Args = wrapArgs(c.Args)
			wrapAll(c.Commands()) // `deliveries retry` with no id is a usage error too
		}
	}
	wrapAll(root.Commands())
	e.wrapEndOnSignal(root)
	return root
}

// completionExamples gives cobra's completion commands examples that need no root.
func completionExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(jadpo completion bash)\n" +
			"  jadpo completion bash > ~/.local/share/bash-completion/completions/jadpo"
		for _, sub := range c.Commands() {
			switch sub.Name() {
			case "bash":
				sub.Example = "  source <(jadpo completion bash)\n  jadpo completion bash > ~/.local/share/bash-completion/completions/jadpo"
			case "zsh":
				sub.Example = "  jadpo completion zsh > \"${fpath[1]}/_jadpo\""
			case "fish":
				sub.Example = "  jadpo completion fish > ~/.config/fish/completions/jadpo.fish"
			case "powershell":
				sub.Example = "  jadpo completion powershell | Out-String | Invoke-Expression"
			}
		}
	}
}

// wrapArgs makes positional-argument mistakes usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{argsError(c, args)}
		}
		return nil
	}
}

// argsError says plainly what the command takes, instead of cobra's "requires at least 1
// arg(s), only received 0".
func argsError(c *cobra.Command, args []string) error {
	takes := strings.TrimSpace(strings.TrimPrefix(c.Use, c.Name()))
	given := "none"
	switch len(args) {
	case 0:
	case 1:
		given = "one: " + args[0]
	default:
		given = fmt.Sprintf("%d: %s", len(args), strings.Join(args, " "))
	}
	if takes == "" {
		return fmt.Errorf("%s takes no argument; it was given %s", c.CommandPath(), given)
	}
	return fmt.Errorf("%s takes %s; it was given %s", c.CommandPath(), takes, given)
}

// wantsJSON spots --format json before flags are parsed, so that even a
// usage error answers an editor in JSON.
func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "--format=json" || a == "--json" || a == "--json=true" || (a == "--format" && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

func (e *env) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the toolchain's version",
		Example: "  jadpo version",
		Args:    cobra.NoArgs,
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
