// Package sqsfake is an in-memory Amazon SQS speaking SQS's JSON protocol
// (AWS JSON 1.0, `X-Amz-Target: AmazonSQS.<Operation>`), for tests and for
// running an app on one machine (`jadpo dev`). Real SQS clients talk to it:
// aws-sdk-go-v2's SQS client is part of its tests.
//
// It checks each request's SigV4 signature (on by default) and refuses a bad
// one as SQS does; keeps queues with visibility timeouts, receipt handles that
// change on each receive, ApproximateReceiveCount, long polling, delays,
// retention and a redrive policy moving a message received too often to its
// dead-letter queue; and has switches for tests to inject faults (5xx,
// throttling, slow answers, dropped connections).
//
// Operations: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue,
// GetQueueAttributes, SetQueueAttributes, SendMessage, SendMessageBatch,
// ReceiveMessage, DeleteMessage, DeleteMessageBatch, ChangeMessageVisibility.
//
// Refusals are HTTP 4xx/5xx with `{"__type": "<namespace>#<Name>", "message":
// ...}` and, for SQS's own errors, the `x-amzn-query-error: <Code>;Sender`
// header real SQS sends (aws-sdk-go-v2 reports that code). Signature
// refusals come from the front door, as AWS's do, without that header:
//
//	no Authorization header        403 com.amazon.coral.service#MissingAuthenticationToken
//	malformed Authorization/date   400 com.amazon.coral.service#IncompleteSignature
//	unknown access key id          403 com.amazon.coral.service#InvalidClientTokenId
//	wrong signature                400 com.amazon.coral.service#InvalidSignatureException
//	X-Amz-Date more than 15 min off 400 com.amazon.coral.service#InvalidSignatureException
//	                                   ("Signature expired: ... is now earlier than ...")
package sqsfake

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/internal/rewrites"
	"github.com/jadpo/jadpo/providers/sigv4"
)

// The credentials the fake accepts when Options.Credentials is empty.
const (
	DefaultKeyID  = "AKIDSQSFAKE"
	DefaultSecret = "sqsfake-secret-key"
)

// ContentType is the JSON protocol's media type.
const ContentType = "application/x-amz-json-1.0"

// Options configure a Fake. The zero value checks signatures against the
// default credentials.
type Options struct {
	// Credentials maps access key ids to secrets; empty means
	// {DefaultKeyID: DefaultSecret}.
	Credentials map[string]string
	// SkipSignatureCheck accepts unsigned and wrongly signed requests.
	SkipSignatureCheck bool
	// Region and AccountID appear in queue ARNs; defaults "us-east-1" and
	// "000000000000".
	Region    string
	AccountID string
	// BaseURL is the start of queue URLs ("http://127.0.0.1:9324"); empty
	// means the scheme and Host of the request asking.
	BaseURL string
	// Clock drives visibility, delays, retention, long polling and the
	// signature's freshness; nil means the system clock.
	Clock testclock.Clock
	// FaultSeed seeds the choice of faults injected by fraction.
	FaultSeed int64
	// OnRequest, when set, sees each request's operation ("ReceiveMessage")
	// and JSON body before the fake answers it, for a test that checks
	// what a client asked.
	OnRequest func(operation string, body []byte)
}

// Fake is an in-memory SQS. It implements http.Handler and is safe for
// concurrent use.
type Fake struct {
	opts     Options
	clock    testclock.Clock
	verifier *sigv4.Verifier

	mu      sync.Mutex
	queues  map[string]*queue
	changed chan struct{} // closed and replaced when messages become available
	calls   map[string]int
	seq     uint64
	faults  faultState
	// rewrites are RewriteAnswers' hooks, by operation.
	rewrites rewrites.Hooks
}

