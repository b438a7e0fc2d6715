// Package lockfile installs packages into a project and keeps jadpo.lock, the
// record of which packages are installed and the sha256 of each one's files.
// `jadpo package add` installs through it and `jadpo check` verifies with it,
// so both compute the one Digest.
//
// A project's packages live in packages/<Name>.<version>/ (package.jadpo,
// resources/*.jadpo, provides/*.jadpo, ...). A package's files are every
// regular file under its folder whose path has no segment starting with '.'
// (so .DS_Store or an editor's .swp file do not count); a symbolic link is an
// error.
//
// jadpo.lock is text, one installed package a line, sorted by name:
//
//	# jadpo.lock: the packages installed under packages/ and the sha256 of their files.
//	# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.
//	AmazonSqs.v2012_11_05 sha256:<64 hex digits>
//
// Lines starting with '#' and blank lines are comments; a line is a package
// name and its Digest separated by white space; CRLF line ends are read too.
// Written files always use LF and the two comment lines above.
package lockfile

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jadpo/jadpo/lang/source"
)

// FileName is the lock file's name, in the project's root.
const FileName = "jadpo.lock"

// PackagesDir is the folder, in the project's root, packages are installed in.
const PackagesDir = "packages"

// HeaderFile is the file holding a package's header.
const HeaderFile = "package.jadpo"

// MaxPackageSize bounds the files of one package read together: 256 MiB.
const MaxPackageSize = 256 << 20

const digestPrefix = "sha256:"

