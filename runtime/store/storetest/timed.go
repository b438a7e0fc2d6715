package storetest

import (
	"context"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

// Timed is a store each of whose calls says what time it is: it pins the store's clock to
// that time (store.Store.SetClock), then makes the call. Tests that need the store's time
// exact write it as an argument, as the store's interface once took it; the store itself
// keeps its own clock (docs/design/store.md, "One clock: the store's"). Calls made at once
// with different times are not for Timed: the pin is the store's, not the call's.
type Timed struct{ store.Store }

// At returns s with its clock pinned to now, for a call of the store's own interface.
func (s Timed) At(now time.Time) store.Store {
	now = now.UTC()
	s.Store.SetClock(func() time.Time { return now })
	return s.Store
}

// KeepBatch keeps at now.
func (s Timed) KeepBatch(ctx context.Context, now time.Time, keeps []store.Keep) ([]store.KeepResult, error) {
	return s.At(now).KeepBatch(ctx, keeps)
}

// Park parks at now.
func (s Timed) Park(ctx context.Context, now time.Time, p store.Parked) (store.ParkResult, store.ID, error) {
	return s.At(now).Park(ctx, p)
}

// ClaimDeliveries claims at now.
func (s Timed) ClaimDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]store.Claimed, error) {
	return s.At(now).ClaimDeliveries(ctx, limit, lease)
}

// SettleDelivery settles at now.
func (s Timed) SettleDelivery(ctx context.Context, now time.Time, st store.Settlement) (bool, error) {
	return s.At(now).SettleDelivery(ctx, st)
}

// SettleDeliveries settles at now.
func (s Timed) SettleDeliveries(ctx context.Context, now time.Time, sts []store.Settlement) ([]bool, error) {
	return s.At(now).SettleDeliveries(ctx, sts)
}

// SettleAndClaim settles and claims at now.
func (s Timed) SettleAndClaim(ctx context.Context, now time.Time, sts []store.Settlement, limit int, lease time.Duration) ([]bool, []store.Claimed, error) {
	return s.At(now).SettleAndClaim(ctx, sts, limit, lease)
}

// Retry retries at now.
func (s Timed) Retry(ctx context.Context, now time.Time, ids []store.ID) error {
	return s.At(now).Retry(ctx, ids)
}

// Dismiss dismisses at now.
func (s Timed) Dismiss(ctx context.Context, now time.Time, ids []store.ID) error {
	return s.At(now).Dismiss(ctx, ids)
}

// Housekeep housekeeps at now.
func (s Timed) Housekeep(ctx context.Context, now time.Time, o store.Housekeeping) (store.Housekept, error) {
	return s.At(now).Housekeep(ctx, o)
}