// New makes a Fake.
func New(opts Options) *Fake {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = "000000000000"
	}
	if len(opts.Credentials) == 0 {
		opts.Credentials = map[string]string{DefaultKeyID: DefaultSecret}
	}
	creds := make(map[string]sigv4.Credentials, len(opts.Credentials))
	for id, secret := range opts.Credentials {
		creds[id] = sigv4.NewCredentials(id, secret, "")
	}
	opts.Credentials = nil // keep no plain copy of the secrets
	f := &Fake{
		opts:    opts,
		clock:   opts.Clock,
		queues:  map[string]*queue{},
		changed: make(chan struct{}),
		calls:   map[string]int{},
	}
	if f.clock == nil {
		f.clock = testclock.Wall{}
	}
	f.verifier = &sigv4.Verifier{
		Service: "sqs",
		Lookup: func(id string) (sigv4.Credentials, bool) {
			c, ok := creds[id]
			return c, ok
		},
	}
	f.faults.init(opts.FaultSeed)
	return f
}

// apiError is a refusal the fake answers with.
type apiError struct {
	status     int
	typ        string // __type
	queryCode  string // x-amzn-query-error code; "" for none
	queryFault string // "Sender" or "Receiver"
	message    string
}

func (e *apiError) Error() string { return e.typ + ": " + e.message }

// sqsError is one of SQS's own errors, with its query-compatible code.
func sqsError(name, queryCode, format string, args ...any) *apiError {
	if queryCode == "" {
		queryCode = name
	}
	return &apiError{status: 400, typ: "com.amazonaws.sqs#" + name, queryCode: queryCode, queryFault: "Sender", message: fmt.Sprintf(format, args...)}
}

func invalidParameter(format string, args ...any) *apiError {
	return &apiError{status: 400, typ: "com.amazon.coral.validate#ValidationException", queryCode: "InvalidParameterValue",
		queryFault: "Sender", message: fmt.Sprintf(format, args...)}
}

func missingParameter(name string) *apiError {
	return &apiError{status: 400, typ: "com.amazon.coral.validate#ValidationException", queryCode: "MissingParameter",
		queryFault: "Sender", message: fmt.Sprintf("The request must contain the parameter %s.", name)}
}

func queueDoesNotExist() *apiError {
	return sqsError("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
}

func coralError(status int, name, message string) *apiError {
	return &apiError{status: status, typ: "com.amazon.coral.service#" + name, message: message}
}

// signatureError maps a refused signature to SQS's answer.
func signatureError(err error) *apiError {
	var ve *sigv4.VerifyError
	if !errors.As(err, &ve) {
		return coralError(400, "IncompleteSignature", "The request signature does not conform to AWS standards.")
	}
	switch ve.Reason {
	case sigv4.Missing:
		return coralError(403, "MissingAuthenticationToken", "Missing Authentication Token")
	case sigv4.Incomplete:
		return coralError(400, "IncompleteSignature", ve.Message)
	case sigv4.UnknownKey:
		return coralError(403, "InvalidClientTokenId", "The security token included in the request is invalid.")
	default: // Mismatch, Expired
		return coralError(400, "InvalidSignatureException", ve.Message)
	}
}

// queueNameOf is the queue name at the end of a request's QueueUrl, for
// fault rules limited to one queue; "" when the body names none.
func queueNameOf(body []byte) string {
	var in struct{ QueueUrl string }
	if json.Unmarshal(body, &in) != nil {
		return ""
	}
	return in.QueueUrl[strings.LastIndexByte(in.QueueUrl, '/')+1:]
}

// maxRequestBytes bounds a request body (SQS's own limit is 1 MiB of
// messages plus framing).
const maxRequestBytes = 4 << 20

// ServeHTTP answers one SQS JSON request.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return // the client went away
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	f.mu.Lock()
	f.calls[op]++
	f.mu.Unlock()
	if f.opts.OnRequest != nil {
		f.opts.OnRequest(op, body)
	}

	if len(body) > maxRequestBytes {
		f.writeError(w, coralError(413, "RequestEntityTooLarge", "Request body too large."))
		return
	}
	if !f.opts.SkipSignatureCheck {
		if err := f.verifier.Verify(r, body, f.clock.Now()); err != nil {
			f.writeError(w, signatureError(err))
			return
		}
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.") {
		f.writeError(w, coralError(400, "UnknownOperationException", "SQS's JSON protocol takes POST with X-Amz-Target: AmazonSQS.<Operation>."))
		return
	}

	fault := f.faults.next(op, func() string { return queueNameOf(body) })
	switch fault.Kind {
	case FaultHang:
		<-r.Context().Done()
		return
	case FaultServerError:
		f.writeError(w, &apiError{status: 500, typ: "com.amazon.coral.service#InternalFailure", queryCode: "InternalFailure",
			queryFault: "Receiver", message: "We encountered an internal error. Please try again."})
		return
	case FaultUnavailable:
		f.writeError(w, &apiError{status: 503, typ: "com.amazon.coral.availability#ServiceUnavailable", queryCode: "ServiceUnavailable",
			queryFault: "Receiver", message: "Service is unavailable. Please try again."})
		return
	case FaultThrottle:
		f.writeError(w, sqsError("RequestThrottled", "", "Rate exceeded."))
		return
	case FaultSlow:
		t := time.NewTimer(fault.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	case FaultDrop:
		dropConnection(w)
		return
	}

	result, aerr := f.dispatch(r, op, body)
	if fault.Kind == FaultDropAfter {
		dropConnection(w)
		return
	}
	if aerr != nil {
		f.writeError(w, aerr)
		return
	}
	out, err := json.Marshal(result)
	if err != nil {
		f.writeError(w, coralError(500, "InternalFailure", "could not encode the answer"))
		return
	}
	out = f.rewrite(op, out)
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("x-amzn-RequestId", newID())
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // HTTP/2 or a recorder: abort the response
}

func (f *Fake) writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("x-amzn-RequestId", newID())
	if e.queryCode != "" {
		h.Set("x-amzn-query-error", e.queryCode+";"+e.queryFault)
	}
	w.WriteHeader(e.status)
	b, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{e.typ, e.message})
	w.Write(b)
}

