package lsp

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/cmd/internal/lsp/protocol"
	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/project"
	"github.com/jadpo/jadpo/lang/source"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/catalog"
)

// workspace is what the server knows of the files: the open documents,
// the projects they belong to with their last check, and what was
// published.
type workspace struct {
	s        *server
	docs     map[string][]byte // open documents by absolute path
	projects map[string]*proj  // by root folder
	// lone are edited files in no project, checked alone.
	lone map[string]bool
	// published holds, by URI, the diagnostics last published (as JSON),
	// for the URIs that have some.
	published map[string]string
	// edited are the files changed since their project was last checked:
	// each gets a publication after the check, even an unchanged one, so
	// the editor knows its edit was seen.
	edited map[string]bool
}

func newWorkspace(s *server) workspace {
	return workspace{s: s, docs: map[string][]byte{}, projects: map[string]*proj{}, lone: map[string]bool{},
		published: map[string]string{}, edited: map[string]bool{}}
}

// proj is one project (a folder holding app.jadpo) and its last check.
type proj struct {
	root  string
	dirty bool
	disk  *memoFS
	// parsed keeps each file's tree by path, for as long as its content
	// stays the same: an edit re-parses the file it changed, no other.
	parsed map[string]*parseEntry
	gen    int
	// session keeps the modules an edit cannot have changed resolved.
	session *check.Session

	proj *project.Project
	res  check.Result
	// files are the parsed files of the last check, by path in the project.
	files map[string]*ast.File
}

type parseEntry struct {
	content []byte
	// file is lean (parser.ParseFileLean): the check reads a record's
	// fields again when it resolves the record, so the server keeps no
	// record's field nodes for the files nobody asks about.
	file  *ast.File
	diags diag.List
	used  int
	// full is the same content's tree with every record's fields, made
	// when a request first reads the document's tree (fullTree).
	full *ast.File
}

func (w *workspace) open(path string, text []byte) {
	w.docs[path] = text
	w.touch(path)
}

func (w *workspace) change(path string, text []byte) {
	w.docs[path] = text
	w.touch(path)
}

func (w *workspace) savedOrClosed(path string, closed bool) {
	if closed {
		delete(w.docs, path)
	}
	if pr := w.projectOf(path); pr != nil && pr.disk != nil {
		pr.disk.forget(pr.rel(path)) // as saved: read it again
	}
	w.touch(path)
}

// changedOnDisk re-reads files the client saw change outside the editor.
func (w *workspace) changedOnDisk(paths []string) {
	for _, p := range paths {
		if pr := w.projectOf(p); pr != nil {
			if pr.disk != nil {
				pr.disk.forget(pr.rel(p))
			}
			pr.dirty = true
		}
	}
}

// touch marks the file's project (or the lone file) for a check.
func (w *workspace) touch(path string) {
	w.edited[path] = true
	if pr := w.projectOf(path); pr != nil {
		pr.dirty = true
		return
	}
	w.lone[path] = true
}

// projectOf is the project holding path (made on first use), nil when
// the file is in none.
func (w *workspace) projectOf(path string) *proj {
	root, ok := w.s.projectRoot(path)
	if !ok {
		return nil
	}
	pr := w.projects[root]
	if pr == nil {
		pr = &proj{root: root, dirty: true, parsed: map[string]*parseEntry{}, session: check.NewSession()}
		w.projects[root] = pr
	}
	return pr
}

