// Package jsonhttp is Protocol.json_http: a JSON-over-HTTP API described by
// each operation's `method:` and `path:`.
//
//   - The request is `<method> <host><path>`, the path's `{setting}`
//     placeholders filled with the connection's settings, each escaped as one
//     path segment (url.PathEscape; url.QueryEscape after a '?').
//   - The body is the input as JSON with `Content-Type: application/json`;
//     an operation without input sends no body.
//   - Members are named as the fields are, or by `wire_name:`.
//   - A refusal's code is read at `error_code:`, a dotted path into the JSON
//     body ("errors.0.code"): text is turned into lower_snake_case, a whole
//     number n becomes "code_<n>"; with nothing there the code is
//     http_<status>.
package jsonhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// Protocol implements wire.Protocol for json_http.
type Protocol struct {
	base      *url.URL
	settings  map[string]string
	errorCode string
}

// New makes the protocol for a connection sending to host (a URL; "https://"
// assumed without a scheme; a path on it prefixes every operation's path),
// with its settings (copied) and the package's error_code ("" for none).
func New(host string, settings map[string]string, errorCode string) (*Protocol, error) {
	u, err := wire.ParseHost(host)
	if err != nil {
		return nil, err
	}
	s := make(map[string]string, len(settings))
	for k, v := range settings {
		s[k] = v
	}
	return &Protocol{base: u, settings: s, errorCode: errorCode}, nil
}

// Name is "json_http".
func (p *Protocol) Name() string { return string(ir.ProtocolJSONHTTP) }

// Naming names members as the fields are named.
func (p *Protocol) Naming() wire.Naming { return func(name string) string { return name } }

// NewRequest builds `<method> <path>` with the body as JSON.
func (p *Protocol) NewRequest(ctx context.Context, op *wire.Operation, body []byte) (*http.Request, error) {
	method := strings.ToUpper(op.Method)
	if method == "" {
		return nil, fmt.Errorf("%s: json_http needs the operation's `method:`", op.FullName())
	}
	if op.Path == "" || op.Path[0] != '/' {
		return nil, fmt.Errorf("%s: json_http needs a `path:` starting with /", op.FullName())
	}
	path, err := FillPath(op.Path, p.settings)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.FullName(), err)
	}
	u := strings.TrimSuffix(p.base.String(), "/") + path
	var req *http.Request
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: bad request URL", op.FullName())
	}
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	req.Header["Accept"] = []string{"application/json"}
	return req, nil
}

// FillPath replaces each `{name}` in path with the setting's value, escaped
// as one path segment (as a query component after '?'). A placeholder naming
// no setting, or an unclosed brace, is an error naming the placeholder.
func FillPath(path string, settings map[string]string) (string, error) {
	var b strings.Builder
	inQuery := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch c {
		case '?':
			inQuery = true
			b.WriteByte(c)
		case '{':
			end := strings.IndexByte(path[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("path %q has an unclosed {", path)
			}
			name := path[i+1 : i+end]
			v, ok := settings[name]
			if !ok {
				return "", fmt.Errorf("path placeholder {%s} names no setting", name)
			}
			if inQuery {
				b.WriteString(url.QueryEscape(v))
			} else {
				b.WriteString(url.PathEscape(v))
			}
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// Refusal reads the code at error_code and a top-level "message".
func (p *Protocol) Refusal(status int, header http.Header, body []byte) (string, string) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", ""
	}
	code := ""
	if p.errorCode != "" {
		if raw, ok := wire.Lookup(v, p.errorCode); ok {
			code = CodeOf(raw)
		}
	}
	msg := ""
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["message"].(string); ok {
			msg = s
		}
	}
	return code, msg
}

// CodeOf turns a value found at error_code into a refusal code: text in
// lower_snake_case, a whole number n as "code_<n>", anything else "".
func CodeOf(v any) string {
	switch c := v.(type) {
	case string:
		return wire.ToLowerSnake(c)
	case json.Number:
		s := string(c)
		if strings.HasPrefix(s, "-") || strings.ContainsAny(s, ".eE") || s == "" {
			return ""
		}
		return "code_" + s
	}
	return ""
}
