package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/install"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

// `jadpo package remove` and `jadpo package upgrade` (docs/design/packages.md, "Removing
// and upgrading"): each change is made first on a trial copy of the project and checked
// there; a change that leaves a declaration using what would go, or that does not check, is
// refused with those declarations' diagnostics, and the project is left byte for byte as it
// was. Only a change whose trial checks is made in the project itself.

// pkgChange is one change to a project's packages: applied to a folder, it says what it did.
type pkgChange func(dir string) (string, error)

// tryThenApply makes change on a trial copy of the project in dir, checks it, and only if
// the trial adds no error makes the change in dir. The refusal names the declarations.
func (e *env) tryThenApply(dir, what string, change pkgChange) error {
	before := check.Check(loadProject(dir))
	known := map[string]bool{}
	for _, d := range before.Diags {
		known[diagKey(d)] = true
	}
	trial, err := os.MkdirTemp("", "jadpo-package-trial-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(trial)
	if err := copyForTrial(dir, trial); err != nil {
		return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("cannot copy the project for a trial: %v", err)}
	}
	if _, err := change(trial); err != nil {
		return cmdError{code: "refused", exit: exitFound, msg: err.Error() + "; nothing changed"}
	}
	after := check.Check(loadProject(trial))
	var added diag.List
	for _, d := range after.Diags {
		if d.Severity == diag.Error && !known[diagKey(d)] {
			added = append(added, d)
		}
	}
	if len(added) > 0 {
		diag.WriteText(e.stderr, added, diag.TextOptions{Color: colorFor(e.stderr), Dir: shownPath(dir)})
		var where []string
		for _, d := range added {
			if f := d.Subject.File; f != nil {
				line := f.Position(d.Subject.Span.Start).Line
				if w := fmt.Sprintf("%s:%d", filepath.Join(shownPath(dir), filepath.FromSlash(f.Path)), line); !slices.Contains(where, w) {
					where = append(where, w)
				}
			}
		}
		msg := fmt.Sprintf("%s refused: declarations still use what it would take away, and the app would not check after it (%s above)", what, plural(len(added), "error"))
		if len(where) > 0 {
			msg += ", at " + strings.Join(where, ", ")
		}
		return cmdError{code: "refused", exit: exitFound, msg: msg + ": change or remove those declarations first; nothing changed"}
	}
	done, err := change(dir)
	if err != nil {
		return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
	}
	fmt.Fprintln(e.stdout, done)
	return nil
}

// copyForTrial copies what a check reads of the project in dir to trial: everything but
// build/ and hidden folders (.git), which the project's loader skips too.
func copyForTrial(dir, trial string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel != "." && (rel == "build" || strings.HasPrefix(d.Name(), ".")) {
				return fs.SkipDir
			}
			return os.MkdirAll(filepath.Join(trial, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			// A symbolic link is copied as what it points at, when that is a file.
			if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(trial, rel), b, 0o644)
	})
}

func diagKey(d *diag.Diagnostic) string {
	path := ""
	if d.Subject.File != nil {
		path = d.Subject.File.Path
	}
	return string(d.Code) + "\x00" + path + "\x00" + d.Summary
}

// packageRef is `package: NAME` in a connection, the one place an app names a package
// with its version.
func packageRef(name string) *regexp.Regexp {
	return regexp.MustCompile(`(\bpackage\s*:\s*)` + regexp.QuoteMeta(name) + `\b`)
}

// renamePackageRefs rewrites `package: from` to `package: to` in the app's own .jadpo files
// (not build/, packages/ or hidden folders), and lists the files it changed.
func renamePackageRefs(dir, from, to string) ([]string, error) {
	re := packageRef(from)
	var changed []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "build" || rel == lockfile.PackagesDir) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".jadpo") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := re.ReplaceAll(b, []byte("${1}"+to))
		if bytes.Equal(out, b) {
			return nil
		}
		changed = append(changed, filepath.ToSlash(rel))
		return os.WriteFile(path, out, 0o644)
	})
	return changed, err
}

// installedEntry is name's line in the project's lock; an error naming the installed
// packages when there is none.
func installedEntry(dir, name string) (lockfile.Entry, error) {
	lock, err := lockfile.Read(dir)
	if err != nil {
		return lockfile.Entry{}, err
	}
	if en, ok := lock.Get(name); ok {
		return en, nil
	}
	names, _ := install.Installed(dir)
	if len(names) == 0 {
		return lockfile.Entry{}, cmdError{code: "not_installed", exit: exitFound, msg: fmt.Sprintf("%s is not installed: the project has no packages", name)}
	}
	hint := ""
	for _, n := range names {
		if strings.EqualFold(n, name) {
			hint = fmt.Sprintf(" (did you mean %s?)", n)
		}
	}
	return lockfile.Entry{}, cmdError{code: "not_installed", exit: exitFound, msg: fmt.Sprintf("%s is not installed%s; installed: %s", name, hint, strings.Join(names, ", "))}
}

func (e *env) packageRemoveCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an installed package and its line in jadpo.lock",
		Long: "Remove takes packages/NAME/ and its line in jadpo.lock out of the project. It is refused while\n" +
			"a declaration still uses the package (a connection's package:, a queue listing one of its\n" +
			"events): the refusal prints those declarations' diagnostics, and nothing changes.",
		Example: "  jadpo package remove Packing.v1 --dir examples/warehouse",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			d := *dir
			if d == "" {
				d = "."
			}
			if err := needProject(d); err != nil {
				return err
			}
			name := args[0]
			if _, err := os.Stat(filepath.Join(d, lockfile.PackagesDir, name)); err != nil {
				if _, err := installedEntry(d, name); err != nil {
					return err
				}
			}
			return e.tryThenApply(d, "removing "+name, func(at string) (string, error) {
				if err := install.Remove(at, name); err != nil {
					return "", err
				}
				return fmt.Sprintf("removed %s from %s/ and %s", name, filepath.Join(shownPath(at), lockfile.PackagesDir, name), filepath.Join(shownPath(at), lockfile.FileName)), nil
			})
		},
	}
}

