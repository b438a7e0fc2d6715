package standin

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/jadpo/jadpo/providers/sqlinbox"
)

// DialFunc opens a network connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// LoopbackOnly refuses every address that is not on this machine before
// anything is dialled or looked up: dev's last guard, should a connection
// escape the stand-ins (they all listen on 127.0.0.1).
func LoopbackOnly(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network == "unix" {
			return dial(ctx, network, addr)
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !loopbackHost(host) {
			return nil, fmt.Errorf("jadpo dev refused to connect to %s: dev never leaves this machine", addr)
		}
		return dial(ctx, network, addr)
	}
}

// loopbackHost reports whether host names this machine: localhost or a
// loopback address (127.0.0.0/8, ::1).
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackURL reports whether u is an http(s) URL whose host is on this
// machine.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && loopbackHost(p.Hostname())
}

// remoteDatabaseHost is the first host of a database URL (the store's, a
// SQL inbox's) that is not on this machine: sqlinbox.RemoteHost.
func remoteDatabaseHost(rawURL string) (string, error) { return sqlinbox.RemoteHost(rawURL) }
