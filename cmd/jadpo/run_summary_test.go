package main

import (
	"testing"

	"github.com/jadpo/jadpo/runtime"
)

// The tick's summary names retried parked messages that were already kept
// (added nothing) only when there are some: its common form is unchanged.
func TestSummaryNamesRetriedRepeats(t *testing.T) {
	if got := retriedRepeats(runtime.TickReport{}); got != "" {
		t.Errorf("no repeats: %q, want nothing", got)
	}
	if got := retriedRepeats(runtime.TickReport{RetriedRepeats: 2}); got != ", repeats 2" {
		t.Errorf("two repeats: %q", got)
	}
}
