// Package project finds and parses the files of a .jadpo project: app.jadpo,
// its modules, and its installed packages under packages/.
//
// A package's resource files are parsed only when the checker asks for one
// (a mapping or a subscriber calls one of its operations), so a large package
// costs what is used of it.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jadpo/jadpo/lang/ast"
	"github.com/jadpo/jadpo/lang/diag"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/parser"
	"github.com/jadpo/jadpo/lang/source"
)

// Project is a loaded project.
type Project struct {
	// FS is the project directory.
	FS fs.FS
	// App is app.jadpo.
	App *ast.File
	// Modules are the other files, by module path (stock/events).
	Modules map[string]*ast.File
	// Packages are the installed packages, by directory name (AmazonSqs.v2012_11_05).
	Packages map[string]*Package
	// Parsed counts every file parsed so far, resources included.
	Parsed []*ast.File
	// Diags holds the problems found while reading and parsing.
	Diags diag.List
	// LockFile is jadpo.lock once Lock has read it (nil when the project
	// has none).
	LockFile *source.File
	// Catalogue is the toolchain's catalogue the installed packages are held
	// to (a package bearing a catalogue name must be a copy it published).
	// The loader leaves it nil, which holds them to none; the commands set
	// providers/catalog.Builtin (cmd/jadpo's loadProject, the language server).
	Catalogue lockfile.Catalogue
	// Drivers are the toolchain's built-in queue drivers' contracts, which
	// the checker holds a package naming one (`provide receiving { driver:
	// }`) to: check.Drivers, made from providers.Contracts(), set with
	// Catalogue by the commands. lang cannot name their type (check/ir's),
	// so the project carries them for the checker without reading them.
	// Nil knows no driver.
	Drivers DriverSet

	dir       string // the project's folder on disk ("" for LoadFS)
	lock      lockState
	parseFile ParseFunc
	pre       map[string]*parsed // files parsed ahead, while loading
}

// DriverSet is what Project.Drivers holds: check.Drivers, the one type
// that implements it.
type DriverSet interface{ DriverSet() }

// ParseFunc parses one file, as parser.ParseFile does.
type ParseFunc func(*source.File) (*ast.File, diag.List)

// Package is one installed package under packages/<Dir>/.
type Package struct {
	Dir string
	// Header is package.jadpo.
	Header *ast.File
	// Provides holds provides/<capability>.jadpo by capability name.
	Provides map[string]*ast.File
	// Files are the package's other files, except resources (parsed eagerly).
	Files []*ast.File
	// root is packages/<Dir>.
	root string

	resources map[string]*ast.File
	proj      *Project
}

// Load reads the project in dir from disk for a check, as LoadFSLean
// reads a file system: its records' fields are read again when the check
// asks, not kept in the trees.
func Load(dir string) *Project {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		p := &Project{Modules: map[string]*ast.File{}, Packages: map[string]*Package{}}
		why := "it does not exist"
		switch {
		case err == nil:
			why = "it is not a directory"
		case errors.Is(err, fs.ErrPermission):
			why = "it cannot be read (permission denied)"
		case !errors.Is(err, fs.ErrNotExist):
			why = "it cannot be read"
		}
		p.Diags.Addf(diag.ToolchainProjectReadFailed, source.Range{},
			"cannot read the project directory `%s`: %s", dir, why).With("directory", dir)
		return p
	}
	fsys, err := source.DiskFS(dir)
	if err != nil {
		p := &Project{Modules: map[string]*ast.File{}, Packages: map[string]*Package{}}
		p.Diags.Addf(diag.ToolchainProjectReadFailed, source.Range{},
			"cannot read the project directory `%s`: it cannot be opened", dir).With("directory", dir)
		return p
	}
	p := LoadFSLean(fsys)
	p.dir = dir
	return p
}

// LoadFS reads a project from any file system (tests use fstest.MapFS).
// The app's and the modules' files are read and parsed in parallel, up to
// GOMAXPROCS at once; the project, its diagnostics included, is the same
// as a parse one file after the other gives (TestParallelLoadIsSequential).
func LoadFS(fsys fs.FS) *Project { return load(fsys, parser.ParseFile, true) }

