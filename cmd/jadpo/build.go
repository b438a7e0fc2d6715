package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/codegen"
	"github.com/jadpo/jadpo/codegen/workers"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/runtime/store/postgres"
	"github.com/jadpo/jadpo/runtime/store/sqlite"
)

func (e *env) buildCommand() *cobra.Command {
	var format, target string
	c := &cobra.Command{
		Use:   "build [dir]",
		Short: "Check a project and write build/plan.json and the store's schema",
		Long: "Build checks the project and, when it has no errors, writes build/plan.json (the typed\n" +
			"plan the runtime executes; byte-identical for the same sources) and build/sql/postgres.sql\n" +
			"and build/sql/sqlite.sql (the store's schema). With --target workers it also writes\n" +
			"build/workers/: a Cloudflare Worker consuming the app's Cloudflare queues, its wrangler.toml\n" +
			"and its D1 migrations (docs/workers.md).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format must be text or json, not %q", format)}
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if target != "" && target != "native" && target != check.TargetWorkers {
				return usageError{fmt.Errorf("--target must be native or workers, not %q", target)}
			}
			res := check.CheckTarget(project.Load(dir), target)
			if res.Diags.HasErrors() {
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			out := codegen.Output{Schemas: map[string]string{
				"postgres": postgres.SchemaSQL(),
				"sqlite":   sqlite.SchemaSQL(),
			}}
			if target == check.TargetWorkers {
				files, err := workers.Files(res.Program, sqlite.SchemaSQL())
				if err != nil {
					res.Diags.Addf("toolchain.project_read_failed", source.Range{}, "cannot write the Worker: %v", err)
					e.report("build", dir, format, res)
					return exitError{exitFound}
				}
				out.Files = files
			}
			written, err := codegen.Write(dir, res.Program, out)
			if err != nil {
				res.Diags.Addf("toolchain.project_read_failed", source.Range{}, "cannot write the build output: %v", err)
				e.report("build", dir, format, res)
				return exitError{exitFound}
			}
			e.report("build", dir, format, res)
			if format == "text" {
				for _, w := range written {
					fmt.Fprintf(e.stderr, "wrote %s\n", w)
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text or json")
	c.Flags().StringVar(&target, "target", "", "build target: native (default), or workers: also build/workers/, a Cloudflare Worker (docs/workers.md)")
	return c
}
