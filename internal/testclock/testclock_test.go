package testclock

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"", Default},
		{"2027-01-31T23:59:59Z", time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)},
		{"2027-02-01T14:00:01+14:00", time.Date(2027, 2, 1, 0, 0, 1, 0, time.UTC)},
		{"2027-02-01T00:00:01.123456789Z", time.Date(2027, 2, 1, 0, 0, 1, 123456000, time.UTC)},
	} {
		got, err := Parse(c.in)
		if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("Parse(%q) = %v, %v; want %v in UTC", c.in, got, err, c.want)
		}
	}
	if _, err := Parse("yesterday"); err == nil || !strings.Contains(err.Error(), "RFC 3339") || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("Parse(yesterday) = %v; want an error naming %s and the format", err, EnvVar)
	}
}

// No test fixes a date of its own: every injected clock starts at Epoch, so
// JADPO_TEST_EPOCH moves them all. The exceptions are inputs of pure
// functions whose expected outputs contain the date (the AWS SigV4 suite).
func TestNoTestFixesADate(t *testing.T) {
	root := reporoot.Dir(t)
	allowed := map[string]string{
		"providers/sigv4/suite_test.go":        "the AWS SigV4 test suite's vectors are signed at 20150830T123600Z",
		"providers/sigv4/differential_test.go": "the differential test signs at the suite's date",
		"internal/testclock/testclock_test.go": "parses fixed dates",
	}
	fixed := regexp.MustCompile(`time\.(Date|Unix|UnixMilli|UnixMicro)\(`)
	helpers := []string{"runtime/store/storetest/", "runtime/runtimetest/", "runtime/store/pgtest/", "runtime/internal/workload/", "check/checktest/"}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		isHelper := false
		for _, h := range helpers {
			isHelper = isHelper || strings.HasPrefix(rel, h)
		}
		if !strings.HasSuffix(rel, ".go") || (!strings.HasSuffix(rel, "_test.go") && !isHelper) {
			return nil
		}
		if _, ok := allowed[rel]; ok {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if fixed.MatchString(line) {
				t.Errorf("%s:%d fixes a date (%s): start from testclock.Epoch() instead (docs/design/testing.md, \"Clocks\")", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d test files checked; the walk missed the tree", checked)
	}
}
