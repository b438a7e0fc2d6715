package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/format"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/lang/termtext"
)

// stdinName is how standard input is named in a listing and a diagnostic.
const stdinName = "<standard input>"

// jadpo fmt writes .jadpo source in its one layout (lang/format,
// docs/reference/formatting.md).
func (e *env) fmtCommand() *cobra.Command {
	var write, check bool
	c := &cobra.Command{
		Use:   "fmt [path...]",
		Short: "Write .jadpo source in its one canonical layout",
		Long: "Fmt writes .jadpo source in its one layout, described at\n" + diag.DocsBase + "docs/reference/formatting.md.\n\n" +
			"A path is a file, or a folder whose *.jadpo files are formatted at any depth (hidden folders,\n" +
			"and a project's build/ and installed packages/ are skipped unless named); none is the current\n" +
			"folder.\n\n" +
			"Without flags, one file is printed formatted; several files, or a folder, are listed when\n" +
			"formatting would change them. -w rewrites them in place and lists them; --check lists them and\n" +
			"exits 1 when there is any (for CI). `-` formats standard input to standard output.\n\n" +
			"A file with a syntax error is left as it is: its diagnostics are printed and fmt exits 1.",
		Example: "  jadpo fmt app.jadpo              # print it formatted\n" +
			"  jadpo fmt -w .                   # rewrite this project's files\n" +
			"  jadpo fmt --check examples       # list what would change; exit 1 if anything would\n" +
			"  jadpo fmt - < app.jadpo          # standard input to standard output",
		RunE: func(c *cobra.Command, args []string) error {
			if write && check {
				return usageError{errors.New("-w rewrites files and --check only lists them: give one of the two")}
			}
			for _, a := range args {
				if a == "-" && len(args) > 1 {
					return usageError{errors.New("`-` (standard input) cannot be given with other paths")}
				}
			}
			if len(args) == 1 && args[0] == "-" {
				if write {
					return usageError{errors.New("-w cannot rewrite standard input: leave out -w to print the result")}
				}
				return e.fmtStdin(check)
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			return e.fmtPaths(args, write, check)
		},
	}
	c.Flags().BoolVarP(&write, "write", "w", false, "rewrite each file that formatting changes, and list it")
	c.Flags().BoolVar(&check, "check", false, "list the files formatting would change, exit 1 if there is any; write nothing")
	return c
}

func (e *env) fmtStdin(check bool) error {
	src, err := io.ReadAll(io.LimitReader(e.stdin, source.MaxFileSize+1))
	if err != nil {
		return cmdError{code: "failed", exit: exitFound, msg: "reading standard input: " + err.Error()}
	}
	if len(src) > source.MaxFileSize {
		return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("standard input is larger than %s, the most a source file may hold", source.Size(source.MaxFileSize))}
	}
	out, err := format.Source(stdinName, src)
	if err != nil {
		return e.fmtFailed(err, 1)
	}
	switch {
	case !check:
		_, err = e.stdout.Write(out)
		return err
	case !bytes.Equal(out, src):
		fmt.Fprintln(e.stdout, stdinName)
		return exitError{exitFound}
	}
	return nil
}

func (e *env) fmtPaths(args []string, write, check bool) error {
	// One file and no flag: print it, as gofmt does.
	printOne := false
	var files []string
	failed := 0
	for _, a := range args {
		found, err := format.Files(a)
		if err != nil {
			fmt.Fprintf(e.stderr, "jadpo: %s\n", termtext.Line(pathError(a, err)))
			failed++
			continue
		}
		files = append(files, found...)
		if len(args) == 1 && len(found) == 1 && found[0] == a && !write && !check {
			printOne = true
		}
	}
	changed, badSyntax := 0, 0
	for _, path := range files {
		src, err := source.ReadLocalFile(path, source.MaxFileSize)
		if err != nil {
			fmt.Fprintf(e.stderr, "jadpo: %s\n", termtext.Line(pathError(path, err)))
			failed++
			continue
		}
		out, err := format.Source(path, src)
		if err != nil {
			if errors.As(err, new(diag.List)) {
				diag.WriteText(e.stderr, format.Diagnostics(err), diag.TextOptions{Color: colorFor(e.stderr)})
				badSyntax++
			} else {
				fmt.Fprintf(e.stderr, "jadpo: %s: %s\n", termtext.Line(path), err)
				failed++
			}
			continue
		}
		if printOne {
			if _, err := e.stdout.Write(out); err != nil {
				return err
			}
			continue
		}
		if bytes.Equal(out, src) {
			continue
		}
		if write {
			if why := installedFile(path); why != "" {
				fmt.Fprintf(e.stderr, "jadpo: %s\n", termtext.Line(why))
				failed++
				continue
			}
			if err := format.WriteFile(path, out); err != nil {
				fmt.Fprintf(e.stderr, "jadpo: %s\n", termtext.Line(pathError(path, err)))
				failed++
				continue
			}
		}
		changed++
		fmt.Fprintln(e.stdout, termtext.Line(path))
	}
	if badSyntax > 0 {
		return e.fmtFailed(nil, badSyntax)
	}
	if failed > 0 {
		return exitError{exitFound}
	}
	if check && changed > 0 {
		return exitError{exitFound}
	}
	return nil
}

// fmtFailed prints a syntax error's diagnostics (err, when given) and says
// that the files were left as they are.
func (e *env) fmtFailed(err error, files int) error {
	if err != nil {
		l := format.Diagnostics(err)
		if l == nil {
			return cmdError{code: "failed", exit: exitFound, msg: err.Error()}
		}
		diag.WriteText(e.stderr, l, diag.TextOptions{Color: colorFor(e.stderr)})
	}
	what := "1 file has syntax errors: it was left as it is"
	if files > 1 {
		what = fmt.Sprintf("%d files have syntax errors: they were left as they are", files)
	}
	return cmdError{code: "syntax", exit: exitFound, msg: what + "; fix the errors shown above, then run jadpo fmt again"}
}

// pathError says why a path cannot be formatted, without Go's "stat" and "open".
func pathError(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("`%s` does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("`%s` cannot be read or written: permission denied", path)
	}
	var re *source.ReadError
	if errors.As(err, &re) {
		return re.Error()
	}
	return fmt.Sprintf("`%s`: %v", path, err)
}

// installedFile says why fmt -w leaves path alone when it is a file of a package installed
// in a project (packages/<Name>/ beside a jadpo.lock that records Name): the lock holds the
// installed files by their digests, so a rewrite would break the project's check, and
// `jadpo package add` of the rewritten bytes would not take them either (a catalogue package
// must be one of the catalogue's copies; a local one is installed from its source folder).
// "" for any other file. docs/reference/formatting.md, "Installed packages".
func installedFile(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		parent := filepath.Dir(dir)
		if filepath.Base(parent) != lockfile.PackagesDir {
			continue
		}
		project := filepath.Dir(parent)
		if _, err := os.Stat(filepath.Join(project, lockfile.FileName)); err != nil {
			continue
		}
		lock, err := lockfile.Read(project)
		if err != nil {
			continue
		}
		name := filepath.Base(dir)
		if _, ok := lock.Get(name); !ok {
			continue
		}
		return fmt.Sprintf("%s is a file of the installed package %s, which %s holds by its digest: "+
			"fmt -w leaves it as it is, since a rewrite would break the lock. Format the package's own "+
			"folder instead, then install it again from there (jadpo package add ./path/to/%s)",
			path, name, filepath.Join(shownPath(project), lockfile.FileName), name)
	}
	return ""
}
