package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/jadpo/jadpo/providers/queue"
)

// plainSource is a queue.Source that says nothing of parking.
type plainSource struct{}

func (plainSource) Receive(context.Context) (*queue.Batch, error)        { return &queue.Batch{}, nil }
func (plainSource) Acknowledge(context.Context, *queue.Batch) queue.Acks { return queue.Acks{} }
func (plainSource) LongPoll() time.Duration                              { return 0 }
func (plainSource) Close()                                               {}

// parkingSource parks a copy of its own, except for bodies it returns nil for.
type parkingSource struct{ plainSource }

func (parkingSource) ParkedBody(m *queue.Message) []byte {
	if m.Body == "as is" {
		return nil
	}
	return []byte("copy of " + m.Body)
}

// TestParkedBodyIsAskedOfTheDriversThatSayIt: parking keeps the body of a
// Source without queue.ParkedBodies, and what a Source with it returns
// (its body again when that is nil).
func TestParkedBodyIsAskedOfTheDriversThatSayIt(t *testing.T) {
	for _, c := range []struct {
		driver queue.Source
		body   string
		want   string
	}{
		{plainSource{}, "row", "row"},
		{parkingSource{}, "row", "copy of row"},
		{parkingSource{}, "as is", "as is"},
	} {
		qr := &queueRunner{driver: c.driver}
		if got := string(qr.parkedBody(&message{Message: &queue.Message{Body: c.body}})); got != c.want {
			t.Errorf("%T, body %q: parked %q, want %q", c.driver, c.body, got, c.want)
		}
	}
}
