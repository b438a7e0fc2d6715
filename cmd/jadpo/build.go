package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/codegen"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/runtime/store/postgres"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

func (e *env) buildCommand() *cobra.Command {
	var format, target, dirFlag string
	c := &cobra.Command{
		Use:   "build [dir]",
		Short: "Check a project and write build/plan.json and the store's schema",
		Long: "Build checks the project and, when it has no errors, writes build/plan.json (the typed\n" +
			"plan the runtime executes; byte-identical for the same sources) and build/sql/postgres.sql\n" +
			"and build/sql/sqlite.sql (the store's schema). With --target workers it also writes\n" +
			"build/workers/: a Cloudflare Worker consuming the app's Cloudflare queues, its wrangler.toml\n" +
			"and its D1 migrations (docs/workers.md).",
		Example: "  jadpo build examples/warehouse\n  jadpo build --dir examples/warehouse --format json\n  jadpo build --target workers examples/returns",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			if target != "" && target != "native" && target != check.TargetWorkers {
				return usageError{fmt.Errorf("--target must be native or workers, not %q", target)}
			}
			res, ok := projectOrReport(dir)
			if ok {
				res = check.CheckTarget(loadProject(dir), target)
			}
			if res.Diags.HasErrors() {
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			written, err := codegen.Build(dir, res.Program, codegen.Input{
				Schemas: map[string]string{"postgres": postgres.SchemaSQL(), "sqlite": sqlite.SchemaSQL()},
				Workers: target == check.TargetWorkers,
			})
			if we := (*codegen.WriteError)(nil); errors.As(err, &we) {
				res.Diags.Addf(diag.ToolchainBuildWriteFailed, source.Range{}, "cannot write `%s`: %s", we.Path, writeReason(we.Err)).
					With("path", we.Path)
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			if we := (*codegen.WorkerError)(nil); errors.As(err, &we) {
				res.Diags.Addf(diag.ToolchainBuildWriteFailed, source.Range{}, "%v", we)
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			if err != nil {
				res.Diags.Addf(diag.ToolchainBuildWriteFailed, source.Range{}, "cannot write the build output: %v", err)
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			e.report("build", dir, format, res)
			if format == "text" {
				for _, w := range written {
					// From where the command ran, as every path in human text.
					fmt.Fprintf(e.stderr, "wrote %s\n", filepath.Join(shownPath(dir), filepath.FromSlash(w)))
				}
			}
			return nil
		},
	}
	addFormatFlag(c, &format, false, false)
	addDirFlag(c, &dirFlag, false)
	c.Flags().StringVar(&target, "target", "", "build target: native (default), or workers: also build/workers/, a Cloudflare Worker (docs/workers.md)")
	return c
}

// writeReason says in a user's words why a build file could not be written.
func writeReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EEXIST):
		return "a part of its path is a file, not a folder"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full"
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	}
	return err.Error()
}
