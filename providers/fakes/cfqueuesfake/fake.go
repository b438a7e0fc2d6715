// Package cfqueuesfake is an in-memory Cloudflare Queues speaking the
// pull-consumer part of Cloudflare's v4 REST API, for tests and for running
// an app on one machine (`jadpo dev`).
//
// Operations (all POST with a JSON body, under
// /client/v4/accounts/{account_id}/queues/{queue_id}):
//
//	messages/pull  {"batch_size": 1..100 (default 5),
//	                "visibility_timeout_ms": 1..43200000 (default 30000)}
//	messages/ack   {"acks": [{"lease_id": ...}],
//	                "retries": [{"lease_id": ..., "delay_seconds": 0..43200 (default 0)}]}
//	               (at most 100 entries in all; acks are applied before retries)
//	messages       {"body": <any JSON>, "content_type": "text"|"json",
//	                "delay_seconds": 0..43200}  (push one message)
//
// Answers are Cloudflare's envelope, {"success", "errors", "messages",
// "result"}. A pull answers the queue's message_backlog_count (the messages
// not yet acknowledged, in flight ones included, after the pull) and up to
// batch_size messages in the order they became visible (send order among
// those visible from the same instant), each with `attempts` (its
// deliveries, this one included) and a new opaque lease_id. Pulled messages
// stay invisible for visibility_timeout_ms. An ack or retry takes effect only
// with the message's current lease: one from before a later pull, one whose
// visibility timeout has run out, or one of a message already gone is
// ignored, and result.ackCount / retryCount count only those that took effect.
// A pushed body that is a JSON string is kept as its text, any other JSON
// value as its compact JSON text; content_type defaults to "text" for a
// string and "json" otherwise ("text" with a non-string body is refused).
// An empty body or `null` counts as `{}`; unknown members are ignored.
//
// Redelivery limit: each queue has MaxRetries (default 3). A message that
// has been delivered MaxRetries+1 times without an ack is not delivered a
// (MaxRetries+2)-th time: when a pull reaches it, it is moved to the queue's
// dead-letter queue (same account; its attempts start again at 0) or, with
// none, deleted, as Cloudflare does. Until a pull reaches it, it counts as
// visible.
//
// Requests are checked in this order; refusals carry {"code", "message"} in
// `errors`:
//
//	unknown path or a method other than POST    404  7000 No route for that URI
//	no Authorization header                     400  9106 Missing X-Auth-Key, X-Auth-Email or Authorization headers
//	not `Bearer <a token in Options.Tokens>`    403 10000 Authentication error
//	a fault set by FailNext: 429                429   971 Please wait and consider throttling your request speed
//	                         5xx                5xx 10013 internal error
//	                         other 4xx          4xx 10001 injected fault
//	body over 4 MiB                             413 10001 request body too large
//	malformed JSON, a value out of range or     400 10001 "<field>: <why>"
//	  of the wrong type, a message over 128 KiB
//	unknown account or queue                    404 11000 Queue not found
//
// Faults apply only to requests that passed the authentication check.
package cfqueuesfake

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/internal/rewrites"
)

// DefaultToken is the bearer token the fake accepts when Options.Tokens is
// empty.
const DefaultToken = "cfqueuesfake-token"

// The error codes the fake answers with (see the package comment).
const (
	CodeNoRoute        = 7000
	CodeThrottled      = 971
	CodeMissingAuth    = 9106
	CodeAuthentication = 10000
	CodeInvalidRequest = 10001
	CodeInternal       = 10013
	CodeQueueNotFound  = 11000
)

// Options configure a Fake. The zero value accepts DefaultToken and reads
// the system clock.
type Options struct {
	// Tokens are the bearer tokens accepted; empty means {DefaultToken}.
	Tokens []string
	// Clock drives visibility timeouts and delays; nil means the system
	// clock.
	Clock testclock.Clock
}

// Fake is an in-memory Cloudflare Queues. It implements http.Handler and is
// safe for concurrent use.
type Fake struct {
	tokens [][]byte
	clock  testclock.Clock

	mu     sync.Mutex
	queues map[queueKey]*queue
	calls  map[string]int
	seq    uint64 // makes leases unique
	faults []*faultRule
	// rewrites are RewriteAnswers' hooks, by op.
	rewrites rewrites.Hooks
}

// New makes a Fake.
func New(opts Options) *Fake {
	f := &Fake{clock: opts.Clock, queues: map[queueKey]*queue{}, calls: map[string]int{}}
	for _, t := range opts.Tokens {
		if t != "" {
			f.tokens = append(f.tokens, []byte(t))
		}
	}
	if len(f.tokens) == 0 {
		f.tokens = [][]byte{[]byte(DefaultToken)}
	}
	if f.clock == nil {
		f.clock = testclock.Wall{}
	}
	return f
}

// apiError is a refusal the fake answers with.
type apiError struct {
	status  int
	code    int
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("cfqueuesfake: %d %s", e.code, e.message) }

