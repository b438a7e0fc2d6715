package runtime

import (
	"fmt"
	"net/http"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/queue"
)

// QueueConn is connection name of p as a queue driver opens it, its values
// resolved from cfg and its client sending with hc (nil: the runtime's
// default client): what New hands providers.OpenQueue. The drivers' own
// conformance tests open their Source with it (providers/queue/queuetest).
func QueueConn(p *ir.Program, name string, cfg *Config, hc *http.Client) (*queue.Conn, error) {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	for i := range p.Connections {
		if p.Connections[i].Name == name {
			c, err := newConnection(p, &p.Connections[i], cfg, hc)
			if err != nil {
				return nil, err
			}
			return c.queueConn(), nil
		}
	}
	return nil, fmt.Errorf("the plan has no connection %s", name)
}
