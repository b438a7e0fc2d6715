package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClient drives Serve in process over pipes, as an editor would.
type testClient struct {
	t      testing.TB
	in     *io.PipeWriter
	out    *bufio.Reader
	done   chan error
	nextID int
	// diags holds the last publication by URI; pubs counts them.
	mu    sync.Mutex
	diags map[string][]any
	pubs  map[string]int
	// replies are answers not yet read, by id.
	replies map[int]map[string]any
	// requests are the server's own requests (client/registerCapability).
	requests []map[string]any
	notify   chan string // a URI each time its diagnostics are published
	srv      *server
	started  chan struct{}
}

// server is the session's state, for tests that look inside; read it only
// while the server waits for a message.
func (c *testClient) server() *server { <-c.started; return c.srv }

func startServer(t testing.TB, opts Options) *testClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1),
		diags: map[string][]any{}, pubs: map[string]int{}, replies: map[int]map[string]any{}, notify: make(chan string, 1<<16), started: make(chan struct{})}
	go func() {
		if opts.Debounce == 0 {
			opts.Debounce = DefaultDebounce
		}
		s := newServer(context.Background(), outW, opts)
		c.srv = s
		close(c.started)
		err := s.run(inR)
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return c
}

func (c *testClient) write(m map[string]any) {
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (c *testClient) notifyServer(method string, params any) {
	c.write(map[string]any{"method": method, "params": params})
}

// request sends a request and returns its id.
func (c *testClient) request(method string, params any) int {
	c.nextID++
	c.write(map[string]any{"id": c.nextID, "method": method, "params": params})
	return c.nextID
}

// readOne reads one message from the server and files it.
func (c *testClient) readOne() {
	c.t.Helper()
	length := -1
	for {
		line, err := c.out.ReadString('\n')
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
	body := make([]byte, length)
	if _, err := io.ReadFull(c.out, body); err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("%v: %s", err, body)
	}
	switch {
	case m["method"] == "textDocument/publishDiagnostics":
		p := m["params"].(map[string]any)
		uri := p["uri"].(string)
		c.mu.Lock()
		c.diags[uri] = p["diagnostics"].([]any)
		c.pubs[uri]++
		c.mu.Unlock()
		c.notify <- uri
	case m["method"] != nil:
		c.requests = append(c.requests, m)
	default:
		id, _ := m["id"].(float64)
		c.replies[int(id)] = m
	}
}

// call sends a request and reads until its answer; it fails the test on
// an error answer.
func (c *testClient) call(method string, params any) any {
	c.t.Helper()
	m := c.answer(c.request(method, params))
	if m["error"] != nil {
		c.t.Fatalf("%s: %v", method, m["error"])
	}
	return m["result"]
}

// answer reads until the answer to id.
func (c *testClient) answer(id int) map[string]any {
	c.t.Helper()
	for {
		if m, ok := c.replies[id]; ok {
			delete(c.replies, id)
			return m
		}
		c.readOne()
	}
}

// published reads until uri's diagnostics are published once more than
// they had been when before was taken.
func (c *testClient) waitPublished(uri string, before int) []any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.pubs[uri] <= before {
		if time.Now().After(deadline) {
			c.t.Fatalf("no diagnostics for %s", uri)
		}
		c.readOne()
	}
	return c.diags[uri]
}

func (c *testClient) initialize(root string) {
	c.t.Helper()
	c.call("initialize", map[string]any{"rootUri": pathURI(root), "capabilities": map[string]any{
		"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}})
	c.notifyServer("initialized", map[string]any{})
}

func (c *testClient) open(path, text string) {
	c.notifyServer("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": pathURI(path), "languageId": "jadpo", "version": 1, "text": text}})
}

func (c *testClient) change(path, text string, version int) {
	c.notifyServer("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": pathURI(path), "version": version},
		"contentChanges": []any{map[string]any{"text": text}}})
}

// at is the LSP position of the n-th (0-based) occurrence of needle in
// text, plus delta bytes (ASCII text).
func at(text, needle string, n, delta int) map[string]any {
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

func docPos(path string, pos map[string]any) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}, "position": pos}
}

// copyExample copies examples/<name> into a temporary folder.
func copyExample(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "examples", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
