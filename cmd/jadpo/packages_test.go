package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

func writeTree(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for p, c := range files {
		target := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 11, point 3, as the user saw it: `jadpo package add ./evil` with a
// copy of AmazonSqs.v2012_11_05 holding one edited file printed `installed`
// and replaced the catalogue's package; `package list` said ok. Now the add
// is refused with what to do, and the catalogue's package stays.
func TestPackageAddRefusesCatalogueImpostor(t *testing.T) {
	const sqs = "AmazonSqs.v2012_11_05"
	project := t.TempDir()
	writeTree(t, project, map[string][]byte{"app.jadpo": []byte("// a project without declarations yet\n")})
	if _, errOut, code := runCLI("package", "add", sqs, "--dir", project); code != 0 {
		t.Fatalf("add from the catalogue: %d %s", code, errOut)
	}
	evil := catalog.Files(sqs)
	evil["resources/messages.jadpo"] = []byte(strings.Replace(string(evil["resources/messages.jadpo"]), "max_length: 128", "max_length: 256", 1))
	writeTree(t, filepath.Join(project, "evil"), evil)
	out, errOut, code := runCLI("package", "add", "./evil", "--dir", project)
	if code == 0 || strings.Contains(out, "installed") || !strings.Contains(errOut, "resources/messages.jadpo (differs)") ||
		!strings.Contains(errOut, "`jadpo package add "+sqs+"` installs the catalogue's") {
		t.Fatalf("add ./evil: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI("package", "list", "--dir", project)
	if code != 0 || !strings.Contains(out, sqs) || !strings.Contains(out, " ok ") {
		t.Fatalf("list after the refusal: exit %d\n%s%s", code, out, errOut)
	}
	// The same tree shipped with its lock written to fit: list and check refuse it.
	writeTree(t, filepath.Join(project, "packages", sqs), evil)
	writeTree(t, project, map[string][]byte{"jadpo.lock": relockText(t, project)})
	out, errOut, code = runCLI("package", "list", "--dir", project)
	if code == 0 || !strings.Contains(out, "not_catalogue") || !strings.Contains(errOut, "is a package of the toolchain's catalogue") {
		t.Fatalf("list of the shipped tree: exit %d\n%s%s", code, out, errOut)
	}
}

// relockText is jadpo.lock recording the project's package folders as they are.
func relockText(t *testing.T, dir string) []byte {
	t.Helper()
	checktest.Relock(t, dir)
	b, err := os.ReadFile(filepath.Join(dir, "jadpo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 11, point 4, as the user saw it: `resources/a b.jadpo` broke every
// later `package` command, and a folder named with a newline wrote a lock
// listing a phantom package. Now the add is refused naming the file, and
// the project's later package commands work.
func TestPackageAddRefusesUnsafeNames(t *testing.T) {
	for _, bad := range []string{"resources/a b.jadpo", "resources/x\nPhantom.v1 sha256:" + strings.Repeat("a", 64) + "\n  y/z.jadpo"} {
		project := t.TempDir()
		writeTree(t, project, map[string][]byte{"app.jadpo": []byte("// a project without declarations yet\n")})
		writeTree(t, filepath.Join(project, "billing"), map[string][]byte{
			"package.jadpo": []byte("package Billing.v1\n"),
			bad:             []byte("resource a {\n}\n"),
		})
		out, errOut, code := runCLI("package", "add", "./billing", "--dir", project)
		if code == 0 || !strings.Contains(errOut, "cannot be in a package") || !strings.Contains(errOut, "billing/resources/") {
			t.Errorf("%q: exit %d\n%s%s", bad, code, out, errOut)
		}
		if out, errOut, code := runCLI("package", "list", "--dir", project); code != 0 || !strings.Contains(out, "no packages installed") {
			t.Errorf("%q: list afterwards: exit %d\n%s%s", bad, code, out, errOut)
		}
	}
}

// Issue 11, point 2, as the user saw it: with a package file edited and its
// digest put in build/.jadpo/lock.cache (keyed by jadpo.lock's size and
// mtime, which a tarball keeps), `jadpo build` wrote a plan holding the
// edited value. The build now refuses, and writes no plan.
func TestBuildIgnoresShippedLockCache(t *testing.T) {
	dir := checktest.CopyExample(t, "warehouse", t.TempDir(), checktest.Edit{
		File: "packages/AmazonSqs.v2012_11_05/resources/messages.jadpo",
		Old:  "receive_request_attempt_id: Text? { max_length: 128 }",
		New:  "receive_request_attempt_id: Text? { max_length: 256 }",
	})
	edited, err := os.ReadFile(filepath.Join(dir, "packages/AmazonSqs.v2012_11_05/resources/messages.jadpo"))
	if err != nil {
		t.Fatal(err)
	}
	lockText, err := os.ReadFile(filepath.Join(dir, "jadpo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "jadpo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	// The old cache's format: a key line, then the lock with the file line changed.
	forged := strings.Replace(string(lockText), lockfile.FileDigest(catalog.Files("AmazonSqs.v2012_11_05")["resources/messages.jadpo"]), lockfile.FileDigest(edited), 1)
	writeTree(t, filepath.Join(dir, "build", ".jadpo"), map[string][]byte{
		"lock.cache": []byte(fmt.Sprintf("# jadpo lock cache %d %d\n", st.Size(), st.ModTime().UnixNano()) + forged),
	})
	_, errOut, code := runCLI("build", dir)
	if code == 0 || !strings.Contains(errOut, "package.lock_mismatch") || !strings.Contains(errOut, "resources/messages.jadpo") {
		t.Fatalf("build with a forged cache: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "plan.json")); err == nil {
		t.Fatal("a plan was written")
	}
}

// Issue 16: a project that installed the SQS package before
// DeleteMessageBatch keeps working with that copy, and `package list` says
// the catalogue has a newer one and how to update; the add then updates it.
func TestPackageListSaysNewerCopy(t *testing.T) {
	const sqs = "AmazonSqs.v2012_11_05"
	project := checktest.CopyExample(t, "warehouse", t.TempDir())
	old := filepath.Join(reporoot.Dir(t), "testdata", "cases", "package_earlier_catalogue_copy")
	files, err := lockfile.ReadDir(filepath.Join(old, "packages", sqs))
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, filepath.Join(project, "packages", sqs), files)
	lock, err := os.ReadFile(filepath.Join(old, "jadpo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, project, map[string][]byte{"jadpo.lock": lock})
	out, errOut, code := runCLI("package", "list", "--dir", project)
	want := sqs + ": the catalogue has a newer copy; `jadpo package upgrade " + sqs + "` upgrades it"
	if code != 0 || !strings.Contains(out, "ok,newer_in_catalogue") || !strings.Contains(out, want) {
		t.Fatalf("list with the earlier copy: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runCLI("package", "add", sqs, "--dir", project); code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	out, errOut, code = runCLI("package", "list", "--dir", project)
	if code != 0 || strings.Contains(out, "newer") || !strings.Contains(out, lockfile.Digest(catalog.Files(sqs))) {
		t.Fatalf("list after the update: exit %d\n%s%s", code, out, errOut)
	}
}