// Digest is the digest of a package's files, keyed by their slash-separated
// path inside the package: "sha256:" and the hex SHA-256 of
//
//	"jadpo-package-digest-v1\n"
//	then for each file, in byte order of its path:
//	"file " <len(path)> " " <path> " " <len(content)> "\n" <content> "\n"
//
// with lengths in decimal bytes. Every part is length-prefixed, so no two
// different sets of files frame to the same bytes: moving bytes between a
// path and a content, or between two files, changes the digest. Contents are
// hashed as stored (no newline conversion).
func Digest(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	h.Write([]byte("jadpo-package-digest-v1\n"))
	var num []byte
	for _, p := range paths {
		c := files[p]
		h.Write([]byte("file "))
		num = strconv.AppendInt(num[:0], int64(len(p)), 10)
		h.Write(num)
		h.Write([]byte(" "))
		h.Write([]byte(p))
		h.Write([]byte(" "))
		num = strconv.AppendInt(num[:0], int64(len(c)), 10)
		h.Write(num)
		h.Write([]byte("\n"))
		h.Write(c)
		h.Write([]byte("\n"))
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}

var nameRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\.(v[A-Za-z0-9_]+)$`)

// SplitName splits "AmazonSqs.v2012_11_05" into the package's name
// ("AmazonSqs") and version ("v2012_11_05").
func SplitName(full string) (name, version string, err error) {
	m := nameRE.FindStringSubmatch(full)
	if m == nil {
		return "", "", fmt.Errorf("%q is not a package name with a version, like AmazonSqs.v2012_11_05", full)
	}
	return m[1], m[2], nil
}

// HeaderName reads the package name a package.jadpo declares on its
// `package Name.vVERSION` line: the first line that is not blank or a
// comment. It is a line scan, not a parse.
func HeaderName(packageJadpo []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(packageJadpo))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || fields[0] != "package" {
			return "", fmt.Errorf("%s must start with `package Name.vVERSION`", HeaderFile)
		}
		if _, _, err := SplitName(fields[1]); err != nil {
			return "", fmt.Errorf("%s: %w", HeaderFile, err)
		}
		return fields[1], nil
	}
	return "", fmt.Errorf("%s has no `package Name.vVERSION` line", HeaderFile)
}

// Entry is one package of the lock: its line, and one indented line per file.
type Entry struct {
	Name   string // "AmazonSqs.v2012_11_05"
	Digest string // "sha256:<hex>" of all the package's files (Digest)
	// Files holds each file's own digest (FileDigest) by its path in the
	// package, so that a check verifies just the files it reads: a large
	// package costs what is used of it. Nil for a lock written without them,
	// and for a lock read by Index (see File).
	Files map[string]string
	// fileLines are the entry's indented file lines as read by Index: a
	// view of the lock's bytes, not a copy.
	fileLines []byte
}

// HasFiles reports whether the entry records its files' digests.
func (e Entry) HasFiles() bool { return e.Files != nil || len(e.fileLines) > 0 }

// File is the recorded digest of one file of the package. An entry read by
// Index finds it in the file lines as written, without reading the others.
func (e Entry) File(path string) (string, bool) {
	if e.Files != nil {
		d, ok := e.Files[path]
		return d, ok
	}
	rest := e.fileLines
	for len(rest) > 0 {
		line, next, _ := bytes.Cut(rest, []byte{'\n'})
		rest = next
		line = bytes.TrimSpace(line)
		p, digest, ok := bytes.Cut(line, []byte{' '})
		if ok && string(p) == path {
			d := string(bytes.TrimSpace(digest))
			return d, validDigest(d)
		}
	}
	return "", false
}

// Index reads jadpo.lock for a check: the package lines are read and
// checked as Parse does, each package's file lines are kept as written and
// searched by File on demand, so a lock of a large package costs a check
// what it uses of it. Use Parse to read and check every line.
func Index(data []byte) (*Lock, error) {
	l := &Lock{}
	text := data
	lineNo := 0
	for len(text) > 0 {
		start := len(data) - len(text)
		raw, rest, _ := bytes.Cut(text, []byte{'\n'})
		text = rest
		lineNo++
		if len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t') {
			if len(l.Entries) == 0 {
				if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '#' {
					continue // blank, or a comment, as Parse reads it
				}
				return nil, fmt.Errorf("%s:%d: want an indented `<path> sha256:<hex>` under a package's line", FileName, lineNo)
			}
			// The block of file lines runs to the next unindented line.
			for len(text) > 0 && (text[0] == ' ' || text[0] == '\t' || text[0] == '\r' || text[0] == '\n') {
				_, after, _ := bytes.Cut(text, []byte{'\n'})
				text = after
				lineNo++
			}
			l.Entries[len(l.Entries)-1].fileLines = data[start : len(data)-len(text) : len(data)-len(text)]
			continue
		}
		line := string(bytes.TrimSpace(raw))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || !validDigest(fields[1]) {
			return nil, fmt.Errorf("%s:%d: want `<Name>.<version> sha256:<hex>`", FileName, lineNo)
		}
		if _, _, err := SplitName(fields[0]); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", FileName, lineNo, err)
		}
		for _, e := range l.Entries {
			if e.Name == fields[0] {
				return nil, fmt.Errorf("%s:%d: %s is listed twice", FileName, lineNo, fields[0])
			}
		}
		l.Entries = append(l.Entries, Entry{Name: fields[0], Digest: fields[1]})
	}
	l.sort()
	return l, nil
}

// FileDigest is one file's digest: "sha256:" and the hex SHA-256 of its content.
func FileDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FileDigests computes every file's digest.
func FileDigests(files map[string][]byte) map[string]string {
	out := make(map[string]string, len(files))
	for p, c := range files {
		out[p] = FileDigest(c)
	}
	return out
}

// Lock is jadpo.lock's content.
type Lock struct {
	Entries []Entry // sorted by Name
}

// Parse reads jadpo.lock's text. Errors name the line.
func Parse(data []byte) (*Lock, error) {
	l := &Lock{}
	seen := map[string]bool{}
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if raw[0] == ' ' || raw[0] == '\t' {
			// A file of the package above: `  <path> sha256:<hex>`.
			if len(l.Entries) == 0 || len(fields) != 2 || !ValidPath(fields[0]) || !validDigest(fields[1]) {
				return nil, fmt.Errorf("%s:%d: want an indented `<path> sha256:<hex>` under a package's line", FileName, i+1)
			}
			e := &l.Entries[len(l.Entries)-1]
			if e.Files == nil {
				e.Files = map[string]string{}
			}
			if _, dup := e.Files[fields[0]]; dup {
				return nil, fmt.Errorf("%s:%d: %s is listed twice", FileName, i+1, fields[0])
			}
			e.Files[fields[0]] = fields[1]
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want `<Name>.<version> sha256:<hex>`", FileName, i+1)
		}
		if _, _, err := SplitName(fields[0]); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", FileName, i+1, err)
		}
		if !validDigest(fields[1]) {
			return nil, fmt.Errorf("%s:%d: the digest must be sha256: and 64 lower-case hex digits", FileName, i+1)
		}
		if seen[fields[0]] {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", FileName, i+1, fields[0])
		}
		seen[fields[0]] = true
		l.Entries = append(l.Entries, Entry{Name: fields[0], Digest: fields[1]})
	}
	l.sort()
	return l, nil
}

func (l *Lock) sort() {
	sort.Slice(l.Entries, func(i, j int) bool { return l.Entries[i].Name < l.Entries[j].Name })
}

// Bytes writes the lock's text.
func (l *Lock) Bytes() []byte {
	l.sort()
	var b bytes.Buffer
	b.WriteString("# jadpo.lock: the packages installed under packages/ and the sha256 of their files.\n")
	b.WriteString("# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.\n")
	for _, e := range l.Entries {
		b.WriteString(e.Name + " " + e.Digest + "\n")
		paths := make([]string, 0, len(e.Files))
		for p := range e.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			b.WriteString("  " + p + " " + e.Files[p] + "\n")
		}
	}
	return b.Bytes()
}

// Get finds an entry by full name.
func (l *Lock) Get(name string) (Entry, bool) {
	for _, e := range l.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Set adds or replaces an entry.
func (l *Lock) Set(name, digest string) { l.SetFiles(name, digest, nil) }

// SetFiles adds or replaces an entry with its files' digests.
func (l *Lock) SetFiles(name, digest string, files map[string]string) {
	for i := range l.Entries {
		if l.Entries[i].Name == name {
			l.Entries[i].Digest, l.Entries[i].Files = digest, files
			return
		}
	}
	l.Entries = append(l.Entries, Entry{Name: name, Digest: digest, Files: files})
	l.sort()
}

// Remove drops an entry; it reports whether there was one.
func (l *Lock) Remove(name string) bool {
	for i := range l.Entries {
		if l.Entries[i].Name == name {
			l.Entries = append(l.Entries[:i], l.Entries[i+1:]...)
			return true
		}
	}
	return false
}

// Read reads projectDir's jadpo.lock; a project without one has an empty
// lock.
func Read(projectDir string) (*Lock, error) {
	data, err := source.ReadLocalFile(filepath.Join(projectDir, FileName), source.MaxAnyFileSize) // never waits on a named pipe
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Write writes projectDir's jadpo.lock (through a temporary file and a
// rename, so a reader never sees half of it).
func Write(projectDir string, l *Lock) error {
	return writeAtomic(filepath.Join(projectDir, FileName), l.Bytes())
}

func writeAtomic(target string, data []byte) error {
	tmp := target + ".tmp-" + randomSuffix()
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidPath reports whether p can name a file inside a package: relative,
// slash-separated, clean, without empty, "." or ".." segments and without a
// segment starting with '.'.
func ValidPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p || strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

// ReadDir reads a package's files from dir, keyed by slash-separated path.
//
// Each file is at most source.MaxFileSize and all of them MaxPackageSize, so
// pointing at the wrong folder cannot read gigabytes.
func ReadDir(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; a package holds regular files only", p)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := source.ReadLocalFile(p, source.MaxFileSize)
		if err != nil {
			return err
		}
		if total += int64(len(b)); total > MaxPackageSize {
			return fmt.Errorf("%s holds more than %s of files, the limit of a package", dir, source.Size(MaxPackageSize))
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// installedVersions lists the versions of package name (without version)
// found in the lock or as folders, other than except.
func installedVersions(projectDir string, l *Lock, base, except string) ([]string, error) {
	found := map[string]bool{}
	for _, e := range l.Entries {
		if b, _, _ := SplitName(e.Name); b == base && e.Name != except {
			found[e.Name] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(projectDir, PackagesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, d := range entries {
		if b, _, err := SplitName(d.Name()); err == nil && d.IsDir() && b == base && d.Name() != except {
			found[d.Name()] = true
		}
	}
	var out []string
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Install writes a package's files to packages/<name>/ under projectDir and
// records it in jadpo.lock. Installing the same files again changes nothing
// and reports changed false; installing over files edited since (or a lock
// line that no longer matches) writes them afresh. Another version of the
// same package already installed is refused: an app uses one version of a
// package. The files must hold a package.jadpo whose header names name.
func Install(projectDir, name string, files map[string][]byte) (changed bool, err error) {
	base, _, err := SplitName(name)
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return false, fmt.Errorf("package %s has no files", name)
	}
	header, ok := files[HeaderFile]
	if !ok {
		return false, fmt.Errorf("package %s has no %s", name, HeaderFile)
	}
	declared, err := HeaderName(header)
	if err != nil {
		return false, fmt.Errorf("package %s: %w", name, err)
	}
	if declared != name {
		return false, fmt.Errorf("%s declares package %s, not %s", HeaderFile, declared, name)
	}
	for p := range files {
		if !ValidPath(p) {
			return false, fmt.Errorf("package %s: %q is not a valid file path inside a package", name, p)
		}
	}

	lock, err := Read(projectDir)
	if err != nil {
		return false, err
	}
	others, err := installedVersions(projectDir, lock, base, name)
	if err != nil {
		return false, err
	}
	if len(others) > 0 {
		return false, fmt.Errorf("%s is installed already and an app uses one version of a package: "+
			"to install %s, remove %s/%s/ and its line in %s first", others[0], name, PackagesDir, others[0], FileName)
	}

	digest := Digest(files)
	dir := filepath.Join(projectDir, PackagesDir, name)
	if e, ok := lock.Get(name); ok && e.Digest == digest && e.Files != nil {
		if onDisk, err := ReadDir(dir); err == nil && Digest(onDisk) == digest {
			return false, nil
		}
	}

	if err := os.MkdirAll(filepath.Join(projectDir, PackagesDir), 0o755); err != nil {
		return false, err
	}
	tmp := filepath.Join(projectDir, PackagesDir, ".tmp-"+name+"-"+randomSuffix())
	if err := writeFiles(tmp, files); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	lock.SetFiles(name, digest, FileDigests(files))
	if err := Write(projectDir, lock); err != nil {
		return false, err
	}
	return true, nil
}

func writeFiles(dir string, files map[string][]byte) error {
	for p, content := range files {
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// InstallDir installs the local package in srcDir (`jadpo package add
// ./path`), named by its package.jadpo header. It returns the package's
// name and whether anything changed.
func InstallDir(projectDir, srcDir string) (name string, changed bool, err error) {
	// package.jadpo first: a folder that is no package is refused before
	// anything in it is read.
	headerPath := filepath.Join(srcDir, HeaderFile)
	if st, err := os.Lstat(headerPath); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", false, fmt.Errorf("%s has no %s: it is not a package folder", srcDir, HeaderFile)
	} else if err != nil {
		return "", false, err
	} else if !st.Mode().IsRegular() {
		return "", false, fmt.Errorf("%s is not a regular file; a package holds regular files only", headerPath)
	}
	files, err := ReadDir(srcDir)
	if err != nil {
		return "", false, err
	}
	header, ok := files[HeaderFile]
	if !ok {
		return "", false, fmt.Errorf("%s has no %s: it is not a package folder", srcDir, HeaderFile)
	}
	name, err = HeaderName(header)
	if err != nil {
		return "", false, err
	}
	changed, err = Install(projectDir, name, files)
	return name, changed, err
}

