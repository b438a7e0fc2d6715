package rabbitmq

import "github.com/jadpo/jadpo/providers/queue"

// Holding is how many messages src holds unacknowledged (in batches not
// yet answered, and pushed and not yet received), for the harness's Held.
func Holding(src queue.Source) int { return src.(*Source).holding() }

// Sync makes a round trip on src's channel, so that the broker has read
// every frame src sent before it (its acknowledgements, its hand-backs).
func Sync(src queue.Source) {
	s := src.(*Source)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		_ = s.ch.ch.Qos(s.prefetch, 0, false)
	}
}
