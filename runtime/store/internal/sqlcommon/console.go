package sqlcommon

import (
	"math"

	"github.com/jadpo/jadpo/runtime/store"
)

// Cursor is a keyset cursor as the console's statements take it: ids below before, every
// id when before is 0.
func Cursor(before int64) int64 {
	if before <= 0 {
		return math.MaxInt64
	}
	return before
}

// ActivityCounts gathers the rows of Browser.Activity's two statements: counts per
// (source, bucket), in the order first seen.
type ActivityCounts struct {
	at  map[activityKey]int
	out []store.ActivityCount
}

type activityKey struct {
	source string
	bucket int
}

// Add counts n received ids (parked false) or parked messages of source in bucket.
func (a *ActivityCounts) Add(source string, bucket int, n int64, parked bool) {
	if a.at == nil {
		a.at = map[activityKey]int{}
	}
	k := activityKey{source, bucket}
	i, ok := a.at[k]
	if !ok {
		i = len(a.out)
		a.at[k] = i
		a.out = append(a.out, store.ActivityCount{Source: source, Bucket: bucket})
	}
	if parked {
		a.out[i].Parked += n
	} else {
		a.out[i].Received += n
	}
}

// Counts are the counts added.
func (a *ActivityCounts) Counts() []store.ActivityCount { return a.out }
