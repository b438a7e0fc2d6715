package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
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
