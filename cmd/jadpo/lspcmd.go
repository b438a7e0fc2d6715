package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/cmd/internal/install"
	"github.com/jadpo/jadpo/cmd/internal/lsp"
	"github.com/jadpo/jadpo/lang/format"
	"github.com/jadpo/jadpo/providers/catalog"
)

// jadpo lsp serves the Language Server Protocol on stdin and stdout: an
// editor gets the same diagnostics `jadpo check` reports, as the user types,
// and hover, definition, references, completion, symbols, code actions and
// rename (docs/guide/editors.md).
func (e *env) lspCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "lsp",
		Example: "  jadpo lsp    # started by an editor, which speaks LSP on its stdin and stdout",
		Short:   "Serve the Language Server Protocol on stdin and stdout (for editors)",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			err := lsp.Serve(e.ctx, e.stdin, e.stdout, lsp.Options{
				Version:   version,
				Format:    format.Source,
				Catalogue: catalog.Names,
				InstallPackage: func(dir, name string) error {
					_, err := install.Install(dir, name, catalog.Files(name))
					return err
				},
			})
			if errors.Is(err, lsp.ErrExitWithoutShutdown) {
				return exitError{1} // LSP 3.17: exit before shutdown exits 1
			}
			return err
		},
	}
}
