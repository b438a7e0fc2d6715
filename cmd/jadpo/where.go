package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/catalog"
	"github.com/jadpo/jadpo/runtime"
	"github.com/jadpo/jadpo/runtime/store"
)

// Where the events' store is: one rule for every command (docs/design/store.md, "Where the
// store is"). The project folder is resolved first (absolute, symlinks followed), so
// `jadpo tick w1`, `(cd w1 && jadpo tick .)` and a symlink to w1 all name one store.

// projectDir is dir resolved: absolute, through any symlink.
func projectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", startupError{msg: fmt.Sprintf("cannot resolve the project folder %s: %v", dir, err)}
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", startupError{msg: fmt.Sprintf("no project folder %s", dir)}
	}
	if err != nil {
		return "", startupError{msg: fmt.Sprintf("cannot resolve the project folder %s: %v", dir, err)}
	}
	return real, nil
}

// defaultStoreURL is the store when nothing names another: build/local.sqlite in the
// project folder (docs/reference/language.md, "store").
func defaultStoreURL(dir string) (string, error) {
	real, err := projectDir(dir)
	if err != nil {
		return "", err
	}
	return "sqlite:" + filepath.Join(real, "build", "local.sqlite"), nil
}

// storeURL is the rule: --database as given (a relative sqlite: path is from the working
// directory, as any path on the command line); else the store's `database:`, else
// DATABASE_URL (a relative sqlite: path in either is from the project folder); else
// build/local.sqlite in the project folder. It says which one it used.
func storeURL(dir string, p *ir.Program, cfg *runtime.Config, flag string) (url, from string, err error) {
	if flag != "" {
		if rest, ok := strings.CutPrefix(flag, "sqlite:"); ok && !filepath.IsAbs(rest) && !strings.HasPrefix(rest, "//") {
			abs, err := filepath.Abs(rest)
			if err != nil {
				return "", "", startupError{msg: err.Error()}
			}
			flag = "sqlite:" + abs
		}
		return flag, "--database", nil
	}
	if p != nil && p.Store != nil && p.Store.Database != nil && cfg != nil {
		v, err := cfg.Value(*p.Store.Database)
		if err != nil {
			return "", "", err
		}
		if s, _ := v.(string); s != "" {
			url, from = s, "the store's database:"
		}
	}
	if url == "" {
		if s := os.Getenv("DATABASE_URL"); s != "" {
			url, from = s, "DATABASE_URL"
		}
	}
	if url == "" {
		u, err := defaultStoreURL(dir)
		return u, "the default, build/local.sqlite in the project", err
	}
	if rest, ok := strings.CutPrefix(url, "sqlite:"); ok && !filepath.IsAbs(rest) && !strings.HasPrefix(rest, "file:") && !strings.HasPrefix(rest, "//") {
		real, err := projectDir(dir)
		if err != nil {
			return "", "", err
		}
		url = "sqlite:" + filepath.Join(real, rest)
	}
	return url, from, nil
}

// shownStore is a store's URL as a person reads it: redacted, and a SQLite path relative
// to the working directory when it is under it, so that it can be pasted there.
func shownStore(url string) string {
	if rest, ok := strings.CutPrefix(url, "sqlite:"); ok && filepath.IsAbs(rest) {
		return "sqlite:" + shownPath(rest)
	}
	return store.RedactURL(url)
}

// shownPath is path relative to the working directory when it is under it, else as it is.
func shownPath(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// addDirFlag gives c --dir, the project folder, besides the positional argument commands
// without another take: `--dir` works everywhere.
func addDirFlag(c *cobra.Command, dir *string, persistent bool) {
	fs := c.Flags()
	if persistent {
		fs = c.PersistentFlags()
	}
	fs.StringVar(dir, "dir", "", "the project folder (default: the current folder)")
	_ = c.RegisterFlagCompletionFunc("dir", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
}

// projectArg is the project folder of a command: its argument or --dir (both, when they
// differ, is a usage error), else the current folder.
func projectArg(args []string, dir string) (string, error) {
	if len(args) == 1 {
		if dir != "" && filepath.Clean(dir) != filepath.Clean(args[0]) {
			return "", usageError{fmt.Errorf("the project folder is given twice, as %s and as --dir %s: give one", args[0], dir)}
		}
		return args[0], nil
	}
	if dir != "" {
		return dir, nil
	}
	return ".", nil
}

// loadProject loads the project in dir for a check, its packages held to the
// toolchain's catalogue.
func loadProject(dir string) *project.Project {
	p := project.Load(dir)
	p.Catalogue = catalog.Builtin
	p.Drivers = check.Drivers(providers.Contracts())
	return p
}

// notAProject is why dir is not a project folder and how to fix it (naming the nearest
// project when there is one): "" when dir holds app.jadpo. Every command given a project
// folder asks it first, before reading anything else in the folder, so a parent folder's
// unrelated files are never walked.
func notAProject(dir string) (why, fix string) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("there is no folder %s", dir), "give the project's folder (the one holding app.jadpo)"
		}
		return fmt.Sprintf("cannot read the folder %s: %v", dir, err), "give the project's folder (the one holding app.jadpo)"
	}
	if !st.IsDir() {
		return fmt.Sprintf("%s is a file, not a project folder", dir), "give the project's folder (the one holding app.jadpo)"
	}
	if _, err := os.Stat(filepath.Join(dir, "app.jadpo")); err == nil {
		return "", ""
	}
	why = fmt.Sprintf("%s is not a project folder: it has no app.jadpo", folderName(dir))
	near := nearProjects(dir)
	switch {
	case len(near) == 1:
		fix = fmt.Sprintf("the nearest project is %s: give that folder, or run the command there", near[0])
	case len(near) > 1:
		shown := near
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("%d more", len(near)-5))
		}
		fix = fmt.Sprintf("the nearest projects are %s: give one of them", strings.Join(shown, ", "))
	default:
		fix = "a project is a folder holding app.jadpo: give one, or start one with jadpo init DIR"
	}
	return why, fix
}

// nearProjects are the project folders nearest dir: the closest folder above holding
// app.jadpo, and those below at the least depth (at most 3 levels down, skipping hidden
// folders, build/, packages/ and node_modules/), as paths to give on the command line.
func nearProjects(dir string) []string {
	var out []string
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	for up := filepath.Dir(abs); ; up = filepath.Dir(up) {
		if _, err := os.Stat(filepath.Join(up, "app.jadpo")); err == nil {
			shown := shownPath(up)
			if shown == "." {
				shown = "the current folder"
			}
			out = append(out, shown)
			break
		}
		if filepath.Dir(up) == up {
			break
		}
	}
	level := []string{dir}
	seen := 0
	for depth := 1; depth <= 3 && len(level) > 0; depth++ {
		var next, found []string
		for _, d := range level {
			entries, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, en := range entries {
				n := en.Name()
				if !en.IsDir() || strings.HasPrefix(n, ".") || n == "build" || n == "packages" || n == "node_modules" {
					continue
				}
				if seen++; seen > 2000 {
					break
				}
				sub := filepath.Join(d, n)
				if _, err := os.Stat(filepath.Join(sub, "app.jadpo")); err == nil {
					found = append(found, sub)
				} else {
					next = append(next, sub)
				}
			}
		}
		if len(found) > 0 {
			sort.Strings(found)
			return append(out, found...)
		}
		level = next
	}
	return out
}

// needProject is notAProject as a command's error.
func needProject(dir string) error {
	if why, fix := notAProject(dir); why != "" {
		return cmdError{code: "not_a_project", exit: exitFound, msg: why + "; " + fix}
	}
	return nil
}
