package project

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/source"
)

// A check verifies the installed packages against jadpo.lock whole
// (lockfile.VerifyLock): it reads the lock and every package file on each
// run. There is no cache: one that decided a check could be shipped with
// the tree it vouches for, and the whole read costs little
// (docs/performance.md, "Checking a large package").

type lockState struct {
	loaded bool
	lock   *lockfile.Lock
	err    error
}

// Lock returns what jadpo.lock records (an empty lock when the project has
// none). An error is the lock's own: it cannot be read or parsed (a
// *lockfile.ParseError says where; LockFile holds the text).
func (p *Project) Lock() (*lockfile.Lock, error) {
	if !p.lock.loaded {
		p.loadLock()
	}
	return p.lock.lock, p.lock.err
}

func (p *Project) loadLock() {
	p.lock = lockState{loaded: true, lock: &lockfile.Lock{}}
	b, err := fs.ReadFile(p.FS, lockfile.FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		p.lock.err = fmt.Errorf("cannot read %s: %w", lockfile.FileName, err)
		return
	}
	p.LockFile = source.NewFile(lockfile.FileName, b)
	l, err := lockfile.Parse(b)
	if err != nil {
		p.lock.err = err
		return
	}
	p.lock.lock = l
}
