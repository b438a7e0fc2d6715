package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
)

func (e *env) checkCommand() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "check [dir]",
		Short: "Check a project and report every problem",
		Long: "Check reads app.jadpo, its modules and its installed packages and reports every problem,\n" +
			"as text on stderr or, with --format json, as a JSON report on stdout.\n" +
			"Exit status: 0 no errors, 1 errors found, 2 the command was used wrongly.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format must be text or json, not %q", format)}
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			res := check.Check(project.Load(dir))
			e.report("check", dir, format, res)
			if res.Diags.HasErrors() {
				return exitError{exitFound}
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// report prints a check's result: JSON on stdout, or text on stderr.
func (e *env) report(command, dir, format string, res check.Result) {
	if format == "json" {
		_ = diag.WriteJSON(e.stdout, diag.NewReport(command, dir, res.Files, res.Declarations, res.Diags))
		return
	}
	diag.WriteText(e.stderr, res.Diags, diag.TextOptions{Color: colorFor(e.stderr)})
	status := "passed"
	if res.Diags.HasErrors() {
		status = "failed"
	}
	fmt.Fprintf(e.stderr, "%s %s: %s, %s; %s, %s\n", command, status,
		plural(res.Files, "file"), plural(res.Declarations, "declaration"),
		plural(res.Diags.Errors(), "error"), plural(res.Diags.Warnings(), "warning"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
