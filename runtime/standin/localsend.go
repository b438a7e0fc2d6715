package standin

import (
	"fmt"

	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/runtime"
)

// local is a queue on a server of this machine (a RabbitMQ broker) that
// dev sends typed lines to through its driver's LocalSend.
type local struct {
	driver   *queue.Driver
	conn     *queue.Conn
	describe string
}

// prepareLocals readies Send for each queue whose driver dev runs against
// a server on this machine and sends to itself (queue.Driver.LocalSend):
// checkLocal has refused any other host.
func (w *World) prepareLocals() error {
	for i := range w.Plan.Connections {
		c := &w.Plan.Connections[i]
		d := localDriver(c)
		if d == nil || d.LocalSend == nil {
			continue
		}
		for _, q := range w.Plan.Queues {
			if q.Connection != c.Name {
				continue
			}
			qc, err := runtime.QueueConn(w.Plan, c.Name, w.Config, nil)
			if err != nil {
				return Error{"jadpo dev: connection " + c.Name + ": " + err.Error()}
			}
			where := "its credential's " + d.LocalURL
			if v := c.Credential[d.LocalURL]; v.Config != "" {
				where = w.binding(v.Config)
			}
			if w.locals == nil {
				w.locals = map[string]*local{}
			}
			w.locals[q.Name] = &local{driver: d, conn: qc,
				describe: fmt.Sprintf("%s queue of connection %s, on the %s of %s", d.Name(), c.Name, d.LocalWhat, where)}
		}
	}
	return nil
}
