package ir

import (
	"fmt"
	"math"
	"time"
)

// MaxDurationDays is the longest duration the language holds, in days: what
// int64 nanoseconds hold (106751d, 23h 47m). Every unit is bounded the same
// way: at most math.MaxInt64 nanoseconds.
const MaxDurationDays = 106751

// DurationGrammar says in the user's terms what ParseDuration accepts, for
// errors.
const DurationGrammar = "a whole number of ms, s, m, h or d such as `30s` or `1d`, at most 106751d"

// ParseDuration reads a duration as the language writes it (language.md,
// reading.md): a whole number, with no sign, fraction, space or leading zero
// ("0s" is one), straight followed by one unit, ms, s, m, h or d, whose
// length fits in int64 nanoseconds. The checker (duration literals), the
// runtime (config values, settings from the plan) and the body reader all
// read durations with it, so what `check` accepts the runtime takes.
func ParseDuration(s string) (time.Duration, error) {
	d, ok := DurationOf([]byte(s))
	if !ok {
		return 0, fmt.Errorf("%q is not a duration: write %s", s, DurationGrammar)
	}
	return d, nil
}

// DurationOf is ParseDuration for bytes, without an error to build (the body
// reader calls it for every Duration field).
func DurationOf(s []byte) (time.Duration, bool) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n > 19 || s[0] == '0' && n > 1 {
		return 0, false
	}
	var unit time.Duration
	switch string(s[n:]) {
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, false
	}
	var v uint64
	for _, c := range s[:n] {
		v = v*10 + uint64(c-'0') // 19 digits at most: no overflow
	}
	if v > uint64(math.MaxInt64/int64(unit)) {
		return 0, false
	}
	return time.Duration(v) * unit, true
}
