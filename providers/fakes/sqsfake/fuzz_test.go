package sqsfake

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jadpo/jadpo/internal/testclock"
)

// FuzzRequest sends arbitrary operations and bodies (signature checking off)
// to a fake holding two queues and a few messages. Nothing may panic, and
// every answer is 200 or a 4xx with a JSON object naming its __type.
func FuzzRequest(f *testing.F) {
	seeds := []struct{ op, body string }{
		{"CreateQueue", `{"QueueName":"n","Attributes":{"VisibilityTimeout":"5","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":1}"}}`},
		{"SendMessage", `{"QueueUrl":"http://h/000000000000/q","MessageBody":"b","DelaySeconds":1,"MessageAttributes":{"a":{"DataType":"String","StringValue":"v"}}}`},
		{"SendMessageBatch", `{"QueueUrl":"http://h/000000000000/q","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"b","MessageBody":""}]}`},
		{"ReceiveMessage", `{"QueueUrl":"http://h/000000000000/q","MaxNumberOfMessages":10,"WaitTimeSeconds":1,"AttributeNames":["All"],"MessageAttributeNames":["a.*"]}`},
		{"DeleteMessage", `{"QueueUrl":"http://h/000000000000/q","ReceiptHandle":"djF8cXx4fDE"}`},
		{"DeleteMessageBatch", `{"QueueUrl":"http://h/000000000000/q","Entries":[{"Id":"a","ReceiptHandle":"x"}]}`},
		{"ChangeMessageVisibility", `{"QueueUrl":"http://h/000000000000/q","ReceiptHandle":"djF8cXx4fDE","VisibilityTimeout":0}`},
		{"GetQueueAttributes", `{"QueueUrl":"http://h/000000000000/q","AttributeNames":["All"]}`},
		{"SetQueueAttributes", `{"QueueUrl":"http://h/000000000000/q","Attributes":{"DelaySeconds":"3"}}`},
		{"GetQueueUrl", `{"QueueName":"q"}`},
		{"ListQueues", `{"QueueNamePrefix":"q","MaxResults":1}`},
		{"PurgeQueue", `{"QueueUrl":"http://h/000000000000/q"}`},
		{"DeleteQueue", `{"QueueUrl":"http://h/000000000000/dlq"}`},
		{"Nope", `[]`},
		{"SendMessage", `{"QueueUrl":5}`},
	}
	for _, s := range seeds {
		f.Add(s.op, []byte(s.body))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // long polls end at once
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		fake := New(Options{SkipSignatureCheck: true, Clock: testclock.NewManual(testclock.Epoch())})
		if _, err := fake.CreateQueue("dlq", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := fake.CreateQueue("q", map[string]string{
			"RedrivePolicy": `{"deadLetterTargetArn":"` + fake.QueueArn("dlq") + `","maxReceiveCount":"1"}`,
		}); err != nil {
			t.Fatal(err)
		}
		fake.SendMessage("q", "one")
		fake.SendMessage("q", "two")

		req := httptest.NewRequest("POST", "http://h/", bytes.NewReader(body)).WithContext(ctx)
		req.Header.Set("X-Amz-Target", "AmazonSQS."+op)
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code > 499) {
			t.Fatalf("%s: status %d: %s", op, rec.Code, rec.Body.Bytes())
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: answer is not a JSON object: %q", op, rec.Body.Bytes())
		}
		if rec.Code != http.StatusOK {
			if typ, _ := out["__type"].(string); typ == "" {
				t.Fatalf("%s: refusal without __type: %v", op, out)
			}
		}
	})
}
