package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/cmd/internal/install"
	"github.com/jadpo/jadpo/cmd/internal/jsonout"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

func (e *env) packageCommand() *cobra.Command {
	var dir string
	root := &cobra.Command{
		Use:   "package",
		Short: "Install, list, upgrade and remove the app's packages",
		Example: "  jadpo package add AmazonSqs.v2012_11_05 --dir examples/warehouse\n  jadpo package list examples/warehouse\n" +
			"  jadpo package upgrade AmazonSqs.v2012_11_05 --dir examples/warehouse\n  jadpo package remove Packing.v1 --dir examples/warehouse",
	}
	addDirFlag(root, &dir, true)
	add := &cobra.Command{
		Use:   "add NAME|./path",
		Short: "Install a package from the toolchain's catalogue, or a local one from its folder",
		Long: "Add installs a package under packages/<Name>.<version>/ and records it, with the digest of\n" +
			"each of its files, in jadpo.lock. NAME is a package of the catalogue built into the\n" +
			"toolchain (jadpo package list --catalogue); a path (with a / in it) is a local package.\n" +
			"Adding the same package again changes nothing; it restores files edited since.",
		Example: "  jadpo package add AmazonSqs.v2012_11_05\n  jadpo package add ./vendor/MyQueue.v1 --dir examples/warehouse",
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return catalog.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			arg := args[0]
			if dir == "" {
				dir = "."
			}
			// Installing outside a project would make packages/ and jadpo.lock where no app
			// reads them.
			if err := needProject(dir); err != nil {
				return err
			}
			var name string
			var changed bool
			var err error
			if strings.ContainsAny(arg, `/\`) {
				src := arg
				if !filepath.IsAbs(src) {
					src = filepath.Join(dir, src)
				}
				name, changed, err = install.InstallDir(dir, src)
			} else {
				if !catalog.Has(arg) {
					fmt.Fprintf(e.stderr, "jadpo: the catalogue has no package %q; it has: %s\n", arg, strings.Join(catalog.Names(), ", "))
					fmt.Fprintln(e.stderr, "A local package is added by its path: jadpo package add ./path/to/package")
					return exitError{exitFound}
				}
				name = arg
				changed, err = install.Install(dir, arg, catalog.Files(arg))
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "jadpo: %v\n", err)
				return exitError{exitFound}
			}
			if changed {
				at := shownPath(dir)
				fmt.Fprintf(e.stdout, "installed %s in %s/ and %s\n", name, filepath.Join(at, "packages", name), filepath.Join(at, "jadpo.lock"))
			} else {
				fmt.Fprintf(e.stdout, "%s is installed already; nothing changed\n", name)
			}
			return nil
		},
	}
	var fromCatalogue bool
	var format string
	list := &cobra.Command{
		Use:     "list [dir]",
		Short:   "List the installed packages (or, with --catalogue, the toolchain's)",
		Example: "  jadpo package list examples/warehouse\n  jadpo package list --catalogue",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			d, err := projectArg(args, dir)
			if err != nil {
				return err
			}
			dir = d
			if err := checkFormat(format); err != nil {
				return err
			}
			if !fromCatalogue {
				if err := needProject(dir); err != nil {
					return err
				}
			}
			if fromCatalogue {
				if format == "json" {
					return jsonout.Write(e.stdout, jsonout.PackageCatalogue{
						Envelope: jsonout.NewEnvelope("package_catalogue", commandName(c), jsonout.StatusOK), Packages: catalog.Names()})
				}
				for _, n := range catalog.Names() {
					fmt.Fprintln(e.stdout, n)
				}
				return nil
			}
			lock, err := lockfile.Read(dir)
			if err != nil {
				return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
			}
			problems, err := lockfile.VerifyLock(os.DirFS(dir), lock, catalog.Builtin)
			if err != nil {
				return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
			}
			status := map[string]string{}
			for _, p := range problems {
				if st := status[p.Package]; st == "" {
					status[p.Package] = string(p.Kind)
				} else if !strings.Contains(","+st+",", ","+string(p.Kind)+",") {
					status[p.Package] = st + "," + string(p.Kind)
				}
			}
			if format == "json" {
				pkgs := []jsonout.Package{}
				for _, en := range lock.Entries {
					st := status[en.Name]
					if st == "" {
						st = "ok"
					}
					pkgs = append(pkgs, jsonout.Package{Name: en.Name, Files: len(en.Files), Status: st, Digest: en.Digest})
				}
				probs := []jsonout.PackageProblem{}
				for _, p := range problems {
					probs = append(probs, jsonout.PackageProblem{Package: p.Package, Kind: string(p.Kind), Path: p.Path, Message: p.Message})
				}
				result := jsonout.StatusOK
				if len(problems) > 0 {
					result = jsonout.StatusFailed
				}
				if err := jsonout.Write(e.stdout, jsonout.PackageList{
					Envelope: jsonout.NewEnvelope("package_list", commandName(c), result), Packages: pkgs, Problems: probs}); err != nil {
					return err
				}
				if len(problems) > 0 {
					return exitError{exitFound}
				}
				return nil
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
					if install.NewerInCatalogue(en.Name, en.Digest) {
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
				fmt.Fprintf(e.stdout, "%s: the catalogue has a newer copy; `jadpo package upgrade %s` upgrades it (the installed copy keeps working)\n", n, n)
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
	addFormatFlag(list, &format, false, false)
	root.AddCommand(add, list, e.packageRemoveCommand(&dir), e.packageUpgradeCommand(&dir))
	return root
}

// folderName names a folder given on the command line; "." by its absolute path.
func folderName(dir string) string {
	if filepath.Clean(dir) != "." {
		return dir
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return "the current folder " + abs
	}
	return "the current folder"
}
