package sqsfake

import "github.com/jadpo/jadpo/providers/internal/localserver"

// Server is a Fake listening on a TCP address, for `jadpo dev` and demos
// (tests may equally use httptest.NewServer(fake)).
type Server struct {
	*Fake
	*localserver.Server // URL is the endpoint to give clients; queue URLs start with it
}

// Start listens on addr ("" means 127.0.0.1 on a free port) and serves a new
// Fake built from opts (its BaseURL defaults to the server's URL).
func Start(addr string, opts Options) (*Server, error) {
	ln, url, err := localserver.Listen(addr)
	if err != nil {
		return nil, err
	}
	if opts.BaseURL == "" {
		opts.BaseURL = url
	}
	f := New(opts)
	return &Server{Fake: f, Server: localserver.Serve(ln, url, f)}, nil
}
