package runtime

import (
	"context"
	"net"
	"sync/atomic"
)

// The broker benchmarks count their clients' round trips by the writes on
// the connections they dial (RabbitMQ's frames, Redis's commands).

// countingConn counts the writes of a client's connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) { c.writes.Add(1); return c.Conn.Write(p) }

func countingDial(writes *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, writes}, nil
	}
}
