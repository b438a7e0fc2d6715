package sqsfake_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/jadpo/jadpo/providers/fakes/sqsfake"
)

func sdkClient(endpoint, keyID, secret string) *sqs.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(keyID, secret, ""),
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.RetryMaxAttempts = 1
	})
}

func apiCode(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	return ae.ErrorCode()
}

// aws-sdk-go-v2's SQS client, signing with static credentials, works against
// the fake with signature checking on.
func TestAWSSDKClient(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	c := sdkClient(srv.URL, sqsfake.DefaultKeyID, sqsfake.DefaultSecret)

	created, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	wantURL := srv.URL + "/000000000000/orders"
	if aws.ToString(created.QueueUrl) != wantURL {
		t.Errorf("queue URL %s, want %s", aws.ToString(created.QueueUrl), wantURL)
	}
	got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	if err != nil || aws.ToString(got.QueueUrl) != wantURL {
		t.Fatalf("GetQueueUrl: %v %v", got, err)
	}
	q := got.QueueUrl

	// An empty receive answers no messages.
	rec, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 10})
	if err != nil || len(rec.Messages) != 0 {
		t.Fatalf("empty receive: %v %v", rec, err)
	}

	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String(`{"id":"o-1","type":"order_shipped"}`)})
	if err != nil {
		t.Fatal(err) // the SDK checks MD5OfMessageBody itself
	}
	rec, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: q, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil || len(rec.Messages) != 1 {
		t.Fatalf("receive: %v %v", rec, err)
	}
	m := rec.Messages[0]
	if aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m.Body) != `{"id":"o-1","type":"order_shipped"}` {
		t.Errorf("message %+v", m)
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Errorf("attributes %v", m.Attributes)
	}
	first := aws.ToString(m.ReceiptHandle)

	// In flight: nothing to receive.
	rec, _ = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q})
	if len(rec.Messages) != 0 {
		t.Fatalf("in-flight message received again")
	}
	// Visible again at once.
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: q, ReceiptHandle: aws.String(first), VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	rec, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil || len(rec.Messages) != 1 {
		t.Fatalf("receive again: %v %v", rec, err)
	}
	second := aws.ToString(rec.Messages[0].ReceiptHandle)
	if second == first {
		t.Error("receipt handle did not change")
	}
	if rec.Messages[0].Attributes["ApproximateReceiveCount"] != "2" || rec.Messages[0].Attributes["SentTimestamp"] == "" {
		t.Errorf("attributes %v", rec.Messages[0].Attributes)
	}

	// The first handle is stale: deleting with it succeeds and deletes nothing.
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: aws.String(first)}); err != nil {
		t.Fatal(err)
	}
	if st, _ := fake.Stats("orders"); st.InFlight != 1 {
		t.Fatalf("stale handle deleted the message: %+v", st)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: aws.String(second)}); err != nil {
		t.Fatal(err)
	}
	if st, _ := fake.Stats("orders"); st != (sqsfake.QueueStats{}) {
		t.Fatalf("after delete: %+v", st)
	}

	// Batches.
	entries := []types.SendMessageBatchRequestEntry{}
	for i := 0; i < 3; i++ {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String("e" + strconv.Itoa(i)), MessageBody: aws.String("b" + strconv.Itoa(i))})
	}
	batch, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q, Entries: entries})
	if err != nil || len(batch.Successful) != 3 {
		t.Fatalf("send batch: %v %v", batch, err)
	}
	rec, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 10})
	if err != nil || len(rec.Messages) != 3 {
		t.Fatalf("receive batch: %v %v", rec, err)
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, m := range rec.Messages {
		del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String("d" + strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String("bad"), ReceiptHandle: aws.String("not-a-handle")})
	dres, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q, Entries: del})
	if err != nil || len(dres.Successful) != 3 || len(dres.Failed) != 1 || aws.ToString(dres.Failed[0].Code) != "ReceiptHandleIsInvalid" {
		t.Fatalf("delete batch: %+v %v", dres, err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["QueueArn"] != "arn:aws:sqs:us-east-1:000000000000:orders" {
		t.Fatalf("attributes: %v %v", attrs, err)
	}

	// SQS's own errors reach the SDK as SQS sends them.
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("missing")})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Errorf("missing queue: %v", err)
	}
	if code := apiCode(t, err); code != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Errorf("missing queue code %q", code)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: aws.String("garbage")})
	var rhi *types.ReceiptHandleIsInvalid
	if !errors.As(err, &rhi) {
		t.Errorf("garbage handle: %v", err)
	}
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 11})
	if code := apiCode(t, err); code != "InvalidParameterValue" {
		t.Errorf("MaxNumberOfMessages 11: code %q", code)
	}
}