func invalid(format string, args ...any) *apiError {
	return &apiError{status: 400, code: CodeInvalidRequest, message: fmt.Sprintf(format, args...)}
}

func queueNotFound() *apiError {
	return &apiError{status: 404, code: CodeQueueNotFound, message: "Queue not found"}
}

// maxRequestBytes bounds a request body: 100 messages of 128 KiB would not
// fit, but a pull or ack never needs more than a few KiB, and a push carries
// one message.
const maxRequestBytes = 4 << 20

// The operations, as Calls and FailNext name them.
const (
	opPull = "pull"
	opAck  = "ack"
	opPush = "push"
)

// route reads an operation and its queue from a request's path; ok is false
// for a path the API does not have.
func route(r *http.Request) (op string, key queueKey, ok bool) {
	if r.Method != http.MethodPost {
		return "", key, false
	}
	rest, found := strings.CutPrefix(r.URL.Path, "/client/v4/accounts/")
	if !found {
		return "", key, false
	}
	seg := strings.Split(rest, "/")
	if len(seg) < 4 || seg[0] == "" || seg[1] != "queues" || seg[2] == "" || seg[3] != "messages" {
		return "", key, false
	}
	key = queueKey{account: seg[0], id: seg[2]}
	switch {
	case len(seg) == 4:
		return opPush, key, true
	case len(seg) == 5 && seg[4] == "pull":
		return opPull, key, true
	case len(seg) == 5 && seg[4] == "ack":
		return opAck, key, true
	}
	return "", key, false
}

// authenticate checks `Authorization: Bearer <token>`. Cloudflare's other
// schemes (X-Auth-Key with X-Auth-Email) are not accepted.
func (f *Fake) authenticate(r *http.Request) *apiError {
	h := r.Header.Get("Authorization")
	if h == "" {
		return &apiError{status: 400, code: CodeMissingAuth, message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers"}
	}
	refused := &apiError{status: 403, code: CodeAuthentication, message: "Authentication error"}
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return refused
	}
	for _, t := range f.tokens {
		// Constant time, so that a test of the client cannot learn a token
		// from timings (a habit worth keeping even in a fake).
		if subtle.ConstantTimeCompare(t, []byte(token)) == 1 {
			return nil
		}
	}
	return refused
}

// ServeHTTP answers one request of the pull-consumer API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return // the client went away
	}
	op, key, ok := route(r)
	if !ok {
		writeError(w, &apiError{status: 404, code: CodeNoRoute, message: "No route for that URI"})
		return
	}
	f.mu.Lock()
	f.calls[op]++
	f.mu.Unlock()
	if e := f.authenticate(r); e != nil {
		writeError(w, e)
		return
	}
	if e := f.nextFault(op); e == errHang {
		<-r.Context().Done()
		return
	} else if e != nil {
		writeError(w, e)
		return
	}
	if len(body) > maxRequestBytes {
		writeError(w, &apiError{status: 413, code: CodeInvalidRequest, message: "request body too large"})
		return
	}
	var result any
	var e *apiError
	switch op {
	case opPull:
		result, e = f.servePull(key, body)
	case opAck:
		result, e = f.serveAck(key, body)
	case opPush:
		result, e = f.servePush(key, body)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	out, err := json.Marshal(envelope{Success: true, Errors: []cfError{}, Messages: []string{}, Result: result})
	if err != nil { // not expected: every answer is made of plain values
		writeError(w, &apiError{status: 500, code: CodeInternal, message: "internal error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(f.rewrite(op, out))
}

// envelope is the shape of every answer of Cloudflare's v4 API.
type envelope struct {
	Success  bool      `json:"success"`
	Errors   []cfError `json:"errors"`
	Messages []string  `json:"messages"`
	Result   any       `json:"result"`
}

type cfError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, envelope{Errors: []cfError{{Code: e.code, Message: e.message}}, Messages: []string{}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	out, err := json.Marshal(v)
	if err != nil { // not expected: every answer is made of plain values
		status = 500
		out = []byte(`{"success":false,"errors":[{"code":10013,"message":"internal error"}],"messages":[],"result":null}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}

// decode reads a request body into v. An empty body or `null` is taken as
// `{}` (every member of pull and ack is optional); anything that is not one
// JSON object of the right members is refused, naming the member when the
// JSON decoder knows it.
func decode(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return invalid("request body: must be a JSON object, not a JSON %s", te.Value)
			}
			return invalid("%s: must be %s, not a JSON %s", te.Field, kindName(te.Type), te.Value)
		}
		return invalid("request body: not valid JSON (%v)", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("request body: data after the JSON object")
	}
	return nil
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "a value of another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return "a " + t.String()
}

// Calls is how many requests of op ("pull", "ack" or "push") the fake has
// seen, refused ones included (a request whose path is unknown is no op's).
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}
