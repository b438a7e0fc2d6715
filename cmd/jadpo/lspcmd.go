package main

import (
	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/cmd/internal/lsp"
)

// jadpo lsp serves the Language Server Protocol on stdin and stdout: an
// editor gets the same diagnostics `jadpo check` reports, as the user types,
// with positions in UTF-16 code units as LSP counts them.
func (e *env) lspCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "lsp",
		Example: "  jadpo lsp    # started by an editor, which speaks LSP on its stdin and stdout",
		Short:   "Serve the Language Server Protocol on stdin and stdout (diagnostics as you type)",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tightenGC()
			return lsp.Serve(e.ctx, e.stdin, e.stdout, lsp.Options{Version: version})
		},
	}
}
