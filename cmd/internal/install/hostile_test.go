package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

const sqs = "AmazonSqs.v2012_11_05"

// writePackageDir writes a package's files into a folder, as a user's ./evil.
func writePackageDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for p, c := range files {
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 11, point 3: `jadpo package add ./evil` holding a copy of the
// catalogue's AmazonSqs with one file edited printed `installed` and
// replaced it, and check and package list said ok. A local package bearing
// a catalogue name installs only if its files are a copy the catalogue
// published; one installed anyway (its lock written to fit) is flagged.
func TestLocalPackageCannotClaimCatalogueName(t *testing.T) {
	project := t.TempDir()
	if _, err := Install(project, sqs, catalog.Files(sqs)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(project, lockfile.FileName))

	evil := catalog.Files(sqs)
	evil["resources/messages.jadpo"] = bytes.Replace(evil["resources/messages.jadpo"], []byte("max_length: 128"), []byte("max_length: 256"), 1)
	src := filepath.Join(t.TempDir(), "evil")
	writePackageDir(t, src, evil)
	_, _, err := InstallDir(project, src)
	if err == nil || !strings.Contains(err.Error(), "catalogue") || !strings.Contains(err.Error(), "resources/messages.jadpo (differs)") ||
		!strings.Contains(err.Error(), "`jadpo package add "+sqs+"`") || !strings.Contains(err.Error(), "a name of its own") {
		t.Fatalf("a local copy with an edited file: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(project, lockfile.FileName))
	if !bytes.Equal(before, after) {
		t.Error("the refused install changed jadpo.lock")
	}
	if got, _ := os.ReadFile(filepath.Join(project, lockfile.PackagesDir, sqs, "resources/messages.jadpo")); !bytes.Equal(got, catalog.Files(sqs)["resources/messages.jadpo"]) {
		t.Error("the refused install replaced the catalogue's file")
	}

	// A byte-identical local copy is the catalogue's own: it installs.
	same := filepath.Join(t.TempDir(), "same")
	writePackageDir(t, same, catalog.Files(sqs))
	if _, _, err := InstallDir(project, same); err != nil {
		t.Fatalf("a byte-identical copy: %v", err)
	}

	// A tree shipped with the edited files and a lock written to fit them.
	writePackageDir(t, filepath.Join(project, lockfile.PackagesDir, sqs), evil)
	lock, _ := lockfile.Read(project)
	lock.SetFiles(sqs, lockfile.Digest(evil), lockfile.FileDigests(evil))
	if err := lockfile.Write(project, lock); err != nil {
		t.Fatal(err)
	}
	problems, err := lockfile.Verify(project, catalog.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Kind != lockfile.NotCatalogue || !strings.Contains(problems[0].Message, "resources/messages.jadpo (differs)") {
		t.Fatalf("problems: %+v", problems)
	}
}

// A project that installed an earlier copy from the catalogue stays valid:
// SqlInbox.v1's package.jadpo before lock_key was added.
func TestEarlierCatalogueCopyStaysValid(t *testing.T) {
	earlier := catalog.Files("SqlInbox.v1")
	old, err := os.ReadFile("testdata/SqlInbox.v1-earlier/package.jadpo")
	if err != nil {
		t.Fatal(err)
	}
	earlier["package.jadpo"] = old
	if lockfile.Digest(earlier) == lockfile.Digest(catalog.Files("SqlInbox.v1")) {
		t.Fatal("the earlier copy is the current one")
	}
	project := t.TempDir()
	if _, err := Install(project, "SqlInbox.v1", earlier); err != nil {
		t.Fatalf("installing the earlier copy: %v", err)
	}
	if problems, err := lockfile.Verify(project, catalog.Builtin); err != nil || len(problems) != 0 {
		t.Fatalf("the earlier copy: %+v %v", problems, err)
	}
	// And installing the current copy over it updates it.
	if changed, err := Install(project, "SqlInbox.v1", catalog.Files("SqlInbox.v1")); err != nil || !changed {
		t.Fatalf("update: %v %v", changed, err)
	}
}

// Issue 11, point 4: file names with a space broke every later `package`
// command, and a folder named with an embedded newline wrote a well-formed
// lock listing a phantom package. Names outside the safe set are refused at
// `package add`, naming the file; the writer refuses what it could not
// read back; the reader refuses such lines.
func TestUnsafeNamesRefused(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	header := map[string][]byte{lockfile.HeaderFile: []byte("package Billing.v1\n")}
	for _, bad := range []string{
		"resources/a b.jadpo",
		"resources/x\nPhantom.v1 " + d + "\n  y/z.jadpo",
		"resources/\x1b[2J.jadpo",
		"resources/caf\u00e9.jadpo",
		"resources\ta/b.jadpo",
	} {
		project := t.TempDir()
		src := filepath.Join(t.TempDir(), "billing")
		files := map[string][]byte{bad: []byte("resource a {\n}\n")}
		for p, c := range header {
			files[p] = c
		}
		writePackageDir(t, src, files)
		_, _, err := InstallDir(project, src)
		if err == nil || !strings.Contains(err.Error(), "cannot be in a package") || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("%q: %v", bad, err)
			continue
		}
		first, _, _ := strings.Cut(bad, "/")
		if !strings.Contains(err.Error(), strings.TrimSuffix(strings.Split(strings.Split(first, "\n")[0], "\t")[0], "/")) {
			t.Errorf("%q: the error does not name the file: %v", bad, err)
		}
		if _, err := os.Stat(filepath.Join(project, lockfile.FileName)); err == nil {
			t.Errorf("%q: a refused install wrote the lock", bad)
		}
		// Install (the catalogue's path) refuses them too, naming the file.
		if _, err := Install(project, "Billing.v1", files); err == nil || !strings.Contains(err.Error(), "cannot be in a package") {
			t.Errorf("%q: Install: %v", bad, err)
		}
		// The writer refuses to write such a lock...
		l := &lockfile.Lock{}
		l.SetFiles("Billing.v1", d, map[string]string{lockfile.HeaderFile: d, bad: d})
		if _, err := l.Bytes(); err == nil {
			t.Errorf("%q: written", bad)
		}
		if err := lockfile.Write(project, l); err == nil {
			t.Errorf("%q: lockfile.Write wrote it", bad)
		}
		// ...and the reader refuses the line.
		text := "Billing.v1 " + d + "\n  " + bad + " " + d + "\n"
		if lock, err := lockfile.Parse([]byte(text)); err == nil {
			t.Errorf("%q: parsed as %+v", bad, lock.Entries)
		}
	}
	// The writer refuses bad names and digests too.
	for _, e := range []lockfile.Entry{{Name: "Bad Name.v1", Digest: d}, {Name: "A.v1\nB.v1", Digest: d}, {Name: "A.v1", Digest: "sha256:x"},
		{Name: "A.v1", Digest: d, Files: map[string]string{"x.jadpo": d + "\n"}}} {
		l := &lockfile.Lock{Entries: []lockfile.Entry{e}}
		if _, err := l.Bytes(); err == nil {
			t.Errorf("%+v written", e)
		}
	}
}
