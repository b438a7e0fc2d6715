// Package lsp is jadpo's language server (LSP 3.17): JSON-RPC over a byte
// stream, UTF-16 positions, open documents laid over the disk, and the
// workspace folders that bound where a project is looked for. `jadpo lsp`
// serves it on stdin and stdout.
//
// An editor gets what `jadpo check` reports as the user types, and hover,
// definition, references, completion, document and workspace symbols, code
// actions, formatting and rename; and (editor.go) semantic tokens,
// signature help, folding and selection ranges, document highlights and
// inlay hints. Every answer is read from the parser's
// trees and the checker's index (check.CheckIndexed), never from the text
// by pattern: the server itself knows no rule of the language. Every
// message is read into and written from package protocol's types, which
// are generated from LSP's metaModel (docs/design/editors.md).
//
// Messages are read on their own goroutine (so $/cancelRequest is seen
// while a check runs) and handled one at a time on the serving one, which
// owns every piece of state. An edit is checked after a short debounce;
// a request that reads the project first runs any check still pending, so
// it never answers from text the editor has since changed.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
)

// Options are what the server says of itself and what the command wires in.
type Options struct {
	Version string // serverInfo.version in initialize's answer
	// Debounce is how long the server waits after an edit for another
	// before checking; 0 means DefaultDebounce, a negative one none.
	Debounce time.Duration
	// Format lays out a .jadpo file in the canonical layout (`jadpo fmt`);
	// nil: formatting is not offered.
	Format func(filename string, src []byte) ([]byte, error)
	// Catalogue lists the packages `jadpo package add` installs by name.
	Catalogue func() []string
	// InstallPackage installs a catalogue package into the project folder
	// (the "install the package" quick fix); nil: the fix is not offered.
	InstallPackage func(projectDir, name string) error
	// Drivers are the queue drivers' contracts the checker is handed (and
	// completion offers a driver's credential scheme's members from); nil:
	// the toolchain's, providers.Contracts().
	Drivers check.Drivers
}

// DefaultDebounce is the wait after an edit before it is checked: long
// enough to take the next keystroke of a fast typist's burst into the same
// check, short enough to stay inside the 50 ms an edit's diagnostics may
// take (docs/performance.md, "Language server").
const DefaultDebounce = 5 * time.Millisecond

// ErrExitWithoutShutdown is Serve's answer to `exit` before `shutdown`:
// LSP 3.17 says the process then exits with 1.
var ErrExitWithoutShutdown = errors.New("the editor sent exit before shutdown")

// Serve reads LSP messages from in and writes answers and diagnostics to
// out until exit, the end of in, or ctx is done.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	return newServer(ctx, out, opts).run(in)
}

func (s *server) run(in io.Reader) error {
	msgs := make(chan incoming, 64)
	stop := make(chan struct{})
	defer close(stop)
	go s.readLoop(bufio.NewReader(in), msgs, stop)
	return s.loop(msgs)
}

// JSON-RPC and LSP error codes the server answers with.
const (
	lspParseError           = -32700
	lspInvalidRequest       = -32600
	lspMethodNotFound       = -32601
	lspInvalidParams        = -32602
	lspInternalError        = -32603
	lspServerNotInitialized = -32002
	lspRequestFailed        = -32803
	lspRequestCancelled     = -32800
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

// lspReply is an answer: its result is written even when null.
type lspReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// lspRequest is a request of the server's own (client/registerCapability).
type lspRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// lspNotification is a notification the server sends
// (textDocument/publishDiagnostics).
type lspNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type lspError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *lspError) Error() string { return e.Message }

// incoming is one read message, or the reason reading stopped.
type incoming struct {
	msg lspMessage
	err error // io.EOF at the end of input
}

