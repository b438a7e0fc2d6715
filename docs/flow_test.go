package docs

import (
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/internal/reporoot"
)

const module = "github.com/jadpo/jadpo"

// stage is each top-level folder's place in the one-way flow that
// design/architecture.md draws: source (lang) is checked (check) into a plan
// (codegen) that the runtime executes, calling providers for the wire; cmd
// wires them. A package may import packages of its own folder and of a lower
// stage only. providers stand below runtime, which calls them, and beside
// codegen, which never does; docs is a leaf the binary embeds; internal holds
// the shared leaves (jsonstring, testclock, ...) every stage may use and that
// import nothing of the module outside internal.
var stage = map[string]int{
	"internal": -1,
	"lang":     0, "docs": 0,
	"check":   1,
	"codegen": 2, "providers": 2,
	"runtime": 3,
	"cmd":     4,
}

// pkgImports is one package of the module as `go list` sees it: its path
// relative to the module's root and the module packages its non-test Go
// files import (relative too).
type pkgImports struct {
	Path    string
	Imports []string
}

// flowExceptions are the imports against the rules that are known debt, each
// with why it is still there. An entry that no longer matches an import is
// itself an error, so the list only shrinks.
var flowExceptions = map[string]string{}

// flowViolations applies the import rules of docs/design/architecture.md to
// the packages and returns one line per import against them, sorted:
//
//   - the one-way flow between top-level folders (stage), for every package,
//     test helper packages named *test included: only _test.go files may
//     import what they check against;
//   - nothing under providers imports check or lang, except check/ir, the
//     plan's value types, the one shared leaf providers read;
//   - nothing under lang imports providers;
//   - nothing under internal imports the module outside internal;
//   - the fakes (providers/fakes/...) stand apart from the wire code: a fake
//     imports none of the clients it answers (a bug both shared would pass
//     unseen), only providers/internal, other fakes' leaves and the SigV4
//     verifier; and outside tests only runtime/standin and a queue driver's
//     own package (its StandIn) import a fake.
func flowViolations(pkgs []pkgImports, exceptions map[string]string) []string {
	var out []string
	used := map[string]bool{}
	for _, p := range pkgs {
		from := topFolder(p.Path)
		fromStage, ok := stage[from]
		if !ok {
			out = append(out, p.Path+": Go code in a top-level folder the flow does not place ("+from+")")
			continue
		}
		for _, to := range p.Imports {
			toTop := topFolder(to)
			var why string
			switch {
			case from == "providers" && (to == "check" || strings.HasPrefix(to, "check/")) && to != "check/ir":
				why = "providers never import check (check/ir is the one shared leaf they may)"
			case from == "providers" && toTop == "lang":
				why = "providers never import lang"
			case from == "lang" && toTop == "providers":
				why = "lang never imports providers: hand it what it needs"
			case from == "internal" && toTop != "internal":
				why = "internal holds shared leaves: they import nothing of the module outside internal"
			case isFake(p.Path) && toTop == "providers" && !isFake(to) && !strings.HasPrefix(to, "providers/internal/") && to != "providers/sigv4":
				why = "a fake imports none of the wire code it answers (only providers/internal, providers/fakes and the SigV4 verifier)"
			case isFake(to) && !isFake(p.Path) && from != "providers" && p.Path != "runtime/standin" && !strings.HasSuffix(path.Base(p.Path), "test"):
				why = "a fake is for tests and jadpo dev: outside _test.go files only runtime/standin, a driver's package (its StandIn) or a *test package imports it"
			case toTop != from:
				if toStage, ok := stage[toTop]; !ok || toStage >= fromStage {
					why = "against the one-way flow internal <- lang -> check -> codegen | providers -> runtime -> cmd"
					if strings.HasSuffix(path.Base(p.Path), "test") {
						why += " (a *test helper package is held to it: only _test.go files may import upward)"
					}
				}
			}
			if why == "" {
				continue
			}
			key := p.Path + " -> " + to
			if _, ok := exceptions[key]; ok {
				used[key] = true
				continue
			}
			out = append(out, key+": "+why+" (docs/design/architecture.md)")
		}
	}
	for key := range exceptions {
		if !used[key] {
			out = append(out, key+": listed in flowExceptions but no longer imported: remove the entry")
		}
	}
	sort.Strings(out)
	return out
}

