package check

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
)

// verifyLock checks the installed packages against jadpo.lock with
// lockfile.VerifyLock, the one verification `jadpo package list` runs too:
// every file of every package, the package lines and the catalogue's
// names. Then each package file the check parsed is held to its own line
// once more, so that what the build uses is what was verified even if a
// file changed between the two reads.
func (c *checker) verifyLock() {
	lock, err := c.proj.Lock()
	if err != nil {
		at := source.Range{}
		var pe *lockfile.ParseError
		if lf := c.proj.LockFile; lf != nil && errors.As(err, &pe) {
			at = source.Range{File: lf, Span: source.Span{Start: pe.Offset, End: pe.Offset + pe.Len}}
		}
		msg := err.Error()
		if pe != nil {
			msg = pe.Msg
		}
		c.add(diag.PackageLockMismatch, at, "jadpo.lock cannot be read: %s", msg).
			WithHelp("`jadpo package add` writes jadpo.lock; add each package again to rewrite it")
		return
	}
	if len(c.proj.Packages) == 0 && len(lock.Entries) == 0 {
		return
	}
	problems, err := lockfile.VerifyLock(c.proj.FS, lock, c.proj.Catalogue)
	if err != nil {
		c.add(diag.PackageLockMismatch, source.Range{}, "the packages cannot be verified against jadpo.lock: %v", err)
		return
	}
	parsed := map[string]*ast.File{} // by path in the project
	for _, f := range c.proj.Parsed {
		if strings.HasPrefix(f.Source.Path, "packages/") {
			parsed[f.Source.Path] = f
		}
	}
	headerAt := func(dir string) source.Range {
		if pp := c.proj.Packages[dir]; pp != nil && pp.Header != nil {
			return source.Range{File: pp.Header.Source, Span: firstLine(pp.Header.Source.Content)}
		}
		return source.Range{}
	}
	lockAt := func(name string) source.Range {
		off, ok := lock.Offset(name)
		if lf := c.proj.LockFile; ok && lf != nil {
			return source.Range{File: lf, Span: source.Span{Start: off, End: off + firstLine(lf.Content[off:]).End}}
		}
		return source.Range{}
	}
	skip := map[string]bool{}     // packages whose files are not compared below
	reported := map[string]bool{} // files already reported
	for _, pr := range problems {
		dir := pr.Package
		switch pr.Kind {
		case lockfile.BadName, lockfile.TwoVersions:
			// indexPackages reports these as package.invalid.
		case lockfile.NotLocked:
			skip[dir] = true
			c.add(diag.PackageLockMismatch, headerAt(dir), "package `%s` is installed but not recorded in jadpo.lock", dir).
				With("package", dir).WithHelp(c.addCommand(dir) + " records it (and restores its files)")
		case lockfile.NoFileDigests:
			skip[dir] = true
			c.add(diag.PackageLockMismatch, headerAt(dir), "jadpo.lock records package `%s` without its files' digests", dir).
				With("package", dir).WithHelp(c.addCommand(dir) + " records them")
		case lockfile.Unreadable:
			skip[dir] = true
			c.add(diag.PackageLockMismatch, headerAt(dir), "%s", pr.Message).With("package", dir)
		case lockfile.Missing:
			c.add(diag.PackageLockMismatch, lockAt(dir), "jadpo.lock lists package `%s`, but packages/%s/ is missing", dir, dir).
				With("package", dir).WithHelp(c.addCommand(dir) + " installs it; or remove its lines from jadpo.lock")
		case lockfile.LockInconsistent:
			c.add(diag.PackageLockMismatch, lockAt(dir), "the files of package `%s` match their own lines in jadpo.lock but not the package's digest: the lock was edited", dir).
				With("package", dir).WithHelp(c.addCommand(dir) + " installs the package and its lines afresh")
		case lockfile.NotCatalogue:
			c.add(diag.PackageNotCatalogue, headerAt(dir), "package `%s` bears the name of a catalogue package, but its files are not a copy the catalogue published", dir).
				With("package", dir).
				WithHelp("`jadpo package add " + dir + "` installs the catalogue's copy; a package of your own takes a name of its own in its package.jadpo (`jadpo package list` names the files that differ)")
		case lockfile.Modified:
			path := lockfile.PackagesDir + "/" + dir + "/" + pr.File
			reported[path] = true
			at := headerAt(dir)
			if f := parsed[path]; f != nil {
				at = source.Range{File: f.Source, Span: firstLine(f.Source.Content)}
			}
			e, _ := lock.Get(dir)
			c.modified(at, dir, pr.File, e)
		default:
			c.add(diag.PackageLockMismatch, headerAt(dir), "%s", pr.Message).With("package", dir)
		}
	}
	for _, path := range sortedKeys(parsed) {
		f := parsed[path]
		rest := strings.TrimPrefix(path, "packages/")
		dir, rel, _ := strings.Cut(rest, "/")
		e, ok := lock.Get(dir)
		if !ok || skip[dir] || reported[path] || !e.HasFiles() {
			continue
		}
		if want, listed := e.File(rel); !listed || want != lockfile.FileDigest(f.Source.Content) {
			c.modified(source.Range{File: f.Source, Span: firstLine(f.Source.Content)}, dir, rel, e)
		}
	}
}

// modified reports a package file that is not the one installed.
func (c *checker) modified(at source.Range, dir, rel string, e lockfile.Entry) {
	if _, listed := e.File(rel); !listed {
		c.add(diag.PackageLockMismatch, at, "`%s` is not a file of package `%s` as installed", rel, dir).
			With("package", dir).WithHelp(c.addCommand(dir) + " installs the package afresh")
		return
	}
	if _, err := fs.Stat(c.proj.FS, lockfile.PackagesDir+"/"+dir+"/"+rel); errors.Is(err, fs.ErrNotExist) {
		c.add(diag.PackageLockMismatch, at, "`%s` of package `%s` is gone since it was installed", rel, dir).
			With("package", dir).WithHelp(c.addCommand(dir) + " restores the installed files")
		return
	}
	c.add(diag.PackageLockMismatch, at, "`%s` has changed since package `%s` was installed", rel, dir).
		With("package", dir).WithHelp(c.addCommand(dir) + " restores the installed files; a package is changed by installing a new version")
}

func (c *checker) addCommand(dir string) string { return lockfile.AddCommand(c.proj.Catalogue, dir) }

// firstLine is the span of a file's first line, where a whole-file problem points.
func firstLine(b []byte) source.Span {
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		end = len(b)
	}
	if end > 0 && b[end-1] == '\r' {
		end--
	}
	return source.Span{Start: 0, End: end}
}
