package check_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/providers/catalog"
)

// checkCodes checks the project in dir and lists its diagnostics' codes.
func checkCodes(t *testing.T, dir string) []string {
	t.Helper()
	res := check.Check(project.Load(dir))
	var codes []string
	for _, d := range res.Diags {
		codes = append(codes, string(d.Code))
	}
	return codes
}

// Issue 11, point 2: build/.jadpo/lock.cache shipped with the tree (a
// tarball keeps mtimes, so its key of jadpo.lock's size and mtime matched)
// decided the check: an edited package file whose digest was put in the
// cache passed `check`. The check reads the lock and the files themselves.
func TestShippedLockCacheDoesNotDecide(t *testing.T) {
	dir := writeBigPackage(t, 50)
	if got := checkCodes(t, dir); len(got) != 0 {
		t.Fatalf("clean project: %v", got)
	}
	msgs := filepath.Join(dir, "packages", "Big.v1", "resources", "messages.jadpo")
	edited := []byte(strings.Replace(readFile(t, msgs), "receive_message {", "receive_message { ", 1))
	if err := os.WriteFile(msgs, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	// The cache as the old toolchain wrote it, with the edited file's digest.
	st, err := os.Stat(filepath.Join(dir, lockfile.FileName))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := lockfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := lock.Get("Big.v1")
	cache := fmt.Sprintf("# jadpo lock cache %d %d\n", st.Size(), st.ModTime().UnixNano()) +
		"Big.v1 " + e.Digest + "\n" +
		"  package.jadpo " + e.Files["package.jadpo"] + "\n" +
		"  provides/receiving.jadpo " + e.Files["provides/receiving.jadpo"] + "\n" +
		"  resources/messages.jadpo " + lockfile.FileDigest(edited) + "\n"
	writeFile(t, filepath.Join(dir, "build", ".jadpo", "lock.cache"), cache)
	if got := checkCodes(t, dir); fmt.Sprint(got) != "[package.lock_mismatch]" {
		t.Fatalf("edited file under a forged cache: %v", got)
	}
}

// Issue 11, point 2: `check` and `package list` (lockfile.Verify) read the
// lock alike. Before, `check` ignored a package line's digest and the files
// it did not read, and `package list` ignored the per-file digests.
func TestCheckAndPackageListAgree(t *testing.T) {
	flip := func(s string) string { // one hex digit of a digest, changed
		if s[len(s)-1] == '0' {
			return s[:len(s)-1] + "1"
		}
		return s[:len(s)-1] + "0"
	}
	cases := map[string]func(t *testing.T, dir string){
		"package line corrupted": func(t *testing.T, dir string) {
			editLock(t, dir, func(e *lockfile.Entry) { e.Digest = flip(e.Digest) })
		},
		"file line corrupted": func(t *testing.T, dir string) {
			editLock(t, dir, func(e *lockfile.Entry) { e.Files["resources/r0003.jadpo"] = flip(e.Files["resources/r0003.jadpo"]) })
		},
		"file lines fitted to an edited file": func(t *testing.T, dir string) {
			path := filepath.Join(dir, "packages", "Big.v1", "resources", "messages.jadpo")
			edited := readFile(t, path) + "\nvalue Extra { x: Text }\n"
			writeFile(t, path, edited)
			editLock(t, dir, func(e *lockfile.Entry) { e.Files["resources/messages.jadpo"] = lockfile.FileDigest([]byte(edited)) })
		},
		"a file the check does not parse, edited": func(t *testing.T, dir string) {
			path := filepath.Join(dir, "packages", "Big.v1", "resources", "r0003.jadpo")
			writeFile(t, path, readFile(t, path)+"\n")
		},
		"a file added": func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "packages", "Big.v1", "resources", "extra.jadpo"), "resource extra {\n}\n")
		},
		"a file removed": func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "packages", "Big.v1", "resources", "r0004.jadpo")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeBigPackage(t, 10)
			tamper(t, dir)
			codes := checkCodes(t, dir)
			problems, err := lockfile.Verify(dir, catalog.Builtin)
			if err != nil {
				t.Fatal(err)
			}
			if len(codes) == 0 || len(problems) == 0 {
				t.Fatalf("check says %v, package list %v: both must refuse", codes, problems)
			}
			for _, c := range codes {
				if c != "package.lock_mismatch" {
					t.Errorf("check: %v", codes)
				}
			}
		})
	}
}

