package sigv4

import (
	"fmt"
	"io"
	"log/slog"
)

// Credentials are an AWS access key: its id, its secret and, for temporary
// credentials, a session token.
//
// The secret and the token are captured by a function value: fmt prints a
// function as its address and never reaches what it holds, whatever the verb
// and however deep the Credentials sit in another value (a pointer would not
// do: a wrong verb makes fmt print what a pointer points at). Credentials' own
// String, GoString, Format, LogValue and MarshalText write "[redacted]".
type Credentials struct {
	KeyID string
	parts func() (secret, token string)
}

// NewCredentials holds an access key id, its secret and an optional session
// token ("" for none).
func NewCredentials(keyID, secret, sessionToken string) Credentials {
	return Credentials{KeyID: keyID, parts: func() (string, string) { return secret, sessionToken }}
}

// Valid reports whether both the key id and the secret are set.
func (c Credentials) Valid() bool { return c.KeyID != "" && c.secret() != "" }

// HasSessionToken reports whether a session token is held.
func (c Credentials) HasSessionToken() bool { return c.sessionToken() != "" }

func (c Credentials) secret() string {
	if c.parts == nil {
		return ""
	}
	s, _ := c.parts()
	return s
}

func (c Credentials) sessionToken() string {
	if c.parts == nil {
		return ""
	}
	_, t := c.parts()
	return t
}

// String shows the key id only.
func (c Credentials) String() string {
	tok := ""
	if c.HasSessionToken() {
		tok = " SessionToken:[redacted]"
	}
	return "sigv4.Credentials{KeyID:" + c.KeyID + " Secret:[redacted]" + tok + "}"
}

// GoString is String: %#v shows no secret either.
func (c Credentials) GoString() string { return c.String() }

// Format writes String for every verb.
func (c Credentials) Format(f fmt.State, verb rune) { io.WriteString(f, c.String()) }

// LogValue keeps the secret out of log/slog output.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("key_id", c.KeyID), slog.String("secret", "[redacted]"))
}

// MarshalText writes String, so encoding/json and friends show no secret.
func (c Credentials) MarshalText() ([]byte, error) { return []byte(c.String()), nil }
