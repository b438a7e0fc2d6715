package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// Protocol frames a call on one provider protocol (aws_json, json_http).
type Protocol interface {
	// Name is the protocol's name, e.g. "aws_json".
	Name() string
	// Naming names a field's member on this protocol's wire.
	Naming() Naming
	// NewRequest builds the HTTP request for op. body is the encoded input,
	// nil when the operation takes no input.
	NewRequest(ctx context.Context, op *Operation, body []byte) (*http.Request, error)
	// Refusal reads a non-2xx answer's code (lower_snake_case, "" when the
	// answer names none) and the provider's message ("" when none).
	Refusal(status int, header http.Header, body []byte) (code, message string)
}

// Authenticator adds a credential to a request just before it is sent (once
// per attempt, so a signature carries the attempt's own time).
type Authenticator interface {
	Authorize(req *http.Request, body []byte) error
}

// Config assembles a Client.
type Config struct {
	Protocol Protocol      // required
	Auth     Authenticator // nil: requests are sent without a credential
	// HTTP sends the requests; nil means a client with a 60 s timeout.
	HTTP *http.Client
	// MaxAttempts bounds the requests sent for a retry-safe operation whose
	// attempts fail in transport; 0 means 3. Other operations are sent once.
	MaxAttempts int
	// Backoff is the pause before attempt n+1 after n failed attempts; nil
	// means 100 ms doubled per attempt (100 ms, 200 ms, ...), at most 2 s.
	Backoff func(n int) time.Duration
	// MaxAnswerBytes bounds the answer body read; 0 means 32 MiB. A longer
	// answer is a transport failure.
	MaxAnswerBytes int64
	// Credential names what a refusal of the credential tells the operator to
	// check (Refusal.Credential).
	Credential CredentialHint
}

// Client sends operations of one connection. It is safe for concurrent use.
type Client struct {
	proto       Protocol
	naming      Naming
	auth        Authenticator
	hc          *http.Client
	maxAttempts int
	backoff     func(int) time.Duration
	maxAnswer   int64
	credential  CredentialHint
}

// NewClient builds a Client from cfg.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Protocol == nil {
		return nil, errors.New("wire: a client needs a protocol")
	}
	c := &Client{
		proto:       cfg.Protocol,
		naming:      cfg.Protocol.Naming(),
		auth:        cfg.Auth,
		hc:          cfg.HTTP,
		maxAttempts: cfg.MaxAttempts,
		backoff:     cfg.Backoff,
		maxAnswer:   cfg.MaxAnswerBytes,
		credential:  cfg.Credential,
	}
	c.credential.Fields = slices.Clone(c.credential.Fields)
	if c.hc == nil {
		c.hc = &http.Client{Timeout: 60 * time.Second}
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = 3
	}
	if c.backoff == nil {
		c.backoff = defaultBackoff
	}
	if c.maxAnswer <= 0 {
		c.maxAnswer = 32 << 20
	}
	return c, nil
}

func defaultBackoff(n int) time.Duration {
	d := 100 * time.Millisecond << (n - 1)
	if n > 5 || d > 2*time.Second {
		d = 2 * time.Second
	}
	return d
}

// Format keeps a client's innards (its credential among them) out of fmt.
func (c *Client) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "wire.Client{protocol: %s}", c.proto.Name())
}

// Call sends op with input (a Record value keyed by field names; nil when the
// operation takes none) and reads the answer by op.Output. It returns nil
// without error when op.Output is nil.
//
// Errors: *DecodeError (the input or the answer does not fit its shape),
// *Refusal (a non-2xx answer), *TransportError (no answer; retried up to
// MaxAttempts only when op.RetrySafe), or a request-building error.
func (c *Client) Call(ctx context.Context, op Operation, input map[string]any) (map[string]any, error) {
	name := op.FullName()
	var body []byte
	if op.Input != nil {
		var in any
		if input != nil {
			in = input
		} else {
			in = map[string]any{}
		}
		b, err := Encode(op.Input, in, c.naming)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				de.Operation = name
			}
			return nil, err
		}
		body = b
	} else if len(input) > 0 {
		return nil, fmt.Errorf("%s takes no input", name)
	}

	attempts := 1
	if op.RetrySafe {
		attempts = c.maxAttempts
	}
	for n := 1; ; n++ {
		status, header, answer, err := c.send(ctx, &op, body)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) {
				return nil, err // building or signing the request failed
			}
			te.Operation, te.Attempts, te.Retried = name, n, n > 1
			if n >= attempts || ctx.Err() != nil {
				return nil, te
			}
			t := time.NewTimer(c.backoff(n))
			select {
			case <-ctx.Done():
				t.Stop()
				te.Err = errors.Join(te.Err, ctx.Err())
				return nil, te
			case <-t.C:
			}
			continue
		}
		if status < 200 || status > 299 {
			code, msg := c.proto.Refusal(status, header, answer)
			return nil, NewRefusal(name, status, code, msg).WithCredential(c.credential)
		}
		if op.Output == nil {
			return nil, nil
		}
		v, err := DecodeAnswer(op.Output, answer, c.naming, op.Items)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				de.Operation = name
			}
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return nil, &DecodeError{Operation: name, Rule: "type"}
		}
		return m, nil
	}
}

// send makes one attempt. A failure to get a whole answer is a
// *TransportError; a failure to build or sign the request is returned as is.
func (c *Client) send(ctx context.Context, op *Operation, body []byte) (int, http.Header, []byte, error) {
	req, err := c.proto.NewRequest(ctx, op, body)
	if err != nil {
		return 0, nil, nil, err
	}
	if c.auth != nil {
		if err := c.auth.Authorize(req, body); err != nil {
			return 0, nil, nil, err
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, &TransportError{Err: err}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, c.maxAnswer+1))
	if err != nil {
		return 0, nil, nil, &TransportError{Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if int64(len(answer)) > c.maxAnswer {
		return 0, nil, nil, &TransportError{Err: fmt.Errorf("answer longer than %d bytes", c.maxAnswer)}
	}
	return resp.StatusCode, resp.Header, answer, nil
}