// LoadFSLean is LoadFS parsing each file with parser.ParseFileLean: a
// clean file's tree keeps no record's fields (the check reads them again,
// one record at a time), so a project's trees take less than half the
// memory. What `jadpo check` and `jadpo build` load; a caller that reads
// the trees' fields itself (the language server, the catalogue's pages)
// loads with LoadFS.
func LoadFSLean(fsys fs.FS) *Project { return load(fsys, parser.ParseFileLean, true) }

// LoadFSParsing is LoadFS parsing each file with parse: a caller that
// loads the same project again after an edit (the language server) passes
// one that keeps the trees of files whose content did not change. The
// files are parsed one after the other: parse need not be safe for
// concurrent use.
func LoadFSParsing(fsys fs.FS, parse ParseFunc) *Project { return load(fsys, parse, false) }

func load(fsys fs.FS, parse ParseFunc, parallel bool) *Project {
	p := &Project{FS: fsys, Modules: map[string]*ast.File{}, Packages: map[string]*Package{}, parseFile: parse}
	var modulePaths []string
	var packageDirs []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			p.readFailed(name, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		base := d.Name()
		if d.IsDir() {
			if name == "." {
				return nil
			}
			if strings.HasPrefix(base, ".") || name == "build" {
				return fs.SkipDir
			}
			if name == "packages" {
				entries, err := fs.ReadDir(fsys, name)
				if err != nil {
					p.readFailed(name, err)
				}
				for _, e := range entries {
					if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
						packageDirs = append(packageDirs, e.Name())
					}
				}
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(base, ".jadpo") && name != "app.jadpo" {
			modulePaths = append(modulePaths, name)
		}
		return nil
	})
	if err != nil {
		p.readFailed(".", err)
	}
	sort.Strings(modulePaths)
	if parallel {
		p.prefetch(append([]string{"app.jadpo"}, modulePaths...))
	}
	if _, err := fs.Stat(fsys, "app.jadpo"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			p.Diags.Add(diag.ToolchainEmptyProject, source.Range{}, "the project has no app.jadpo").
				WithHelp("create app.jadpo in the project directory, or point the command at the directory that holds it")
		} else {
			p.readFailed("app.jadpo", err)
		}
	} else {
		p.App = p.parse("app.jadpo")
	}
	for _, name := range modulePaths {
		if f := p.parse(name); f != nil {
			p.Modules[strings.TrimSuffix(name, ".jadpo")] = f
		}
	}
	p.pre = nil
	sort.Strings(packageDirs)
	for _, dir := range packageDirs {
		p.Packages[dir] = p.loadPackage(dir)
	}
	return p
}

// parsed is one file's read and parse, done ahead of its turn.
type parsed struct {
	content []byte
	err     error
	file    *ast.File
	diags   diag.List
}

// prefetch reads and parses the files in parallel, each on its own (a
// file's parse depends on no other), for parse to take in order.
func (p *Project) prefetch(names []string) {
	workers := min(runtime.GOMAXPROCS(0), len(names))
	if workers < 2 {
		return
	}
	out := make([]parsed, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(names) {
					return
				}
				r := &out[i]
				r.content, r.err = source.ReadFile(p.FS, names[i], source.MaxFileSize)
				if r.err == nil {
					r.file, r.diags = p.parseFile(source.NewFile(names[i], r.content))
				}
			}
		}()
	}
	wg.Wait()
	p.pre = make(map[string]*parsed, len(names))
	for i, name := range names {
		p.pre[name] = &out[i]
	}
}