func TestAWSSDKWrongSecret(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	c := sdkClient(srv.URL, sqsfake.DefaultKeyID, "not-the-secret")
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if code := apiCode(t, err); code != "InvalidSignatureException" {
		t.Errorf("wrong secret: code %q (%v)", code, err)
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() != 400 {
		t.Errorf("status %d", re.HTTPStatusCode())
	}
	if _, ok := fake.Stats("orders"); ok {
		t.Error("a refused request created the queue")
	}
	c = sdkClient(srv.URL, "AKIDUNKNOWN", sqsfake.DefaultSecret)
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if code := apiCode(t, err); code != "InvalidClientTokenId" {
		t.Errorf("unknown key: code %q", code)
	}
}

// A message received maxReceiveCount times moves to the dead-letter queue.
func TestAWSSDKRedrive(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	c := sdkClient(srv.URL, sqsfake.DefaultKeyID, sqsfake.DefaultSecret)
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders-dlq")}); err != nil {
		t.Fatal(err)
	}
	main, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders"), Attributes: map[string]string{
		"VisibilityTimeout": "0",
		"RedrivePolicy":     `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":"2"}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: main.QueueUrl, MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		rec, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: main.QueueUrl})
		if err != nil || len(rec.Messages) != 1 {
			t.Fatalf("receive %d: %v %v", i, rec, err)
		}
	}
	rec, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: main.QueueUrl})
	if err != nil || len(rec.Messages) != 0 {
		t.Fatalf("third receive: %v %v", rec, err)
	}
	dlq := fake.Messages("orders-dlq")
	if len(dlq) != 1 || dlq[0].Body != "poison" || dlq[0].ReceiveCount != 2 || dlq[0].SourceQueueArn != "arn:aws:sqs:us-east-1:000000000000:orders" {
		t.Fatalf("dead-letter queue %+v", dlq)
	}
	if st, _ := fake.Stats("orders"); st != (sqsfake.QueueStats{}) {
		t.Fatalf("main queue %+v", st)
	}
	// The same attributes again is a no-op; different ones are refused.
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders-dlq")}); err != nil {
		t.Errorf("idempotent create: %v", err)
	}
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders"), Attributes: map[string]string{"VisibilityTimeout": "5"}})
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		t.Errorf("conflicting create: %v", err)
	}
}

// FaultEntryFailed fails entries of DeleteMessageBatch, not the call: the
// SDK gets a 200 answer listing them under Failed, and their messages stay.
func TestAWSSDKDeleteBatchEntriesFail(t *testing.T) {
	fake := sqsfake.New(sqsfake.Options{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	c := sdkClient(srv.URL, sqsfake.DefaultKeyID, sqsfake.DefaultSecret)
	created, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	q := created.QueueUrl
	for i := 0; i < 3; i++ {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String("b" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 10})
	if err != nil || len(rec.Messages) != 3 {
		t.Fatalf("receive: %v %v", rec, err)
	}
	fake.InjectFault(sqsfake.FaultRule{Kind: sqsfake.FaultEntryFailed, Operation: "DeleteMessageBatch", Next: 2})
	// A whole-call rule for another operation does not touch the entries,
	// nor the entry rule other calls.
	if _, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q}); err != nil {
		t.Fatal(err)
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, m := range rec.Messages {
		del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	dres, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q, Entries: del})
	if err != nil || len(dres.Successful) != 1 || len(dres.Failed) != 2 {
		t.Fatalf("delete batch: %+v %v", dres, err)
	}
	for i, f := range dres.Failed {
		if aws.ToString(f.Id) != strconv.Itoa(i) || aws.ToString(f.Code) != "InternalError" || f.SenderFault {
			t.Errorf("failed entry %d: %+v", i, f)
		}
	}
	if st, _ := fake.Stats("orders"); st.InFlight != 2 {
		t.Fatalf("after the batch: %+v, want the 2 failed in flight", st)
	}
	// The rule is used up: the same entries now delete.
	dres, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q, Entries: del[:2]})
	if err != nil || len(dres.Successful) != 2 || len(dres.Failed) != 0 {
		t.Fatalf("delete again: %+v %v", dres, err)
	}
	if st, _ := fake.Stats("orders"); st != (sqsfake.QueueStats{}) {
		t.Fatalf("after deleting again: %+v", st)
	}
}