// readLoop reads messages until the end of input. A $/cancelRequest is
// noted at once, so a request still queued behind a check is answered
// cancelled instead of being worked on.
func (s *server) readLoop(in *bufio.Reader, msgs chan<- incoming, stop <-chan struct{}) {
	deliver := func(m incoming) bool {
		select {
		case msgs <- m:
			return true
		case <-stop:
			return false
		}
	}
	for {
		body, err := readMessage(in)
		var he headerError
		if errors.As(err, &he) {
			// The message is lost, not the session: say so and read on.
			s.send(lspMessage{ID: json.RawMessage("null"), Error: &lspError{lspInvalidRequest, he.why}})
			continue
		}
		if err != nil {
			deliver(incoming{err: err})
			return
		}
		var m lspMessage
		if err := json.Unmarshal(body, &m); err != nil {
			s.send(lspMessage{ID: json.RawMessage("null"), Error: &lspError{lspParseError, "parse error: " + err.Error()}})
			continue
		}
		if m.Method == "$/cancelRequest" {
			var p protocol.CancelParams
			if json.Unmarshal(m.Params, &p) == nil && p.ID != nil {
				s.cancelled.Store(string(p.ID), true)
			}
			continue
		}
		if !deliver(incoming{msg: m}) {
			return
		}
	}
}

