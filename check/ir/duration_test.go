package ir

import (
	"testing"
	"time"
)

// The one duration grammar of the checker, the runtime and the body reader.
func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"0s": 0, "250ms": 250 * time.Millisecond, "30s": 30 * time.Second, "10m": 10 * time.Minute,
		"1h": time.Hour, "1d": 24 * time.Hour, "30d": 30 * 24 * time.Hour,
		"106751d": 106751 * 24 * time.Hour, "9223372036854ms": 9223372036854 * time.Millisecond,
	}
	for s, want := range good {
		if d, err := ParseDuration(s); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
	for _, s := range []string{"", "s", "1", "1x", "-1s", "+1s", "1.5s", "01s", "1 s", "1h30m", "1S", "106752d",
		"9999999999999ms", "9223372036855ms", "99999999999999999999s"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, d)
		}
	}
}
