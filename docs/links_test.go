package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

// The docs are self-contained: a reader with only the repository can follow
// every link and every file a page names. These tests walk every page under
// docs/ and fail on a link that does not resolve inside the repository, on a
// named .md or .go file that is not in it, and on a reference to material
// kept outside it (the team's spec, its seeds, a shared folder).

var (
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// A file named in the text: `store.md`, docs/guide/index.md, runtime/tick.go.
	fileRE = regexp.MustCompile("(?:^|[\\s`(\"'])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\\.(?:md|go))(?:[\\s`).,;:\"'#]|$)")
	// Words that point outside the repository.
	outsideRE = regexp.MustCompile(`\.\./shared|\bseeds/|\bspec/|\.library|/work/|§|\bthe spec\b|\bspec's\b|\bthe seed\b|\bseed's\b`)
)

func repoRoot(t *testing.T) string {
	t.Helper()
	return reporoot.Dir(t)
}

type page struct {
	rel   string // slash path from the repository root: docs/guide/index.md
	lines []string
}

func pages(t *testing.T, root string) []page {
	t.Helper()
	var out []page
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, page{rel: filepath.ToSlash(rel), lines: strings.Split(string(b), "\n")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The README is the first page a reader opens: its links are held to the same rule.
	if b, err := os.ReadFile(filepath.Join(root, "README.md")); err == nil {
		out = append(out, page{rel: "README.md", lines: strings.Split(string(b), "\n")})
	}
	if len(out) < 10 {
		t.Fatalf("found %d pages under docs/; the walk is broken", len(out))
	}
	return out
}

// inside reports whether the slash path rel (from the root) names an existing
// file or folder inside the repository.
func inside(root, rel string) bool {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) || filepath.IsAbs(clean) {
		return false
	}
	_, err := os.Stat(filepath.Join(root, clean))
	return err == nil
}

// baseNames holds the name of every file in the repository, for a page that
// names a file without its folder (`deliver_test.go`).
func baseNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDocsLinksResolveInsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	for _, pg := range pages(t, root) {
		dir := filepath.ToSlash(filepath.Dir(pg.rel))
		for i, line := range pg.lines {
			for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				if !inside(root, dir+"/"+target) {
					t.Errorf("%s:%d links to %s, which is no file of the repository", pg.rel, i+1, m[1])
				}
			}
		}
	}
}

func TestDocsNameOnlyFilesOfTheRepository(t *testing.T) {
	root := repoRoot(t)
	bases := baseNames(t, root)
	for _, pg := range pages(t, root) {
		dir := filepath.ToSlash(filepath.Dir(pg.rel))
		fence := false
		for i, line := range pg.lines {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if m := outsideRE.FindString(line); m != "" {
				t.Errorf("%s:%d refers to material outside the repository (%q): say it in the page's own words", pg.rel, i+1, m)
			}
			if fence {
				continue // code blocks show a user's project, not the repository
			}
			for _, m := range fileRE.FindAllStringSubmatch(stripURLs(line), -1) {
				name := m[1]
				if inside(root, dir+"/"+name) || inside(root, name) || inside(root, "docs/"+name) ||
					(!strings.Contains(name, "/") && (bases[name] || strings.HasPrefix(name, "_"))) {
					continue // a bare name is any file of that name; `_test.go` is a suffix
				}
				t.Errorf("%s:%d names %s, which is no file of the repository", pg.rel, i+1, name)
			}
		}
	}
}

var (
	urlRE      = regexp.MustCompile(`[a-z]+://\S+`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

func stripURLs(s string) string { return urlRE.ReplaceAllString(s, "") }

// The checks above must catch what they are for.
func TestDocsLinkRulesCatchOutsideReferences(t *testing.T) {
	root := repoRoot(t)
	if inside(root, "../shared/spec/README.md") || inside(root, "docs/no-such-page.md") {
		t.Error("inside accepts a path outside the repository or a missing page")
	}
	if !inside(root, "docs/diagnostics/receiving.invalid.md") {
		t.Error("inside refuses an existing page")
	}
	for _, s := range []string{"see ../shared/spec/language.md", "seeds/how-queues-are-received.md", "language.md §9", "as the spec says"} {
		if !outsideRE.MatchString(s) {
			t.Errorf("outsideRE misses %q", s)
		}
	}
	if m := fileRE.FindStringSubmatch("read `runtime/tick.go` first"); m == nil || m[1] != "runtime/tick.go" {
		t.Errorf("fileRE misses a named Go file: %v", m)
	}
}
