package wire

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// What every HTTP protocol (aws_json, json_http) reads the same way: a
// connection's host and a refusal's code at a dotted path.

// ParseHost reads a connection's host as a base URL: "https://" is assumed
// without a scheme; user information, a query and a fragment are refused.
func ParseHost(host string) (*url.URL, error) {
	if host == "" {
		return nil, fmt.Errorf("no host")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("host is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("host scheme must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("host has no host name")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("host must not carry user information, a query or a fragment")
	}
	return u, nil
}

// Lookup follows a dotted path ("error.code", "errors.0.code") into a value
// decoded by encoding/json. A member name holding dots is found whole first:
// "__type" and "x.y" as one member both work.
func Lookup(v any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	if m, ok := v.(map[string]any); ok {
		if x, ok := m[path]; ok {
			return x, true
		}
	}
	head, rest, more := strings.Cut(path, ".")
	var next any
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[head]
		if !ok {
			return nil, false
		}
		next = x
	case []any:
		i, err := strconv.Atoi(head)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		next = c[i]
	default:
		return nil, false
	}
	if !more {
		return next, true
	}
	return Lookup(next, rest)
}
