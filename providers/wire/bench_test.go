package wire

import (
	"fmt"
	"strings"
	"testing"
)

// receiveAnswer is an SQS ReceiveMessage answer of ten ~1.3 KB bodies, as
// BenchmarkReceive's batches are.
func receiveAnswer() []byte {
	var b strings.Builder
	b.WriteString(`{"Messages":[`)
	lines := strings.Repeat(`{\"sku\":\"SKU-1\",\"quantity\":2},`, 40)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"MessageId":"6f1d2e3a-0000-4000-8000-00000000000%d","ReceiptHandle":"AQEB%048d","MD5OfBody":"0123456789abcdef0123456789abcdef",`+
			`"Body":"{\"id\":\"m-%d\",\"type\":\"order_shipped\",\"order_id\":\"o-%d\",\"shipped_at\":\"2026-11-30T10:00:00Z\",\"carrier\":\"dhl\",\"lines\":[%s{\"sku\":\"SKU-2\",\"quantity\":1}]}",`+
			`"Attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1764496800000"}}`, i, i, i, i, lines)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkDecodeAnswer: the answer's own parser (text byte for byte,
// items one at a time) against encoding/json with DecodeValue, the reading
// before issue 11.
func BenchmarkDecodeAnswer(b *testing.B) {
	answer := receiveAnswer()
	b.Run("parser", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeAnswer(&receiveOutput, answer, upper, "messages"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := legacyDecode(&receiveOutput, answer, upper); err != nil {
				b.Fatal(err)
			}
		}
	})
}
