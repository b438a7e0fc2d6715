package providers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
	"github.com/jadpo/jadpo/providers/queue"
	"github.com/jadpo/jadpo/providers/wire"
)

// The SQS package's provider and operations, built by hand as the runtime
// builds them from the plan.
var sqsProvider = ir.Provider{
	Protocol: ir.ProtocolAWSJSON, Credential: ir.CredentialAWSSigV4,
	AWSService: "sqs", AWSTarget: "AmazonSQS", ErrorCode: "__type",
}

var (
	text       = wire.Shape{Kind: wire.Text}
	receiveOp  = wire.Operation{Resource: "messages", Name: "receive_message", RetrySafe: true}
	deleteOp   = wire.Operation{Resource: "messages", Name: "delete_message"}
	messageRec = wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "message_id", Shape: text},
		{Name: "receipt_handle", Shape: text},
		{Name: "body", Shape: text},
		{Name: "md5_of_body", WireName: "MD5OfBody", Shape: text},
		{Name: "attributes", Shape: wire.Shape{Kind: wire.Map, Optional: true, Elem: &text}},
	}}
)

func init() {
	receiveOp.Input = &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "queue_url", Shape: text},
		{Name: "max_number_of_messages", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
		{Name: "wait_time_seconds", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
		{Name: "visibility_timeout", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
		{Name: "message_system_attribute_names", Shape: wire.Shape{Kind: wire.List, Optional: true, Elem: &text}},
	}}
	receiveOp.Output = &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "messages", Shape: wire.Shape{Kind: wire.List, Optional: true, Elem: &messageRec}},
	}}
	deleteOp.Input = &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "queue_url", Shape: text},
		{Name: "receipt_handle", Shape: text},
	}}
}

