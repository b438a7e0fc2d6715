package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 30, item 9: each example the README runs under `jadpo dev` has a sample message on
// the line below it, and that message, typed as it is written, is kept and delivered (not
// refused, not parked).
func TestReadmeDevSamplesAreKept(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^bin/jadpo dev examples/(\w+) .*\n#   type: (\w+ \{.*\})$`)
	samples := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
		samples[m[1]] = m[2]
	}
	for _, example := range []string{"warehouse", "shipmail", "returns"} {
		line, ok := samples[example]
		if !ok {
			t.Errorf("the README's `bin/jadpo dev examples/%s` line has no `#   type: <queue> <json>` line below it", example)
			continue
		}
		t.Run(example, func(t *testing.T) {
			dir := copyExample(t, example)
			errOut, code := runDevToEnd(t, dir, line+"\n", "--log-format", "json")
			if code != 0 || !strings.Contains(errOut, `"msg":"kept"`) || strings.Contains(errOut, `"msg":"parked"`) ||
				!regexp.MustCompile(`"msg":"delivery settled".*"outcome":"succeeded"`).MatchString(errOut) {
				t.Fatalf("the README's sample for %s: exit %d\n%s", example, code, errOut)
			}
		})
	}
}

// Issue 30, small: "check passed" and the diagnostics go to standard error, standard output
// stays empty; with --format json standard output holds the report alone and standard
// error nothing (docs/reference/json.md, "Which stream carries what").
func TestStreamsCarryWhatTheySay(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "reference", "json.md"))
	if err != nil || !strings.Contains(string(doc), "## Which stream carries what") || !strings.Contains(string(doc), "`check passed`") {
		t.Fatalf("docs/reference/json.md does not say which stream carries what (%v)", err)
	}
	dir := filepath.Join(repoRoot(t), "examples", "warehouse")
	out, errOut, code := runCLI("check", dir)
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "check passed: ") {
		t.Fatalf("check: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	out, errOut, code = runCLI("check", dir, "--format", "json")
	var report map[string]any
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &report) != nil || report["status"] != "ok" {
		t.Fatalf("check --format json: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	broken := t.TempDir()
	writeTree(t, broken, map[string][]byte{"app.jadpo": []byte("config {")})
	out, errOut, code = runCLI("check", broken)
	if code != exitFound || out != "" || !strings.Contains(errOut, "check failed: ") || !strings.Contains(errOut, "error[") {
		t.Fatalf("check of a broken app: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}
