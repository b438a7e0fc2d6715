package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/docs"
	"github.com/jadpo/jadpo/lang/diag"
)

func (e *env) explainCommand() *cobra.Command {
	var list bool
	c := &cobra.Command{
		Use:   "explain CODE | --list",
		Short: "Print a diagnostic code's page: what it means and how to fix it",
		Long: "Explain prints the page of a diagnostic code (the code check prints in brackets, e.g.\n" +
			"error[receiving.invalid]). The pages are built into the toolchain; each is also at\n" +
			diag.DocsBase + "docs/diagnostics/<code>.md. --list lists every code, its severity and title.",
		Example: "  jadpo explain receiving.invalid\n  jadpo explain --list",
		Args:    cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return catalogueCodes(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return usageError{fmt.Errorf("--list lists every code: give it alone, or a code without --list")}
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CODE\tSEVERITY\tTITLE")
				for _, code := range catalogueCodes() {
					en := diag.Catalogue[diag.Code(code)]
					fmt.Fprintf(tw, "%s\t%s\t%s\n", code, en.Severity, en.Title)
				}
				return tw.Flush()
			}
			if len(args) == 0 {
				return usageError{fmt.Errorf("jadpo explain takes a code (say receiving.invalid), or --list to list them all")}
			}
			code := strings.TrimSpace(args[0])
			// error[receiving.invalid] pasted whole reads as its code.
			if i := strings.IndexByte(code, '['); i >= 0 && strings.HasSuffix(code, "]") {
				code = code[i+1 : len(code)-1]
			}
			if _, ok := diag.Catalogue[diag.Code(code)]; ok {
				page, err := docs.Diagnostics.ReadFile("diagnostics/" + code + ".md")
				if err != nil {
					return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("the page of %s is missing from this build: %v", code, err)}
				}
				_, err = e.stdout.Write(page)
				return err
			}
			msg := fmt.Sprintf("there is no diagnostic code %q", args[0])
			if near := nearCodes(code); len(near) > 0 {
				msg += "; did you mean " + strings.Join(near, " or ") + "?"
			} else {
				msg += "; a code looks like receiving.invalid (check prints it in brackets: error[receiving.invalid])"
			}
			return cmdError{code: "unknown_code", exit: exitFound, msg: msg + "; jadpo explain --list lists every code"}
		},
	}
	c.Flags().BoolVar(&list, "list", false, "list every diagnostic code with its severity and title")
	return c
}

// catalogueCodes are the table's codes (diag.Codes, sorted) as the strings a user types.
func catalogueCodes() []string {
	codes := diag.Codes()
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = string(c)
	}
	return out
}

// nearCodes are the codes an unknown one likely meant: the nearest by spelling, or
// those whose part before or after the dot it is (a bare "invalid" or "receiving").
func nearCodes(code string) []string {
	if n := diag.Nearest(code, catalogueCodes()); n != "" {
		return []string{n}
	}
	var out []string
	for _, c := range catalogueCodes() {
		group, name, _ := strings.Cut(c, ".")
		if code == group || code == name || strings.ReplaceAll(code, "_", ".") == c {
			out = append(out, c)
		}
	}
	if len(out) > 4 {
		out = append(out[:4:4], fmt.Sprintf("one of %d more", len(out)-4))
	}
	return out
}
