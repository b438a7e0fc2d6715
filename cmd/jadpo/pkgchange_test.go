package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

// treeDigest is every file's path and sha256 under dir (build/ left out): what "changes no
// byte" compares.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "build" {
				return fs.SkipDir
			}
			lines = append(lines, rel+"/")
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func mustCheck(t *testing.T, dir, after string) {
	t.Helper()
	if _, errOut, code := runCLI("check", dir); code != 0 {
		t.Fatalf("check after %s: exit %d\n%s", after, code, errOut)
	}
}

// Issue 30, item 4: `jadpo package upgrade` moves the local package Packing.v1 to Packing.v2
// (its folder given), rewriting the lock and the connection's `package:`; an upgrade to a
// Packing.v3 that lacks the operation the app calls is refused, naming the declaration, and
// changes no byte; `jadpo package remove` is refused while a connection and a queue use the
// package, and removes it (folder and lock line) once they do not. `check` passes after each.
func TestPackageRemoveAndUpgrade(t *testing.T) {
	dir := checktest.CopyExample(t, "warehouse", t.TempDir())
	vendor := t.TempDir()
	v1, err := lockfile.ReadDir(filepath.Join(dir, "packages", "Packing.v1"))
	if err != nil {
		t.Fatal(err)
	}
	version := func(n string, edit func(map[string][]byte)) string {
		files := map[string][]byte{}
		for p, b := range v1 {
			files[p] = b
		}
		files["package.jadpo"] = []byte(strings.Replace(string(files["package.jadpo"]), "package Packing.v1", "package Packing."+n, 1))
		if edit != nil {
			edit(files)
		}
		at := filepath.Join(vendor, "Packing."+n)
		writeTree(t, at, files)
		return at
	}
	v2 := version("v2", func(f map[string][]byte) {
		f["package.jadpo"] = append(f["package.jadpo"], []byte("\n// Version 2.\n")...)
	})
	v3 := version("v3", func(f map[string][]byte) {
		f["resources/jobs.jadpo"] = []byte(strings.Replace(string(f["resources/jobs.jadpo"]), "operation create_job", "operation make_job", 1))
	})

	// Refused: v3 has no jobs.create_job, which pack_order calls.
	before := treeDigest(t, dir)
	out, errOut, code := runCLI("package", "upgrade", "Packing.v1", v3, "--dir", dir)
	if code != exitFound || !strings.Contains(errOut, "upgrading Packing.v1 to Packing.v3 refused") ||
		!strings.Contains(errOut, filepath.Join(dir, "app.jadpo")+":") || !strings.Contains(errOut, "nothing changed") || !strings.Contains(errOut, "create_job") {
		t.Fatalf("upgrade to v3: exit %d\n%s%s", code, out, errOut)
	}
	if treeDigest(t, dir) != before {
		t.Fatal("a refused upgrade changed the project")
	}

	// v1 -> v2.
	out, errOut, code = runCLI("package", "upgrade", "Packing.v1", v2, "--dir", dir)
	if code != 0 || !strings.Contains(out, "upgraded Packing.v1 to Packing.v2") || !strings.Contains(out, "`package: Packing.v2` in app.jadpo") {
		t.Fatalf("upgrade to v2: exit %d\n%s%s", code, out, errOut)
	}
	mustCheck(t, dir, "the upgrade to Packing.v2")
	if _, err := os.Stat(filepath.Join(dir, "packages", "Packing.v1")); err == nil {
		t.Fatal("packages/Packing.v1 is still there")
	}
	lock, err := lockfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lock.Get("Packing.v1"); ok {
		t.Fatal("the lock still has Packing.v1")
	}
	if _, ok := lock.Get("Packing.v2"); !ok {
		t.Fatal("the lock has no Packing.v2")
	}

	// Remove: refused while used, naming the declarations; no byte changed.
	before = treeDigest(t, dir)
	_, errOut, code = runCLI("package", "remove", "Packing.v2", "--dir", dir)
	if code != exitFound || !strings.Contains(errOut, "removing Packing.v2 refused") ||
		!strings.Contains(errOut, "package: Packing.v2") || !strings.Contains(errOut, "Packing.ParcelLost") {
		t.Fatalf("remove while used: exit %d\n%s", code, errOut)
	}
	if treeDigest(t, dir) != before {
		t.Fatal("a refused remove changed the project")
	}
	// Once nothing uses it, it goes.
	app := filepath.Join(dir, "app.jadpo")
	src, _ := os.ReadFile(app)
	s := string(src)
	start, end := strings.Index(s, "connection packing {"), strings.Index(s, "queue warehouse_queue {")
	s = s[:start] + s[end:]
	s = strings.Replace(s, "        Packing.ParcelLost { wire_name: \"parcel_lost\" }\n", "", 1)
	start, end = strings.Index(s, "subscriber pack_order {"), len(s)
	s = s[:start]
	if err := os.WriteFile(app, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, dir, "taking out the package's users")
	out, errOut, code = runCLI("package", "remove", "Packing.v2", "--dir", dir)
	if code != 0 || !strings.Contains(out, "removed Packing.v2") {
		t.Fatalf("remove: exit %d\n%s%s", code, out, errOut)
	}
	mustCheck(t, dir, "the remove")
	if _, err := os.Stat(filepath.Join(dir, "packages", "Packing.v2")); err == nil {
		t.Fatal("packages/Packing.v2 is still there")
	}
	if _, errOut, code := runCLI("package", "remove", "Packing.v2", "--dir", dir); code != exitFound || !strings.Contains(errOut, "Packing.v2 is not installed") {
		t.Fatalf("remove again: exit %d\n%s", code, errOut)
	}
}

