// Package emailfake is a local stand-in for an HTTP email API: it takes a
// send request, records the mail it would send, and answers as Resend does
// ({"id": ...}, or a refusal {"statusCode", "name", "message"}). Nothing
// leaves the machine. Tests read what was sent; `jadpo dev` prints each mail.
//
// Which JSON members hold the recipient, subject, text and HTML comes from
// Options.Members (the package's `provide email` mapping), so the stand-in
// serves any email package whose send is one JSON request.
package emailfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// DefaultToken is the bearer token the fake takes when Options.Token is "".
const DefaultToken = "re_dev_token"

// Options configure a fake.
type Options struct {
	// Method and Path are the send operation's ("POST", "/emails"); a
	// request to anything else is answered 404 not_found. "" matches any.
	Method, Path string
	// Members maps a message member ("to", "subject", "text", "html") to the
	// request's JSON member holding it. Nil: Resend's, each its own name.
	Members map[string]string
	// Token is the bearer token a request must carry, else it is refused 401
	// missing_api_key or 403 invalid_api_key as Resend does. "" takes
	// DefaultToken; "-" takes any.
	Token string
	// OnMail, when set, is called with each mail taken, after it is recorded.
	OnMail func(Mail)
}

// Mail is one send request the fake took or refused.
type Mail struct {
	To, Subject, Text, HTML string
	// Method, Path and Auth (the Authorization header) are the request's;
	// Body is its JSON body.
	Method, Path, Auth string
	Body               map[string]any
	// Status is what the fake answered.
	Status int
}

// FirstLine is the mail's text up to its first line break, or its HTML's
// when it has no text.
func (m Mail) FirstLine() string {
	s := m.Text
	if s == "" {
		s = m.HTML
	}
	s, _, _ = strings.Cut(strings.TrimLeft(s, "\r\n"), "\n")
	return strings.TrimRight(s, "\r")
}

// Refusal is a scripted answer: the HTTP status and Resend's error name.
type Refusal struct {
	Status int
	Name   string
}

// Fake is the stand-in, an http.Handler.
type Fake struct {
	opts   Options
	mu     sync.Mutex
	script []Refusal
	mails  []Mail
	n      int
}

// New makes a fake.
func New(opts Options) *Fake {
	if opts.Members == nil {
		opts.Members = map[string]string{"to": "to", "subject": "subject", "text": "text", "html": "html"}
	}
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	return &Fake{opts: opts}
}

// Refuse makes the next sends answer with these refusals, in order; once
// they are spent sends succeed again.
func (f *Fake) Refuse(r ...Refusal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, r...)
}

// Mails returns every send request so far, refused ones included (their
// Status says which).
func (f *Fake) Mails() []Mail {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Mail(nil), f.mails...)
}

// Sent returns the mails taken (answered 200).
func (f *Fake) Sent() []Mail {
	var out []Mail
	for _, m := range f.Mails() {
		if m.Status == http.StatusOK {
			out = append(out, m)
		}
	}
	return out
}

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (f.opts.Method != "" && r.Method != f.opts.Method) || (f.opts.Path != "" && r.URL.Path != f.opts.Path) {
		refuse(w, http.StatusNotFound, "not_found", "The requested endpoint does not exist.")
		return
	}
	auth := r.Header.Get("Authorization")
	switch token, ok := strings.CutPrefix(auth, "Bearer "); {
	case !ok || token == "":
		refuse(w, http.StatusUnauthorized, "missing_api_key", "Missing API key in the authorization header.")
		return
	case f.opts.Token != "-" && token != f.opts.Token:
		refuse(w, http.StatusForbidden, "invalid_api_key", "API key is invalid.")
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	if err != nil {
		refuse(w, http.StatusUnprocessableEntity, "validation_error", "The body is not a JSON object.")
		return
	}
	m := Mail{Method: r.Method, Path: r.URL.Path, Auth: auth, Body: body,
		To: f.member(body, "to"), Subject: f.member(body, "subject"), Text: f.member(body, "text"), HTML: f.member(body, "html")}
	f.mu.Lock()
	var next *Refusal
	if len(f.script) > 0 {
		next, f.script = &f.script[0], f.script[1:]
	}
	m.Status = http.StatusOK
	if next != nil {
		m.Status = next.Status
	}
	f.mails = append(f.mails, m)
	f.n++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", f.n)
	f.mu.Unlock()
	if next != nil {
		refuse(w, next.Status, next.Name, "Refused by the email stand-in's script.")
		return
	}
	if f.opts.OnMail != nil {
		f.opts.OnMail(m)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

// member reads a message member from the body: text, or the first of a
// list of addresses.
func (f *Fake) member(body map[string]any, name string) string {
	switch v := body[f.opts.Members[name]].(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			s, _ := v[0].(string)
			return s
		}
	}
	return ""
}

// refuse answers as Resend's errors are shaped.
func refuse(w http.ResponseWriter, status int, name, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"statusCode": status, "name": name, "message": message})
}

// Server is a fake listening on a local address.
type Server struct {
	*Fake
	URL string
	srv *http.Server
}

// Start serves a fake on addr ("" for 127.0.0.1 on a free port).
func Start(addr string, opts Options) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Fake: New(opts), URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s.Fake, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// NewTest serves a fake on an httptest server closed at the test's end.
func NewTest(t interface{ Cleanup(func()) }, opts Options) (*Fake, string) {
	f := New(opts)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}
