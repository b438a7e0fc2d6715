package lsp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/source"
)

// codeActions offers a quick fix for each diagnostic in the range that
// carries one (a did-you-mean, a fix such as quoting a URL, installing a
// package that is not installed), and "Format document".
func (s *server) codeActions(dc *docContext) (any, error) {
	var p struct {
		Range struct {
			Start struct{ Line, Character int } `json:"start"`
			End   struct{ Line, Character int } `json:"end"`
		} `json:"range"`
		Context struct {
			Only []string `json:"only"`
		} `json:"context"`
	}
	if err := json.Unmarshal(dc.raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	wants := func(kind string) bool {
		if len(p.Context.Only) == 0 {
			return true
		}
		for _, o := range p.Context.Only {
			if kind == o || strings.HasPrefix(kind, o+".") {
				return true
			}
		}
		return false
	}
	start := offsetAt(dc.file, p.Range.Start.Line, p.Range.Start.Character)
	end := offsetAt(dc.file, p.Range.End.Line, p.Range.End.Character)
	uri := pathURI(dc.pr.abs(dc.path))
	out := []any{}
	if wants("quickfix") {
		for _, d := range dc.pr.res.Diags {
			if d.Subject.File == nil || d.Subject.File.Path != dc.path || d.Subject.Span.End < start || d.Subject.Span.Start > end {
				continue
			}
			ld := lspDiagnostic(d, dc.pr.root)
			if rng, text, title, ok := quickFix(d); ok {
				out = append(out, map[string]any{
					"title": title, "kind": "quickfix", "diagnostics": []any{ld}, "isPreferred": true,
					"edit": map[string]any{"changes": map[string]any{uri: []any{map[string]any{"range": lspRange(rng), "newText": text}}}},
				})
			}
			if name := d.Context["package"]; d.Code == "package.not_installed" && name != "" && s.opts.InstallPackage != nil && s.inCatalogue(name) {
				out = append(out, map[string]any{
					"title": "Install package " + name + " (jadpo package add " + name + ")", "kind": "quickfix", "diagnostics": []any{ld},
					"command": map[string]any{"title": "Install package " + name, "command": commandInstallPackage, "arguments": []any{pathURI(dc.pr.root), name}},
				})
			}
		}
	}
	if s.opts.Format != nil && wants("source.formatDocument") {
		if edits, err := s.formatEdits(dc); err == nil && len(edits) > 0 {
			out = append(out, map[string]any{"title": "Format document", "kind": "source.formatDocument",
				"edit": map[string]any{"changes": map[string]any{uri: edits}}})
		}
	}
	return out, nil
}

func (s *server) inCatalogue(name string) bool {
	if s.opts.Catalogue == nil {
		return false
	}
	for _, n := range s.opts.Catalogue() {
		if n == name {
			return true
		}
	}
	return false
}

// quickFix is the edit a diagnostic carries: its Fix in place of the
// subject, or its did-you-mean suggestion in place of the name it is
// about (the dotted part it is nearest to, when the subject is a dotted
// name and the suggestion one part of it: config.sqs_hots -> sqs_host).
func quickFix(d *diag.Diagnostic) (source.Range, string, string, bool) {
	if d.Fix != nil && d.FixRange.File != nil {
		// An unused declaration: reported at its name, removed whole.
		return d.FixRange, *d.Fix, "Remove unused `" + d.Subject.Text() + "`", true
	}
	if d.Fix != nil {
		title := "Replace with " + *d.Fix
		subject := d.Subject.Text()
		if cut, ok := strings.CutSuffix(subject, *d.Fix); ok && strings.TrimSpace(cut) != "" {
			// The fix keeps the subject's end: it removes what comes before.
			title = "Remove `" + strings.TrimSpace(cut) + "`"
		}
		return d.Subject, *d.Fix, title, true
	}
	sugg := d.Context["suggestion"]
	if sugg == "" {
		return source.Range{}, "", "", false
	}
	subject := d.Subject.Text()
	for i := 0; i < len(subject); i++ {
		c := subject[i]
		if !(c == '.' || c == '_' || c == '/' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return source.Range{}, "", "", false // not a name: no edit can be sure
		}
	}
	rng := d.Subject
	if !strings.Contains(sugg, ".") && strings.Contains(subject, ".") {
		parts := strings.Split(subject, ".")
		best, bestD, at := 0, 1<<30, 0
		offs := make([]int, len(parts))
		for i, part := range parts {
			offs[i] = at
			at += len(part) + 1
			if dist := editDistance(part, sugg); dist < bestD {
				best, bestD = i, dist
			}
		}
		rng.Span = source.Span{Start: d.Subject.Span.Start + offs[best], End: d.Subject.Span.Start + offs[best] + len(parts[best])}
	}
	return rng, sugg, fmt.Sprintf("Change to `%s`", sugg), true
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// formatting lays the document out as `jadpo fmt` does: one edit that
// replaces it whole, none when it is laid out already. A file with a
// syntax error is left as it is, with an error saying so.
func (s *server) formatting(dc *docContext) (any, error) {
	if s.opts.Format == nil {
		return nil, &lspError{lspMethodNotFound, "formatting is not available in this build"}
	}
	edits, err := s.formatEdits(dc)
	if err != nil {
		return nil, &lspError{lspRequestFailed, "the file is not formatted: " + err.Error()}
	}
	return edits, nil
}

func (s *server) formatEdits(dc *docContext) ([]any, error) {
	out, err := s.opts.Format(filepath.Base(dc.path), dc.file.Content)
	if err != nil {
		return nil, err
	}
	if string(out) == string(dc.file.Content) {
		return []any{}, nil
	}
	whole := source.Range{File: dc.file, Span: source.Span{Start: 0, End: len(dc.file.Content)}}
	return []any{map[string]any{"range": lspRange(whole), "newText": string(out)}}, nil
}

// executeCommand runs the quick fixes that are commands: installing a
// catalogue package into the project.
func (s *server) executeCommand(raw json.RawMessage) (any, error) {
	var p struct {
		Command   string `json:"command"`
		Arguments []any  `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams(err)
	}
	if p.Command != commandInstallPackage || s.opts.InstallPackage == nil {
		return nil, &lspError{lspInvalidParams, "unknown command " + p.Command}
	}
	if len(p.Arguments) != 2 {
		return nil, &lspError{lspInvalidParams, commandInstallPackage + " takes the project's folder URI and a package name"}
	}
	rootURI, _ := p.Arguments[0].(string)
	name, _ := p.Arguments[1].(string)
	root := uriPath(rootURI)
	pr := s.ws.projects[root]
	if pr == nil || !s.inCatalogue(name) {
		return nil, &lspError{lspInvalidParams, fmt.Sprintf("%q is not a project the server checks, or %q not a catalogue package", rootURI, name)}
	}
	if err := s.opts.InstallPackage(root, name); err != nil {
		return nil, &lspError{lspRequestFailed, "jadpo package add " + name + ": " + err.Error()}
	}
	if pr.disk != nil {
		pr.disk.close()
		pr.disk = nil // packages/ and jadpo.lock changed: read the folder again
	}
	pr.dirty = true
	s.ws.checkProject(pr)
	return nil, nil
}
