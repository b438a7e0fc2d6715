package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

func sqsFiles() map[string][]byte {
	return map[string][]byte{
		"package.jadpo":            []byte("// A fake SQS\npackage FakeSqs.v2012_11_05\n\nprovider {\n}\n"),
		"resources/messages.jadpo": []byte("resource messages {\n}\n"),
		"provides/receiving.jadpo": []byte("provide receiving {\n}\n"),
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	b := make(map[string][]byte, len(files))
	for p, c := range files {
		b[p] = []byte(c)
	}
	writePackageDir(t, root, b)
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	changed, err := Install(dir, "FakeSqs.v2012_11_05", sqsFiles())
	if err != nil || !changed {
		t.Fatalf("install: %v %v", changed, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "packages/FakeSqs.v2012_11_05/resources/messages.jadpo"))
	if err != nil || string(got) != "resource messages {\n}\n" {
		t.Fatalf("file: %q %v", got, err)
	}
	lock, err := lockfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := lock.Get("FakeSqs.v2012_11_05"); !ok || e.Digest != lockfile.Digest(sqsFiles()) {
		t.Fatalf("lock %+v", lock)
	}
	lockText, _ := os.ReadFile(filepath.Join(dir, lockfile.FileName))

	// Twice is a no-op: nothing written, the lock byte for byte the same.
	changed, err = Install(dir, "FakeSqs.v2012_11_05", sqsFiles())
	if err != nil || changed {
		t.Fatalf("second install: %v %v", changed, err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, lockfile.FileName))
	if string(again) != string(lockText) {
		t.Error("lock rewritten")
	}
	if problems, err := lockfile.Verify(dir, catalog.Builtin); err != nil || len(problems) != 0 {
		t.Fatalf("verify: %+v %v", problems, err)
	}

	// An edited file is restored by installing again, and a stale file
	// removed.
	os.WriteFile(filepath.Join(dir, "packages/FakeSqs.v2012_11_05/resources/messages.jadpo"), []byte("edited"), 0o644)
	os.WriteFile(filepath.Join(dir, "packages/FakeSqs.v2012_11_05/resources/extra.jadpo"), []byte("x"), 0o644)
	changed, err = Install(dir, "FakeSqs.v2012_11_05", sqsFiles())
	if err != nil || !changed {
		t.Fatalf("repair: %v %v", changed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "packages/FakeSqs.v2012_11_05/resources/extra.jadpo")); err == nil {
		t.Error("stale file kept")
	}
	if problems, _ := lockfile.Verify(dir, catalog.Builtin); len(problems) != 0 {
		t.Fatalf("after repair: %+v", problems)
	}

	// Another version of the same package is refused, changing nothing.
	other := sqsFiles()
	other["package.jadpo"] = []byte("package FakeSqs.v2024_01_01\n")
	_, err = Install(dir, "FakeSqs.v2024_01_01", other)
	if err == nil || !strings.Contains(err.Error(), "one version of a package") || !strings.Contains(err.Error(), "FakeSqs.v2012_11_05") {
		t.Fatalf("second version: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "packages/FakeSqs.v2024_01_01")); err == nil {
		t.Error("second version written")
	}
	// No temporary folders left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, lockfile.PackagesDir))
	if len(entries) != 1 {
		t.Errorf("packages/ holds %d entries", len(entries))
	}
}

func TestInstallRefusals(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"Bad", sqsFiles(), "not a package name"},
		{"FakeSqs.v2012_11_05", nil, "no files"},
		{"FakeSqs.v2012_11_05", map[string][]byte{"x.jadpo": nil}, "no package.jadpo"},
		{"Other.v1", sqsFiles(), "declares package FakeSqs.v2012_11_05, not Other.v1"},
		{"FakeSqs.v2012_11_05", withFile("../escape.jadpo"), "cannot be in a package"},
		{"FakeSqs.v2012_11_05", withFile("/abs.jadpo"), "cannot be in a package"},
		{"FakeSqs.v2012_11_05", withFile("a/./b.jadpo"), "cannot be in a package"},
		{"FakeSqs.v2012_11_05", withFile(".hidden"), "cannot be in a package"},
		{"FakeSqs.v2012_11_05", withFile(`a\b.jadpo`), "cannot be in a package"},
	}
	for _, c := range cases {
		_, err := Install(dir, c.name, c.files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v", c.name, keys(c.files), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lockfile.FileName)); err == nil {
		t.Error("a refused install wrote the lock")
	}
}

func withFile(p string) map[string][]byte {
	f := sqsFiles()
	f[p] = []byte("x")
	return f
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestInstallDir(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"package.jadpo":        "// Billing\npackage Billing.v1\n",
		"resources/jobs.jadpo": "resource jobs {\n}\n",
		".DS_Store":            "junk",
		".git/config":          "junk",
		"resources/.swp":       "junk",
	})
	project := t.TempDir()
	name, changed, err := InstallDir(project, src)
	if err != nil || name != "Billing.v1" || !changed {
		t.Fatalf("install dir: %q %v %v", name, changed, err)
	}
	files, err := lockfile.ReadDir(filepath.Join(project, "packages/Billing.v1"))
	if err != nil || len(files) != 2 {
		t.Fatalf("installed files %v %v", keys(files), err)
	}
	if _, changed, _ := InstallDir(project, src); changed {
		t.Error("second InstallDir changed something")
	}
	// Re-installing from the installed folder itself works too.
	if _, changed, err := InstallDir(project, filepath.Join(project, "packages/Billing.v1")); err != nil || changed {
		t.Errorf("from itself: %v %v", changed, err)
	}
	if _, _, err := InstallDir(project, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a package folder") {
		t.Errorf("empty folder: %v", err)
	}
	// A symbolic link is refused.
	if err := os.Symlink(filepath.Join(src, "package.jadpo"), filepath.Join(src, "link.jadpo")); err == nil {
		if _, _, err := InstallDir(project, src); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("symlink: %v", err)
		}
	}
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	if _, err := Install(dir, "FakeSqs.v2012_11_05", sqsFiles()); err != nil {
		t.Fatal(err)
	}
	billing := map[string][]byte{"package.jadpo": []byte("package Billing.v1\n")}
	if _, err := Install(dir, "Billing.v1", billing); err != nil {
		t.Fatal(err)
	}
	// Edit one package, add an unlocked one, a badly named one, a second
	// version, and a lock line without a folder; dot folders are ignored.
	os.WriteFile(filepath.Join(dir, "packages/FakeSqs.v2012_11_05/package.jadpo"), []byte("package FakeSqs.v2012_11_05\n// edited\n"), 0o644)
	writeTree(t, filepath.Join(dir, "packages"), map[string]string{
		"Packing.v1/package.jadpo":    "package Packing.v1\n",
		"not-a-package/x.jadpo":       "x",
		"Billing.v2/package.jadpo":    "package Billing.v2\n",
		".tmp-leftover/package.jadpo": "x",
	})
	lock, _ := lockfile.Read(dir)
	lock.Set("Gone.v3", lockfile.Digest(billing))
	if err := lockfile.Write(dir, lock); err != nil {
		t.Fatal(err)
	}

	problems, err := lockfile.Verify(dir, catalog.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Package+" "+string(p.Kind))
		if p.Message == "" || p.Path == "" {
			t.Errorf("problem without text: %+v", p)
		}
	}
	want := []string{
		"Billing.v1 two_versions",
		"Billing.v2 not_locked",
		"FakeSqs.v2012_11_05 modified",
		"Gone.v3 missing",
		"Packing.v1 not_locked",
		"not-a-package bad_name",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range problems {
		if p.Kind == lockfile.NotLocked && !strings.Contains(p.Message, "jadpo package add "+p.Package) {
			t.Errorf("no fix in %q", p.Message)
		}
	}

	// A malformed lock is an error, not a problem list.
	os.WriteFile(filepath.Join(dir, lockfile.FileName), []byte("nonsense\n"), 0o644)
	if _, err := lockfile.Verify(dir, catalog.Builtin); err == nil {
		t.Error("malformed lock accepted")
	}
	// A project without packages or lock has no problems.
	if problems, err := lockfile.Verify(t.TempDir(), catalog.Builtin); err != nil || len(problems) != 0 {
		t.Errorf("empty project: %v %v", problems, err)
	}
}
