// Package lockfile is the format of jadpo.lock, the record of which packages
// are installed and the sha256 of each one's files, and of a package's files
// on disk: reading, writing, digests, and the one verification of a
// project's packages against its lock (VerifyLock), which `jadpo check` and
// `jadpo package list` both run. Installing is cmd/internal/install's; the
// catalogue (providers/catalog) is passed in as a Catalogue, so the language
// side imports no provider.
//
// A project's packages live in packages/<Name>.<version>/ (package.jadpo,
// resources/*.jadpo, provides/*.jadpo, ...). A package's files are every
// regular file under its folder whose path has no segment starting with '.'
// (so .DS_Store or an editor's .swp file do not count); a symbolic link is an
// error, and so is a name outside the safe set (ValidPath, PathRule).
//
// jadpo.lock is text, one installed package a line, sorted by name:
//
//	# jadpo.lock: the packages installed under packages/ and the sha256 of their files.
//	# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.
//	AmazonSqs.v2012_11_05 sha256:<64 hex digits>
//	  package.jadpo sha256:<64 hex digits>
//
// Lines starting with '#' and blank lines are comments; a line is a package
// name and its Digest separated by spaces or tabs, and each indented line
// under it one file's path and FileDigest; CRLF line ends are read too.
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
	// package. Nil for a lock written without them.
	Files map[string]string
}

// HasFiles reports whether the entry records its files' digests.
func (e Entry) HasFiles() bool { return e.Files != nil }

// File is the recorded digest of one file of the package.
func (e Entry) File(path string) (string, bool) {
	d, ok := e.Files[path]
	return d, ok
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
	// lines is where each package's line starts in the text Parse read
	// (byte offset), so that a problem with an entry can point at it.
	lines map[string]int
}

// Offset is where name's line starts in the text the lock was parsed from.
func (l *Lock) Offset(name string) (int, bool) {
	off, ok := l.lines[name]
	return off, ok
}

// ParseError is a line of jadpo.lock that cannot be read, with where: Line
// and Col count from 1 (Col in bytes), Offset and Len are the bytes at fault.
type ParseError struct {
	Line, Col   int
	Offset, Len int
	Msg         string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", FileName, e.Line, e.Col, e.Msg)
}

// Parse reads jadpo.lock's text. It accepts only what Bytes writes, give or
// take comments, blank lines, CRLF line ends and runs of spaces or tabs
// between fields: names and paths of the safe set (ValidPath, SplitName) and
// digests of 64 lower-case hex digits; any other byte outside a comment is
// an error. Errors name the line and column.
func Parse(data []byte) (*Lock, error) {
	l := &Lock{lines: map[string]int{}}
	lineNo := 0
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += start
			next = end + 1
		}
		lineNo++
		if err := l.parseLine(data, start, strings.TrimSuffix(string(data[start:end]), "\r"), lineNo); err != nil {
			return nil, err
		}
		start = next
	}
	l.sort()
	return l, nil
}

// field is one white-space separated word of a line and where it starts in it.
type field struct {
	text string
	at   int
}

