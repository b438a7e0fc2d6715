// Package lsptest is test scaffolding for the language server: a small
// LSP client that frames JSON-RPC messages with Content-Length headers over
// a reader and writer, as an editor does, so that the in-process server's
// tests and the built `jadpo lsp`'s tests drive it the same way.
package lsptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// publishWait is how long Published waits for a publication.
const publishWait = 30 * time.Second

// Client speaks LSP to a server: it writes to the server's input and reads
// the server's output, filing what it reads as diagnostics, the server's
// own requests, or answers.
type Client struct {
	t      testing.TB
	w      io.Writer
	r      *bufio.Reader
	nextID int
	// diags holds the last publication by URI; pubs counts them.
	diags   map[string][]any
	pubs    map[string]int
	replies map[int]map[string]any
	// requests are the server's own requests (client/registerCapability).
	requests []map[string]any

	// StallAfter and OnStall, when both are set, make a read that waits
	// longer than StallAfter call OnStall (which kills a server process, so
	// that the read fails) instead of hanging the test.
	StallAfter time.Duration
	OnStall    func()
}

// New is a client that writes to the server through w and reads it from r.
func New(t testing.TB, r io.Reader, w io.Writer) *Client {
	return &Client{t: t, w: w, r: bufio.NewReaderSize(r, 1<<20),
		diags: map[string][]any{}, pubs: map[string]int{}, replies: map[int]map[string]any{}}
}

func (c *Client) write(m map[string]any) {
	c.t.Helper()
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	c.write(map[string]any{"method": method, "params": params})
}

// Request sends a request and returns its id.
func (c *Client) Request(method string, params any) int {
	c.t.Helper()
	c.nextID++
	c.write(map[string]any{"id": c.nextID, "method": method, "params": params})
	return c.nextID
}

// Send sends a request with id, or a notification when id is 0, for
// tests that number their own requests and read with Next.
func (c *Client) Send(id int, method string, params any) {
	c.t.Helper()
	m := map[string]any{"method": method, "params": params}
	if id > 0 {
		m["id"] = id
	}
	c.write(m)
}

// Next reads the server's next message and returns it without filing it.
func (c *Client) Next() map[string]any {
	c.t.Helper()
	if c.StallAfter > 0 && c.OnStall != nil {
		timer := time.AfterFunc(c.StallAfter, c.OnStall)
		defer timer.Stop()
	}
	length := -1
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading the server: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	if length < 0 {
		c.t.Fatal("a message from the server without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.r, body); err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("%v: %s", err, body)
	}
	return m
}

// ReadOne reads one message from the server and files it.
func (c *Client) ReadOne() {
	c.t.Helper()
	m := c.Next()
	switch {
	case m["method"] == "textDocument/publishDiagnostics":
		p := m["params"].(map[string]any)
		uri := p["uri"].(string)
		c.diags[uri] = p["diagnostics"].([]any)
		c.pubs[uri]++
	case m["method"] != nil:
		c.requests = append(c.requests, m)
	default:
		id, _ := m["id"].(float64)
		c.replies[int(id)] = m
	}
}

// Answer reads until the answer to id.
func (c *Client) Answer(id int) map[string]any {
	c.t.Helper()
	for {
		if m, ok := c.replies[id]; ok {
			delete(c.replies, id)
			return m
		}
		c.ReadOne()
	}
}

// Call sends a request and reads until its answer; it fails the test on
// an error answer.
func (c *Client) Call(method string, params any) any {
	c.t.Helper()
	m := c.Answer(c.Request(method, params))
	if m["error"] != nil {
		c.t.Fatalf("%s: %v", method, m["error"])
	}
	return m["result"]
}

// Pubs is how many times uri's diagnostics have been published so far.
func (c *Client) Pubs(uri string) int { return c.pubs[uri] }

// Requests are the server's own requests read so far.
func (c *Client) Requests() []map[string]any { return c.requests }

// Published reads until uri's diagnostics are published once more than
// they had been when before was taken (from Pubs), and returns them.
func (c *Client) Published(uri string, before int) []any {
	c.t.Helper()
	deadline := time.Now().Add(publishWait)
	for c.pubs[uri] <= before {
		if time.Now().After(deadline) {
			c.t.Fatalf("no diagnostics for %s", uri)
		}
		c.ReadOne()
	}
	return c.diags[uri]
}

// At is the LSP position of the n-th (0-based) occurrence of needle in
// text, plus delta bytes (ASCII text).
func At(text, needle string, n, delta int) map[string]any {
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[off+1:], needle)
		if j < 0 {
			panic("no " + needle)
		}
		off += 1 + j
	}
	off += delta
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndex(text[:off], "\n") + 1)
	return map[string]any{"line": line, "character": col}
}

// ApplyEdits applies one file's text edits (LSP ranges, ASCII text).
func ApplyEdits(text string, edits []any) string {
	offset := func(p map[string]any) int {
		lines := strings.SplitAfter(text, "\n")
		off := 0
		for i := 0; i < int(p["line"].(float64)); i++ {
			off += len(lines[i])
		}
		return off + int(p["character"].(float64))
	}
	type edit struct {
		start, end int
		text       string
	}
	var es []edit
	for _, x := range edits {
		m := x.(map[string]any)
		r := m["range"].(map[string]any)
		es = append(es, edit{offset(r["start"].(map[string]any)), offset(r["end"].(map[string]any)), m["newText"].(string)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].start > es[j].start })
	for _, x := range es {
		text = text[:x.start] + x.text + text[x.end:]
	}
	return text
}
