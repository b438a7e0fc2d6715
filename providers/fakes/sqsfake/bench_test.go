package sqsfake

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/jadpo/jadpo/internal/testclock"
)

// BenchmarkReceiveDelete is one consumer's batch against a queue holding
// `waiting` messages: ReceiveMessage of 10, then DeleteMessage of each, with
// a new message sent per one deleted so the queue stays as long. It calls the
// operations behind ServeHTTP (no HTTP, no signature) to measure the fake's
// own bookkeeping, which must not grow with the queue's length.
func BenchmarkReceiveDelete(b *testing.B) {
	for _, waiting := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			clock := testclock.NewManual(testclock.Epoch())
			f := New(Options{Clock: clock, SkipSignatureCheck: true})
			url := "http://127.0.0.1/000000000000/q"
			if _, e := f.createQueue("http://127.0.0.1", &createQueueInput{QueueName: "q"}); e != nil {
				b.Fatal(e)
			}
			body := `{"id":"m","type":"order_shipped"}`
			for range waiting {
				if _, e := f.sendMessage(&sendMessageInput{QueueUrl: url, MessageBody: &body}); e != nil {
					b.Fatal(e)
				}
			}
			ten, none := 10, 0
			req := httptest.NewRequest("POST", "/", nil)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				out, e := f.receiveMessage(req, &receiveMessageInput{QueueUrl: url, MaxNumberOfMessages: &ten, WaitTimeSeconds: &none})
				if e != nil {
					b.Fatal(e)
				}
				got := out.(receiveMessageOutput).Messages
				if len(got) != 10 {
					b.Fatalf("received %d, want 10", len(got))
				}
				for _, m := range got {
					if _, e := f.deleteMessage(&deleteMessageInput{QueueUrl: url, ReceiptHandle: m.ReceiptHandle}); e != nil {
						b.Fatal(e)
					}
					if _, e := f.sendMessage(&sendMessageInput{QueueUrl: url, MessageBody: &body}); e != nil {
						b.Fatal(e)
					}
				}
			}
		})
	}
}
