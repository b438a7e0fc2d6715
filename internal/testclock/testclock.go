// Package testclock is the one origin of every test that runs on an injected
// clock. Such a test takes its times from Epoch (never from time.Date or
// time.Now), so the whole suite can be run as if on another date by setting
// JADPO_TEST_EPOCH; docs/design/testing.md gives the dates CI's rule is proven on.
//
// A test runs either wholly on an injected clock (every store write and every
// runtime call in it takes a time derived from Epoch) or wholly on the wall
// clock (time.Now, and any jadpo binary it starts), never a mix.
//
// It also holds the stand-ins' Clock (clock.go), shared by the SQS fake and
// the Cloudflare Queues fake: Wall for the machine's time, Manual for a test
// that moves time itself.
package testclock

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// EnvVar names the variable that moves the origin.
const EnvVar = "JADPO_TEST_EPOCH"

// Default is the origin when EnvVar is unset: a fixed moment, so a test that
// mixes the wall clock with an injected one fails on every run instead of
// only after some date.
var Default = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	once  sync.Once
	epoch time.Time
	err   error
)

// Epoch is the origin: JADPO_TEST_EPOCH (an RFC 3339 time) or Default. A
// malformed value panics with the fix, since no test result would mean
// anything then.
func Epoch() time.Time {
	once.Do(func() { epoch, err = Parse(os.Getenv(EnvVar)) })
	if err != nil {
		panic(err)
	}
	return epoch
}

// Parse reads a value of JADPO_TEST_EPOCH; "" is Default.
func Parse(v string) (time.Time, error) {
	if v == "" {
		return Default, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s=%q: want an RFC 3339 time such as 2027-01-31T23:59:59Z (for example %s=$(date -u -d '-31 days' +%%Y-%%m-%%dT%%H:%%M:%%SZ))", EnvVar, v, EnvVar)
	}
	// Microseconds: both stores keep times to the microsecond, so an origin
	// with nanoseconds would not compare equal to what is read back.
	return t.UTC().Truncate(time.Microsecond), nil
}