// readMessage reads one message: headers, a blank line, Content-Length
// bytes. A message without a usable Content-Length is a headerError: its
// headers are consumed (a body over the limit is skipped too) and the next
// one is read.
func readMessage(in *bufio.Reader) ([]byte, error) {
	length, bad := -1, ""
	for {
		line, err := in.ReadString('\n')
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
				if _, err := io.CopyN(io.Discard, in, int64(n)); err != nil {
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
	if _, err := io.ReadFull(in, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// send writes one message; the reading goroutine and the serving one both
// write, so whole messages are written under a lock.
func (s *server) send(m any) {
	switch v := m.(type) {
	case lspMessage:
		v.JSONRPC = "2.0"
		m = v
	case lspReply:
		v.JSONRPC = "2.0"
		m = v
	case lspRequest:
		v.JSONRPC = "2.0"
		m = v
	case lspNotification:
		v.JSONRPC = "2.0"
		m = v
	}
	if s.checkSent != nil {
		s.checkSent(m)
	}
	b, _ := json.Marshal(m)
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (s *server) notify(method string, params any) {
	s.send(lspNotification{Method: method, Params: params})
}

// loop serves messages one at a time, and runs the checks edits asked for
// once their debounce has passed.
func (s *server) loop(msgs <-chan incoming) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		if s.pendingSince.IsZero() {
			timer.Stop()
		} else {
			wait := time.Until(s.pendingSince.Add(s.opts.Debounce))
			if wait <= 0 {
				s.flush()
				continue
			}
			timer.Reset(wait)
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-timer.C:
			s.flush()
		case in := <-msgs:
			if in.err == io.EOF {
				return nil
			}
			if in.err != nil {
				return in.err
			}
			if done, err := s.serveOne(in.msg); done {
				return err
			}
		}
	}
}

// serveOne handles one message; done is true after exit.
func (s *server) serveOne(m lspMessage) (done bool, err error) {
	if m.Method == "exit" {
		if !s.shutdown {
			return true, ErrExitWithoutShutdown
		}
		return true, nil
	}
	if m.Method == "" {
		return false, nil // an answer to a request of ours (client/registerCapability)
	}
	isRequest := m.ID != nil
	if !s.initialized && m.Method != "initialize" {
		if isRequest {
			s.send(lspMessage{ID: m.ID, Error: &lspError{lspServerNotInitialized, "the server is not initialized: send initialize first"}})
		}
		return false, nil // a notification before initialize is dropped
	}
	if s.shutdown {
		if isRequest {
			s.send(lspMessage{ID: m.ID, Error: &lspError{lspInvalidRequest, "the server is shut down: only exit is taken now"}})
		}
		return false, nil
	}
	if !isRequest {
		s.handleNotification(m)
		return false, nil
	}
	if s.beforeRequest != nil {
		s.beforeRequest()
	}
	if _, gone := s.cancelled.LoadAndDelete(string(m.ID)); gone {
		s.send(lspMessage{ID: m.ID, Error: &lspError{lspRequestCancelled, "the request was cancelled"}})
		return false, nil
	}
	result, rerr := s.handleRequest(m)
	s.cancelled.Delete(string(m.ID))
	if rerr != nil {
		var le *lspError
		if !errors.As(rerr, &le) {
			le = &lspError{lspInternalError, rerr.Error()}
		}
		s.send(lspMessage{ID: m.ID, Error: le})
		return false, nil
	}
	s.send(lspReply{ID: m.ID, Result: result})
	return false, nil
}

// server is the state of one session; the serving goroutine owns it all
// except what is marked otherwise.
type server struct {
	ctx   context.Context
	opts  Options
	out   io.Writer
	outMu sync.Mutex
	// cancelled holds the ids of requests $/cancelRequest named (written by
	// the reading goroutine).
	cancelled sync.Map

	// initialized is set by initialize; before it, requests are answered
	// ServerNotInitialized and notifications dropped (LSP 3.17).
	initialized, shutdown bool
	// workspaces are the folders initialize named (workspaceFolders, else
	// rootUri, else rootPath); a project is looked for only inside them.
	workspaces []string
	// confirmEdits is set when the client can ask the user to confirm an
	// edit (annotated document changes, LSP 3.16).
	confirmEdits bool
	// watching is set when the client watches the project's files for us
	// (workspace/didChangeWatchedFiles): the disk is then read once and
	// again only for what it reports changed.
	watching bool

	ws workspace
	// pendingSince is when the oldest edit not yet checked came in (zero
	// when none is pending).
	pendingSince time.Time
	// beforeRequest, when set (by tests), runs before each request is served.
	beforeRequest func()
	// checkSent, when set (by tests), sees each message before it is
	// written (from either goroutine).
	checkSent func(msg any)
	// semantic holds each document's last semantic tokens, by absolute
	// path, for a delta against them; semanticSeq numbers the answers.
	semantic    map[string]semanticResult
	semanticSeq int
}

func newServer(ctx context.Context, out io.Writer, opts Options) *server {
	if opts.Drivers == nil {
		opts.Drivers = drivers()
	}
	s := &server{ctx: ctx, out: out, opts: opts}
	s.ws = newWorkspace(s)
	return s
}

// flush runs the checks edits asked for.
func (s *server) flush() {
	s.pendingSince = time.Time{}
	s.ws.checkPending()
}

// edited notes an edit to check after the debounce (at once without one).
func (s *server) edited() {
	if s.opts.Debounce < 0 {
		s.flush()
		return
	}
	if s.pendingSince.IsZero() {
		s.pendingSince = time.Now()
	}
}

func invalidParams(err error) error {
	return &lspError{lspInvalidParams, "invalid params: " + err.Error()}
}

func (s *server) handleNotification(m lspMessage) {
	switch m.Method {
	case "initialized":
		s.registerWatchers()
	case "textDocument/didOpen":
		var p protocol.DidOpenTextDocumentParams
		if json.Unmarshal(m.Params, &p) == nil {
			if path := uriPath(p.TextDocument.URI); path != "" {
				s.ws.open(path, []byte(p.TextDocument.Text))
				s.edited()
			}
		}
	case "textDocument/didChange":
		var p protocol.DidChangeTextDocumentParams
		if json.Unmarshal(m.Params, &p) == nil && len(p.ContentChanges) > 0 {
			if path := uriPath(p.TextDocument.URI); path != "" {
				// A ranged change to a document never opened has nothing to
				// apply to; the client's next didOpen brings the text.
				if text, ok := applyChanges(s.ws.docs[path], p.ContentChanges); ok {
					s.ws.change(path, text)
					s.edited()
				}
			}
		}
	case "textDocument/didSave", "textDocument/didClose":
		var p protocol.DidCloseTextDocumentParams // didSave's too: the document is all the server reads
		if json.Unmarshal(m.Params, &p) == nil {
			if path := uriPath(p.TextDocument.URI); path != "" {
				s.ws.savedOrClosed(path, m.Method == "textDocument/didClose")
				s.edited()
			}
		}
	case "workspace/didChangeWatchedFiles":
		var p protocol.DidChangeWatchedFilesParams
		if json.Unmarshal(m.Params, &p) == nil {
			var paths []string
			for _, c := range p.Changes {
				if path := uriPath(c.URI); path != "" {
					paths = append(paths, path)
				}
			}
			s.ws.changedOnDisk(paths)
			s.edited()
		}
	}
}

func (s *server) handleRequest(m lspMessage) (any, error) {
	switch m.Method {
	case "initialize":
		if s.initialized {
			return nil, &lspError{lspInvalidRequest, "initialize was sent already"}
		}
		s.initialized = true
		return s.initialize(m.Params), nil
	case "shutdown":
		s.flush()
		s.shutdown = true
		return nil, nil
	case "textDocument/hover":
		return s.withPosition(m.Params, s.hover)
	case "textDocument/definition":
		return s.withPosition(m.Params, s.definition)
	case "textDocument/references":
		return s.withPosition(m.Params, s.references)
	case "textDocument/completion":
		return s.withPosition(m.Params, s.completion)
	case "textDocument/prepareRename":
		return s.withPosition(m.Params, s.prepareRename)
	case "textDocument/rename":
		return s.withPosition(m.Params, s.rename)
	case "textDocument/documentSymbol":
		return s.withDocument(m.Params, s.documentSymbols)
	case "textDocument/formatting":
		return s.withDocument(m.Params, s.formatting)
	case "textDocument/codeAction":
		return s.withDocument(m.Params, s.codeActions)
	case "workspace/symbol":
		var p protocol.WorkspaceSymbolParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		s.flush()
		return s.workspaceSymbols(p.Query), nil
	case "workspace/executeCommand":
		s.flush()
		return s.executeCommand(m.Params)
	}
	if handle := editorRequests[m.Method]; handle != nil {
		return handle(s, m.Params)
	}
	return nil, &lspError{lspMethodNotFound, "method not found: " + m.Method}
}

// commandInstallPackage is the "install the package" quick fix's command.
const commandInstallPackage = "jadpo.installPackage"

// Code action kinds of the server's own, beside LSP's.
const (
	kindFixAll         protocol.CodeActionKind = "source.fixAll.jadpo"
	kindFormatDocument protocol.CodeActionKind = "source.formatDocument"
)

func (s *server) initialize(params json.RawMessage) protocol.InitializeResult {
	s.workspaces = workspaceFolders(params)
	var p protocol.InitializeParams
	_ = json.Unmarshal(params, &p)
	s.watching = p.Capabilities.Workspace.DidChangeWatchedFiles.DynamicRegistration
	we := p.Capabilities.Workspace.WorkspaceEdit
	s.confirmEdits = we.DocumentChanges && we.ChangeAnnotationSupport != nil
	caps := protocol.ServerCapabilities{
		TextDocumentSync:        &protocol.TextDocumentSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental, Save: true},
		HoverProvider:           true,
		DefinitionProvider:      true,
		ReferencesProvider:      true,
		CompletionProvider:      &protocol.CompletionOptions{TriggerCharacters: []string{".", ":", "{"}},
		DocumentSymbolProvider:  true,
		WorkspaceSymbolProvider: true,
		CodeActionProvider:      &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, kindFixAll, kindFormatDocument}},
		RenameProvider:          &protocol.RenameOptions{PrepareProvider: true},
	}
	addEditorCapabilities(s, &caps)
	if s.opts.Format != nil {
		caps.DocumentFormattingProvider = true
	}
	if s.opts.InstallPackage != nil {
		caps.ExecuteCommandProvider = &protocol.ExecuteCommandOptions{Commands: []string{commandInstallPackage}}
	}
	return protocol.InitializeResult{
		Capabilities: caps,
		ServerInfo:   &protocol.ServerInfo{Name: "jadpo", Version: s.opts.Version},
	}
}

// registerWatchers asks a client that can watch files to tell us of
// changes to .jadpo files and jadpo.lock made outside the editor.
func (s *server) registerWatchers() {
	if !s.watching {
		return
	}
	s.send(lspRequest{ID: "jadpo-watch", Method: "client/registerCapability", Params: protocol.RegistrationParams{
		Registrations: []protocol.Registration{{
			ID: "jadpo-watch", Method: "workspace/didChangeWatchedFiles",
			RegisterOptions: &protocol.DidChangeWatchedFilesRegistrationOptions{Watchers: []protocol.FileSystemWatcher{
				{GlobPattern: "**/*.jadpo"}, {GlobPattern: "**/jadpo.lock"},
			}},
		}},
	}})
}
