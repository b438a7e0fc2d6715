package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Refusal is a provider's answer with a non-2xx status: it was reached and
// said no. Code is the protocol's reading of the answer (lower_snake_case, for
// example "queue_does_not_exist"), or "http_<status>" when the answer names
// no code.
type Refusal struct {
	Operation string // "resource.operation"
	Code      string
	Status    int
	// Temporary marks a refusal worth trying again later: 5xx, 429, and codes
	// containing "throttl", "unavailable", "internal_error" or
	// "request_timeout".
	Temporary bool
	// Message is the provider's own text, when it gives one (at most 512
	// bytes). It is never part of Error(): a provider may quote a value in it.
	Message string
}

// Error names the operation, the code and the status; never the message.
func (r *Refusal) Error() string {
	kind := "permanent"
	if r.Temporary {
		kind = "temporary"
	}
	return fmt.Sprintf("%s refused: %s (HTTP %d, %s)", r.Operation, r.Code, r.Status, kind)
}

// NewRefusal builds a Refusal, filling the code's fallback and Temporary.
func NewRefusal(operation string, status int, code, message string) *Refusal {
	if code == "" {
		code = "http_" + strconv.Itoa(status)
	}
	if len(message) > 512 {
		message = message[:512]
	}
	return &Refusal{
		Operation: operation,
		Code:      code,
		Status:    status,
		Temporary: IsTemporary(status, code),
		Message:   message,
	}
}

// IsTemporary reports whether a refusal with this status and code is
// temporary: any 5xx, 429, or a code containing "throttl", "unavailable",
// "internal_error" or "request_timeout".
func IsTemporary(status int, code string) bool {
	if status >= 500 && status <= 599 || status == 429 {
		return true
	}
	for _, part := range temporaryParts {
		if strings.Contains(code, part) {
			return true
		}
	}
	return false
}

var temporaryParts = []string{"throttl", "unavailable", "internal_error", "request_timeout"}

// TransportError is a call that got no answer: the connection failed, was
// dropped, timed out, or the answer could not be read whole. Whether the
// provider acted on the request is unknown, which is why only retry-safe
// operations are sent again.
type TransportError struct {
	Operation string // "resource.operation"
	Attempts  int    // requests sent, the first included
	// Retried reports whether the request was sent more than once.
	Retried bool
	Err     error
}

// Temporary is always true: a transport failure may clear by itself.
func (e *TransportError) Temporary() bool { return true }

// Error names the operation and the attempts and wraps the cause.
func (e *TransportError) Error() string {
	return fmt.Sprintf("%s: no answer after %d attempt(s): %v", e.Operation, e.Attempts, e.Err)
}

// Unwrap gives the cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *TransportError) Unwrap() error { return e.Err }

// DecodeError is an answer (or an input) that does not fit its shape. Path is
// the dotted field path ("messages.2.body"; "" for the whole value) and Rule
// one of "required", "type" or "json". It never carries the value.
type DecodeError struct {
	Operation string
	Input     bool // true: the input did not fit; false: the answer did not
	Path      string
	Rule      string
}

// Error names the side, the path and the rule.
func (e *DecodeError) Error() string {
	side := "answer"
	if e.Input {
		side = "input"
	}
	path := e.Path
	if path == "" {
		path = "(root)"
	}
	op := ""
	if e.Operation != "" {
		op = e.Operation + ": "
	}
	return fmt.Sprintf("%s%s does not fit its shape at %s: %s", op, side, path, e.Rule)
}

// IsTemporaryError reports whether err (a Refusal or a TransportError, possibly
// wrapped) is worth trying again later.
func IsTemporaryError(err error) bool {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Temporary
	}
	var t *TransportError
	return errors.As(err, &t)
}
