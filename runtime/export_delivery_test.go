package runtime

import (
	"time"

	"github.com/jadpo/jadpo/check/ir"
)

// The engine's backoff and its HTTP client's timeout, for the shared
// delivery table (TestDeliveryTable, testdata/delivery/table.json).

func BackoffCeiling(r ir.Retry, n int) time.Duration { return backoffCeiling(r, n) }

func BackoffDraw(r ir.Retry, n int, rnd interface{ Int64N(int64) int64 }) time.Duration {
	return backoffDraw(r, n, rnd)
}

func DefaultHTTPTimeout() time.Duration { return defaultHTTPClient().Timeout }
