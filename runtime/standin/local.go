package standin

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
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

// remoteDatabaseHost returns the first host of a database URL that is not on
// this machine (not loopback, not a unix socket), "" when every one is. A
// PostgreSQL URL is read as pgx reads it (its query's host=, several hosts,
// PGHOST), so what is checked is what would be dialled. An error says only
// what is wrong: the URL may hold a password.
func remoteDatabaseHost(rawURL string) (string, error) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch strings.ToLower(scheme) {
	case "sqlite":
		return "", nil
	case "postgres", "postgresql":
	default:
		return "", fmt.Errorf("not a database URL (postgres://..., sqlite:PATH)")
	}
	cfg, err := pgconn.ParseConfig(rawURL)
	if err != nil {
		return "", fmt.Errorf("not a PostgreSQL URL")
	}
	hosts := []string{cfg.Host}
	for _, f := range cfg.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if !strings.HasPrefix(h, "/") && !loopbackHost(h) {
			return h, nil
		}
	}
	return "", nil
}
