package awsjson

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jadpo/jadpo/providers/wire"
)

func TestErrorCode(t *testing.T) {
	cases := map[string]string{
		"com.amazonaws.sqs#QueueDoesNotExist":                                             "queue_does_not_exist",
		"com.amazon.coral.service#InvalidSignatureException":                              "invalid_signature_exception",
		"AWS.SimpleQueueService.NonExistentQueue":                                         "non_existent_queue",
		"AWS.SimpleQueueService.NonExistentQueue;Sender":                                  "non_existent_queue",
		"KMS.ThrottlingException":                                                         "throttling_exception",
		"ValidationException:http://internal.amazon.com/coral/com.amazon.coral.validate/": "validation_exception",
		"RequestThrottled":                                                                "request_throttled",
		"ReceiptHandleIsInvalid":                                                          "receipt_handle_is_invalid",
		"":                                                                                "",
		"#":                                                                               "",
	}
	for in, want := range cases {
		if got := ErrorCode(in); got != want {
			t.Errorf("ErrorCode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCredentialCodes: AWS's codes for a refused credential, as ErrorCode
// spells them, read as refusals of the credential (wire.IsCredentialRefusal)
// even on a 400; and an ordinary code does not.
func TestCredentialCodes(t *testing.T) {
	for _, typ := range []string{
		"com.amazon.coral.service#InvalidSignatureException",
		"com.amazon.coral.service#IncompleteSignature",
		"com.amazon.coral.service#MissingAuthenticationToken",
		"com.amazon.coral.service#MissingAuthenticationTokenException",
		"com.amazon.coral.service#UnrecognizedClientException",
		"com.amazon.coral.service#InvalidClientTokenId",
		"com.amazon.coral.service#ExpiredTokenException",
		"com.amazon.coral.service#AccessDeniedException",
		"SignatureDoesNotMatch",
		"ExpiredToken",
		"AccessDenied",
		"RequestExpired",
		"AWS.SimpleQueueService.InvalidAccessKeyId;Sender",
	} {
		if code := ErrorCode(typ); !wire.IsCredentialRefusal(400, code) {
			t.Errorf("%s (%s) is not read as a refused credential", typ, code)
		}
	}
	for _, typ := range []string{"com.amazonaws.sqs#QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "InvalidParameterValue"} {
		if code := ErrorCode(typ); wire.IsCredentialRefusal(400, code) {
			t.Errorf("%s (%s) is read as a refused credential", typ, code)
		}
	}
}

var receiveOp = wire.Operation{
	Resource: "messages", Name: "receive_message", RetrySafe: true,
	Input: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "queue_url", Shape: wire.Shape{Kind: wire.Text}},
		{Name: "max_number_of_messages", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
	}},
	Output: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "messages", Shape: wire.Shape{Kind: wire.List, Optional: true, Elem: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
			{Name: "body", Shape: wire.Shape{Kind: wire.Text}},
			{Name: "md5_of_body", WireName: "MD5OfBody", Shape: wire.Shape{Kind: wire.Text}},
		}}}},
	}},
}

func TestFraming(t *testing.T) {
	type seen struct {
		method, path, ctype, target, body string
	}
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Amz-Target"), string(b)}
		w.Header().Set("Content-Type", ContentType)
		io.WriteString(w, `{"Messages":[{"Body":"hello","MD5OfBody":"5d41402abc4b2a76b9719d911017c592","MessageId":"ignored"}]}`)
	}))
	defer srv.Close()
	p, err := New("AmazonSQS", srv.URL, "__type")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := wire.NewClient(wire.Config{Protocol: p})
	out, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": "http://q", "max_number_of_messages": 10})
	if err != nil {
		t.Fatal(err)
	}
	want := seen{"POST", "/", ContentType, "AmazonSQS.ReceiveMessage", `{"QueueUrl":"http://q","MaxNumberOfMessages":10}`}
	if got != want {
		t.Errorf("request\n got %+v\nwant %+v", got, want)
	}
	msg := out["messages"].([]any)[0].(map[string]any)
	if msg["body"] != "hello" || msg["md5_of_body"] != "5d41402abc4b2a76b9719d911017c592" {
		t.Errorf("answer %#v", out)
	}

	// Without input the body is {}.
	noInput := wire.Operation{Resource: "queues", Name: "list_queues"}
	if _, err := c.Call(context.Background(), noInput, nil); err != nil {
		t.Fatal(err)
	}
	if got.body != "{}" || got.target != "AmazonSQS.ListQueues" {
		t.Errorf("no input: %+v", got)
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		code      string
		temporary bool
	}{
		{400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`, "queue_does_not_exist", false},
		{400, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"Rate exceeded"}`, "request_throttled", true},
		{400, `{"__type":"com.amazon.coral.service#InvalidSignatureException","Message":"sig"}`, "invalid_signature_exception", false},
		{400, `{"__type":"AWS.SimpleQueueService.NonExistentQueue"}`, "non_existent_queue", false},
		{400, `{"message":"no type"}`, "http_400", false},
		{400, `{"__type":5}`, "http_400", false},
		{500, `<html>oops</html>`, "http_500", true},
		{503, ``, "http_503", true},
		{500, `{"__type":"com.amazon.coral.service#InternalFailure"}`, "internal_failure", true},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		p, _ := New("AmazonSQS", srv.URL, "")
		cl, _ := wire.NewClient(wire.Config{Protocol: p})
		_, err := cl.Call(context.Background(), receiveOp, map[string]any{"queue_url": "q"})
		srv.Close()
		var r *wire.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("%s: err = %v", c.body, err)
		}
		if r.Code != c.code || r.Temporary != c.temporary || r.Status != c.status {
			t.Errorf("%s: refusal %+v", c.body, r)
		}
	}
}

func TestNewRefusesBadProviders(t *testing.T) {
	if _, err := New("", "https://sqs.eu-west-1.amazonaws.com", ""); err == nil {
		t.Error("no target accepted")
	}
	for _, h := range []string{"", "ftp://x", "https://user:pass@host", "https://h/?q=1", "https://"} {
		if _, err := New("AmazonSQS", h, ""); err == nil {
			t.Errorf("host %q accepted", h)
		}
	}
	p, err := New("AmazonSQS", "sqs.eu-west-1.amazonaws.com", "")
	if err != nil || p.endpoint.String() != "https://sqs.eu-west-1.amazonaws.com" {
		t.Errorf("bare host: %v %v", p, err)
	}
}
