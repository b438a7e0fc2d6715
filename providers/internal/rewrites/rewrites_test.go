package rewrites

import "testing"

func TestHooks(t *testing.T) {
	var h Hooks
	if got := string(h.Apply("pull", []byte("a"))); got != "a" {
		t.Fatalf("no hooks: %q", got)
	}
	h.Set("pull", func(b []byte) []byte { return append(b, 'p') })
	h.Set("", func(b []byte) []byte { return append(b, '*') })
	if got := string(h.Apply("pull", []byte("a"))); got != "ap*" {
		t.Errorf("own then every operation's: %q", got)
	}
	if got := string(h.Apply("ack", []byte("a"))); got != "a*" {
		t.Errorf("another operation: %q", got)
	}
	h.Set("pull", nil)
	if got := string(h.Apply("pull", []byte("a"))); got != "a*" {
		t.Errorf("removed: %q", got)
	}
}