// Issue 30, item 4: the catalogue's SQS package moves from the copy it published first
// (testdata/cases/package_earlier_catalogue_copy) to its current one, under the catalogue's
// upgrade rule; an edited copy is refused with no byte changed; the current copy changes
// nothing.
func TestPackageUpgradeCatalogueCopy(t *testing.T) {
	const sqs = "AmazonSqs.v2012_11_05"
	dir := checktest.CopyExample(t, "warehouse", t.TempDir())
	old := filepath.Join(reporoot.Dir(t), "testdata", "cases", "package_earlier_catalogue_copy")
	files, err := lockfile.ReadDir(filepath.Join(old, "packages", sqs))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "packages", sqs)); err != nil {
		t.Fatal(err)
	}
	writeTree(t, filepath.Join(dir, "packages", sqs), files)
	lockText, err := os.ReadFile(filepath.Join(old, "jadpo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := lockfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	oldLock, err := lockfile.Parse(lockText)
	if err != nil {
		t.Fatal(err)
	}
	oe, _ := oldLock.Get(sqs)
	published := catalog.Published(sqs)
	if oe.Digest != published[0] || oe.Digest == lockfile.Digest(catalog.Files(sqs)) {
		t.Fatalf("the earlier copy is not the first published one: %s", oe.Digest)
	}
	cur.SetFiles(sqs, oe.Digest, oe.Files)
	if err := lockfile.Write(dir, cur); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, dir, "installing the earlier copy")

	// An edited copy is refused, no byte changed.
	edited := filepath.Join(t.TempDir(), "edited")
	if err := copyProject(dir, edited); err != nil {
		t.Fatal(err)
	}
	hdr := filepath.Join(edited, "packages", sqs, "package.jadpo")
	b, _ := os.ReadFile(hdr)
	if err := os.WriteFile(hdr, append(b, []byte("\n// edited\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeDigest(t, edited)
	if _, errOut, code := runCLI("package", "upgrade", sqs, "--dir", edited); code != exitFound || !strings.Contains(errOut, "an upgrade would lose the edits") {
		t.Fatalf("upgrade of an edited copy: exit %d\n%s", code, errOut)
	}
	if treeDigest(t, edited) != before {
		t.Fatal("a refused upgrade changed the project")
	}

	out, errOut, code := runCLI("package", "upgrade", sqs, "--dir", dir)
	if code != 0 || !strings.Contains(out, "upgraded "+sqs+" to "+sqs+" ("+lockfile.Digest(catalog.Files(sqs))+")") {
		t.Fatalf("upgrade: exit %d\n%s%s", code, out, errOut)
	}
	mustCheck(t, dir, "the upgrade")
	out, _, code = runCLI("package", "upgrade", sqs, "--dir", dir)
	if code != 0 || !strings.Contains(out, "the catalogue's current copy already; nothing changed") {
		t.Fatalf("upgrade again: exit %d\n%s", code, out)
	}
	if out, _, _ := runCLI("package", "list", "--dir", dir); strings.Contains(out, "newer") {
		t.Fatalf("list after the upgrade:\n%s", out)
	}
}

// Issue 30, item 4: `jadpo fmt -w` leaves an installed package's files alone (it rewrote
// one and broke the lock), saying why; the app's own files are still formatted.
func TestFmtLeavesInstalledPackagesAlone(t *testing.T) {
	dir := checktest.CopyExample(t, "warehouse", t.TempDir())
	jobs := filepath.Join(dir, "packages", "Packing.v1", "resources", "jobs.jadpo")
	b, _ := os.ReadFile(jobs)
	messy := strings.Replace(string(b), "resource jobs {", "resource   jobs   {", 1)
	if err := os.WriteFile(jobs, []byte(messy), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI("fmt", "-w", filepath.Join(dir, "packages", "Packing.v1"))
	if code != exitFound || !strings.Contains(errOut, "is a file of the installed package Packing.v1") || !strings.Contains(errOut, "jadpo package add ./path/to/Packing.v1") {
		t.Fatalf("fmt -w on an installed package: exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(jobs); string(after) != messy {
		t.Fatal("fmt -w rewrote an installed file")
	}
	// Outside a project the same folder is formatted.
	free := filepath.Join(t.TempDir(), "Packing.v1")
	if err := copyProject(filepath.Join(dir, "packages", "Packing.v1"), free); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("fmt", "-w", free); code != 0 {
		t.Fatalf("fmt -w on a package's own folder: exit %d\n%s", code, errOut)
	}
}
