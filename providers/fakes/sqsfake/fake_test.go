package sqsfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/testclock"
	"github.com/jadpo/jadpo/providers/sigv4"
)

type harness struct {
	t      *testing.T
	fake   *Fake
	clock  *testclock.Manual
	srv    *httptest.Server
	signer *sigv4.Signer
	hc     *http.Client
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	clock := testclock.NewManual(testclock.Epoch())
	opts.Clock = clock
	fake := New(opts)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	signer, err := sigv4.NewSigner(sigv4.NewCredentials(DefaultKeyID, DefaultSecret, ""), "sqs", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	signer.Now = clock.Now
	return &harness{t: t, fake: fake, clock: clock, srv: srv, signer: signer, hc: &http.Client{}}
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	err    error
}

func (a answer) typ() string { s, _ := a.body["__type"].(string); return s }

// call sends an SQS JSON request, signed unless sign is false.
func (h *harness) call(op string, in any, sign bool) answer {
	h.t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", h.srv.URL+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("X-Amz-Target", "AmazonSQS."+op)
	if sign {
		if err := h.signer.Authorize(req, body); err != nil {
			h.t.Fatal(err)
		}
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatalf("%s: answer is not a JSON object: %q", op, b)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: out}
}

func (h *harness) ok(op string, in any) map[string]any {
	h.t.Helper()
	a := h.call(op, in, true)
	if a.err != nil || a.status != 200 {
		h.t.Fatalf("%s: %d %v %v", op, a.status, a.body, a.err)
	}
	return a.body
}

func (h *harness) createQueue(name string, attrs map[string]string) string {
	h.t.Helper()
	out := h.ok("CreateQueue", map[string]any{"QueueName": name, "Attributes": attrs})
	return out["QueueUrl"].(string)
}

func messages(out map[string]any) []map[string]any {
	list, _ := out["Messages"].([]any)
	var ms []map[string]any
	for _, m := range list {
		ms = append(ms, m.(map[string]any))
	}
	return ms
}

func TestVisibilityTimeout(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.createQueue("q", map[string]string{"VisibilityTimeout": "30"})
	h.ok("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "hello"})

	out := h.ok("ReceiveMessage", map[string]any{"QueueUrl": q, "AttributeNames": []string{"All"}})
	ms := messages(out)
	if len(ms) != 1 || ms[0]["Body"] != "hello" || ms[0]["MD5OfBody"] != "5d41402abc4b2a76b9719d911017c592" {
		t.Fatalf("receive: %v", out)
	}
	if a := ms[0]["Attributes"].(map[string]any); a["ApproximateReceiveCount"] != "1" || a["SentTimestamp"] != strconv.FormatInt(testclock.Epoch().UnixMilli(), 10) {
		t.Errorf("attributes %v", a)
	}
	h1 := ms[0]["ReceiptHandle"].(string)
	if st, _ := h.fake.Stats("q"); st != (QueueStats{InFlight: 1}) {
		t.Errorf("stats %+v", st)
	}
	// Without attribute names, no attributes.
	h.clock.Advance(29 * time.Second)
	if ms := messages(h.ok("ReceiveMessage", map[string]any{"QueueUrl": q})); len(ms) != 0 {
		t.Fatalf("received while in flight")
	}
	h.clock.Advance(time.Second)
	ms = messages(h.ok("ReceiveMessage", map[string]any{"QueueUrl": q, "MessageSystemAttributeNames": []string{"ApproximateReceiveCount"}, "VisibilityTimeout": 5}))
	if len(ms) != 1 || ms[0]["ReceiptHandle"] == h1 || ms[0]["Attributes"].(map[string]any)["ApproximateReceiveCount"] != "2" {
		t.Fatalf("second receive %v", ms)
	}
	h2 := ms[0]["ReceiptHandle"].(string)

	// ChangeMessageVisibility with the stale handle is refused; with the
	// current one it extends the timeout.
	a := h.call("ChangeMessageVisibility", map[string]any{"QueueUrl": q, "ReceiptHandle": h1, "VisibilityTimeout": 60}, true)
	if a.status != 400 || a.header.Get("x-amzn-query-error") != "InvalidParameterValue;Sender" {
		t.Errorf("stale handle: %d %v %v", a.status, a.header, a.body)
	}
	h.ok("ChangeMessageVisibility", map[string]any{"QueueUrl": q, "ReceiptHandle": h2, "VisibilityTimeout": 60})
	h.clock.Advance(59 * time.Second)
	if st, _ := h.fake.Stats("q"); st.InFlight != 1 {
		t.Errorf("visibility not extended: %+v", st)
	}
	h.clock.Advance(time.Second)
	// Not in flight any more.
	a = h.call("ChangeMessageVisibility", map[string]any{"QueueUrl": q, "ReceiptHandle": h2, "VisibilityTimeout": 10}, true)
	if a.typ() != "com.amazonaws.sqs#MessageNotInflight" || a.header.Get("x-amzn-query-error") != "AWS.SimpleQueueService.MessageNotInflight;Sender" {
		t.Errorf("not in flight: %v %v", a.body, a.header)
	}
	// The latest handle still deletes a message whose timeout ran out and that
	// no one received again.
	h.ok("DeleteMessage", map[string]any{"QueueUrl": q, "ReceiptHandle": h2})
	if st, _ := h.fake.Stats("q"); st != (QueueStats{}) {
		t.Errorf("after delete %+v", st)
	}
	// Deleting again succeeds (the message is gone).
	h.ok("DeleteMessage", map[string]any{"QueueUrl": q, "ReceiptHandle": h2})
	// A handle of another queue, or garbage, is invalid.
	h.createQueue("other", nil)
	a = h.call("DeleteMessage", map[string]any{"QueueUrl": h.fake.QueueURL("other"), "ReceiptHandle": h2}, true)
	if a.typ() != "com.amazonaws.sqs#ReceiptHandleIsInvalid" || a.header.Get("x-amzn-query-error") != "ReceiptHandleIsInvalid;Sender" {
		t.Errorf("other queue's handle: %v", a.body)
	}
}

func TestLongPolling(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.createQueue("q", nil)
	done := make(chan map[string]any)
	go func() { done <- h.ok("ReceiveMessage", map[string]any{"QueueUrl": q, "WaitTimeSeconds": 20}) }()
	for h.clock.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.clock.Advance(5 * time.Second)
	if _, err := h.fake.SendMessage("q", "late"); err != nil {
		t.Fatal(err)
	}
	out := <-done
	ms := messages(out)
	if len(ms) != 1 || ms[0]["Body"] != "late" {
		t.Fatalf("long poll: %v", out)
	}
	h.ok("DeleteMessage", map[string]any{"QueueUrl": q, "ReceiptHandle": ms[0]["ReceiptHandle"]})

	// Nothing arrives: the poll ends when its wait is over, with no messages.
	go func() { done <- h.ok("ReceiveMessage", map[string]any{"QueueUrl": q, "WaitTimeSeconds": 20}) }()
	for h.clock.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.clock.Advance(20 * time.Second)
	if out := <-done; out["Messages"] != nil {
		t.Fatalf("empty long poll: %v", out)
	}

	// A message becoming visible during the wait (its delay over) is handed over.
	h.ok("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "delayed", "DelaySeconds": 10})
	if st, _ := h.fake.Stats("q"); st.Delayed != 1 {
		t.Fatalf("stats %+v", st)
	}
	go func() { done <- h.ok("ReceiveMessage", map[string]any{"QueueUrl": q, "WaitTimeSeconds": 20}) }()
	for h.clock.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.clock.Advance(10 * time.Second)
	if ms := messages(<-done); len(ms) != 1 || ms[0]["Body"] != "delayed" {
		t.Fatalf("delayed: %v", ms)
	}
}

func TestRetentionAndPurge(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.createQueue("q", map[string]string{"MessageRetentionPeriod": "60"})
	h.fake.SendMessage("q", "a")
	h.clock.Advance(61 * time.Second)
	if st, _ := h.fake.Stats("q"); st != (QueueStats{}) {
		t.Errorf("retention: %+v", st)
	}
	h.fake.SendMessage("q", "b")
	h.ok("PurgeQueue", map[string]any{"QueueUrl": q})
	if len(h.fake.Messages("q")) != 0 {
		t.Error("purge kept messages")
	}
	h.ok("DeleteQueue", map[string]any{"QueueUrl": q})
	if a := h.call("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "x"}, true); a.typ() != "com.amazonaws.sqs#QueueDoesNotExist" ||
		a.header.Get("x-amzn-query-error") != "AWS.SimpleQueueService.NonExistentQueue;Sender" {
		t.Errorf("deleted queue: %v", a.body)
	}
}

func TestValidation(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.createQueue("q", nil)
	cases := []struct {
		op        string
		in        map[string]any
		typ       string
		queryCode string
	}{
		{"ReceiveMessage", map[string]any{"QueueUrl": q, "MaxNumberOfMessages": 11}, "com.amazon.coral.validate#ValidationException", "InvalidParameterValue"},
		{"ReceiveMessage", map[string]any{"QueueUrl": q, "WaitTimeSeconds": 21}, "com.amazon.coral.validate#ValidationException", "InvalidParameterValue"},
		{"ReceiveMessage", map[string]any{}, "com.amazon.coral.validate#ValidationException", "MissingParameter"},
		{"SendMessage", map[string]any{"QueueUrl": q}, "com.amazon.coral.validate#ValidationException", "MissingParameter"},
		{"SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "bad\u0001"}, "com.amazonaws.sqs#InvalidMessageContents", "InvalidMessageContents"},
		{"SendMessageBatch", map[string]any{"QueueUrl": q, "Entries": []any{}}, "com.amazonaws.sqs#EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest"},
		{"SendMessageBatch", map[string]any{"QueueUrl": q, "Entries": []any{map[string]any{"Id": "a", "MessageBody": "x"}, map[string]any{"Id": "a", "MessageBody": "y"}}},
			"com.amazonaws.sqs#BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
		{"DeleteMessageBatch", map[string]any{"QueueUrl": q, "Entries": make([]any, 11)}, "com.amazonaws.sqs#TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"},
		{"CreateQueue", map[string]any{"QueueName": "bad name"}, "com.amazon.coral.validate#ValidationException", "InvalidParameterValue"},
		{"CreateQueue", map[string]any{"QueueName": "x", "Attributes": map[string]string{"Colour": "red"}}, "com.amazonaws.sqs#InvalidAttributeName", "InvalidAttributeName"},
		{"CreateQueue", map[string]any{"QueueName": "x", "Attributes": map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"a","maxReceiveCount":0}`}}, "com.amazonaws.sqs#InvalidAttributeValue", "InvalidAttributeValue"},
		{"ChangeMessageVisibility", map[string]any{"QueueUrl": q, "ReceiptHandle": "x"}, "com.amazon.coral.validate#ValidationException", "MissingParameter"},
		{"ListDeadLetterSourceQueues", map[string]any{"QueueUrl": q}, "com.amazon.coral.service#UnknownOperationException", ""},
	}
	for _, c := range cases {
		a := h.call(c.op, c.in, true)
		qe := ""
		if c.queryCode != "" {
			qe = c.queryCode + ";Sender"
		}
		if a.status != 400 || a.typ() != c.typ || a.header.Get("x-amzn-query-error") != qe {
			t.Errorf("%s %v: %d %v %q", c.op, c.in, a.status, a.body, a.header.Get("x-amzn-query-error"))
		}
	}
	// Not JSON.
	req, _ := http.NewRequest("POST", h.srv.URL, strings.NewReader("{nope"))
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	h.signer.Authorize(req, []byte("{nope"))
	resp, _ := h.hc.Do(req)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "SerializationException") {
		t.Errorf("not JSON: %d %s", resp.StatusCode, b)
	}
}

func TestSignatureRefusals(t *testing.T) {
	h := newHarness(t, Options{})
	in := map[string]any{"QueueName": "q"}

	a := h.call("CreateQueue", in, false)
	if a.status != 403 || a.typ() != "com.amazon.coral.service#MissingAuthenticationToken" || a.header.Get("x-amzn-query-error") != "" {
		t.Errorf("missing: %d %v", a.status, a.body)
	}

	body, _ := json.Marshal(in)
	send := func(mutate func(*http.Request)) answer {
		req, _ := http.NewRequest("POST", h.srv.URL+"/", bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "AmazonSQS.CreateQueue")
		h.signer.Authorize(req, body)
		mutate(req)
		resp, err := h.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return answer{status: resp.StatusCode, header: resp.Header, body: out}
	}
	a = send(func(r *http.Request) {
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSQSFAKE/20240501")
	})
	if a.status != 400 || a.typ() != "com.amazon.coral.service#IncompleteSignature" {
		t.Errorf("malformed: %d %v", a.status, a.body)
	}
	a = send(func(r *http.Request) { r.Header.Del("X-Amz-Date") })
	if a.typ() != "com.amazon.coral.service#IncompleteSignature" {
		t.Errorf("no date: %v", a.body)
	}
	a = send(func(r *http.Request) { r.Header.Set("X-Amz-Target", "AmazonSQS.DeleteQueue") })
	if a.status != 400 || a.typ() != "com.amazon.coral.service#InvalidSignatureException" {
		t.Errorf("tampered: %d %v", a.status, a.body)
	}
	// Signed 16 minutes ago.
	a = send(func(r *http.Request) { h.clock.Advance(16 * time.Minute) })
	if a.typ() != "com.amazon.coral.service#InvalidSignatureException" || !strings.HasPrefix(a.body["message"].(string), "Signature expired:") {
		t.Errorf("stale: %v", a.body)
	}
	if _, ok := h.fake.Stats("q"); ok {
		t.Error("a refused request acted")
	}
	// Checking off: unsigned requests act.
	h2 := newHarness(t, Options{SkipSignatureCheck: true})
	if a := h2.call("CreateQueue", in, false); a.status != 200 {
		t.Errorf("unchecked: %v", a.body)
	}
	// The secrets are not kept in plain form.
	if strings.Contains(sprintAll(h.fake), DefaultSecret) {
		t.Error("fake shows its secret")
	}
}

func TestFaults(t *testing.T) {
	h := newHarness(t, Options{FaultSeed: 7})
	q := h.createQueue("q", nil)
	recv := map[string]any{"QueueUrl": q}

	h.fake.FailNext(FaultServerError, 2)
	for i := 0; i < 2; i++ {
		a := h.call("ReceiveMessage", recv, true)
		if a.status != 500 || a.typ() != "com.amazon.coral.service#InternalFailure" {
			t.Errorf("server error %d: %d %v", i, a.status, a.body)
		}
	}
	h.ok("ReceiveMessage", recv)

	h.fake.FailNext(FaultThrottle, 1)
	if a := h.call("ReceiveMessage", recv, true); a.status != 400 || a.typ() != "com.amazonaws.sqs#RequestThrottled" ||
		a.header.Get("x-amzn-query-error") != "RequestThrottled;Sender" {
		t.Errorf("throttle: %v", a.body)
	}
	h.fake.FailNext(FaultUnavailable, 1)
	if a := h.call("ReceiveMessage", recv, true); a.status != 503 {
		t.Errorf("unavailable: %v", a.body)
	}

	// Only one operation.
	h.fake.InjectFault(FaultRule{Kind: FaultServerError, Operation: "DeleteMessage", Next: 1})
	h.ok("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "x"})
	ms := messages(h.ok("ReceiveMessage", recv))
	if a := h.call("DeleteMessage", map[string]any{"QueueUrl": q, "ReceiptHandle": ms[0]["ReceiptHandle"]}, true); a.status != 500 {
		t.Errorf("delete fault: %v", a.body)
	}

	// A dropped connection: before acting, nothing happens; after acting, the
	// message is sent though the client never hears so.
	h.fake.FailNext(FaultDrop, 1)
	if a := h.call("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "dropped"}, true); a.err == nil {
		t.Errorf("drop: answered %v", a.body)
	}
	h.fake.FailNext(FaultDropAfter, 1)
	if a := h.call("SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "acted"}, true); a.err == nil {
		t.Errorf("drop after: answered %v", a.body)
	}
	var bodies []string
	for _, m := range h.fake.Messages("q") {
		bodies = append(bodies, m.Body)
	}
	if strings.Join(bodies, ",") != "x,acted" {
		t.Errorf("messages %v", bodies)
	}

	// Slow: the client's timeout fires first.
	h.fake.InjectFault(FaultRule{Kind: FaultSlow, Next: 1, Delay: 300 * time.Millisecond})
	h.hc.Timeout = 20 * time.Millisecond
	if a := h.call("ReceiveMessage", recv, true); a.err == nil {
		t.Errorf("slow: answered in time")
	}
	h.hc.Timeout = 0

	// A seeded fraction fails some calls and not others, the same ones each run.
	pattern := func() string {
		hh := newHarness(t, Options{FaultSeed: 42})
		q := hh.createQueue("q", nil)
		hh.fake.FailFraction(FaultServerError, 0.5)
		var b strings.Builder
		for i := 0; i < 40; i++ {
			if hh.call("ReceiveMessage", map[string]any{"QueueUrl": q}, true).status == 500 {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	p1, p2 := pattern(), pattern()
	if p1 != p2 || !strings.Contains(p1, "x") || !strings.Contains(p1, ".") {
		t.Errorf("fraction pattern %s / %s", p1, p2)
	}
	h.fake.ClearFaults()
	if n := h.fake.Calls("ReceiveMessage"); n < 6 {
		t.Errorf("calls %d", n)
	}
}

func TestServer(t *testing.T) {
	s, err := Start("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url, err := s.CreateQueue("demo", nil)
	if err != nil || url != s.URL+"/000000000000/demo" || s.QueueURL("demo") != url {
		t.Fatalf("queue URL %q %v", url, err)
	}
	// A long poll in progress does not hold Close up.
	signer, _ := sigv4.NewSigner(sigv4.NewCredentials(DefaultKeyID, DefaultSecret, ""), "sqs", "")
	body := []byte(`{"QueueUrl":"` + url + `","WaitTimeSeconds":20}`)
	req, _ := http.NewRequestWithContext(context.Background(), "POST", s.URL, bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
	signer.Authorize(req, body)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for s.Calls("ReceiveMessage") == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-errc
	if _, err := Start("256.0.0.1:1", Options{}); err == nil {
		t.Error("bad address accepted")
	}
}

func TestAttributesMD5(t *testing.T) {
	// One String attribute, as SQS's documentation describes the encoding.
	v := "hello"
	got, e := attributesMD5(map[string]messageAttributeValue{"greeting": {DataType: "String", StringValue: &v}})
	if e != nil {
		t.Fatal(e)
	}
	var b bytes.Buffer
	for _, part := range []string{"greeting", "String"} {
		b.Write([]byte{0, 0, 0, byte(len(part))})
		b.WriteString(part)
	}
	b.WriteByte(1)
	b.Write([]byte{0, 0, 0, 5})
	b.WriteString("hello")
	if want := md5Hex(b.String()); got != want {
		t.Errorf("md5 %s, want %s", got, want)
	}
	if _, e := attributesMD5(map[string]messageAttributeValue{"x": {DataType: "Weird"}}); e == nil {
		t.Error("bad data type accepted")
	}
}

func sprintAll(v any) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		b.WriteString(fmt.Sprintf(verb, v))
	}
	return b.String()
}

func TestRewriteAnswers(t *testing.T) {
	h := newHarness(t, Options{})
	url := h.createQueue("q", nil)
	h.ok("SendMessage", map[string]any{"QueueUrl": url, "MessageBody": "RID-A"})
	h.fake.RewriteAnswers("ReceiveMessage", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("RID-A"), []byte("RID-B")) })
	ms := messages(h.ok("ReceiveMessage", map[string]any{"QueueUrl": url, "VisibilityTimeout": 0}))
	if len(ms) != 1 || ms[0]["Body"] != "RID-B" {
		t.Fatalf("received %v, want the rewritten body", ms)
	}
	// Only the operation named is rewritten, and nil removes the hook.
	if out := h.ok("GetQueueUrl", map[string]any{"QueueName": "q"}); out["QueueUrl"] != url {
		t.Fatalf("GetQueueUrl answered %v", out)
	}
	h.fake.RewriteAnswers("ReceiveMessage", nil)
	ms = messages(h.ok("ReceiveMessage", map[string]any{"QueueUrl": url}))
	if len(ms) != 1 || ms[0]["Body"] != "RID-A" {
		t.Fatalf("received %v after the hook was removed", ms)
	}
}