func (e *env) packageUpgradeCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade NAME [NEW|./path]",
		Short: "Move an installed package to a newer copy or version, rewriting jadpo.lock",
		Long: "Upgrade replaces the installed package NAME. With NAME alone, NAME is a catalogue package and\n" +
			"moves to the catalogue's current copy: the catalogue's rule is that an installed copy it\n" +
			"published earlier may move to its current one (an edited copy is refused: jadpo package add\n" +
			"NAME restores it). With NEW, the package moves to another version of itself: NEW is a catalogue\n" +
			"name, or the folder of a local package (with a / in it) whose package.jadpo names it; each\n" +
			"`package: NAME` of the app's connections is rewritten to the new name.\n\n" +
			"The change is made on a trial copy of the project first: when the app would not check after it,\n" +
			"the upgrade is refused with the diagnostics, and nothing in the project changes.",
		Example: "  jadpo package upgrade AmazonSqs.v2012_11_05 --dir examples/warehouse\n" +
			"  jadpo package upgrade Ledger.v1 ./vendor/Ledger.v2",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			d := *dir
			if d == "" {
				d = "."
			}
			if err := needProject(d); err != nil {
				return err
			}
			old := args[0]
			en, err := installedEntry(d, old)
			if err != nil {
				return err
			}
			// Files edited since they were installed would be lost without a word.
			if onDisk, err := lockfile.ReadDir(filepath.Join(d, lockfile.PackagesDir, old)); err != nil || lockfile.Digest(onDisk) != en.Digest {
				fix := "`jadpo package add " + old + "` puts the catalogue's files back"
				if !catalog.Has(old) {
					fix = "install it again from its own folder (jadpo package add ./path/to/" + old + ")"
				}
				return cmdError{code: "refused", exit: exitFound, msg: fmt.Sprintf(
					"the installed files of %s are not those %s records (edited since they were installed?), and an upgrade would lose the edits: %s, then upgrade; nothing changed",
					old, lockfile.FileName, fix)}
			}
			oldBase, _, err := lockfile.SplitName(old)
			if err != nil {
				return usageError{err}
			}
			// What replaces it: name and files.
			var name string
			var files map[string][]byte
			switch {
			case len(args) == 1:
				if !catalog.Has(old) {
					return cmdError{code: "usage", exit: exitUsage, msg: fmt.Sprintf(
						"%s is a local package, not the catalogue's: give the new copy's folder, jadpo package upgrade %s ./path/to/%s", old, old, oldBase+".vN")}
				}
				current, err := install.CatalogueUpgrade(old, en.Digest)
				if err != nil {
					return cmdError{code: "refused", exit: exitFound, msg: err.Error() + "; nothing changed"}
				}
				if current {
					fmt.Fprintf(e.stdout, "%s is the catalogue's current copy already; nothing changed\n", old)
					return nil
				}
				name, files = old, catalog.Files(old)
			case strings.ContainsAny(args[1], `/\`):
				src := args[1]
				if !filepath.IsAbs(src) {
					src = filepath.Join(d, src)
				}
				files, err = lockfile.ReadDir(src)
				if err != nil {
					return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
				}
				header, ok := files[lockfile.HeaderFile]
				if !ok {
					return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("%s has no %s: it is not a package folder", args[1], lockfile.HeaderFile)}
				}
				if name, err = lockfile.HeaderName(header); err != nil {
					return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
				}
			default:
				name = args[1]
				if !catalog.Has(name) {
					return cmdError{code: "not_found", exit: exitFound, msg: fmt.Sprintf("the catalogue has no package %q; it has: %s (a local package is given by its folder: ./path/to/%s)", name, strings.Join(catalog.Names(), ", "), name)}
				}
				files = catalog.Files(name)
			}
			if base, _, err := lockfile.SplitName(name); err != nil || base != oldBase {
				return cmdError{code: "refused", exit: exitFound, msg: fmt.Sprintf(
					"%s is not a version of %s: an upgrade moves a package to another copy or version of itself; "+
						"for another package, jadpo package add %s and then jadpo package remove %s", name, old, name, old)}
			}
			if name == old && lockfile.Digest(files) == en.Digest {
				fmt.Fprintf(e.stdout, "%s is installed with these files already; nothing changed\n", old)
				return nil
			}
			return e.tryThenApply(d, "upgrading "+old+" to "+name, func(at string) (string, error) {
				if err := install.Remove(at, old); err != nil {
					return "", err
				}
				if _, err := install.Install(at, name, files); err != nil {
					return "", err
				}
				var rewritten []string
				if name != old {
					if rewritten, err = renamePackageRefs(at, old, name); err != nil {
						return "", err
					}
				}
				msg := fmt.Sprintf("upgraded %s to %s (%s) in %s/ and %s", old, name, lockfile.Digest(files),
					filepath.Join(shownPath(at), lockfile.PackagesDir, name), filepath.Join(shownPath(at), lockfile.FileName))
				if len(rewritten) > 0 {
					msg += fmt.Sprintf("; `package: %s` is now `package: %s` in %s", old, name, strings.Join(rewritten, ", "))
				}
				return msg, nil
			})
		},
	}
}
