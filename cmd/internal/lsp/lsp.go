// Package lsp is jadpo's language server: JSON-RPC over a byte stream,
// LSP's UTF-16 positions, open documents laid over the disk, and the
// workspace folders that bound where a project is looked for. `jadpo lsp`
// serves it on stdin and stdout; an editor gets the same diagnostics
// `jadpo check` reports, as the user types.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/providers/catalog"
)

// Options are what the server says of itself.
type Options struct {
	Version string // serverInfo.version in initialize's answer
}

// Serve reads LSP messages from in and writes answers and diagnostics to
// out until exit, the end of in, or ctx is done (looked at between
// messages: a read in progress is not interrupted).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	s := &lspServer{ctx: ctx, in: bufio.NewReader(in), out: out, version: opts.Version, open: map[string][]byte{}, published: map[string]bool{}}
	return s.serve()
}

type lspServer struct {
	ctx       context.Context
	version   string
	in        *bufio.Reader
	out       io.Writer
	open      map[string][]byte // open documents by absolute path
	published map[string]bool   // URIs with diagnostics shown
	shutdown  bool
	// initialized is set by the initialize request; before it, requests
	// are answered ServerNotInitialized and notifications dropped (LSP 3.17).
	initialized bool
	// workspaces are the folders initialize named (workspaceFolders, else
	// rootUri, else rootPath); a project is looked for only inside them.
	workspaces []string
}

// JSON-RPC and LSP error codes the server answers with.
const (
	lspParseError           = -32700
	lspInvalidRequest       = -32600
	lspMethodNotFound       = -32601
	lspServerNotInitialized = -32002
)

// lspMaxMessage bounds one message's body: 64 MiB (a document is at most
// the 8 MiB of a source file; JSON escaping can grow it).
const lspMaxMessage = 64 << 20

// headerError is a message whose headers cannot be used; the server answers
// it and reads on.
type headerError struct{ why string }

func (h headerError) Error() string { return h.why }

type lspMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *lspError       `json:"error,omitempty"`
}

type lspError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *lspServer) serve() error {
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		body, err := s.read()
		if err == io.EOF {
			return nil
		}
		var he headerError
		if errors.As(err, &he) {
			// The message is lost, not the session: say so and read on.
			s.send(lspMessage{ID: json.RawMessage("null"), Error: &lspError{lspInvalidRequest, he.why}})
			continue
		}
		if err != nil {
			return err
		}
		var m lspMessage
		if err := json.Unmarshal(body, &m); err != nil {
			s.send(lspMessage{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &lspError{lspParseError, "parse error"}})
			continue
		}
		if m.Method == "exit" {
			return nil
		}
		if !s.initialized && m.Method != "initialize" {
			if m.ID != nil {
				s.send(lspMessage{ID: m.ID, Error: &lspError{lspServerNotInitialized, "the server is not initialized: send initialize first"}})
			}
			continue // a notification before initialize is dropped
		}
		s.handle(m)
	}
}

