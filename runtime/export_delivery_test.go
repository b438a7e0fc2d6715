package runtime

import (
	"context"
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

// The engine's error texts and their codes, for the table's errors (the
// Worker's errorTexts are held to the same).

func Classify(err error) (string, bool) { return classify(err) }

func ErrHandlerMissing(subscriber, event string) error { return errHandlerMissing(subscriber, event) }

// KeptEventError is what running a handler on a kept event that is not
// JSON returns.
func KeptEventError(eventJSON []byte) error {
	return (&deliverer{}).runHandler(context.Background(), &ir.Handler{}, eventJSON)
}
