package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

func (e *env) packageCommand() *cobra.Command {
	var dir string
	root := &cobra.Command{
		Use:   "package",
		Short: "Install and list the app's packages",
	}
	root.PersistentFlags().StringVar(&dir, "dir", ".", "the project directory")
	add := &cobra.Command{
		Use:   "add NAME|./path",
		Short: "Install a package from the toolchain's catalogue, or a local one from its folder",
		Long: "Add installs a package under packages/<Name>.<version>/ and records it, with the digest of\n" +
			"each of its files, in jadpo.lock. NAME is a package of the catalogue built into the\n" +
			"toolchain (jadpo package list --catalogue); a path (with a / in it) is a local package.\n" +
			"Adding the same package again changes nothing; it restores files edited since.",
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return catalog.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			arg := args[0]
			var name string
			var changed bool
			var err error
			if strings.ContainsAny(arg, `/\`) {
				src := arg
				if !filepath.IsAbs(src) {
					src = filepath.Join(dir, src)
				}
				name, changed, err = lockfile.InstallDir(dir, src)
			} else {
				if !catalog.Has(arg) {
					fmt.Fprintf(e.stderr, "jadpo: the catalogue has no package %q; it has: %s\n", arg, strings.Join(catalog.Names(), ", "))
					fmt.Fprintln(e.stderr, "A local package is added by its path: jadpo package add ./path/to/package")
					return exitError{exitFound}
				}
				name = arg
				changed, err = lockfile.Install(dir, arg, catalog.Files(arg))
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo: %v\n", err)
				return exitError{exitFound}
			}
			if changed {
				fmt.Fprintf(e.stdout, "installed %s in packages/%s/ and jadpo.lock\n", name, name)
			} else {
				fmt.Fprintf(e.stdout, "%s is installed already; nothing changed\n", name)
			}
			return nil
		},
	}
	var fromCatalogue bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the installed packages (or, with --catalogue, the toolchain's)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if fromCatalogue {
				for _, n := range catalog.Names() {
					fmt.Fprintln(e.stdout, n)
				}
				return nil
			}
			lock, err := lockfile.Read(dir)
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo: %v\n", err)
				return exitError{exitFound}
			}
			problems, err := lockfile.VerifyLock(os.DirFS(dir), lock)
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo: %v\n", err)
				return exitError{exitFound}
			}
			status := map[string]string{}
			for _, p := range problems {
				if st := status[p.Package]; st == "" {
					status[p.Package] = string(p.Kind)
				} else if !strings.Contains(","+st+",", ","+string(p.Kind)+",") {
					status[p.Package] = st + "," + string(p.Kind)
				}
			}
			if len(lock.Entries) == 0 && len(problems) == 0 {
				fmt.Fprintln(e.stdout, "no packages installed")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PACKAGE\tFILES\tSTATUS\tDIGEST")
			var newer []string
			for _, en := range lock.Entries {
				st := status[en.Name]
				if st == "" {
					st = "ok"
					if lockfile.NewerInCatalogue(en.Name, en.Digest) {
						st = "ok,newer_in_catalogue"
						newer = append(newer, en.Name)
					}
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", en.Name, len(en.Files), st, en.Digest)
			}
			tw.Flush()
			// An earlier catalogue copy keeps working as installed; updating
			// is the user's choice.
			for _, n := range newer {
				fmt.Fprintf(e.stdout, "%s: the catalogue has a newer copy; `jadpo package add %s` updates it (the installed copy keeps working)\n", n, n)
			}
			for _, p := range problems {
				fmt.Fprintf(e.stderr, "%s: %s\n", p.Package, p.Message)
			}
			if len(problems) > 0 {
				return exitError{exitFound}
			}
			return nil
		},
	}
	list.Flags().BoolVar(&fromCatalogue, "catalogue", false, "list the packages built into the toolchain")
	root.AddCommand(add, list)
	return root
}