// decode reads a request body into v; a body that is not a JSON object of
// the operation's members is a SerializationException, as AWS answers.
func decode(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return coralError(400, "SerializationException", "The request body could not be read as this operation's input.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return coralError(400, "SerializationException", "The request body has data after its JSON value.")
	}
	return nil
}

func (f *Fake) dispatch(r *http.Request, op string, body []byte) (any, *apiError) {
	switch op {
	case "CreateQueue":
		var in createQueueInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.createQueue(f.baseURL(r), &in)
	case "GetQueueUrl":
		var in getQueueURLInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.getQueueURL(f.baseURL(r), &in)
	case "ListQueues":
		var in listQueuesInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.listQueues(f.baseURL(r), &in)
	case "DeleteQueue":
		var in queueURLInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.deleteQueue(&in)
	case "PurgeQueue":
		var in queueURLInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.purgeQueue(&in)
	case "GetQueueAttributes":
		var in getQueueAttributesInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.getQueueAttributes(&in)
	case "SetQueueAttributes":
		var in setQueueAttributesInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.setQueueAttributes(&in)
	case "SendMessage":
		var in sendMessageInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.sendMessage(&in)
	case "SendMessageBatch":
		var in sendMessageBatchInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.sendMessageBatch(&in)
	case "ReceiveMessage":
		var in receiveMessageInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.receiveMessage(r, &in)
	case "DeleteMessage":
		var in deleteMessageInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.deleteMessage(&in)
	case "DeleteMessageBatch":
		var in deleteMessageBatchInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.deleteMessageBatch(&in)
	case "ChangeMessageVisibility":
		var in changeMessageVisibilityInput
		if e := decode(body, &in); e != nil {
			return nil, e
		}
		return f.changeMessageVisibility(&in)
	}
	return nil, coralError(400, "UnknownOperationException", fmt.Sprintf("The fake does not support the operation %q.", op))
}

// baseURL is the start of queue URLs for a request.
func (f *Fake) baseURL(r *http.Request) string {
	if f.opts.BaseURL != "" {
		return strings.TrimSuffix(f.opts.BaseURL, "/")
	}
	scheme := "http"
	if r != nil && r.TLS != nil {
		scheme = "https"
	}
	host := "127.0.0.1"
	if r != nil && r.Host != "" {
		host = r.Host
	}
	return scheme + "://" + host
}

// Calls is how many requests named op (e.g. "ReceiveMessage") the fake has
// seen, refused ones included.
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
