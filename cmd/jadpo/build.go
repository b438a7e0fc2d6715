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
	"github.com/jadpo/jadpo/lang/project"
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
			"and build/sql/sqlite.sql (the store's schema).",
		Example: "  jadpo build examples/warehouse\n  jadpo build --dir examples/warehouse --format json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			dir, err := projectArg(args, dirFlag)
			if err != nil {
				return err
			}
			var res check.Result
			if target != "" && target != "native" {
				// The Workers consumer build target is not built.
				res.Diags.Addf("toolchain.not_built_yet", source.Range{}, "the build target `%s` is not built yet", target).
					With("target", target).WithHelp("build for the native runtime: jadpo build (without --target)")
			} else {
				res = check.Check(project.Load(dir))
			}
			if res.Diags.HasErrors() {
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			written, err := codegen.Write(dir, res.Program, codegen.Output{Schemas: map[string]string{
				"postgres": postgres.SchemaSQL(),
				"sqlite":   sqlite.SchemaSQL(),
			}})
			if we := (*codegen.WriteError)(nil); errors.As(err, &we) {
				res.Diags.Addf("toolchain.build_write_failed", source.Range{}, "cannot write `%s`: %s", we.Path, writeReason(we.Err)).
					With("path", we.Path)
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			if err != nil {
				res.Diags.Addf("toolchain.build_write_failed", source.Range{}, "cannot write the build output: %v", err)
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
	c.Flags().StringVar(&target, "target", "", "build target: native (default); workers is not built yet")
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
