package store

import (
	"context"
	"time"
)

// Browser is the read side of the operator's console (runtime/console): lists that page by
// keyset, never by OFFSET, so that a page of a million rows costs what a page of a hundred
// does, and the activity the overview charts. Both adapters implement it beside Store;
// retrying and dismissing stay Store's Retry and Dismiss, with their rules.
type Browser interface {
	// BrowseParked returns up to q.Limit parked messages matching q, newest first (by id,
	// below q.Before when it is set). Bodies are not read.
	BrowseParked(ctx context.Context, q ParkedQuery) ([]Entry, error)
	// BrowseDeliveries returns up to q.Limit deliveries matching q, newest first (by id,
	// below q.Before when it is set). Event JSON is not read.
	BrowseDeliveries(ctx context.Context, q DeliveryQuery) ([]Entry, error)
	// CountParked and CountDeliveries count the rows matching q (Before and Limit aside).
	CountParked(ctx context.Context, q ParkedQuery) (int64, error)
	CountDeliveries(ctx context.Context, q DeliveryQuery) (int64, error)
	// Activity counts, per source, the received ids recorded and the messages parked at or
	// after since, in buckets of step from since: bucket i holds [since+i*step,
	// since+(i+1)*step). Only buckets with rows are returned. It reads each table through
	// its time index.
	Activity(ctx context.Context, since time.Time, step time.Duration) ([]ActivityCount, error)
	// HousekeepingRuns returns the newest recorded housekeeping runs (Store.Housekeep's
	// that deleted something), up to limit, newest first.
	HousekeepingRuns(ctx context.Context, limit int) ([]HousekeepingRun, error)
}

// ParkedQuery selects parked messages for Browser. A zero field matches every row.
type ParkedQuery struct {
	Source string
	Reason Reason
	State  ParkedState
	// Event matches the event name read, or the wire type when none was.
	Event string
	// ReceivedID is the producer's message id, matched exactly.
	ReceivedID string
	// From and To bound when the message was parked: From <= created_at < To.
	From, To time.Time
	// Before, when not 0, is the keyset cursor: only ids below it.
	Before int64
	// Limit caps the rows; 0 for 50.
	Limit int
}

// DeliveryQuery selects deliveries for Browser. A zero field matches every row.
type DeliveryQuery struct {
	Subscriber string
	// State is a row state (DeliveryStates).
	State DeliveryState
	// Event is the event's name.
	Event string
	// From and To bound when the delivery was written: From <= created_at < To.
	From, To time.Time
	Before   int64
	Limit    int
}

// PageLimit is a list page's rows when a query gives no Limit.
const PageLimit = 50

// ActivityCount is one (source, bucket) of Browser.Activity.
type ActivityCount struct {
	Source string
	// Bucket is the bucket's index from since.
	Bucket int
	// Received counts received ids recorded (each a message kept); Parked the messages
	// parked (rows created, in any state now).
	Received, Parked int64
}

// QueryLimit is q's limit, PageLimit when unset.
func (q ParkedQuery) QueryLimit() int {
	if q.Limit <= 0 {
		return PageLimit
	}
	return q.Limit
}

// QueryLimit is q's limit, PageLimit when unset.
func (q DeliveryQuery) QueryLimit() int {
	if q.Limit <= 0 {
		return PageLimit
	}
	return q.Limit
}
