package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testProtocol posts to <base>/<operation> and reads the refusal code at
// "code".
type testProtocol struct{ base string }

func (p testProtocol) Name() string   { return "test" }
func (p testProtocol) Naming() Naming { return upper }
func (p testProtocol) NewRequest(ctx context.Context, op *Operation, body []byte) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/"+op.Name, bytes.NewReader(body))
}
func (p testProtocol) Refusal(status int, h http.Header, body []byte) (string, string) {
	var v struct{ Code, Message string }
	json.Unmarshal(body, &v)
	return ToLowerSnake(v.Code), v.Message
}

type countingAuth struct{ n atomic.Int32 }

func (a *countingAuth) Authorize(req *http.Request, body []byte) error {
	a.n.Add(1)
	req.Header.Set("X-Attempt", fmt.Sprint(a.n.Load()))
	return nil
}

var receiveOp = Operation{Resource: "messages", Name: "receive_message", Input: &receiveInput, Output: &receiveOutput, RetrySafe: true}
var deleteOp = Operation{Resource: "messages", Name: "delete_message", Input: &Shape{Kind: Record, Fields: []Field{
	{Name: "queue_url", Shape: Shape{Kind: Text}},
	{Name: "receipt_handle", Shape: Shape{Kind: Text}},
}}}

// dropFirst answers after hijacking and closing the first n connections.
func dropFirst(n int32, answer string) (http.Handler, *atomic.Int32) {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if seen.Add(1) <= n {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, answer)
	}), &seen
}

