package console_test

import (
	"io"
	"log/slog"
	"strings"
	"sync"
)

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func slogTo(b *strings.Builder) *slog.Logger {
	var w io.Writer = &lockedWriter{b: b}
	return slog.New(slog.NewTextHandler(w, nil))
}
