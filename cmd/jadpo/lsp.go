package main

import (
	"bufio"
	"encoding/json"
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

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
)

// jadpo lsp serves the Language Server Protocol on stdin and stdout: an
// editor gets the same diagnostics `jadpo check` reports, as the user types,
// with positions in UTF-16 code units as LSP counts them.
func (e *env) lspCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lsp",
		Short: "Serve the Language Server Protocol on stdin and stdout (diagnostics as you type)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s := &lspServer{in: bufio.NewReader(e.stdin), out: e.stdout, open: map[string][]byte{}, published: map[string]bool{}}
			return s.serve()
		},
	}
}

type lspServer struct {
	in        *bufio.Reader
	out       io.Writer
	open      map[string][]byte // open documents by absolute path
	published map[string]bool   // URIs with diagnostics shown
	shutdown  bool
}

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
		body, err := s.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var m lspMessage
		if err := json.Unmarshal(body, &m); err != nil {
			s.send(lspMessage{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &lspError{-32700, "parse error"}})
			continue
		}
		if m.Method == "exit" {
			return nil
		}
		s.handle(m)
	}
}

// read reads one message: headers, a blank line, Content-Length bytes.
func (s *lspServer) read() ([]byte, error) {
	length := -1
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || length < 0 || length > 64<<20 {
				return nil, fmt.Errorf("lsp: bad Content-Length")
			}
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("lsp: a message without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(s.in, body)
	return body, err
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
		reply(map[string]any{
			"capabilities": map[string]any{"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": true}},
			"serverInfo":   map[string]any{"name": "jadpo", "version": version},
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
			s.send(lspMessage{ID: m.ID, Error: &lspError{-32601, "method not found: " + m.Method}})
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

// projectRoot is the nearest folder at or above the file holding app.jadpo.
func (s *lspServer) projectRoot(file string) string {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		app := filepath.Join(dir, "app.jadpo")
		if _, ok := s.open[app]; ok {
			return dir
		}
		if _, err := os.Stat(app); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return filepath.Dir(file)
		}
	}
}

// checkAround checks the project holding file, its open documents laid
// over the disk, and publishes every file's diagnostics.
func (s *lspServer) checkAround(file string) {
	root := s.projectRoot(file)
	fsys := overlayFS{disk: os.DirFS(root), files: fstest.MapFS{}}
	for p, b := range s.open {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			fsys.files[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644, ModTime: time.Now()}
		}
	}
	res := check.Check(project.LoadFS(fsys))
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
		if _, still := byURI[uri]; !still && strings.HasPrefix(uriPath(uri), root+string(filepath.Separator)) {
			byURI[uri] = []map[string]any{}
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
		"codeDescription": map[string]any{"href": diag.DocsPath(d.Code)},
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
