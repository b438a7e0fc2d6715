package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

// Remove takes package name out of the project: its folder packages/<name>/ and its line
// in jadpo.lock. A package neither in the lock nor on disk is an error. Whether the app
// still uses it is the caller's to know first (`jadpo package remove` checks a trial copy).
func Remove(projectDir, name string) error {
	lock, err := lockfile.Read(projectDir)
	if err != nil {
		return err
	}
	dir := filepath.Join(projectDir, lockfile.PackagesDir, name)
	_, inLock := lock.Get(name)
	_, statErr := os.Lstat(dir)
	if !inLock && errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("%s is not installed", name)
	}
	if inLock {
		lock.Remove(name)
		if err := lockfile.Write(projectDir, lock); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

// Installed names the packages installed in the project: in jadpo.lock or as folders
// under packages/, sorted.
func Installed(projectDir string) ([]string, error) {
	lock, err := lockfile.Read(projectDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range lock.Entries {
		out = append(out, e.Name)
	}
	entries, err := os.ReadDir(filepath.Join(projectDir, lockfile.PackagesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, d := range entries {
		if _, _, err := lockfile.SplitName(d.Name()); err == nil && d.IsDir() && !slices.Contains(out, d.Name()) {
			out = append(out, d.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// CatalogueUpgrade is the catalogue's upgrade rule for an installed package name with
// digest: it may move to the catalogue's current copy when the installed one is a copy the
// catalogue published (providers/catalog/published.txt); current reports that it is that
// copy already. An installed copy the catalogue never published (its files edited) is an
// error saying that `jadpo package add NAME` restores the catalogue's files.
func CatalogueUpgrade(name, digest string) (current bool, err error) {
	if !catalog.Has(name) {
		return false, fmt.Errorf("the catalogue has no package %s", name)
	}
	if lockfile.Digest(catalog.Files(name)) == digest {
		return true, nil
	}
	if !slices.Contains(catalog.Published(name), digest) {
		return false, fmt.Errorf("the installed %s is no copy the catalogue published (its files were edited, or its lock line was): "+
			"`jadpo package add %s` puts the catalogue's current files back", name, name)
	}
	return false, nil
}