// TestImportsFlowOneWay reads every package of the module as go list does
// (go/build, non-test files) and refuses an import against the rules of
// flowViolations.
func TestImportsFlowOneWay(t *testing.T) {
	pkgs := modulePackages(t, reporoot.Dir(t))
	if len(pkgs) < 40 {
		t.Fatalf("read %d packages: the module's folders moved?", len(pkgs))
	}
	for _, v := range flowViolations(pkgs, flowExceptions) {
		t.Error(v)
	}
}

// TestImportsFlowRulesRefuse plants one import against each rule and
// expects flowViolations to name it.
func TestImportsFlowRulesRefuse(t *testing.T) {
	cases := []struct {
		name string
		pkg  pkgImports
	}{
		{"providers import check", pkgImports{"providers/catalog/catalogdoc", []string{"check"}}},
		{"providers import a check package", pkgImports{"providers/sqlinbox", []string{"check/checktest"}}},
		{"providers import lang", pkgImports{"providers/catalog/catalogdoc", []string{"lang/project"}}},
		{"lang imports providers", pkgImports{"lang/lockfile", []string{"providers/catalog"}}},
		{"a *test package imports upward", pkgImports{"check/checktest", []string{"providers/fakes/sqsfake"}}},
		{"runtime imports cmd", pkgImports{"runtime", []string{"cmd/jadpo"}}},
		{"internal imports the module", pkgImports{"internal/testclock", []string{"providers/wire"}}},
		{"an unplaced folder", pkgImports{"tools/x", nil}},
		{"a fake imports the wire", pkgImports{"providers/fakes/sqsfake", []string{"providers/wire"}}},
		{"a fake imports a driver", pkgImports{"providers/fakes/cfqueuesfake", []string{"providers/cfqueues"}}},
		{"the runtime imports a fake", pkgImports{"runtime", []string{"providers/fakes/sqsfake"}}},
		{"the CLI imports a fake", pkgImports{"cmd/jadpo", []string{"providers/fakes/emailfake"}}},
	}
	for _, c := range cases {
		if got := flowViolations([]pkgImports{c.pkg}, nil); len(got) != 1 {
			t.Errorf("%s: %v, want one violation", c.name, got)
		}
	}
	allowed := []pkgImports{
		{"providers/sqlinbox", []string{"check/ir", "internal/jsonstring", "providers/queue"}},
		{"runtime/store/storetest", []string{"internal/testclock", "runtime/store", "providers/fakes/sqsfake"}},
		{"cmd/jadpo", []string{"check", "lang/project", "providers", "runtime"}},
		{"providers/fakes/sqsfake", []string{"internal/testclock", "providers/fakes/visibility", "providers/internal/localserver", "providers/sigv4"}},
		{"providers/cfqueues", []string{"providers/fakes/cfqueuesfake", "providers/queue"}},
		{"runtime/standin", []string{"providers/fakes/emailfake", "providers/fakes/sqsfake"}},
		{"runtime/runtimetest", []string{"providers/fakes/sqsfake"}},
	}
	if got := flowViolations(allowed, nil); len(got) != 0 {
		t.Errorf("allowed imports refused: %v", got)
	}
	stale := flowViolations(nil, map[string]string{"check/checktest -> providers": "gone"})
	if len(stale) != 1 || !strings.Contains(stale[0], "no longer imported") {
		t.Errorf("a stale exception: %v, want it named", stale)
	}
}

// modulePackages lists the module's packages under root with the module
// packages their non-test files import, as `go list -f '{{.Imports}}'`.
func modulePackages(t *testing.T, root string) []pkgImports {
	t.Helper()
	var pkgs []pkgImports
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if p != root && fileExists(filepath.Join(p, "go.mod")) {
			return filepath.SkipDir // another module (lang/parser/compare)
		}
		bp, err := build.ImportDir(p, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			t.Errorf("%s: %v", p, err)
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		pkg := pkgImports{Path: filepath.ToSlash(rel)}
		for _, ip := range bp.Imports {
			if strings.HasPrefix(ip, module+"/") {
				pkg.Imports = append(pkg.Imports, strings.TrimPrefix(ip, module+"/"))
			} else if ip == module {
				pkg.Imports = append(pkg.Imports, ".")
			}
		}
		slices.Sort(pkg.Imports)
		pkgs = append(pkgs, pkg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// isFake says whether a package path is one of the fakes under
// providers/fakes.
func isFake(rel string) bool { return strings.HasPrefix(rel, "providers/fakes/") }

// topFolder is the first segment of a slash-separated package path relative
// to the module's root ("lang" for lang/parser).
func topFolder(rel string) string {
	if i := strings.IndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return rel
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
