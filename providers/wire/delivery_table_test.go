package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// TestDeliveryTableTransport holds the client's tries without an answer and
// the pauses between them to testdata/delivery/table.json, the table the
// Worker's callJSONHTTP is held to as well (codegen/workers/test/delivery.test.mjs;
// runtime's TestDeliveryTable reads the rest of it).
func TestDeliveryTableTransport(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(reporoot.Dir(t), "testdata", "delivery", "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tb struct {
		Engine struct {
			TransportTries int `json:"transport_tries"`
		} `json:"engine"`
		TransportPause []struct {
			AfterTry int   `json:"after_try"`
			MS       int64 `json:"ms"`
		} `json:"transport_pause"`
	}
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.TransportPause) == 0 {
		t.Fatal("the table has no transport_pause rows")
	}
	c, err := NewClient(Config{Protocol: testProtocol{base: "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxAttempts != tb.Engine.TransportTries {
		t.Errorf("a retry_safe operation gets %d tries, the table says %d", c.maxAttempts, tb.Engine.TransportTries)
	}
	for _, p := range tb.TransportPause {
		if got := c.backoff(p.AfterTry); got != time.Duration(p.MS)*time.Millisecond {
			t.Errorf("the pause after try %d is %v, the table says %d ms", p.AfterTry, got, p.MS)
		}
	}
}