func (pr *proj) rel(path string) string {
	r, err := filepath.Rel(pr.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

func (pr *proj) abs(rel string) string { return filepath.Join(pr.root, filepath.FromSlash(rel)) }

// checkPending checks every project with an edit not yet checked, and the
// lone files edited.
func (w *workspace) checkPending() {
	roots := make([]string, 0, len(w.projects))
	for root, pr := range w.projects {
		if pr.dirty {
			roots = append(roots, root)
		}
	}
	sort.Strings(roots)
	for _, root := range roots {
		w.checkProject(w.projects[root])
	}
	lone := make([]string, 0, len(w.lone))
	for p := range w.lone {
		lone = append(lone, p)
	}
	sort.Strings(lone)
	for _, p := range lone {
		w.checkLone(p)
	}
	w.lone = map[string]bool{}
}

// ready is the project of path, checked against what the editor shows.
func (w *workspace) ready(path string) *proj {
	w.s.flush()
	pr := w.projectOf(path)
	if pr != nil && (pr.dirty || pr.proj == nil) {
		w.checkProject(pr)
	}
	return pr
}

// checkProject checks a project, its open documents over the disk, and
// publishes what changed.
func (w *workspace) checkProject(pr *proj) {
	pr.dirty = false
	if pr.disk == nil || !w.s.watching {
		// Without a client watching the files, the disk is read anew each time.
		if pr.disk != nil {
			pr.disk.close()
		}
		pr.disk = newMemoFS(pr.root)
	}
	files := fstest.MapFS{}
	for p, b := range w.docs {
		if within(p, pr.root) && p != pr.root {
			files[pr.rel(p)] = &fstest.MapFile{Data: b, Mode: 0o644, ModTime: time.Now()}
		}
	}
	pr.gen++
	p := project.LoadFSParsing(overlayFS{disk: pr.disk, files: files}, pr.parse)
	p.Catalogue = catalog.Builtin
	p.Drivers = w.s.opts.Drivers // the same each time: the session sees at once they did not change
	res := pr.session.Check(p)
	for path, e := range pr.parsed {
		if e.used != pr.gen {
			delete(pr.parsed, path) // a file no longer read: its tree goes
		}
	}
	pr.proj, pr.res = p, res
	pr.files = make(map[string]*ast.File, len(p.Parsed))
	for _, f := range p.Parsed {
		pr.files[f.Source.Path] = f
	}
	w.publish(res.Diags, pr.root, func(p string) bool { return within(p, pr.root) })
}

// drivers are the built-in queue drivers' contracts, made once: Options.Drivers when
// none is given.
var drivers = sync.OnceValue(func() check.Drivers { return check.Drivers(providers.Contracts()) })

// parse is the project's parse with its cache: a file whose content is
// what it was keeps its tree.
func (pr *proj) parse(f *source.File) (*ast.File, diag.List) {
	if e := pr.parsed[f.Path]; e != nil && bytes.Equal(e.content, f.Content) {
		e.used = pr.gen
		return e.file, e.diags
	}
	af, diags := parser.ParseFileLean(f)
	pr.parsed[f.Path] = &parseEntry{content: f.Content, file: af, diags: diags, used: pr.gen}
	return af, diags
}

// fullTree is t, the check's lean tree of the file at path, with every
// record's fields: what a request that walks the document's tree reads
// (its outline, semantic tokens, selection ranges, signature help). It is
// parsed once per content, when first asked, and kept with the lean one.
func (pr *proj) fullTree(path string, t *ast.File) *ast.File {
	if !t.FieldsDeferred {
		return t
	}
	e := pr.parsed[path]
	if e == nil || e.file != t {
		full, _ := parser.ParseFile(t.Source)
		return full
	}
	if e.full == nil {
		e.full, _ = parser.ParseFile(t.Source)
	}
	return e.full
}

// checkLone checks a file in no project on its own: its folder is not
// walked, so no other file's diagnostics are published for it.
func (w *workspace) checkLone(path string) {
	b, ok := w.docs[path]
	if !ok {
		b, _ = source.ReadLocalFile(path, source.MaxFileSize) // closed: as saved, if readable
	}
	files := fstest.MapFS{filepath.Base(path): &fstest.MapFile{Data: b, Mode: 0o644, ModTime: time.Now()}}
	p := project.LoadFS(files)
	p.Catalogue = catalog.Builtin
	p.Drivers = w.s.opts.Drivers
	res := check.Check(p)
	w.publish(res.Diags, filepath.Dir(path), func(p string) bool { return p == path })
}

// publish sends the diagnostics of the files in scope: those that changed,
// those cleared, and every file edited since the last check.
func (w *workspace) publish(diags diag.List, root string, inScope func(string) bool) {
	byURI := map[string][]protocol.Diagnostic{}
	for _, d := range diags {
		if d.Subject.File == nil {
			continue
		}
		uri := pathURI(filepath.Join(root, filepath.FromSlash(d.Subject.File.Path)))
		byURI[uri] = append(byURI[uri], lspDiagnostic(d, root))
	}
	send := map[string]bool{}
	now := map[string]string{}
	for uri, ds := range byURI {
		b, _ := json.Marshal(ds)
		now[uri] = string(b)
		if w.published[uri] != string(b) {
			send[uri] = true
		}
	}
	for uri := range w.published {
		if _, still := now[uri]; !still && inScope(uriPath(uri)) {
			send[uri] = true
		}
	}
	for p := range w.edited {
		if inScope(p) {
			send[pathURI(p)] = true
			delete(w.edited, p)
		}
	}
	uris := make([]string, 0, len(send))
	for uri := range send {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		ds := byURI[uri]
		if ds == nil {
			ds = []protocol.Diagnostic{}
			delete(w.published, uri)
		} else {
			w.published[uri] = now[uri]
		}
		w.s.notify("textDocument/publishDiagnostics", protocol.PublishDiagnosticsParams{URI: uri, Diagnostics: ds})
	}
}

func lspDiagnostic(d *diag.Diagnostic, root string) protocol.Diagnostic {
	severity := protocol.DiagnosticSeverityError
	if d.Severity == diag.Warning {
		severity = protocol.DiagnosticSeverityWarning
	}
	message := d.Summary
	if d.Label != "" {
		message += "\n" + d.Label
	}
	if h := d.HelpText(); h != "" {
		message += "\nhelp: " + h
	}
	out := protocol.Diagnostic{
		Range: lspRange(d.Subject), Severity: severity, Code: string(d.Code), Source: "jadpo", Message: message,
		CodeDescription: &protocol.CodeDescription{Href: diag.DocsURI(d.Code)},
	}
	for _, r := range d.Related {
		if r.Range.File == nil {
			continue
		}
		out.RelatedInformation = append(out.RelatedInformation, protocol.DiagnosticRelatedInformation{Message: r.Message,
			Location: location(root, r.Range)})
	}
	return out
}

// uriPath is the file a file: URI names, "" for any other URI and for one
// that names no file: no path, a relative one, or the root folder (which,
// checked as a lone file, would be a file named "/").
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	p := filepath.Clean(u.Path)
	if !filepath.IsAbs(p) || filepath.Dir(p) == p {
		return ""
	}
	return p
}

func pathURI(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

// workspaceFolders reads the folders of initialize's params: its
// workspaceFolders, else rootUri, else rootPath.
func workspaceFolders(params json.RawMessage) []string {
	var p protocol.InitializeParams
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
func (s *server) projectRoot(file string) (string, bool) {
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
		if _, known := s.ws.projects[dir]; known {
			return dir, true
		}
		app := filepath.Join(dir, "app.jadpo")
		if _, ok := s.ws.docs[app]; ok {
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

// FileBytes hands out an open document's text, or a file the disk copy
// holds, without a copy (source.BytesFS).
func (o overlayFS) FileBytes(name string) ([]byte, fs.FileInfo, bool) {
	if f, ok := o.files[name]; ok {
		info, err := fs.Stat(o.files, name)
		return f.Data, info, err == nil
	}
	if m, ok := o.disk.(*memoFS); ok {
		return m.FileBytes(name)
	}
	return nil, nil, false
}

func (o overlayFS) Stat(name string) (fs.FileInfo, error) {
	if _, ok := o.files[name]; ok {
		return fs.Stat(o.files, name)
	}
	return fs.Stat(o.disk, name)
}

func (o overlayFS) Lstat(name string) (fs.FileInfo, error) {
	if _, ok := o.files[name]; ok {
		return fs.Stat(o.files, name)
	}
	return fs.Lstat(o.disk, name)
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

// memoFS is the project folder (source.DiskFS, with its rules: links stay
// inside, regular files only, bounded reads) read once: what it answered
// is kept until forget says a file changed. Only regular files are kept;
// anything else is asked of the disk each time, as source.ReadFile looks
// before it opens.
type memoFS struct {
	disk  fs.FS // nil when the folder cannot be opened
	stats map[string]memoStat
	dirs  map[string]memoDir
	files map[string]memoFile
}

type memoStat struct {
	info fs.FileInfo
	err  error
}

type memoDir struct {
	entries []fs.DirEntry
	err     error
}

type memoFile struct {
	data []byte
	info fs.FileInfo
}

func newMemoFS(root string) *memoFS {
	m := &memoFS{stats: map[string]memoStat{}, dirs: map[string]memoDir{}, files: map[string]memoFile{}}
	if d, err := source.DiskFS(root); err == nil {
		m.disk = d
	}
	return m
}

func (m *memoFS) close() {
	if c, ok := m.disk.(io.Closer); ok {
		c.Close()
	}
}

// forget drops what was read of rel and the listings of its folders.
func (m *memoFS) forget(rel string) {
	delete(m.files, rel)
	delete(m.stats, rel)
	delete(m.stats, "lstat:"+rel)
	for dir := rel; ; {
		dir = pathDir(dir)
		delete(m.dirs, dir)
		delete(m.stats, dir)
		if dir == "." {
			break
		}
	}
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

var errNoFolder = &fs.PathError{Op: "open", Path: ".", Err: fs.ErrNotExist}

func (m *memoFS) Stat(name string) (fs.FileInfo, error) {
	if s, ok := m.stats[name]; ok {
		return s.info, s.err
	}
	if m.disk == nil {
		return nil, errNoFolder
	}
	info, err := fs.Stat(m.disk, name)
	m.stats[name] = memoStat{info, err}
	return info, err
}

func (m *memoFS) Lstat(name string) (fs.FileInfo, error) {
	if s, ok := m.stats["lstat:"+name]; ok {
		return s.info, s.err
	}
	if m.disk == nil {
		return nil, errNoFolder
	}
	info, err := fs.Lstat(m.disk, name)
	m.stats["lstat:"+name] = memoStat{info, err}
	return info, err
}

func (m *memoFS) ReadLink(name string) (string, error) {
	if m.disk == nil {
		return "", errNoFolder
	}
	return fs.ReadLink(m.disk, name)
}

func (m *memoFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if d, ok := m.dirs[name]; ok {
		return d.entries, d.err
	}
	if m.disk == nil {
		return nil, errNoFolder
	}
	entries, err := fs.ReadDir(m.disk, name)
	m.dirs[name] = memoDir{entries, err}
	return entries, err
}

// FileBytes is a file read before, as it was read (source.BytesFS); a file
// not read yet is read now when it is a regular one.
func (m *memoFS) FileBytes(name string) ([]byte, fs.FileInfo, bool) {
	if f, ok := m.files[name]; ok {
		return f.data, f.info, true
	}
	if info, err := m.Stat(name); err != nil || !info.Mode().IsRegular() {
		return nil, nil, false
	}
	f, err := m.Open(name)
	if err != nil {
		return nil, nil, false
	}
	f.Close()
	if f, ok := m.files[name]; ok {
		return f.data, f.info, true
	}
	return nil, nil, false
}

// ReadFile bounds fs.ReadFile (jadpo.lock is read that way) as DiskFS does.
func (m *memoFS) ReadFile(name string) ([]byte, error) {
	return source.ReadFile(m, name, source.MaxAnyFileSize)
}

func (m *memoFS) Open(name string) (fs.File, error) {
	if f, ok := m.files[name]; ok {
		return &memFile{Reader: bytes.NewReader(f.data), info: f.info}, nil
	}
	if m.disk == nil {
		return nil, errNoFolder
	}
	f, err := m.disk.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > source.MaxAnyFileSize {
		return f, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, source.MaxAnyFileSize+1))
	if err != nil {
		return nil, err
	}
	m.files[name] = memoFile{data: data, info: info}
	return &memFile{Reader: bytes.NewReader(data), info: info}, nil
}

type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }
