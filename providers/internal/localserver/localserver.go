// Package localserver serves a fake (the SQS or Cloudflare Queues fake) on
// a local TCP address, for `jadpo dev` and demos.
package localserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Server is a handler served on a listener.
type Server struct {
	URL string // "http://127.0.0.1:PORT"
	srv *http.Server
}

// Listen listens on addr ("" means 127.0.0.1 on a free port) and returns the
// listener with its URL.
func Listen(addr string) (net.Listener, string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// Serve serves h on ln until Close.
func Serve(ln net.Listener, url string, h http.Handler) *Server {
	s := &Server{URL: url, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			ln.Close()
		}
	}()
	return s
}

// Close stops the server: requests in progress (a long poll) get a short
// grace before their connections are cut.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
