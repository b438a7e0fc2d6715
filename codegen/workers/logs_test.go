package workers

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The Worker's log lines are listed for operators in docs/workers.md ("Its
// log lines"), as guide/operating.md lists jadpo run's (cmd/jadpo's
// TestOperatingDocuments): every message jadpo.mjs and config.mjs write has
// a row, and every row is a message one of them writes.
func TestWorkerLogLinesAreDocumented(t *testing.T) {
	logged := map[string]string{} // message -> where
	anyCall := regexp.MustCompile(`console\.[a-z]+\(`)
	call := regexp.MustCompile(`console\.(?:log|error)\(JSON\.stringify\(\{ msg: "([^"]+)"`)
	for _, file := range []string{"jadpo.mjs", "config.mjs"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		for _, m := range anyCall.FindAllStringIndex(text, -1) {
			line := strings.Count(text[:m[0]], "\n") + 1
			c := call.FindStringSubmatch(text[m[0]:])
			if c == nil || !strings.HasPrefix(text[m[0]:], c[0]) {
				t.Errorf(`%s:%d logs other than console.log or console.error(JSON.stringify({ msg: "...", ... })); write it so, for this test reads the message`, file, line)
				continue
			}
			logged[c[1]] = file + ":" + strconv.Itoa(line)
		}
	}
	if len(logged) == 0 {
		t.Fatal("no log line found in jadpo.mjs")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "workers.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Its log lines\n")
	if start < 0 {
		t.Fatal(`docs/workers.md has no "## Its log lines" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	rows := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		rows[m[1]] = true
	}
	for msg, at := range logged {
		if !rows[msg] {
			t.Errorf("%s logs %q, which docs/workers.md's table of log lines does not list", at, msg)
		}
	}
	for msg := range rows {
		if _, ok := logged[msg]; !ok {
			t.Errorf("docs/workers.md lists the log line %q, which neither jadpo.mjs nor config.mjs writes", msg)
		}
	}
}
