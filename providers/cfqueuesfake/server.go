package cfqueuesfake

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Server is a Fake listening on a TCP address, for `jadpo dev` and demos
// (tests may equally use httptest.NewServer(fake)).
type Server struct {
	*Fake
	// URL is the server's root ("http://127.0.0.1:PORT"); clients use
	// URL + "/client/v4" as Cloudflare's API base.
	URL string
	srv *http.Server
	ln  net.Listener
}

// Start listens on addr ("" means 127.0.0.1 on a free port) and serves a new
// Fake built from opts.
func Start(addr string, opts Options) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Fake: New(opts), URL: "http://" + ln.Addr().String(), ln: ln}
	s.srv = &http.Server{Handler: s.Fake, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			ln.Close()
		}
	}()
	return s, nil
}

// Close stops the server; no request of this API waits, so requests in
// progress get a short grace before their connections are cut.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
