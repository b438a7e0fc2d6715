package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startLSP serves `jadpo lsp` over pipes; a server that stops answering
// fails the test after a bound instead of hanging it.
func startLSP(t *testing.T) (*lspClient, <-chan int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := runContext(context.Background(), []string{"lsp"}, inR, outW, io.Discard)
		outW.Close()
		done <- code
	}()
	stuck := time.AfterFunc(60*time.Second, func() {
		outR.CloseWithError(fmt.Errorf("the server did not answer within 60 s"))
	})
	t.Cleanup(func() { stuck.Stop(); inW.Close(); outR.Close() })
	return newLSPClient(t, outR, inW), done
}

func (c *lspClient) open(path, text string) {
	c.Send(0, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": pathURI(path), "languageId": "jadpo", "version": 1, "text": text}})
}

func (c *lspClient) initialize(params map[string]any) {
	c.t.Helper()
	c.Send(1, "initialize", params)
	if r := c.Next(); r["result"] == nil {
		c.t.Fatalf("initialize: %v", r)
	}
}

// publications reads the publications that answer one change, up to and
// including the one for uri, by URI.
func (c *lspClient) publications(uri string) map[string][]any {
	c.t.Helper()
	out := map[string][]any{}
	for i := 0; i < 50; i++ {
		m := c.Next()
		if m["method"] != "textDocument/publishDiagnostics" {
			c.t.Fatalf("unexpected message %v", m)
		}
		p := m["params"].(map[string]any)
		out[p["uri"].(string)] = p["diagnostics"].([]any)
		if p["uri"] == uri {
			return out
		}
	}
	c.t.Fatalf("no diagnostics for %s", uri)
	return nil
}

// scratchFolder is a folder holding a lone file, scratch.jadpo (not in any
// project), next to an unrelated project with an error and a named pipe.
func scratchFolder(t *testing.T) (dir, scratch string) {
	dir = t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "app.jadpo"), []byte("store primary {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(other, "pipe.jadpo"), 0o644); err != nil {
		t.Fatal(err)
	}
	scratch = filepath.Join(dir, "scratch.jadpo")
	return dir, scratch
}

// Issue 11, point 9: a file in no project was checked with its whole folder
// as the project (file:///scratch.jadpo walked the disk; a folder holding
// other projects published their diagnostics, and a named pipe there hung
// the server). It is checked alone now; with workspace folders, a project
// is looked for no higher than the one holding the file.
func TestLSPFileOutsideAProjectIsCheckedAlone(t *testing.T) {
	for _, params := range []map[string]any{
		{}, // no workspace: the project is looked for up to /
		{"rootUri": "ROOT"},
		{"workspaceFolders": []any{map[string]any{"uri": "ROOT", "name": "w"}}},
	} {
		dir, scratch := scratchFolder(t)
		for k, v := range params {
			if k == "rootUri" {
				params[k] = pathURI(dir)
			} else if k == "workspaceFolders" {
				v.([]any)[0].(map[string]any)["uri"] = pathURI(dir)
			}
		}
		c, _ := startLSP(t)
		c.initialize(params)
		c.open(scratch, "type Sku = Text\ntype Bad = \n")
		got := c.publications(pathURI(scratch))
		if len(got) != 1 {
			t.Fatalf("%v: publications for %d files, want only scratch.jadpo's: %v", params, len(got), got)
		}
		ds := got[pathURI(scratch)]
		if len(ds) != 1 || !strings.HasPrefix(ds[0].(map[string]any)["code"].(string), "syntax.") {
			t.Fatalf("%v: scratch.jadpo's diagnostics %v, want its syntax error", params, ds)
		}
	}
}

// The project is looked for no higher than the workspace folder: a folder
// opened inside a larger project is not that project.
func TestLSPProjectSearchStopsAtTheWorkspaceFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.jadpo"), []byte("store primary {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "notes")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, "draft.jadpo")
	c, _ := startLSP(t)
	c.initialize(map[string]any{"rootUri": pathURI(ws)})
	c.open(file, "type Sku = Text\n")
	got := c.publications(pathURI(file))
	if len(got) != 1 || len(got[pathURI(file)]) != 0 {
		t.Fatalf("publications %v, want draft.jadpo alone and clean", got)
	}
}

// Issue 11, point 9: a negative or missing Content-Length ended the server.
// Such a message is answered with an error and the session goes on.
func TestLSPBadHeaderIsAnsweredNotFatal(t *testing.T) {
	c, done := startLSP(t)
	go fmt.Fprint(c.in, "Content-Length: -5\r\n\r\n"+ // written at once: the server answers between them
		"Content-Type: application/vscode-jsonrpc\r\n\r\n"+
		"Content-Length: lots\r\n\r\n")
	for i := 0; i < 3; i++ {
		r := c.Next()
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != float64(lspInvalidRequest) || r["id"] != nil {
			t.Fatalf("answer %d to a bad header: %v", i, r)
		}
	}
	c.initialize(map[string]any{})
	c.Send(2, "shutdown", nil)
	c.Next()
	c.Send(0, "exit", nil)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Issue 11, point 9: requests before initialize were served. They are
// answered ServerNotInitialized (-32002), and notifications dropped, as LSP
// 3.17 says.
func TestLSPRequestsBeforeInitialize(t *testing.T) {
	_, scratch := scratchFolder(t)
	c, _ := startLSP(t)
	c.open(scratch, "type Bad = \n") // dropped: no publication
	c.Send(7, "shutdown", nil)
	r := c.Next()
	e, _ := r["error"].(map[string]any)
	if r["id"] != float64(7) || e == nil || e["code"] != float64(lspServerNotInitialized) {
		t.Fatalf("a request before initialize: %v, want error -32002", r)
	}
	c.initialize(map[string]any{})
	c.Send(8, "initialize", map[string]any{})
	if r := c.Next(); r["error"] == nil {
		t.Fatalf("a second initialize: %v, want an error", r)
	}
	c.open(scratch, "type Sku = Text\n")
	if got := c.publications(pathURI(scratch)); len(got) != 1 {
		t.Fatalf("after initialize: %v", got)
	}
}

// A named pipe in the project is not waited on: the check goes on without
// it (`jadpo check` reports it as toolchain.project_read_failed).
func TestLSPNamedPipeInTheProject(t *testing.T) {
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "returns"), dir); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.jadpo"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.jadpo")
	text, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := startLSP(t)
	c.initialize(map[string]any{"rootUri": pathURI(dir)})
	c.open(app, strings.Replace(string(text), "store primary {", "store primary {{", 1))
	if ds := c.diagnostics(pathURI(app)); len(ds) == 0 {
		t.Fatal("app.jadpo's syntax error is not published")
	}
}