// read reads one message: headers, a blank line, Content-Length bytes. A
// message without a usable Content-Length is a headerError: its headers are
// consumed (a body over the limit is skipped too) and the next one is read.
func (s *lspServer) read() ([]byte, error) {
	length, bad := -1, ""
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		// Anywhere in the line: after a lost message, the next header may
		// follow the unread body on the same line.
		if i := strings.Index(strings.ToLower(line), "content-length:"); i >= 0 {
			v := strings.TrimSpace(line[i+len("content-length:"):])
			n, err := strconv.Atoi(v)
			switch {
			case err != nil || n < 0:
				bad = fmt.Sprintf("bad Content-Length %q: it must be a whole number of bytes", v)
			case n > lspMaxMessage:
				if _, err := io.CopyN(io.Discard, s.in, int64(n)); err != nil {
					return nil, err
				}
				return nil, headerError{fmt.Sprintf("a message of %d bytes is over the limit of %d; it was skipped", n, lspMaxMessage)}
			default:
				length, bad = n, ""
			}
		}
	}
	if bad != "" {
		return nil, headerError{bad}
	}
	if length < 0 {
		return nil, headerError{"a message without Content-Length"}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.in, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

func (s *lspServer) send(m lspMessage) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (s *lspServer) handle(m lspMessage) {
	reply := func(result any) {
		if m.ID != nil {
			s.send(lspMessage{ID: m.ID, Result: result})
		}
	}
	var doc struct {
		TextDocument struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Text string `json:"text"`
		} `json:"contentChanges"`
	}
	_ = json.Unmarshal(m.Params, &doc)
	switch m.Method {
	case "initialize":
		if s.initialized {
			s.send(lspMessage{ID: m.ID, Error: &lspError{lspInvalidRequest, "initialize was sent already"}})
			return
		}
		s.initialized = true
		s.workspaces = workspaceFolders(m.Params)
		reply(map[string]any{
			"capabilities": map[string]any{"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": true}},
			"serverInfo":   map[string]any{"name": "jadpo", "version": s.version},
		})
	case "shutdown":
		s.shutdown = true
		reply(nil)
	case "textDocument/didOpen":
		if p := uriPath(doc.TextDocument.URI); p != "" {
			s.open[p] = []byte(doc.TextDocument.Text)
			s.checkAround(p)
		}
	case "textDocument/didChange":
		if p := uriPath(doc.TextDocument.URI); p != "" && len(doc.ContentChanges) > 0 {
			s.open[p] = []byte(doc.ContentChanges[len(doc.ContentChanges)-1].Text)
			s.checkAround(p)
		}
	case "textDocument/didSave":
		if p := uriPath(doc.TextDocument.URI); p != "" {
			s.checkAround(p)
		}
	case "textDocument/didClose":
		if p := uriPath(doc.TextDocument.URI); p != "" {
			delete(s.open, p)
			s.checkAround(p)
		}
	default:
		if m.ID != nil && m.Method != "" {
			s.send(lspMessage{ID: m.ID, Error: &lspError{lspMethodNotFound, "method not found: " + m.Method}})
		}
	}
}

func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.Clean(u.Path)
}

