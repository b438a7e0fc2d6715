package providers

import (
	"fmt"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/cfqueues"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/receiving"
	"github.com/jadpo/jadpo/providers/sqlinbox"
)

// queueDrivers open a queue's Source by the driver the plan names.
var queueDrivers = map[ir.Driver]queue.Opener{
	ir.DriverMapping:          receiving.Open,
	ir.DriverCloudflareQueues: cfqueues.Open,
	ir.DriverSQLInbox:         sqlinbox.OpenSource,
}

// OpenQueue opens one queue of conn with the driver its receiving names.
func OpenQueue(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	d := conn.Receiving.Driver
	open, ok := queueDrivers[d]
	if !ok {
		return nil, fmt.Errorf("the %s driver is not built into this runtime", d)
	}
	return open(conn, opts)
}
