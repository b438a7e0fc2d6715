package check

import (
	"bytes"
	"strings"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
)

// verifyLock checks every installed package against jadpo.lock: each file
// the check read must be the file that was installed. Files it did not read
// cannot change the build, so a large package costs what is used of it
// (whole-folder checks are lockfile.Verify's, behind `jadpo package list`).
func (c *checker) verifyLock() {
	if len(c.proj.Packages) == 0 {
		return
	}
	lock, err := c.proj.Lock()
	if err != nil {
		at := source.Range{}
		if lf := c.proj.LockFile; lf != nil {
			at = source.Range{File: lf, Span: firstLine(lf.Content)}
		}
		c.add("package.lock_mismatch", at, "jadpo.lock cannot be read: %s", strings.TrimPrefix(err.Error(), "jadpo.lock:")).
			WithHelp("`jadpo package add` writes jadpo.lock; add each package again to rewrite it")
		return
	}
	byPkg := map[string][]*ast.File{}
	for _, f := range c.proj.Parsed {
		if rest, ok := strings.CutPrefix(f.Source.Path, "packages/"); ok {
			dir, _, _ := strings.Cut(rest, "/")
			byPkg[dir] = append(byPkg[dir], f)
		}
	}
	for _, dir := range sortedKeys(c.proj.Packages) {
		header := c.proj.Packages[dir].Header
		at := source.Range{}
		if header != nil {
			at = source.Range{File: header.Source, Span: firstLine(header.Source.Content)}
		}
		e, ok := lock.Get(dir)
		if !ok {
			c.add("package.lock_mismatch", at, "package `%s` is installed but not recorded in jadpo.lock", dir).
				With("package", dir).WithHelp(addCommand(dir) + " records it (and restores its files)")
			continue
		}
		if !e.HasFiles() {
			c.add("package.lock_mismatch", at, "jadpo.lock records package `%s` without its files' digests", dir).
				With("package", dir).WithHelp(addCommand(dir) + " records them")
			continue
		}
		for _, f := range byPkg[dir] {
			rel := strings.TrimPrefix(f.Source.Path, "packages/"+dir+"/")
			want, listed, err := c.proj.LockedFile(dir, rel)
			rng := source.Range{File: f.Source, Span: firstLine(f.Source.Content)}
			switch {
			case err != nil:
				c.add("package.lock_mismatch", rng, "jadpo.lock cannot be read: %s", err)
			case !listed:
				c.add("package.lock_mismatch", rng, "`%s` is not a file of package `%s` as installed", rel, dir).
					With("package", dir).WithHelp(addCommand(dir) + " installs the package afresh")
			case want != lockfile.FileDigest(f.Source.Content):
				c.add("package.lock_mismatch", rng, "`%s` has changed since package `%s` was installed", rel, dir).
					With("package", dir).WithHelp(addCommand(dir) + " restores the installed files; a package is changed by installing a new version")
			}
		}
	}
	c.proj.SaveLockCache()
}

// addCommand is how to install a package again: from the catalogue, or
// from its own folder for a local package.
func addCommand(dir string) string {
	return "`jadpo package add " + dir + "` (or `jadpo package add ./packages/" + dir + "` for a local package)"
}

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
