package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/checktest"
)

// Issue 30, item 5: a project is a folder with app.jadpo. Every command given a folder
// without one says so at once, naming the nearest project when there is exactly one, and
// reads nothing else in the folder: a parent folder's unrelated .jadpo files are never
// checked (they were: 122 errors from 673 unrelated files).
func TestEveryCommandWantsAProjectFolder(t *testing.T) {
	parent := t.TempDir()
	checktest.CopyExample(t, "warehouse", filepath.Join(parent, "warehouse"))
	two := t.TempDir()
	checktest.CopyExample(t, "warehouse", filepath.Join(two, "warehouse"))
	checktest.CopyExample(t, "shipmail", filepath.Join(two, "shipmail"))
	writeTree(t, parent, map[string][]byte{"notes/broken.jadpo": []byte("this is not jadpo at all {{{")})
	t.Chdir(parent)
	commands := [][]string{
		{"check", "."}, {"build", "."}, {"run", "."}, {"tick", "."}, {"dev", "."},
		{"deliveries", "."}, {"store", "stats", "."}, {"package", "list", "."}, {"package", "add", "AmazonSqs.v2012_11_05"},
	}
	for _, args := range commands {
		out, errOut, code := runCLI(args...)
		all := out + errOut
		if code != exitFound || !strings.Contains(all, "has no app.jadpo") || !strings.Contains(all, "the nearest project is warehouse") {
			t.Errorf("jadpo %s in a parent folder: exit %d\n%s", strings.Join(args, " "), code, all)
		}
		if strings.Contains(all, "broken.jadpo") || strings.Contains(all, "syntax.") {
			t.Errorf("jadpo %s read the unrelated files:\n%s", strings.Join(args, " "), all)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "jadpo.lock")); err == nil {
		t.Error("package add wrote a lock outside a project")
	}
	// Above: a folder inside the project names the project.
	_, errOut, code := runCLI("check", "warehouse/stock")
	if code != exitFound || !strings.Contains(errOut, "the nearest project is warehouse") {
		t.Errorf("check in a folder of the project: exit %d\n%s", code, errOut)
	}
	// A folder that does not exist is not "no packages installed".
	out, errOut, code := runCLI("package", "list", filepath.Join(parent, "nonexistent"))
	if code != exitFound || strings.Contains(out, "no packages installed") || !strings.Contains(errOut, "there is no folder") {
		t.Errorf("package list of a missing folder: exit %d\n%s%s", code, out, errOut)
	}
	// Several projects below: each is named.
	_, errOut, _ = runCLI("check", two)
	if !strings.Contains(errOut, "the nearest projects are "+filepath.Join(two, "shipmail")+", "+filepath.Join(two, "warehouse")) {
		t.Errorf("check above two projects:\n%s", errOut)
	}
}