func (l *Lock) parseLine(data []byte, start int, line string, lineNo int) error {
	fail := func(at, n int, format string, args ...any) error {
		if n < 1 {
			n = 1
		}
		return &ParseError{Line: lineNo, Col: at + 1, Offset: start + at, Len: n, Msg: fmt.Sprintf(format, args...)}
	}
	body := strings.TrimLeft(line, " \t")
	if body == "" || body[0] == '#' {
		return nil // blank, or a comment
	}
	var fields []field
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c < 0x21 || c > 0x7e:
			return fail(i, 1, "byte 0x%02x is not allowed here: a lock line holds printable ASCII only (a name, a path and a sha256: digest)", c)
		default:
			j := i
			for j < len(line) && line[j] > 0x20 && line[j] < 0x7f {
				j++
			}
			fields = append(fields, field{line[i:j], i})
			i = j
		}
	}
	indented := line[0] == ' ' || line[0] == '\t'
	if indented {
		// A file of the package above: `  <path> sha256:<hex>`.
		if len(l.Entries) == 0 {
			return fail(fields[0].at, len(fields[0].text), "a file line comes before any package's line: want `<Name>.<version> sha256:<hex>` first")
		}
		if len(fields) != 2 {
			return fail(fields[0].at, len(body), "want an indented `<path> sha256:<hex>` under a package's line")
		}
		if !ValidPath(fields[0].text) {
			return fail(fields[0].at, len(fields[0].text), "%q is not a package file path (%s)", fields[0].text, PathRule)
		}
		if !validDigest(fields[1].text) {
			return fail(fields[1].at, len(fields[1].text), "the digest must be sha256: and 64 lower-case hex digits")
		}
		e := &l.Entries[len(l.Entries)-1]
		if e.Files == nil {
			e.Files = map[string]string{}
		}
		if _, dup := e.Files[fields[0].text]; dup {
			return fail(fields[0].at, len(fields[0].text), "%s is listed twice under %s", fields[0].text, e.Name)
		}
		e.Files[fields[0].text] = fields[1].text
		return nil
	}
	if len(fields) != 2 {
		return fail(fields[0].at, len(body), "want `<Name>.<version> sha256:<hex>`")
	}
	name := fields[0].text
	if _, _, err := SplitName(name); err != nil {
		return fail(fields[0].at, len(name), "%v", err)
	}
	if !validDigest(fields[1].text) {
		return fail(fields[1].at, len(fields[1].text), "the digest must be sha256: and 64 lower-case hex digits")
	}
	if _, dup := l.lines[name]; dup {
		return fail(fields[0].at, len(name), "%s is listed twice", name)
	}
	l.lines[name] = start
	l.Entries = append(l.Entries, Entry{Name: name, Digest: fields[1].text})
	return nil
}

func (l *Lock) sort() {
	sort.Slice(l.Entries, func(i, j int) bool { return l.Entries[i].Name < l.Entries[j].Name })
}

// Bytes writes the lock's text. It refuses an entry Parse could not read
// back (a name, path or digest outside the safe set), so a lock on disk
// never says more or other than its entries.
func (l *Lock) Bytes() ([]byte, error) {
	l.sort()
	var b bytes.Buffer
	b.WriteString("# jadpo.lock: the packages installed under packages/ and the sha256 of their files.\n")
	b.WriteString("# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.\n")
	for i, e := range l.Entries {
		if _, _, err := SplitName(e.Name); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", FileName, err)
		}
		if i > 0 && l.Entries[i-1].Name == e.Name {
			return nil, fmt.Errorf("cannot write %s: %s is in it twice", FileName, e.Name)
		}
		if !validDigest(e.Digest) {
			return nil, fmt.Errorf("cannot write %s: the digest of %s, %q, is not sha256: and 64 lower-case hex digits", FileName, e.Name, e.Digest)
		}
		b.WriteString(e.Name + " " + e.Digest + "\n")
		paths := make([]string, 0, len(e.Files))
		for p := range e.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if !ValidPath(p) {
				return nil, fmt.Errorf("cannot write %s: package %s: %q is not a package file path (%s)", FileName, e.Name, p, PathRule)
			}
			if !validDigest(e.Files[p]) {
				return nil, fmt.Errorf("cannot write %s: package %s: the digest of %s, %q, is not sha256: and 64 lower-case hex digits", FileName, e.Name, p, e.Files[p])
			}
			b.WriteString("  " + p + " " + e.Files[p] + "\n")
		}
	}
	return b.Bytes(), nil
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
	data, err := l.Bytes()
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(projectDir, FileName), data)
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

// PathRule says which package file paths are allowed, for error messages.
const PathRule = "folders and files of a package are named with ASCII letters, digits, `_`, `-` and `.`, " +
	"not starting with `.`, at most 255 bytes each, separated by `/`"

// ValidPath reports whether p can name a file inside a package: relative,
// slash-separated segments of the safe set (letters, digits, '_', '-', '.',
// not starting with '.', at most 255 bytes). The set keeps every path one
// word of a lock line: no space, newline or other byte that could end it.
func ValidPath(p string) bool {
	if p == "" || len(p) > 4096 {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg[0] == '.' || len(seg) > 255 {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return false
			}
		}
	}
	return true
}

// ReadDir reads a package's files from dir, keyed by slash-separated path.
//
// Each file is at most source.MaxFileSize and all of them MaxPackageSize, so
// pointing at the wrong folder cannot read gigabytes.
func ReadDir(dir string) (map[string][]byte, error) {
	return readTree(os.DirFS(dir), ".", func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) },
		func(p string) ([]byte, error) {
			return source.ReadLocalFile(filepath.Join(dir, filepath.FromSlash(p)), source.MaxFileSize)
		})
}