func (p *Project) loadPackage(dir string) *Package {
	root := path.Join("packages", dir)
	pkg := &Package{Dir: dir, Provides: map[string]*ast.File{}, root: root,
		resources: map[string]*ast.File{}, proj: p}
	var names []string
	err := fs.WalkDir(p.FS, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			p.readFailed(name, err)
			return nil
		}
		if d.IsDir() {
			// Resources are read when called, by name: a package's size costs
			// nothing until it is used.
			if name != root && strings.HasPrefix(d.Name(), ".") || name == root+"/resources" {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".jadpo") {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		p.readFailed(root, err)
	}
	sort.Strings(names)
	for _, name := range names {
		rel := strings.TrimPrefix(name, root+"/")
		switch {
		case rel == "package.jadpo":
			pkg.Header = p.parse(name)
		case strings.HasPrefix(rel, "provides/") && !strings.Contains(rel[len("provides/"):], "/"):
			if f := p.parse(name); f != nil {
				pkg.Provides[strings.TrimSuffix(path.Base(rel), ".jadpo")] = f
			}
		default:
			if f := p.parse(name); f != nil {
				pkg.Files = append(pkg.Files, f)
			}
		}
	}
	return pkg
}

// Resource parses (once) and returns resources/<name>.jadpo, or nil when
// the package has no such file.
func (pkg *Package) Resource(name string) *ast.File {
	if f, ok := pkg.resources[name]; ok {
		return f
	}
	if !validResourceName(name) {
		return nil
	}
	file := pkg.root + "/resources/" + name + ".jadpo"
	var f *ast.File
	if _, err := fs.Stat(pkg.proj.FS, file); err == nil {
		f = pkg.proj.parse(file)
	}
	pkg.resources[name] = f
	return f
}

// ResourceNames lists the package's resource files by name (for
// suggestions); it reads the folder, so only an error path calls it.
func (pkg *Package) ResourceNames() []string {
	entries, err := fs.ReadDir(pkg.proj.FS, pkg.root+"/resources")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".jadpo"); ok && !e.IsDir() && validResourceName(n) {
			out = append(out, n)
		}
	}
	return out
}

func validResourceName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// LoadedResources lists the resources parsed so far, by name.
func (pkg *Package) LoadedResources() []string {
	var out []string
	for name, f := range pkg.resources {
		if f != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (p *Project) parse(name string) *ast.File {
	if r := p.pre[name]; r != nil {
		if r.err != nil {
			p.readFailed(name, r.err)
			return nil
		}
		p.Diags = append(p.Diags, r.diags...)
		p.Parsed = append(p.Parsed, r.file)
		return r.file
	}
	content, err := source.ReadFile(p.FS, name, source.MaxFileSize)
	if err != nil {
		p.readFailed(name, err)
		return nil
	}
	f, diags := p.parseFile(source.NewFile(name, content))
	p.Diags = append(p.Diags, diags...)
	p.Parsed = append(p.Parsed, f)
	return f
}

// The rules for what a project's files may be (docs/design/language.md, "Project
// files"): only regular files are read, each at most source.MaxFileSize; a
// symbolic link is followed only to a regular file inside the project, and a
// link to a folder is not walked.
func (p *Project) readFailed(name string, err error) {
	why := "it cannot be read"
	help := ""
	var re *source.ReadError
	switch {
	case errors.As(err, &re):
		why = "it " + re.Reason
		if errors.Is(err, source.ErrTooLarge) {
			help = fmt.Sprintf("a source file may be at most %s: split it into modules", source.Size(source.MaxFileSize))
		} else {
			help = "jadpo reads regular files only: replace it with a regular file, or rename it so it does not end in .jadpo"
		}
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case p.isSymlink(name):
		why = "it is a symbolic link that leads outside the project, or to nothing"
		help = "jadpo follows a symbolic link only by a relative path to a regular file inside the project: make the link relative, or copy the file into the project"
	}
	d := p.Diags.Addf(diag.ToolchainProjectReadFailed, source.Range{}, "cannot read `%s`: %s", name, why).With("path", name)
	if help != "" {
		d.WithHelp(help)
	}
}

func (p *Project) isSymlink(name string) bool {
	st, err := fs.Lstat(p.FS, name)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

// Declarations counts the top-level declarations parsed so far, `use` lines aside.
func (p *Project) Declarations() int {
	n := 0
	for _, f := range p.Parsed {
		n += f.Unparsed
		for _, d := range f.Decls {
			if d.Use == nil {
				n++
			}
		}
	}
	return n
}

// ReadAllResources parses every package's resources, which a check reads only
// when called: with a syntax error the check stops early, and the summary still
// counts the project's files.
func (p *Project) ReadAllResources() {
	names := make([]string, 0, len(p.Packages))
	for n := range p.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pkg := p.Packages[n]
		for _, r := range pkg.ResourceNames() {
			pkg.Resource(r)
		}
	}
}

// HasSyntaxErrors reports whether any parsed file has a syntax problem.
func (p *Project) HasSyntaxErrors() bool {
	for _, d := range p.Diags {
		if strings.HasPrefix(string(d.Code), "syntax.") {
			return true
		}
	}
	return false
}
