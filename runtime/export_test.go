package runtime

import "time"

// SetSettleQueuedHook makes rt's delivery engine call f each time a
// handler has handed its settlement to the run loop
// (TestSettlementsFinishingTogetherShareOneTransaction).
func SetSettleQueuedHook(rt *Runtime, f func()) { rt.deliver.queuedHook = f }

// SetHandlerPace sets the pace rt's delivery engine believes its handlers
// keep (TestDeliverClaimsOnlyWhatWorkersCanStart).
func SetHandlerPace(rt *Runtime, pace time.Duration) { rt.deliver.pace.Store(int64(pace)) }
