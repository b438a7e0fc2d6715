package project

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
)

// A check verifies each package file it reads against jadpo.lock, whose
// size grows with the packages' file count. So that a large package costs
// what is used of it, a project on disk keeps, in build/.jadpo/lock.cache,
// the lock's package lines and the file lines a check looked up, keyed by
// jadpo.lock's size and modification time: while the lock is unchanged, a
// check reads that small file instead. Anything the cache does not answer is
// read from the lock itself, and the cache is rewritten.

// lockCachePath is where the cache lives, under the project folder.
const lockCachePath = "build/.jadpo/lock.cache"

type lockState struct {
	loaded    bool
	lock      *lockfile.Lock
	err       error
	fromCache bool
	key       string
	looked    map[string]map[string]bool // package -> paths looked up
}

// Lock returns what jadpo.lock records (an empty lock when the project has
// none). An error is the lock's own: it cannot be read or parsed.
func (p *Project) Lock() (*lockfile.Lock, error) {
	if !p.lock.loaded {
		p.loadLock(true)
	}
	return p.lock.lock, p.lock.err
}

// LockedFile is the digest jadpo.lock records for one file of an installed
// package, and whether it records one.
func (p *Project) LockedFile(pkg, rel string) (string, bool, error) {
	l, err := p.Lock()
	if err != nil {
		return "", false, err
	}
	e, _ := l.Get(pkg)
	d, ok := e.File(rel)
	if !ok && p.lock.fromCache {
		// The cache answers only what was looked up before: ask the lock.
		p.loadLock(false)
		if p.lock.err != nil {
			return "", false, p.lock.err
		}
		e, _ = p.lock.lock.Get(pkg)
		d, ok = e.File(rel)
	}
	if p.lock.looked == nil {
		p.lock.looked = map[string]map[string]bool{}
	}
	if p.lock.looked[pkg] == nil {
		p.lock.looked[pkg] = map[string]bool{}
	}
	p.lock.looked[pkg][rel] = true
	return d, ok, nil
}

func (p *Project) loadLock(useCache bool) {
	p.lock = lockState{loaded: true, lock: &lockfile.Lock{}, looked: p.lock.looked}
	if p.dir != "" {
		st, err := os.Stat(filepath.Join(p.dir, lockfile.FileName))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err == nil {
			p.lock.key = fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano())
		}
		if useCache && p.lock.key != "" {
			if b, err := source.ReadLocalFile(filepath.Join(p.dir, filepath.FromSlash(lockCachePath)), source.MaxAnyFileSize); err == nil {
				head, rest, _ := bytes.Cut(b, []byte{'\n'})
				if string(head) == "# jadpo lock cache "+p.lock.key {
					if l, err := lockfile.Index(rest); err == nil {
						p.lock.lock, p.lock.fromCache = l, true
						return
					}
				}
			}
		}
	}
	b, err := fs.ReadFile(p.FS, lockfile.FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		p.lock.err = fmt.Errorf("cannot read %s: %w", lockfile.FileName, err)
		return
	}
	p.LockFile = source.NewFile(lockfile.FileName, b)
	l, err := lockfile.Index(b)
	if err != nil {
		p.lock.err = err
		return
	}
	p.lock.lock = l
}

// SaveLockCache writes the lock cache after a check that read the lock
// itself; it does nothing when the cache answered, for a project not on
// disk, or when build/ cannot be written (the cache is only a shortcut).
func (p *Project) SaveLockCache() {
	if p.dir == "" || !p.lock.loaded || p.lock.fromCache || p.lock.err != nil || p.lock.key == "" || p.LockFile == nil {
		return
	}
	mini := &lockfile.Lock{}
	for _, e := range p.lock.lock.Entries {
		files := map[string]string{}
		paths := make([]string, 0, len(p.lock.looked[e.Name]))
		for rel := range p.lock.looked[e.Name] {
			paths = append(paths, rel)
		}
		sort.Strings(paths)
		for _, rel := range paths {
			if d, ok := e.File(rel); ok {
				files[rel] = d
			}
		}
		if len(files) == 0 {
			files = nil // looked up nothing: its lines stay in the lock alone
		}
		mini.SetFiles(e.Name, e.Digest, files)
	}
	var b bytes.Buffer
	b.WriteString("# jadpo lock cache " + p.lock.key + "\n")
	b.Write(mini.Bytes())
	path := filepath.Join(p.dir, filepath.FromSlash(lockCachePath))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	// A temporary file of its own: two builds at once must not share one.
	f, err := os.CreateTemp(filepath.Dir(path), "lock.cache.tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
