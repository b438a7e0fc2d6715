package runtime

import (
	"regexp"
	"strings"
	"testing"
)

var errorShape = regexp.MustCompile(`^line [0-9]+ is not NAME=value$`)

// FuzzDotenv: .env.local parsing never panics, and a value it reads never
// shows up in its error (the error names a line number, never a value).
func FuzzDotenv(f *testing.F) {
	f.Add([]byte("A=1\n# c\nexport B='two'\nC=\"three\"\n"))
	f.Add([]byte("no equals sign here\n"))
	f.Add([]byte("=\n\"\n'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := parseDotenv(data)
		if err != nil {
			if !errorShape.MatchString(err.Error()) {
				t.Fatalf("the error says more than a line number: %v", err)
			}
			return
		}
		for k := range env {
			if strings.ContainsAny(k, "\n") {
				t.Fatalf("a name with a line break: %q", k)
			}
		}
	})
}
