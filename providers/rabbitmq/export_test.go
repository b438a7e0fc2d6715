package rabbitmq

import "github.com/jadpo/jadpo/providers/queue"

// Holding is how many messages src holds unacknowledged (in batches not
// yet answered, and pushed and not yet received), for the harness's Held.
func Holding(src queue.Source) int { return src.(*Source).holding() }
