package lsp

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
	"github.com/jadpo/jadpo/internal/reporoot"
)

// testClient drives Serve in process over pipes, as an editor would.
type testClient struct {
	*lsptest.Client
	t       testing.TB
	done    chan error
	srv     *server
	started chan struct{}
}

// server is the session's state, for tests that look inside; read it only
// while the server waits for a message.
func (c *testClient) server() *server { <-c.started; return c.srv }

func startServer(t testing.TB, opts Options) *testClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{Client: lsptest.New(t, outR, inW), t: t, done: make(chan error, 1), started: make(chan struct{})}
	go func() {
		if opts.Debounce == 0 {
			opts.Debounce = DefaultDebounce
		}
		s := newServer(context.Background(), outW, opts)
		s.checkSent = checkSentTyped
		c.srv = s
		close(c.started)
		err := s.run(inR)
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return c
}

func (c *testClient) initialize(root string) {
	c.t.Helper()
	c.Call("initialize", map[string]any{"rootUri": pathURI(root), "capabilities": map[string]any{
		"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}})
	c.Notify("initialized", map[string]any{})
}

func (c *testClient) open(path, text string) {
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": pathURI(path), "languageId": "jadpo", "version": 1, "text": text}})
}

func (c *testClient) change(path, text string, version int) {
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": pathURI(path), "version": version},
		"contentChanges": []any{map[string]any{"text": text}}})
}

// at is the LSP position of the n-th (0-based) occurrence of needle in
// text, plus delta bytes (ASCII text).
var at = lsptest.At

func docPos(path string, pos map[string]any) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": pathURI(path)}, "position": pos}
}

// copyExample copies examples/<name> into a temporary folder.
func copyExample(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join(reporoot.Dir(t), "examples", name)
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