func newTestClient(t *testing.T, url string, auth Authenticator) *Client {
	t.Helper()
	c, err := NewClient(Config{
		Protocol: testProtocol{base: url},
		Auth:     auth,
		HTTP:     &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		Backoff:  func(int) time.Duration { return time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCallAnswer(t *testing.T) {
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		if r.URL.Path != "/receive_message" && r.URL.Path != "/delete_message" {
			t.Errorf("path %s", r.URL.Path)
		}
		io.WriteString(w, `{"Messages":[{"MessageId":"m","ReceiptHandle":"h","Body":"b","MD5OfBody":"x"}]}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, nil)
	out, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q", "max_number_of_messages": 10})
	if err != nil {
		t.Fatal(err)
	}
	if string(gotBody) != `{"QueueUrl":"q","MaxNumberOfMessages":10}` {
		t.Errorf("body %s", gotBody)
	}
	msgs := out["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["receipt_handle"] != "h" {
		t.Errorf("out %#v", out)
	}
	// No output shape: nothing is read.
	out, err = c.Call(context.Background(), deleteOp, map[string]any{"queue_url": "q", "receipt_handle": "h"})
	if err != nil || out != nil {
		t.Errorf("delete: %v %v", out, err)
	}
}

func TestCallRefusal(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		code      string
		temporary bool
	}{
		{400, `{"Code":"QueueDoesNotExist","Message":"The specified queue does not exist."}`, "queue_does_not_exist", false},
		{400, `{"Code":"RequestThrottled"}`, "request_throttled", true},
		{503, `not json`, "http_503", true},
		{429, ``, "http_429", true},
		{404, `{}`, "http_404", false},
	}
	for _, c := range cases {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		cl := newTestClient(t, srv.URL, nil)
		_, err := cl.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"})
		srv.Close()
		var r *Refusal
		if !errors.As(err, &r) {
			t.Fatalf("%d: err = %v", c.status, err)
		}
		if r.Code != c.code || r.Status != c.status || r.Temporary != c.temporary || r.Operation != "messages.receive_message" {
			t.Errorf("%d: refusal %+v", c.status, r)
		}
		// A refusal is an answer: the client never repeats it, even when
		// temporary and retry-safe (the runtime decides when to try again).
		if n.Load() != 1 {
			t.Errorf("%d: %d requests", c.status, n.Load())
		}
		// An ordinary refusal says no more than its code.
		if r.Credential != nil || strings.Contains(err.Error(), "credential") || strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%d: %v", c.status, err)
		}
	}
}

// TestCallRefusalCredentialHint: a refusal of the credential says what to
// check (the config fields by name, and the clock for SigV4), never the
// provider's message unless it is AWS's fixed skew text.
func TestCallRefusalCredentialHint(t *testing.T) {
	const planted = "SECRET-wJalrXUtnFEMI-DO-NOT-PRINT"
	skew := "Signature expired: 20260101T000000Z is now earlier than 20260101T001000Z (20260101T002500Z - 15 min.)"
	cases := []struct {
		name   string
		status int
		body   string
		hint   CredentialHint
		want   string
	}{
		{"a bare 403", 403, `{"Message":"Authentication error: token ` + planted + `"}`, CredentialHint{Fields: []string{"cf_token"}},
			"messages.receive_message refused: http_403 (HTTP 403, permanent); check the credential's config field cf_token"},
		{"a 401 with no fields known", 401, `{"Code":"Unauthorized"}`, CredentialHint{},
			"messages.receive_message refused: unauthorized (HTTP 401, permanent); check the connection's credential"},
		{"AWS's bad signature", 400, `{"Code":"InvalidSignatureException","Message":"The request signature we calculated does not match ` + planted + `"}`,
			CredentialHint{Fields: []string{"aws_key_id", "aws_secret"}, SigV4: true},
			"messages.receive_message refused: invalid_signature_exception (HTTP 400, permanent); check the credential's config fields aws_key_id, aws_secret and this machine's clock (AWS allows 15 minutes of skew)"},
		{"AWS's expired signature", 400, `{"Code":"InvalidSignatureException","Message":"` + skew + `"}`,
			CredentialHint{Fields: []string{"aws_key_id", "aws_secret"}, SigV4: true},
			"messages.receive_message refused: invalid_signature_exception (HTTP 400, permanent); check the credential's config fields aws_key_id, aws_secret and this machine's clock (AWS allows 15 minutes of skew); AWS says: " + skew},
		{"the skew text with more after it", 400, `{"Code":"InvalidSignatureException","Message":"` + skew + ` ` + planted + `"}`,
			CredentialHint{SigV4: true},
			"messages.receive_message refused: invalid_signature_exception (HTTP 400, permanent); check the connection's credential and this machine's clock (AWS allows 15 minutes of skew)"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		cl, err := NewClient(Config{Protocol: testProtocol{base: srv.URL}, Credential: c.hint})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"})
		srv.Close()
		var r *Refusal
		if !errors.As(err, &r) || r.Credential == nil {
			t.Fatalf("%s: err = %v", c.name, err)
		}
		if got := err.Error(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if strings.Contains(err.Error(), planted) || strings.Contains(fmt.Sprint(err), planted) {
			t.Errorf("%s: the provider's message is printed: %v", c.name, err)
		}
	}
}

func TestIsCredentialRefusal(t *testing.T) {
	for _, c := range []struct {
		status int
		code   string
		want   bool
	}{
		{401, "http_401", true},
		{403, "code_10000", true},
		{400, "invalid_signature_exception", true},
		{400, "incomplete_signature", true},
		{400, "missing_authentication_token", true},
		{400, "unrecognized_client_exception", true},
		{403, "invalid_client_token_id", true},
		{403, "signature_does_not_match", true},
		{400, "expired_token", true},
		{400, "access_denied_exception", true},
		{400, "queue_does_not_exist", false},
		{400, "invalid_parameter_value", false},
		{404, "http_404", false},
		{500, "internal_error", false},
	} {
		if got := IsCredentialRefusal(c.status, c.code); got != c.want {
			t.Errorf("IsCredentialRefusal(%d, %q) = %v", c.status, c.code, got)
		}
	}
}

func TestSkewMessage(t *testing.T) {
	for _, m := range []string{
		"Signature expired: 20260101T000000Z is now earlier than 20260101T001000Z (20260101T002500Z - 15 min.)",
		"Signature not yet current: 20260101T003000Z is still later than 20260101T001500Z (20260101T000000Z + 15 min.)",
	} {
		if SkewMessage(m) != m {
			t.Errorf("SkewMessage(%q) drops it", m)
		}
	}
	for _, m := range []string{
		"",
		"Signature expired: SECRET is now earlier than 20260101T001000Z (20260101T002500Z - 15 min.)",
		"Signature expired: 20260101T000000Z is now earlier than 20260101T001000Z (20260101T002500Z - 15 min.) SECRET",
		"The request signature we calculated does not match the signature you provided.",
	} {
		if SkewMessage(m) != "" {
			t.Errorf("SkewMessage(%q) passes it", m)
		}
	}
}

func TestTransportRetries(t *testing.T) {
	answer := `{"Messages":[]}`
	t.Run("retry-safe recovers", func(t *testing.T) {
		h, seen := dropFirst(2, answer)
		srv := httptest.NewServer(h)
		defer srv.Close()
		auth := &countingAuth{}
		c := newTestClient(t, srv.URL, auth)
		if _, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"}); err != nil {
			t.Fatal(err)
		}
		if seen.Load() != 3 || auth.n.Load() != 3 {
			t.Errorf("requests %d, signatures %d", seen.Load(), auth.n.Load())
		}
	})
	t.Run("retry-safe gives up", func(t *testing.T) {
		h, seen := dropFirst(100, answer)
		srv := httptest.NewServer(h)
		defer srv.Close()
		c := newTestClient(t, srv.URL, nil)
		_, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"})
		var te *TransportError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v", err)
		}
		if te.Attempts != 3 || !te.Retried || !te.Temporary() || !IsTemporaryError(err) || seen.Load() != 3 {
			t.Errorf("transport error %+v, requests %d", te, seen.Load())
		}
	})
	t.Run("not retry-safe is sent once", func(t *testing.T) {
		h, seen := dropFirst(1, `{}`)
		srv := httptest.NewServer(h)
		defer srv.Close()
		c := newTestClient(t, srv.URL, nil)
		_, err := c.Call(context.Background(), deleteOp, map[string]any{"queue_url": "q", "receipt_handle": "h"})
		var te *TransportError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v", err)
		}
		if te.Attempts != 1 || te.Retried || seen.Load() != 1 || te.Operation != "messages.delete_message" {
			t.Errorf("transport error %+v, requests %d", te, seen.Load())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		h, _ := dropFirst(100, answer)
		srv := httptest.NewServer(h)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		c, _ := NewClient(Config{
			Protocol: testProtocol{base: srv.URL},
			HTTP:     &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
			Backoff:  func(int) time.Duration { cancel(); return time.Hour },
		})
		_, err := c.Call(ctx, receiveOp, map[string]any{"queue_url": "q"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestCallBadInputIsNotSent(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	c := newTestClient(t, srv.URL, nil)
	_, err := c.Call(context.Background(), receiveOp, map[string]any{"max_number_of_messages": 10})
	var de *DecodeError
	if !errors.As(err, &de) || !de.Input || de.Path != "queue_url" || de.Operation != "messages.receive_message" {
		t.Errorf("err = %v", err)
	}
	if n.Load() != 0 {
		t.Errorf("sent %d requests", n.Load())
	}
}

func TestCallBadAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"Messages":[{"MessageId":"m"}]}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, nil)
	_, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"})
	var de *DecodeError
	if !errors.As(err, &de) || de.Input || de.Path != "messages.0.receipt_handle" || de.Rule != "required" {
		t.Errorf("err = %v", err)
	}
}
