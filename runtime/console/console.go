// Package console is the operator's web console of the events' store: what was kept,
// parked and delivered, and retry or dismiss, as `jadpo console` serves it
// (docs/guide/console.md). The Handler is an http.Handler a service can mount itself, as
// riverui is:
//
//	st, _ := store.OpenExisting(ctx, url) // with the adapters' packages linked in
//	h, err := console.New(console.Options{Store: st, Token: token, Hosts: []string{"ops.example.com"}})
//	mux.Handle("/console/", h) // with Options.Prefix "/console"
//
// Everything it serves is embedded: templates, one stylesheet, one small script. It is safe
// by default: every page but the login page needs a session, which only the access token
// opens; a session cookie is HttpOnly and SameSite=Strict (and Secure behind TLS); every
// change needs the session's CSRF token; the Host header must be one of Options.Hosts (DNS
// rebinding); the Content-Security-Policy allows no inline script and no other origin;
// pages cannot be framed. Each change is logged with the session that made it.
package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jadpo/jadpo/runtime/store"
)

//go:embed assets
var assets embed.FS

// Options configure a Handler.
type Options struct {
	// Store is the events' store; it must implement store.Browser (both adapters do).
	Store store.Store
	// Token is the access token that opens a session: at /login?token=..., or typed in
	// the login page. At least 16 characters.
	Token string
	// ReadOnly hides every change and refuses it.
	ReadOnly bool
	// Hosts are the Host header values the console answers to ("127.0.0.1:8484",
	// "localhost:8484"); any other is refused, so a DNS-rebound name cannot reach it. Empty
	// accepts any Host: a service that mounts the handler behind its own checks.
	Hosts []string
	// Prefix is where the handler is mounted ("/console"), "" for the root. The handler
	// strips it from the request path itself.
	Prefix string
	// SecureCookie marks the session cookie Secure even when the request came without TLS
	// (behind a TLS-terminating proxy). A request over TLS always gets a Secure cookie.
	SecureCookie bool
	// StoreName is the store as the footer names it (its URL without secrets).
	StoreName string
	// Log gets one record a change (who and what) and a login; nil logs nothing.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// MaxAttempts, when set, gives a delivery's attempt budget where the store holds 0
	// (the plan's applies): the subscriber and the stored value in, the budget out.
	MaxAttempts func(subscriber string, stored int) int
	// Refresh is how often the overview refreshes itself; 0 is 5 seconds.
	Refresh time.Duration
	// MetricsURL, when set, is jadpo run's metrics page (http://127.0.0.1:9090/metrics):
	// the overview shows from it what the store does not keep, the repeats and what
	// housekeeping deleted, since that process started.
	MetricsURL string
}

// Handler serves the console.
type Handler struct {
	o       Options
	b       store.Browser
	tokenH  [32]byte
	pages   map[string]*template.Template
	static  http.Handler
	mux     *http.ServeMux
	mu      sync.Mutex
	session map[string]*session
	kinds   map[string]lister
	// The overview's last figures, when they were read and how long that took, and
	// whether a reading runs (under mu).
	overviewCache   overviewData
	overviewAt      time.Time
	overviewCost    time.Duration
	overviewReading bool
}

type session struct {
	csrf    string
	name    string // what the log calls it: never the cookie's value
	expires time.Time
	flash   string
}

const (
	cookieName = "jadpo_console"
	sessionTTL = 12 * time.Hour
	maxSession = 1000
	// MaxChange is the most rows one change of "everything the filter matches" takes, in one
	// store transaction; a filter matching more must be narrowed.
	MaxChange = 10000
)

// csp is the Content-Security-Policy of every response: nothing from another origin, no
// inline script or style, no framing, forms post only here.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New returns the console's handler.
func New(o Options) (*Handler, error) {
	if o.Store == nil {
		return nil, errors.New("console: no store")
	}
	b, ok := o.Store.(store.Browser)
	if !ok {
		return nil, fmt.Errorf("console: the store %T cannot be browsed (it does not implement store.Browser)", o.Store)
	}
	if len(o.Token) < 16 {
		return nil, errors.New("console: the access token must be at least 16 characters (console.NewToken makes one)")
	}
	if o.Prefix != "" && (!strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/")) {
		return nil, fmt.Errorf("console: the prefix %q must start with / and not end with one (\"/console\")", o.Prefix)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Refresh <= 0 {
		o.Refresh = 5 * time.Second
	}
	for i, h := range o.Hosts {
		o.Hosts[i] = strings.ToLower(h)
	}
	h := &Handler{o: o, b: b, tokenH: sha256.Sum256([]byte(o.Token)), session: map[string]*session{}}
	if err := h.parse(); err != nil {
		return nil, err
	}
	staticFS, _ := fs.Sub(assets, "assets/static")
	h.static = http.StripPrefix("/static/", http.FileServer(http.FS(staticFS)))
	h.kinds = h.listers()
	h.routes()
	return h, nil
}

// NewToken returns a random access token: 32 bytes, hex.
func NewToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the systems Go supports
	}
	return hex.EncodeToString(b[:])
}

// LoginPath is the path of the login link for token, under prefix.
func LoginPath(prefix, token string) string { return prefix + "/login?token=" + token }