func pathURI(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

// workspaceFolders reads the folders of initialize's params: its
// workspaceFolders, else rootUri, else rootPath.
func workspaceFolders(params json.RawMessage) []string {
	var p struct {
		WorkspaceFolders []struct {
			URI string `json:"uri"`
		} `json:"workspaceFolders"`
		RootURI  string `json:"rootUri"`
		RootPath string `json:"rootPath"`
	}
	_ = json.Unmarshal(params, &p)
	var out []string
	for _, f := range p.WorkspaceFolders {
		if d := uriPath(f.URI); d != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 && p.RootURI != "" {
		if d := uriPath(p.RootURI); d != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 && p.RootPath != "" && filepath.IsAbs(p.RootPath) {
		out = append(out, filepath.Clean(p.RootPath))
	}
	return out
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// projectRoot is the nearest folder at or above the file holding
// app.jadpo, looked for no higher than the workspace folder holding the
// file; false when there is none (or the file is outside every workspace
// folder initialize named), and the file is checked alone.
func (s *lspServer) projectRoot(file string) (string, bool) {
	top := ""
	if len(s.workspaces) > 0 {
		for _, w := range s.workspaces {
			if within(file, w) && len(w) > len(top) {
				top = w
			}
		}
		if top == "" {
			return "", false
		}
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		app := filepath.Join(dir, "app.jadpo")
		if _, ok := s.open[app]; ok {
			return dir, true
		}
		if _, err := os.Lstat(app); err == nil {
			return dir, true
		}
		if dir == top || filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// checkAround checks the project holding file, its open documents laid
// over the disk, and publishes every file's diagnostics. A file in no
// project is checked alone: its folder is not walked, so no other file's
// diagnostics are published for it.
func (s *lspServer) checkAround(file string) {
	root, inProject := s.projectRoot(file)
	var fsys fs.FS
	files := fstest.MapFS{}
	if inProject {
		var disk fs.FS = fstest.MapFS{}
		if d, err := source.DiskFS(root); err == nil {
			disk = d
			defer d.(io.Closer).Close() // one check per change: do not wait for the collector
		}
		for p, b := range s.open {
			if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
				files[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644, ModTime: time.Now()}
			}
		}
		fsys = overlayFS{disk: disk, files: files}
	} else {
		root = filepath.Dir(file)
		b, ok := s.open[file]
		if !ok {
			b, _ = source.ReadLocalFile(file, source.MaxFileSize) // closed: as saved, if readable
		}
		files[filepath.Base(file)] = &fstest.MapFile{Data: b, Mode: 0o644, ModTime: time.Now()}
		fsys = files
	}
	p := project.LoadFS(fsys)
	p.Catalogue = catalog.Builtin
	res := check.Check(p)
	byURI := map[string][]map[string]any{}
	for _, d := range res.Diags {
		if d.Subject.File == nil {
			continue
		}
		uri := pathURI(filepath.Join(root, filepath.FromSlash(d.Subject.File.Path)))
		byURI[uri] = append(byURI[uri], lspDiagnostic(d, root))
	}
	// Files that had diagnostics and have none now are cleared.
	for uri := range s.published {
		if _, still := byURI[uri]; still {
			continue
		}
		if p := uriPath(uri); inProject && strings.HasPrefix(p, root+string(filepath.Separator)) || !inProject && p == file {
			byURI[uri] = []map[string]any{}
		}
	}
	if !inProject {
		if _, ok := byURI[pathURI(file)]; !ok {
			byURI[pathURI(file)] = []map[string]any{}
		}
	}
	uris := make([]string, 0, len(byURI))
	for uri := range byURI {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		s.published[uri] = len(byURI[uri]) > 0
		if !s.published[uri] {
			delete(s.published, uri)
		}
		params, _ := json.Marshal(map[string]any{"uri": uri, "diagnostics": byURI[uri]})
		s.send(lspMessage{Method: "textDocument/publishDiagnostics", Params: params})
	}
}

func lspDiagnostic(d *diag.Diagnostic, root string) map[string]any {
	severity := 1
	if d.Severity == diag.Warning {
		severity = 2
	}
	message := d.Summary
	if d.Label != "" {
		message += "\n" + d.Label
	}
	if h := d.HelpText(); h != "" {
		message += "\nhelp: " + h
	}
	out := map[string]any{
		"range": lspRange(d.Subject), "severity": severity, "code": d.Code, "source": "jadpo", "message": message,
		"codeDescription": map[string]any{"href": diag.DocsURI(d.Code)},
	}
	var related []map[string]any
	for _, r := range d.Related {
		if r.Range.File == nil {
			continue
		}
		related = append(related, map[string]any{"message": r.Message, "location": map[string]any{
			"uri": pathURI(filepath.Join(root, filepath.FromSlash(r.Range.File.Path))), "range": lspRange(r.Range)}})
	}
	if related != nil {
		out["relatedInformation"] = related
	}
	return out
}

// lspRange converts byte offsets to LSP positions: 0-based lines, and
// characters counted in UTF-16 code units.
func lspRange(r source.Range) map[string]any {
	pos := func(offset int) map[string]any {
		p := r.File.Position(offset)
		return map[string]any{"line": p.Line - 1, "character": r.File.UTF16Column(offset)}
	}
	return map[string]any{"start": pos(r.Span.Start), "end": pos(r.Span.End)}
}

// overlayFS serves open documents over the files on disk.
type overlayFS struct {
	disk  fs.FS
	files fstest.MapFS
}

func (o overlayFS) Open(name string) (fs.File, error) {
	if _, ok := o.files[name]; ok {
		return o.files.Open(name)
	}
	return o.disk.Open(name)
}

func (o overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(o.disk, name)
	if err != nil && len(o.files) == 0 {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Name()] = true
	}
	if extra, err2 := fs.ReadDir(o.files, name); err2 == nil {
		for _, e := range extra {
			if !seen[e.Name()] {
				entries = append(entries, e)
			}
		}
		err = nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, err
}
