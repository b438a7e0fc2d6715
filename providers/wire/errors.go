package wire

import (
	"errors"
	"fmt"
	"regexp"
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
	// bytes). It is never part of Error(): a provider may quote a value in it
	// (only AWS's fixed clock-skew texts are, see SkewMessage).
	Message string
	// Credential is set when the refusal reads as the provider refusing the
	// request's credential (IsCredentialRefusal): Error() then says what to
	// check, since the code alone ("http_403") rarely does.
	Credential *CredentialHint
}

// CredentialHint is what a refusal of the credential tells the operator to
// check. It holds names, never values.
type CredentialHint struct {
	// Fields are the config fields the connection's credential is read from,
	// as the operator sets them; none means they are not known here.
	Fields []string
	// SigV4 marks a request signed with AWS Signature Version 4, whose
	// signature carries this machine's clock: AWS refuses one more than 15
	// minutes off its own.
	SigV4 bool
}

// Error names the operation, the code and the status; never the message. A
// refusal of the credential adds what to check.
func (r *Refusal) Error() string {
	kind := "permanent"
	if r.Temporary {
		kind = "temporary"
	}
	s := fmt.Sprintf("%s refused: %s (HTTP %d, %s)", r.Operation, r.Code, r.Status, kind)
	if r.Credential != nil {
		s += "; " + r.Credential.text()
		if r.Credential.SigV4 {
			if m := SkewMessage(r.Message); m != "" {
				s += "; AWS says: " + m
			}
		}
	}
	return s
}

// text is worded as what to check, not as a finding: a 403 may be a
// permission, or another refusal a provider answers with 403.
func (h *CredentialHint) text() string {
	s := "check the connection's credential"
	if len(h.Fields) == 1 {
		s = "check the credential's config field " + h.Fields[0]
	} else if len(h.Fields) > 1 {
		s = "check the credential's config fields " + strings.Join(h.Fields, ", ")
	}
	if h.SigV4 {
		s += " and this machine's clock (AWS allows 15 minutes of skew)"
	}
	return s
}

// skewText is AWS's own text for a signature dated outside its 15 minutes:
// timestamps and fixed words only, so it can be shown whole.
var skewText = regexp.MustCompile(`^Signature (expired: \d{8}T\d{6}Z is now earlier than|not yet current: \d{8}T\d{6}Z is still later than) \d{8}T\d{6}Z \(\d{8}T\d{6}Z [-+] \d{1,3} min\.\)$`)

// SkewMessage gives message when it is AWS's fixed "Signature expired: ..."
// (or "Signature not yet current: ...") text, which holds only timestamps,
// and "" for any other: a provider's text is otherwise never shown.
func SkewMessage(message string) string {
	if skewText.MatchString(message) {
		return message
	}
	return ""
}

// IsCredentialRefusal reports whether a refusal reads as the provider
// refusing the request's credential: HTTP 401 or 403, or one of AWS's codes
// for a bad, expired or unknown signature or key (as awsjson.ErrorCode
// spells them, with or without "_exception"), which AWS answers with a 400.
func IsCredentialRefusal(status int, code string) bool {
	if status == 401 || status == 403 {
		return true
	}
	_, ok := credentialCodes[strings.TrimSuffix(code, "_exception")]
	return ok
}

var credentialCodes = map[string]struct{}{
	"invalid_signature":            {},
	"incomplete_signature":         {},
	"signature_does_not_match":     {},
	"missing_authentication_token": {},
	"unrecognized_client":          {},
	"invalid_client_token_id":      {},
	"invalid_access_key_id":        {},
	"expired_token":                {},
	"request_expired":              {},
	"access_denied":                {},
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

// WithCredential sets r.Credential to h when r reads as a refusal of the
// credential (IsCredentialRefusal), and returns r.
func (r *Refusal) WithCredential(h CredentialHint) *Refusal {
	if IsCredentialRefusal(r.Status, r.Code) {
		r.Credential = &h
	}
	return r
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