// IsLoopback reports whether addr (host:port) listens on loopback only: a host of
// localhost, 127.0.0.0/8 or ::1. An empty host (every interface) is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves a request: the security headers first, then the Host check, then the
// page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin") // the login link holds the token: no Referer leaves the origin
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if len(h.o.Hosts) > 0 && !h.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("this console answers to %s, not to the host %q (a guard against DNS rebinding: open it by the address it serves, or add the name with --host)",
			strings.Join(h.o.Hosts, ", "), r.Host), http.StatusMisdirectedRequest)
		return
	}
	path := r.URL.Path
	if h.o.Prefix != "" {
		rest, ok := strings.CutPrefix(path, h.o.Prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			rest = "/"
		}
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = rest, ""
		r2.URL = &u
		r = &r2
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	for _, a := range h.o.Hosts {
		if a == host {
			return true
		}
	}
	return false
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", h.staticFiles())
	m.HandleFunc("GET /login", h.login)
	m.HandleFunc("POST /login", h.login)
	m.HandleFunc("POST /logout", h.authed(h.logout))
	m.HandleFunc("GET /{$}", h.authed(h.overview))
	m.HandleFunc("GET /live", h.authed(h.live))
	m.HandleFunc("GET /parked", h.authed(h.list("parked")))
	m.HandleFunc("GET /parked/{id}", h.authed(h.parkedPage))
	m.HandleFunc("GET /parked/{id}/body", h.authed(h.parkedBody))
	m.HandleFunc("GET /deliveries", h.authed(h.list("deliveries")))
	m.HandleFunc("GET /deliveries/{id}", h.authed(h.deliveryPage))
	m.HandleFunc("POST /change", h.authed(h.change))
	m.HandleFunc("/", h.authed(func(w http.ResponseWriter, r *http.Request, s *session) {
		h.fail(w, r, s, http.StatusNotFound, "There is no such page.")
	}))
	h.mux = m
}

func (h *Handler) staticFiles() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.static.ServeHTTP(w, r)
	})
}

// authed wraps a page that needs a session: without one, the login page (401). A POST
// must also carry the session's CSRF token and, when the browser says where it comes from,
// come from this origin.
func (h *Handler) authed(fn func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		s := h.sessionOf(r)
		if s == nil {
			if r.Method != http.MethodGet {
				http.Error(w, "not logged in: open the console's login link first", http.StatusUnauthorized)
				return
			}
			h.render(w, http.StatusUnauthorized, "login", h.view(r, nil, "Log in"))
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				http.Error(w, "the form could not be read", http.StatusBadRequest)
				return
			}
			if !sameOrigin(r) {
				http.Error(w, "refused: the request comes from another origin", http.StatusForbidden)
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
				h.logf("console refused a change without its CSRF token", "session", s.name, "path", r.URL.Path)
				http.Error(w, "refused: the form has no valid CSRF token (reload the page and try again)", http.StatusForbidden)
				return
			}
		}
		fn(w, r, s)
	}
}

// sameOrigin reports whether a request's Origin, when the browser sent one, is this host.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	i := strings.Index(o, "://")
	return i >= 0 && strings.EqualFold(o[i+3:], r.Host)
}

func (h *Handler) sessionOf(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.session[c.Value]
	if s == nil {
		return nil
	}
	if !h.o.Now().Before(s.expires) {
		delete(h.session, c.Value)
		return nil
	}
	return s
}

// login opens a session for the right token (the link's query or the form's field) and
// answers with a page that goes on to the overview: a redirect would carry the
// cross-site navigation of a link clicked elsewhere, and the SameSite=Strict cookie
// would not be sent with it.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := r.URL.Query().Get("token")
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil || !sameOrigin(r) {
			http.Error(w, "the form could not be read", http.StatusBadRequest)
			return
		}
		token = r.PostForm.Get("token")
	}
	if token == "" {
		if h.sessionOf(r) != nil {
			http.Redirect(w, r, h.o.Prefix+"/", http.StatusSeeOther)
			return
		}
		h.render(w, http.StatusOK, "login", h.view(r, nil, "Log in"))
		return
	}
	th := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(th[:], h.tokenH[:]) != 1 {
		h.logf("console login refused: wrong token", "remote", r.RemoteAddr)
		v := h.view(r, nil, "Log in")
		v.Flash = "That token is not this console's: use the login link it printed, or the token file's content."
		h.render(w, http.StatusUnauthorized, "login", v)
		return
	}
	id, s := h.newSession()
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: h.o.Prefix + "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || h.o.SecureCookie, MaxAge: int(sessionTTL / time.Second),
	})
	h.logf("console login", "session", s.name, "remote", r.RemoteAddr)
	h.render(w, http.StatusOK, "loggedin", h.view(r, s, "Logged in"))
}

func (h *Handler) newSession() (string, *session) {
	id := NewToken()
	csrf := NewToken()
	sum := sha256.Sum256([]byte(id))
	s := &session{csrf: csrf, name: "s-" + hex.EncodeToString(sum[:4]), expires: h.o.Now().Add(sessionTTL)}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.o.Now()
	for k, old := range h.session {
		if !now.Before(old.expires) {
			delete(h.session, k)
		}
	}
	for k := range h.session {
		if len(h.session) < maxSession {
			break
		}
		delete(h.session, k) // any one: the map is full of live sessions
	}
	h.session[id] = s
	return id, s
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if c, err := r.Cookie(cookieName); err == nil {
		h.mu.Lock()
		delete(h.session, c.Value)
		h.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: h.o.Prefix + "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	h.logf("console logout", "session", s.name)
	h.render(w, http.StatusOK, "login", h.view(r, nil, "Logged out"))
}

func (h *Handler) logf(msg string, args ...any) {
	if h.o.Log != nil {
		h.o.Log.Info(msg, args...)
	}
}

// setFlash keeps a one-line message for the session's next page.
func (h *Handler) setFlash(s *session, msg string) {
	h.mu.Lock()
	s.flash = msg
	h.mu.Unlock()
}

func (h *Handler) takeFlash(s *session) string {
	if s == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := s.flash
	s.flash = ""
	return f
}
