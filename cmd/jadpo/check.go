package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/jsonout"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

func (e *env) checkCommand() *cobra.Command {
	var format, dirFlag string
	c := &cobra.Command{
		Use:   "check [dir]",
		Short: "Check a project and report every problem",
		Long: "Check reads app.jadpo, its modules and its installed packages and reports every problem,\n" +
			"as text on stderr or, with --format json, as a JSON report on stdout.\n" +
			"Exit status: 0 no errors, 1 errors found, 2 the command was used wrongly.",
		Example: "  jadpo check examples/warehouse\n  jadpo check --dir examples/warehouse --format json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			res, ok := projectOrReport(dir)
			if ok {
				res = check.Check(loadProject(dir))
			}
			e.report("check", dir, format, res)
			if res.Diags.HasErrors() {
				return exitError{exitFound}
			}
			return nil
		},
	}
	addFormatFlag(c, &format, false, false)
	addDirFlag(c, &dirFlag, false)
	return c
}

// projectOrReport is ok when dir is a project folder, else the check's one diagnostic
// saying so (toolchain.empty_project, naming the nearest project), nothing else read.
// A folder that cannot be read is the loader's to report (toolchain.project_read_failed).
func projectOrReport(dir string) (check.Result, bool) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return check.Result{}, true
	}
	why, fix := notAProject(dir)
	if why == "" {
		return check.Result{}, true
	}
	var l diag.List
	l.Add(diag.ToolchainEmptyProject, source.Range{}, why).WithHelp(fix)
	return check.Result{Diags: l}, false
}

// report prints a check's result: JSON on stdout, or text on stderr.
func (e *env) report(command, dir, format string, res check.Result) {
	if format == "json" {
		_ = jsonout.Write(e.stdout, jsonout.DiagnosticReport{Report: diag.NewReport(command, dir, res.Files, res.Declarations, res.Diags)})
		return
	}
	diag.WriteText(e.stderr, res.Diags, diag.TextOptions{Color: colorFor(e.stderr), Dir: shownPath(dir)})
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

// The commands that parse and check a project (check, build, lsp) leave the
// garbage collector's target at Go's default: nearly all the front end
// allocates stays live until the check ends, so a lower target bought
// about 1% of peak memory for 60% more CPU (docs/performance.md, "Front
// end: parse and check"); GOGC in the environment still decides.