// ProblemKind names what is wrong with an installed package.
type ProblemKind string

// The problems Verify finds.
const (
	// NotLocked: a folder under packages/ with no line in jadpo.lock.
	NotLocked ProblemKind = "not_locked"
	// Modified: the folder's files no longer have the lock's digest.
	Modified ProblemKind = "modified"
	// Missing: a line in jadpo.lock with no folder under packages/.
	Missing ProblemKind = "missing"
	// BadName: a folder under packages/ not named <Name>.<version>.
	BadName ProblemKind = "bad_name"
	// TwoVersions: two versions of one package are installed.
	TwoVersions ProblemKind = "two_versions"
	// Unreadable: the folder's files could not be read.
	Unreadable ProblemKind = "unreadable"
)

// Problem is one thing wrong with a project's packages.
type Problem struct {
	Package string      // "AmazonSqs.v2012_11_05", or the folder's name
	Kind    ProblemKind //
	Path    string      // "packages/AmazonSqs.v2012_11_05" or "jadpo.lock"
	Message string      // what is wrong and how to fix it
}

// Verify checks projectDir's packages/ against its jadpo.lock. It returns
// the problems found, sorted by package then kind; the error is for a lock
// that cannot be read.
func Verify(projectDir string) ([]Problem, error) {
	lock, err := Read(projectDir)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	entries, err := os.ReadDir(filepath.Join(projectDir, PackagesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	present := map[string]bool{}
	versions := map[string][]string{}
	for _, d := range entries {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		name := d.Name()
		rel := PackagesDir + "/" + name
		base, _, err := SplitName(name)
		if err != nil {
			problems = append(problems, Problem{Package: name, Kind: BadName, Path: rel,
				Message: fmt.Sprintf("%s/ is not named <Name>.<version>, like AmazonSqs.v2012_11_05", rel)})
			continue
		}
		present[name] = true
		versions[base] = append(versions[base], name)
		e, locked := lock.Get(name)
		if !locked {
			problems = append(problems, Problem{Package: name, Kind: NotLocked, Path: rel,
				Message: fmt.Sprintf("%s/ is not in %s: install it with `jadpo package add %s` (or `jadpo package add ./path/to/%s` for a local package)", rel, FileName, name, name)})
			continue
		}
		files, err := ReadDir(filepath.Join(projectDir, PackagesDir, name))
		if err != nil {
			problems = append(problems, Problem{Package: name, Kind: Unreadable, Path: rel,
				Message: fmt.Sprintf("%s/ cannot be read: %v", rel, err)})
			continue
		}
		if Digest(files) != e.Digest {
			problems = append(problems, Problem{Package: name, Kind: Modified, Path: rel,
				Message: fmt.Sprintf("the files of %s/ no longer match their sha256 in %s: restore them with `jadpo package add %s`", rel, FileName, name)})
		}
	}
	for _, e := range lock.Entries {
		base, _, _ := SplitName(e.Name)
		if !present[e.Name] {
			problems = append(problems, Problem{Package: e.Name, Kind: Missing, Path: FileName,
				Message: fmt.Sprintf("%s lists %s but %s/%s/ is missing: install it with `jadpo package add %s`", FileName, e.Name, PackagesDir, e.Name, e.Name)})
			if !contains(versions[base], e.Name) {
				versions[base] = append(versions[base], e.Name)
			}
		}
	}
	for base, vs := range versions {
		if len(vs) > 1 {
			sort.Strings(vs)
			problems = append(problems, Problem{Package: vs[0], Kind: TwoVersions, Path: PackagesDir,
				Message: fmt.Sprintf("%s is installed at %d versions (%s); an app uses one version of a package: remove the others and their lines in %s",
					base, len(vs), strings.Join(vs, ", "), FileName)})
		}
	}
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].Package != problems[j].Package {
			return problems[i].Package < problems[j].Package
		}
		return problems[i].Kind < problems[j].Kind
	})
	return problems, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validDigest: "sha256:" and 64 lower-case hex digits. Hand-written: a lock
// of a large package has a line per file, and this runs on every check.
func validDigest(s string) bool {
	const prefix = "sha256:"
	if len(s) != len(prefix)+64 || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
