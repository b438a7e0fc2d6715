package providers

import (
	"fmt"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/cfqueues"
	"github.com/jadpo/jadpo/providers/natsjs"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/rabbitmq"
	"github.com/jadpo/jadpo/providers/receiving"
	"github.com/jadpo/jadpo/providers/redisstreams"
	"github.com/jadpo/jadpo/providers/sqlinbox"
)

// Drivers are the queue drivers built into the toolchain, one line each:
// the one place a driver is registered. The commands hand their contracts
// to the checker (Contracts, with the project), the runtime opens a queue
// with the one its plan names (OpenQueue) and `jadpo dev` starts their
// stand-ins (runtime/standin). docs/design/architecture.md, "Adding a queue
// driver", says what else a new one needs.
var Drivers = []*queue.Driver{
	&receiving.Driver,
	&cfqueues.Driver,
	&sqlinbox.Driver,
	&redisstreams.Driver,
	&rabbitmq.Driver,
	&natsjs.Driver,
}

// Contracts are the built-in drivers' contracts (the mapping's, which the
// package writes itself, left out), for project.Project.Drivers.
func Contracts() []ir.DriverContract {
	var out []ir.DriverContract
	for _, d := range Drivers {
		if d.Name() != ir.DriverMapping {
			out = append(out, d.Contract)
		}
	}
	return out
}

// DriverNamed is the built-in driver of that name, nil for none.
func DriverNamed(name ir.Driver) *queue.Driver {
	for _, d := range Drivers {
		if d.Name() == name {
			return d
		}
	}
	return nil
}

// OpenQueue opens one queue of conn with the driver its receiving names.
func OpenQueue(conn *queue.Conn, opts queue.Options) (queue.Source, error) {
	d := DriverNamed(conn.Receiving.Driver)
	if d == nil {
		return nil, fmt.Errorf("the %s driver is not built into this runtime", conn.Receiving.Driver)
	}
	return d.Open(conn, opts)
}