// ReadFS reads the package's files in folder root of fsys (a project's
// "packages/<Name>.<version>"), keyed by their path inside the package.
func ReadFS(fsys fs.FS, root string) (map[string][]byte, error) {
	return readTree(fsys, root, func(rel string) string { return path.Join(root, rel) }, func(p string) ([]byte, error) {
		if info, err := fs.Stat(fsys, p); err == nil && info.Size() > source.MaxFileSize {
			return nil, fmt.Errorf("cannot read %s: it is %s, over the limit of %s", p, source.Size(info.Size()), source.Size(source.MaxFileSize))
		}
		return fs.ReadFile(fsys, p)
	})
}

// readTree reads every regular file under root whose path has no segment
// starting with '.'; show is how an error names a file. A name outside the
// safe set (ValidPath) is refused before its content is read; read reads
// one file (bounded), all of them at most MaxPackageSize.
func readTree(fsys fs.FS, root string, show func(rel string) string, read func(p string) ([]byte, error)) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel := strings.TrimPrefix(p, root+"/")
		if root == "." {
			rel = p
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !ValidPath(rel) {
			return fmt.Errorf("%q cannot be in a package: %s", show(rel), PathRule)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; a package holds regular files only", show(rel))
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", show(rel))
		}
		b, err := read(p)
		if err != nil {
			return err
		}
		if total += int64(len(b)); total > MaxPackageSize {
			return fmt.Errorf("%s holds more than %s of files, the limit of a package", show("."), source.Size(MaxPackageSize))
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// ProblemKind names what is wrong with an installed package.
type ProblemKind string

// The problems Verify finds.
const (
	// NotLocked: a folder under packages/ with no line in jadpo.lock.
	NotLocked ProblemKind = "not_locked"
	// Modified: a file of the folder is not the file the lock records
	// (changed, added or removed since; Problem.File names it).
	Modified ProblemKind = "modified"
	// LockInconsistent: every file matches its own line, but not the
	// package line's digest of them all: the lock was edited.
	LockInconsistent ProblemKind = "lock_inconsistent"
	// NoFileDigests: the lock records the package without its files' lines.
	NoFileDigests ProblemKind = "no_file_digests"
	// NotCatalogue: the package bears the name of a catalogue package but
	// the lock's digest is of no copy the catalogue published.
	NotCatalogue ProblemKind = "not_catalogue"
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
	File    string      // for Modified: the file's path in the package
	Message string      // what is wrong and how to fix it
}

// Verify reads projectDir's jadpo.lock and checks its packages/ against it
// (VerifyLock). The error is for a lock that cannot be read.
func Verify(projectDir string, cat Catalogue) ([]Problem, error) {
	lock, err := Read(projectDir)
	if err != nil {
		return nil, err
	}
	return VerifyLock(os.DirFS(projectDir), lock, cat)
}

// VerifyLock is the one check of a project's packages against its lock,
// used by `jadpo check` (and so `build`) and `jadpo package list` alike:
// every file of every installed package is read and must have its own
// line's digest, the files together the package line's digest, and a
// package bearing a catalogue name a digest the catalogue published. It
// returns the problems found, sorted by package then kind; the error is
// for packages/ that cannot be listed.
func VerifyLock(fsys fs.FS, lock *Lock, cat Catalogue) ([]Problem, error) {
	var problems []Problem
	entries, err := fs.ReadDir(fsys, PackagesDir)
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
				Message: fmt.Sprintf("%q is not named <Name>.<version>, like AmazonSqs.v2012_11_05", rel+"/")})
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
		problems = append(problems, verifyEntry(fsys, e, cat)...)
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

// verifyEntry checks one installed package's folder against its entry.
func verifyEntry(fsys fs.FS, e Entry, cat Catalogue) []Problem {
	name := e.Name
	rel := PackagesDir + "/" + name
	files, err := ReadFS(fsys, rel)
	if err != nil {
		return []Problem{{Package: name, Kind: Unreadable, Path: rel,
			Message: fmt.Sprintf("%s/ cannot be read: %v", rel, err)}}
	}
	var problems []Problem
	if !CatalogueCopy(cat, name, e.Digest) {
		problems = append(problems, Problem{Package: name, Kind: NotCatalogue, Path: rel,
			Message: NotCatalogueMessage(cat, name, "its files as recorded in "+FileName, files)})
	}
	if !e.HasFiles() {
		return append(problems, Problem{Package: name, Kind: NoFileDigests, Path: FileName,
			Message: fmt.Sprintf("%s records package %s without its files' digests: %s records them", FileName, name, AddCommand(cat, name))})
	}
	nmod := 0
	modified := func(file, format string) {
		nmod++
		problems = append(problems, Problem{Package: name, Kind: Modified, Path: rel + "/" + file, File: file,
			Message: fmt.Sprintf(format, file, name) + ": " + AddCommand(cat, name) + " restores the installed files"})
	}
	for _, p := range sortedPaths(files) {
		want, listed := e.Files[p]
		switch {
		case !listed:
			modified(p, "`%s` is not a file of package `%s` as installed")
		case want != FileDigest(files[p]):
			modified(p, "`%s` has changed since package `%s` was installed")
		}
	}
	for _, p := range sortedKeys(e.Files) {
		if _, ok := files[p]; !ok {
			modified(p, "`%s` of package `%s` is gone since it was installed")
		}
	}
	// Files that match their own lines but not the package line: the file
	// lines were edited to fit edited files.
	if nmod == 0 && Digest(files) != e.Digest {
		problems = append(problems, Problem{Package: name, Kind: LockInconsistent, Path: FileName,
			Message: fmt.Sprintf("the files of %s/ match their own lines in %s but not its digest of package %s: the lock was edited; %s writes it afresh", rel, FileName, name, AddCommand(cat, name))})
	}
	return problems
}

// Catalogue is what verification asks of the toolchain's catalogue of
// packages (providers/catalog.Builtin): whether it holds a name, the digests
// of every copy it published, and the files of its current copy. A nil
// Catalogue is a toolchain without one: every package is the project's own.
// The caller passes it, so the lock format imports no provider.
type Catalogue interface {
	Has(name string) bool
	Published(name string) []string
	Files(name string) map[string][]byte
}

func holds(cat Catalogue, name string) bool { return cat != nil && cat.Has(name) }

// AddCommand is how to install a package again, in backticks: from the
// catalogue for a catalogue name, else from the package's own folder.
func AddCommand(cat Catalogue, name string) string {
	if holds(cat, name) {
		return "`jadpo package add " + name + "`"
	}
	return "`jadpo package add ./path/to/" + name + "` (the package's own folder)"
}

// CatalogueCopy reports whether a package of this name and digest may be
// installed: any package whose name is not the catalogue's, and a
// catalogue name only with the digest of a copy the catalogue published.
func CatalogueCopy(cat Catalogue, name, digest string) bool {
	if !holds(cat, name) {
		return true
	}
	return contains(cat.Published(name), digest)
}

// NotCatalogueMessage says that files bearing a catalogue name are not the
// catalogue's, naming what differs from the current copy; which says
// which files ("the files to install").
func NotCatalogueMessage(cat Catalogue, name, which string, files map[string][]byte) string {
	ours := cat.Files(name)
	var diff []string
	for _, p := range sortedPaths(files) {
		if c, ok := ours[p]; !ok {
			diff = append(diff, p+" (not in the catalogue's)")
		} else if !bytes.Equal(c, files[p]) {
			diff = append(diff, p+" (differs)")
		}
	}
	for _, p := range sortedPaths(ours) {
		if _, ok := files[p]; !ok {
			diff = append(diff, p+" (missing)")
		}
	}
	what := ""
	if len(diff) > 0 {
		if len(diff) > 5 {
			diff = append(diff[:5], fmt.Sprintf("and %d more", len(diff)-5))
		}
		what = " (against its current copy: " + strings.Join(diff, ", ") + ")"
	}
	base, _, _ := SplitName(name)
	return fmt.Sprintf("%s is a package of the toolchain's catalogue, and %s are not a copy it published%s: "+
		"`jadpo package add %s` installs the catalogue's; a package of your own takes a name of its own in its %s (like `package My%s.v1`)",
		name, which, what, name, HeaderFile, base)
}

func sortedPaths(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
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
