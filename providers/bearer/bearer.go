// Package bearer is CredentialScheme.bearer: `Authorization: Bearer <token>`.
//
// The token is captured by a function value, so no fmt verb, log line or
// error can print it (fmt prints a function as its address); Token's own
// String, GoString, Format and LogValue write "[redacted]".
package bearer

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
)

// Token is a bearer token.
type Token struct {
	get func() string
}

// New holds token. An empty token, or one holding a control character or a
// space (it could not travel in a header), is refused; the error does not
// show the token.
func New(token string) (*Token, error) {
	if token == "" {
		return nil, errors.New("bearer: empty token")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c == 0x7f {
			return nil, errors.New("bearer: the token holds a space or a control character")
		}
	}
	return &Token{get: func() string { return token }}, nil
}

// Authorize sets `Authorization: Bearer <token>` (wire.Authenticator).
func (t *Token) Authorize(req *http.Request, body []byte) error {
	req.Header.Set("Authorization", "Bearer "+t.get())
	return nil
}

// String is "bearer.Token{[redacted]}".
func (t *Token) String() string { return "bearer.Token{[redacted]}" }

// GoString is String.
func (t *Token) GoString() string { return t.String() }

// Format writes String for every verb.
func (t *Token) Format(f fmt.State, verb rune) { io.WriteString(f, t.String()) }

// LogValue keeps the token out of log/slog output.
func (t *Token) LogValue() slog.Value { return slog.StringValue("[redacted]") }