func newClient(t *testing.T, url, secret string) *wire.Client {
	t.Helper()
	c, err := providers.NewClient(sqsProvider, url,
		map[string]string{"key_id": sqsfake.DefaultKeyID, "secret": secret}, nil,
		&http.Client{Timeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOurClientAgainstTheFake(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	q, err := fake.CreateQueue("warehouse", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.URL, sqsfake.DefaultSecret)
	ctx := context.Background()
	receive := map[string]any{"queue_url": q, "max_number_of_messages": 10, "wait_time_seconds": 0,
		"message_system_attribute_names": []any{"ApproximateReceiveCount"}}

	// SQS leaves Messages out of an empty receive: it reads as none.
	out, err := c.Call(ctx, receiveOp, receive)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := out["messages"]; !ok || m != nil {
		t.Fatalf("empty receive: %#v", out)
	}

	fake.SendMessage("warehouse", `{"id":"o-1"}`)
	fake.SendMessage("warehouse", `{"id":"o-2"}`)
	out, err = c.Call(ctx, receiveOp, receive)
	if err != nil {
		t.Fatal(err)
	}
	msgs := out["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("receive: %#v", out)
	}
	for i, raw := range msgs {
		m := raw.(map[string]any)
		if m["body"] != fmt.Sprintf(`{"id":"o-%d"}`, i+1) || m["md5_of_body"] == "" || m["message_id"] == "" {
			t.Errorf("message %d: %#v", i, m)
		}
		if m["attributes"].(map[string]any)["ApproximateReceiveCount"] != "1" {
			t.Errorf("attributes %#v", m["attributes"])
		}
		if _, err := c.Call(ctx, deleteOp, map[string]any{"queue_url": q, "receipt_handle": m["receipt_handle"]}); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := fake.Stats("warehouse"); st != (sqsfake.QueueStats{}) {
		t.Errorf("left on the queue: %+v", st)
	}

	// Refusals come back as codes.
	_, err = c.Call(ctx, receiveOp, map[string]any{"queue_url": srv.URL + "/000000000000/nope"})
	var r *wire.Refusal
	if !errors.As(err, &r) || r.Code != "queue_does_not_exist" || r.Temporary || r.Status != 400 {
		t.Errorf("missing queue: %v", err)
	}
}

func TestWrongSecretIsRefusedAndNeverShown(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	q, _ := fake.CreateQueue("warehouse", nil)
	const wrong = "wrong-secret-DO-NOT-PRINT"
	c := newClient(t, srv.URL, wrong)
	_, err := c.Call(context.Background(), receiveOp, map[string]any{"queue_url": q})
	var r *wire.Refusal
	if !errors.As(err, &r) || r.Code != "invalid_signature_exception" || r.Temporary || r.Status != 400 {
		t.Fatalf("wrong secret: %v", err)
	}
	shown := err.Error() + r.Message + fmt.Sprintf("%v %+v %#v", c, c, c)
	if strings.Contains(shown, wrong) {
		t.Errorf("secret shown: %s", shown)
	}
	// It says what to check, by the names of the config fields.
	c, err = providers.NewClient(sqsProvider, srv.URL, map[string]string{"key_id": sqsfake.DefaultKeyID, "secret": wrong}, nil,
		&http.Client{Timeout: 5 * time.Second}, []string{"aws_key_id", "aws_secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(context.Background(), receiveOp, map[string]any{"queue_url": q})
	want := "messages.receive_message refused: invalid_signature_exception (HTTP 400, permanent); " +
		"check the credential's config fields aws_key_id, aws_secret and this machine's clock (AWS allows 15 minutes of skew)"
	if err == nil || err.Error() != want {
		t.Errorf("wrong secret:\n got %v\nwant %s", err, want)
	}
}

// TestSkewedClockIsNamed: a request signed 20 minutes behind AWS's clock is
// refused with AWS's own "Signature expired" text, which holds only times.
func TestSkewedClockIsNamed(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{Clock: testclock.NewManual(time.Now().Add(20 * time.Minute))})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	q, _ := fake.CreateQueue("warehouse", nil)
	c, err := providers.NewClient(sqsProvider, srv.URL, map[string]string{"key_id": sqsfake.DefaultKeyID, "secret": sqsfake.DefaultSecret}, nil,
		&http.Client{Timeout: 5 * time.Second}, []string{"aws_key_id", "aws_secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(context.Background(), receiveOp, map[string]any{"queue_url": q})
	if err == nil || !strings.Contains(err.Error(), "this machine's clock (AWS allows 15 minutes of skew); AWS says: Signature expired: ") {
		t.Errorf("skewed clock: %v", err)
	}
}

func TestFaultsThroughOurClient(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	q, _ := fake.CreateQueue("warehouse", nil)
	c := newClient(t, srv.URL, sqsfake.DefaultSecret)
	ctx := context.Background()
	receive := map[string]any{"queue_url": q}

	cases := []struct {
		fault     sqsfake.Fault
		code      string
		temporary bool
	}{
		{sqsfake.FaultServerError, "internal_failure", true},
		{sqsfake.FaultUnavailable, "service_unavailable", true},
		{sqsfake.FaultThrottle, "request_throttled", true},
	}
	for _, cs := range cases {
		fake.FailNext(cs.fault, 1)
		_, err := c.Call(ctx, receiveOp, receive)
		var r *wire.Refusal
		if !errors.As(err, &r) || r.Code != cs.code || r.Temporary != cs.temporary {
			t.Errorf("fault %d: %v", cs.fault, err)
		}
	}

	// A dropped connection: receive_message is retry-safe and is sent again.
	before := fake.Calls("ReceiveMessage")
	fake.FailNext(sqsfake.FaultDrop, 1)
	if _, err := c.Call(ctx, receiveOp, receive); err != nil {
		t.Fatalf("retry-safe receive after a drop: %v", err)
	}
	if n := fake.Calls("ReceiveMessage") - before; n != 2 {
		t.Errorf("receive sent %d times", n)
	}

	// delete_message is not: one attempt, reported as a transport failure.
	fake.SendMessage("warehouse", "m")
	out, _ := c.Call(ctx, receiveOp, receive)
	handle := out["messages"].([]any)[0].(map[string]any)["receipt_handle"]
	before = fake.Calls("DeleteMessage")
	fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultDropAfter, Operation: "DeleteMessage", Next: 1})
	_, err := c.Call(ctx, deleteOp, map[string]any{"queue_url": q, "receipt_handle": handle})
	var te *wire.TransportError
	if !errors.As(err, &te) || te.Retried || te.Attempts != 1 || !wire.IsTemporaryError(err) {
		t.Fatalf("delete after a drop: %v", err)
	}
	if n := fake.Calls("DeleteMessage") - before; n != 1 {
		t.Errorf("delete sent %d times", n)
	}
	// The fake acted before dropping: the message is gone.
	if st, _ := fake.Stats("warehouse"); st != (sqsfake.QueueStats{}) {
		t.Errorf("stats %+v", st)
	}
}

func TestParts(t *testing.T) {
	good := map[string]string{"key_id": "AKID", "secret": "s3cret-DO-NOT-PRINT"}
	cases := []struct {
		name  string
		p     ir.Provider
		host  string
		creds map[string]string
		want  string
	}{
		{"no host", sqsProvider, "", good, "needs a host"},
		{"no target", ir.Provider{Protocol: "aws_json", Credential: "aws_sigv4", AWSService: "sqs"}, "https://sqs.eu-west-1.amazonaws.com", good, "target"},
		{"no service", ir.Provider{Protocol: "aws_json", Credential: "aws_sigv4", AWSTarget: "AmazonSQS"}, "https://sqs.eu-west-1.amazonaws.com", good, "service"},
		{"missing secret", sqsProvider, "https://sqs.eu-west-1.amazonaws.com", map[string]string{"key_id": "AKID"}, `"secret"`},
		{"unknown member", sqsProvider, "https://sqs.eu-west-1.amazonaws.com", map[string]string{"key_id": "AKID", "secret": "s3cret-DO-NOT-PRINT", "token": "x"}, `"token"`},
		{"unknown protocol", ir.Provider{Protocol: "grpc"}, "https://x", nil, "grpc"},
		{"unknown scheme", ir.Provider{Protocol: "json_http", Credential: "oauth"}, "https://x", nil, "oauth"},
	}
	for _, c := range cases {
		_, _, err := providers.Parts(c.p, c.host, c.creds, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "DO-NOT-PRINT") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// The region comes from the host.
	_, auth, err := providers.Parts(sqsProvider, "https://sqs.eu-west-1.amazonaws.com", good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(auth); !strings.Contains(s, "eu-west-1") || strings.Contains(s, "DO-NOT-PRINT") {
		t.Errorf("signer %s", s)
	}
	// A fixed host is used when the connection gives none.
	fixed := ir.Provider{Protocol: "json_http", Credential: "bearer", Host: "https://api.cloudflare.com"}
	if _, _, err := providers.Parts(fixed, "", map[string]string{"token": "t"}, nil); err != nil {
		t.Errorf("fixed host: %v", err)
	}
	if got := providers.SecretMembers("aws_sigv4"); strings.Join(got, ",") != "secret,session_token" {
		t.Errorf("secret members %v", got)
	}
}

func TestOpenQueueByDriverName(t *testing.T) {
	conn := &queue.Conn{Name: "jobs", Receiving: &ir.Receiving{Driver: "carrier_pigeon"}}
	if _, err := providers.OpenQueue(conn, queue.Options{}); err == nil || err.Error() != "the carrier_pigeon driver is not built into this runtime" {
		t.Fatalf("an unknown driver: %v", err)
	}
	// Each built-in driver is reached by its name: the mapping's and
	// Cloudflare's ask for their calls, the SQL inbox's for its database.
	for d, want := range map[ir.Driver]string{
		ir.DriverMapping:          "receiving lacks a call",
		ir.DriverCloudflareQueues: "receiving lacks a call",
		ir.DriverSQLInbox:         "not a PostgreSQL URL",
		"rabbitmq":                "setting queue is empty",
	} {
		conn := &queue.Conn{Name: "jobs", Receiving: &ir.Receiving{Driver: d}, Credentials: map[string]string{"url": "::"}}
		if _, err := providers.OpenQueue(conn, queue.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("driver %q: %v, want %q", d, err, want)
		}
	}
}

// Every driver is registered once, with an Open, a stand-in or a local
// server for dev (the mapping's is its provider's), and a contract the
// checker is handed (all but the mapping's).
func TestDriversAreRegisteredOnce(t *testing.T) {
	seen := map[ir.Driver]bool{}
	for _, d := range providers.Drivers {
		if seen[d.Name()] {
			t.Errorf("driver %q registered twice", d.Name())
		}
		seen[d.Name()] = true
		if d.Open == nil {
			t.Errorf("driver %q has no Open", d.Name())
		}
		if d.Name() != ir.DriverMapping && (d.StandIn == nil) == (d.LocalURL == "") {
			t.Errorf("driver %q: dev needs a StandIn or a LocalURL, one of them", d.Name())
		}
		if d.LocalURL != "" && (d.RemoteHost == nil || d.LocalWhat == "" || d.LocalFix == "") {
			t.Errorf("driver %q: a LocalURL needs RemoteHost, LocalWhat and LocalFix for dev's refusal", d.Name())
		}
		if d.Name() != ir.DriverMapping && d.Contract.Help == "" {
			t.Errorf("driver %q's contract says not where it is met (Help)", d.Name())
		}
	}
	// Every driver's contract but the mapping's, in the order registered.
	var names, want []string
	for _, c := range providers.Contracts() {
		names = append(names, string(c.Name))
	}
	for _, d := range providers.Drivers {
		if d.Name() != ir.DriverMapping {
			want = append(want, string(d.Name()))
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") || !strings.HasPrefix(strings.Join(names, ","), "cloudflare_queues,sql_inbox,") {
		t.Errorf("contracts handed to the checker: %v, want %v", names, want)
	}
}
