package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sqsFiles() map[string][]byte {
	return map[string][]byte{
		"package.jadpo":            []byte("// A fake SQS\npackage FakeSqs.v2012_11_05\n\nprovider {\n}\n"),
		"resources/messages.jadpo": []byte("resource messages {\n}\n"),
		"provides/receiving.jadpo": []byte("provide receiving {\n}\n"),
	}
}

func TestDigest(t *testing.T) {
	files := sqsFiles()
	d := Digest(files)
	if !validDigest(d) {
		t.Fatalf("digest %q", d)
	}
	// Pinned: the framing is a format other tools may rely on.
	if got := Digest(map[string][]byte{"package.jadpo": []byte("package A.v1\n")}); got != "sha256:"+sha256Hex("jadpo-package-digest-v1\nfile 13 package.jadpo 13\npackage A.v1\n\n") {
		t.Errorf("framing changed: %s", got)
	}
	if Digest(files) != d {
		t.Error("digest not stable")
	}
	// Any change to a path or a content changes it, and bytes cannot move
	// between path and content or between files unnoticed.
	variants := []map[string][]byte{
		{"a": []byte("bc")},
		{"ab": []byte("c")},
		{"a": []byte("b"), "c": []byte("")},
		{"a": []byte("b\nfile 1 c 0\n")},
		{"a": []byte("bc"), "d": nil},
		{},
	}
	seen := map[string]bool{}
	for _, v := range variants {
		dv := Digest(v)
		if seen[dv] {
			t.Errorf("collision for %q", v)
		}
		seen[dv] = true
	}
	changed := sqsFiles()
	changed["resources/messages.jadpo"] = append(changed["resources/messages.jadpo"], ' ')
	if Digest(changed) == d {
		t.Error("content change not seen")
	}
	moved := sqsFiles()
	moved["resources/other.jadpo"] = moved["resources/messages.jadpo"]
	delete(moved, "resources/messages.jadpo")
	if Digest(moved) == d {
		t.Error("rename not seen")
	}
}

func TestLockText(t *testing.T) {
	d1 := "sha256:" + strings.Repeat("a", 64)
	d2 := "sha256:" + strings.Repeat("b", 64)
	l := &Lock{}
	l.Set("Zeta.v1", d1)
	l.Set("FakeSqs.v2012_11_05", d2)
	l.Set("Zeta.v1", d2)
	text := string(mustBytes(t, l))
	want := "# jadpo.lock: the packages installed under packages/ and the sha256 of their files.\n" +
		"# Written by `jadpo package add`; `jadpo check` refuses a package that does not match.\n" +
		"FakeSqs.v2012_11_05 " + d2 + "\nZeta.v1 " + d2 + "\n"
	if text != want {
		t.Errorf("text\n%s\nwant\n%s", text, want)
	}
	back, err := Parse([]byte(strings.ReplaceAll(text, "\n", "\r\n") + "\n  \n"))
	if err != nil || len(back.Entries) != 2 || back.Entries[0].Name != "FakeSqs.v2012_11_05" || back.Entries[0].Digest != d2 || back.Entries[0].Files != nil {
		t.Errorf("parse: %+v %v", back, err)
	}
	// Each file's digest is kept on an indented line under its package.
	l.SetFiles("Zeta.v1", d2, map[string]string{"package.jadpo": d1, "resources/a.jadpo": d2})
	withFiles, err := Parse(mustBytes(t, l))
	if err != nil {
		t.Fatal(err)
	}
	if z, _ := withFiles.Get("Zeta.v1"); len(z.Files) != 2 || z.Files["resources/a.jadpo"] != d2 || z.Files["package.jadpo"] != d1 {
		t.Errorf("files: %+v", z)
	}
	if _, err := Parse([]byte("  package.jadpo " + d1 + "\n")); err == nil {
		t.Error("a file line before any package was accepted")
	}
	if !l.Remove("Zeta.v1") || l.Remove("Zeta.v1") {
		t.Error("remove")
	}
	bad := []string{
		"FakeSqs " + d1,
		"FakeSqs.v1 sha256:xyz",
		"FakeSqs.v1",
		"FakeSqs.v1 " + d1 + " extra",
		"FakeSqs.v1 " + d1 + "\nFakeSqs.v1 " + d1,
		"FakeSqs.v1 " + strings.ToUpper(d1),
	}
	for _, b := range bad {
		if _, err := Parse([]byte(b)); err == nil || !strings.Contains(err.Error(), "jadpo.lock:") {
			t.Errorf("%q: %v", b, err)
		}
	}
}

func TestHeaderName(t *testing.T) {
	good := map[string]string{
		"package FakeSqs.v2012_11_05\n":                       "FakeSqs.v2012_11_05",
		"// comment\n\n   package Billing.v1   // trailing\n": "Billing.v1",
		"\r\npackage Cloudflare.v4\r\nprovider {}\r\n":        "Cloudflare.v4",
	}
	for src, want := range good {
		if got, err := HeaderName([]byte(src)); err != nil || got != want {
			t.Errorf("%q: %q %v", src, got, err)
		}
	}
	for _, src := range []string{"", "// only a comment\n", "provider {\n}\n", "package Billing\n", "package Billing.v1 extra\n", "package 1Billing.v1\n"} {
		if got, err := HeaderName([]byte(src)); err == nil {
			t.Errorf("%q accepted as %q", src, got)
		}
	}
	if n, v, err := SplitName("AmazonSqs.v2012_11_05"); err != nil || n != "AmazonSqs" || v != "v2012_11_05" {
		t.Errorf("split %q %q %v", n, v, err)
	}
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
	lock, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := lock.Get("FakeSqs.v2012_11_05"); !ok || e.Digest != Digest(sqsFiles()) {
		t.Fatalf("lock %+v", lock)
	}
	lockText, _ := os.ReadFile(filepath.Join(dir, FileName))

	// Twice is a no-op: nothing written, the lock byte for byte the same.
	changed, err = Install(dir, "FakeSqs.v2012_11_05", sqsFiles())
	if err != nil || changed {
		t.Fatalf("second install: %v %v", changed, err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, FileName))
	if string(again) != string(lockText) {
		t.Error("lock rewritten")
	}
	if problems, err := Verify(dir); err != nil || len(problems) != 0 {
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
	if problems, _ := Verify(dir); len(problems) != 0 {
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
	entries, _ := os.ReadDir(filepath.Join(dir, PackagesDir))
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
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
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
	files, err := ReadDir(filepath.Join(project, "packages/Billing.v1"))
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
	lock, _ := Read(dir)
	lock.Set("Gone.v3", Digest(billing))
	if err := Write(dir, lock); err != nil {
		t.Fatal(err)
	}

	problems, err := Verify(dir)
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
		if p.Kind == NotLocked && !strings.Contains(p.Message, "jadpo package add "+p.Package) {
			t.Errorf("no fix in %q", p.Message)
		}
	}

	// A malformed lock is an error, not a problem list.
	os.WriteFile(filepath.Join(dir, FileName), []byte("nonsense\n"), 0o644)
	if _, err := Verify(dir); err == nil {
		t.Error("malformed lock accepted")
	}
	// A project without packages or lock has no problems.
	if problems, err := Verify(t.TempDir()); err != nil || len(problems) != 0 {
		t.Errorf("empty project: %v %v", problems, err)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		target := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func mustBytes(t testing.TB, l *Lock) []byte {
	t.Helper()
	b, err := l.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
