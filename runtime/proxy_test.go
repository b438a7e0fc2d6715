package runtime_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy of a test's own between a client and a server (the
// runtime and PostgreSQL): cutting it makes the server unreachable for the
// client without touching the server.
type proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	cut   bool
	// Accepted counts the connections let through.
	accepted int
}

// newProxy listens on 127.0.0.1 and forwards each connection to target
// (host:port). It is closed when the test ends.
func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// Via rewrites a URL (postgres://user@host:port/db?...) to connect through
// the proxy.
func (p *proxy) Via(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.accepted++
	p.mu.Unlock()
	var once sync.Once
	done := func() {
		once.Do(func() {
			c.Close()
			s.Close()
			p.mu.Lock()
			delete(p.conns, c)
			delete(p.conns, s)
			p.mu.Unlock()
		})
	}
	go func() { io.Copy(s, c); done() }()
	go func() { io.Copy(c, s); done() }()
}

// Cut closes every connection through the proxy and refuses new ones (the
// port is closed: a connect is refused) until Restore.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Restore listens again on the same address.
func (p *proxy) Restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("the proxy cannot listen on %s again: %v", p.addr, err)
	}
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
	p.serve(ln)
}

// Accepted is how many connections the proxy has let through so far.
func (p *proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *proxy) close() {
	p.Cut()
}