// Issue 11, point 12: a lock that cannot be parsed is reported at the line
// and column at fault, not at jadpo.lock:1:1.
func TestLockParseErrorPosition(t *testing.T) {
	dir := writeBigPackage(t, 3)
	lockPath := filepath.Join(dir, lockfile.FileName)
	lines := strings.Split(readFile(t, lockPath), "\n")
	// Line 5 is `  provides/receiving.jadpo sha256:...`: break its digest.
	if !strings.HasPrefix(lines[4], "  provides/receiving.jadpo sha256:") {
		t.Fatalf("line 5 is %q", lines[4])
	}
	lines[4] = "  provides/receiving.jadpo sha256:XYZ"
	writeFile(t, lockPath, strings.Join(lines, "\n"))
	res := check.Check(project.Load(dir))
	if len(res.Diags) != 1 || res.Diags[0].Code != "package.lock_mismatch" || res.Diags[0].Subject.File == nil {
		t.Fatalf("diagnostics: %v", res.Diags)
	}
	d := res.Diags[0]
	pos := d.Subject.File.Position(d.Subject.Span.Start)
	if pos.Line != 5 || pos.Column != 28 || d.Subject.Text() != "sha256:XYZ" {
		t.Fatalf("reported at %d:%d on %q: %s", pos.Line, pos.Column, d.Subject.Text(), d.Summary)
	}
	if _, err := lockfile.Verify(dir, catalog.Builtin); err == nil || !strings.Contains(err.Error(), "jadpo.lock:5:28:") {
		t.Fatalf("package list's error: %v", err)
	}
}

func editLock(t *testing.T, dir string, edit func(*lockfile.Entry)) {
	t.Helper()
	lock, err := lockfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lock.Entries {
		edit(&lock.Entries[i])
	}
	if err := lockfile.Write(dir, lock); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// swapFS serves one file's `first` content on its first open and the
// file's own content afterwards: a file changed between the check's parse
// and its verification.
type swapFS struct {
	files  fstest.MapFS // not embedded: its ReadFile would bypass Open
	path   string
	first  []byte
	opened bool
}

// Stat answers without opening, so only reads see the swap.
func (s *swapFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(s.files, name) }

func (s *swapFS) Open(name string) (fs.File, error) {
	if name == s.path && !s.opened {
		s.opened = true
		return fstest.MapFS{name: &fstest.MapFile{Data: s.first, Mode: 0o644}}.Open(name)
	}
	return s.files.Open(name)
}

// What the check parsed is held to the lock too, not only what the
// verification read: a file swapped in between is reported.
func TestParsedFilesHeldToTheLock(t *testing.T) {
	dir := writeBigPackage(t, 3)
	fsys := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fsys[filepath.ToSlash(rel)] = &fstest.MapFile{Data: []byte(readFile(t, p)), Mode: 0o644}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "packages/Big.v1/provides/receiving.jadpo"
	swapped := &swapFS{files: fsys, path: path, first: append([]byte("// swapped\n"), fsys[path].Data...)}
	res := check.Check(project.LoadFS(swapped))
	if !swapped.opened || len(res.Diags) != 1 || res.Diags[0].Code != "package.lock_mismatch" || res.Diags[0].Subject.File == nil || res.Diags[0].Subject.File.Path != path {
		t.Fatalf("diagnostics: %v", res.Diags)
	}
	// Unswapped, the same files check clean.
	if res := check.Check(project.LoadFS(fsys)); len(res.Diags) != 0 {
		t.Fatalf("clean: %v", res.Diags)
	}
}
