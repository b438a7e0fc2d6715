package runtime

// SetSettleQueuedHook makes rt's delivery engine call f each time a
// handler has handed its settlement to the run loop
// (TestSettlementsFinishingTogetherShareOneTransaction).
func SetSettleQueuedHook(rt *Runtime, f func()) { rt.deliver.queuedHook = f }
