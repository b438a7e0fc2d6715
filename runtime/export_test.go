package runtime

// SetSettleQueuedHook makes rt's delivery engine call f each time a
// handler's settlement is handed to its settler (TestSettlementsFinishing
// TogetherShareOneTransaction).
func SetSettleQueuedHook(rt *Runtime, f func()) { rt.deliver.queuedHook = f }
