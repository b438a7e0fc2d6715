package sqlinbox

import (
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// RemoteHost returns the first host of a database URL that is not on
// this machine (not loopback, not a unix socket), "" when every one is. A
// PostgreSQL URL is read as pgx reads it (its query's host=, several hosts,
// PGHOST), so what is checked is what would be dialled. An error says only
// what is wrong: the URL may hold a password.
func RemoteHost(rawURL string) (string, error) {
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
		if !strings.HasPrefix(h, "/") && !loopback(h) {
			return h, nil
		}
	}
	return "", nil
}

// loopback reports whether host names this machine: localhost or a
// loopback address (127.0.0.0/8, ::1).
func loopback(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
