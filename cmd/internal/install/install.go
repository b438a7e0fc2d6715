// Package install puts packages into a project: `jadpo package add`, from the
// toolchain's catalogue (providers/catalog) or from a local folder, and the
// starter package of `jadpo init`. It writes packages/<Name>.<version>/ and
// jadpo.lock in lang/lockfile's format; the lock's verification stays there,
// shared with `jadpo check`.
package install

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

// installedVersions lists the versions of package name (without version)
// found in the lock or as folders, other than except.
func installedVersions(projectDir string, l *lockfile.Lock, base, except string) ([]string, error) {
	found := map[string]bool{}
	for _, e := range l.Entries {
		if b, _, _ := lockfile.SplitName(e.Name); b == base && e.Name != except {
			found[e.Name] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(projectDir, lockfile.PackagesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, d := range entries {
		if b, _, err := lockfile.SplitName(d.Name()); err == nil && d.IsDir() && b == base && d.Name() != except {
			found[d.Name()] = true
		}
	}
	var out []string
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Install writes a package's files to packages/<name>/ under projectDir and
// records it in jadpo.lock. Installing the same files again changes nothing
// and reports changed false; installing over files edited since (or a lock
// line that no longer matches) writes them afresh. Another version of the
// same package already installed is refused: an app uses one version of a
// package. The files must hold a package.jadpo whose header names name.
func Install(projectDir, name string, files map[string][]byte) (changed bool, err error) {
	base, _, err := lockfile.SplitName(name)
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return false, fmt.Errorf("package %s has no files", name)
	}
	header, ok := files[lockfile.HeaderFile]
	if !ok {
		return false, fmt.Errorf("package %s has no %s", name, lockfile.HeaderFile)
	}
	declared, err := lockfile.HeaderName(header)
	if err != nil {
		return false, fmt.Errorf("package %s: %w", name, err)
	}
	if declared != name {
		return false, fmt.Errorf("%s declares package %s, not %s", lockfile.HeaderFile, declared, name)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !lockfile.ValidPath(p) {
			return false, fmt.Errorf("package %s: the file %q cannot be in a package: %s", name, p, lockfile.PathRule)
		}
	}
	digest := lockfile.Digest(files)
	if !lockfile.CatalogueCopy(catalog.Builtin, name, digest) {
		return false, fmt.Errorf("%s", lockfile.NotCatalogueMessage(catalog.Builtin, name, "the files to install", files))
	}

	lock, err := lockfile.Read(projectDir)
	if err != nil {
		return false, err
	}
	others, err := installedVersions(projectDir, lock, base, name)
	if err != nil {
		return false, err
	}
	if len(others) > 0 {
		return false, fmt.Errorf("%s is installed already and an app uses one version of a package: "+
			"to move to %s, run jadpo package upgrade %s %s (or jadpo package remove %s first)", others[0], name, others[0], upgradeArg(name, files), others[0])
	}

	dir := filepath.Join(projectDir, lockfile.PackagesDir, name)
	if e, ok := lock.Get(name); ok && e.Digest == digest && e.Files != nil {
		if onDisk, err := lockfile.ReadDir(dir); err == nil && lockfile.Digest(onDisk) == digest {
			return false, nil
		}
	}

	if err := os.MkdirAll(filepath.Join(projectDir, lockfile.PackagesDir), 0o755); err != nil {
		return false, err
	}
	tmp := filepath.Join(projectDir, lockfile.PackagesDir, ".tmp-"+name+"-"+randomSuffix())
	if err := writeFiles(tmp, files); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return false, err
	}
	lock.SetFiles(name, digest, lockfile.FileDigests(files))
	if err := lockfile.Write(projectDir, lock); err != nil {
		return false, err
	}
	return true, nil
}

// upgradeArg is how `jadpo package upgrade` is given the package being installed: its
// catalogue name, else its folder.
func upgradeArg(name string, files map[string][]byte) string {
	if catalog.Has(name) {
		return name
	}
	return "./path/to/" + name
}

func writeFiles(dir string, files map[string][]byte) error {
	for p, content := range files {
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// InstallDir installs the local package in srcDir (`jadpo package add
// ./path`), named by its package.jadpo header. It returns the package's
// name and whether anything changed.
func InstallDir(projectDir, srcDir string) (name string, changed bool, err error) {
	// package.jadpo first: a folder that is no package is refused before
	// anything in it is read.
	headerPath := filepath.Join(srcDir, lockfile.HeaderFile)
	if st, err := os.Lstat(headerPath); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", false, fmt.Errorf("%s has no %s: it is not a package folder", srcDir, lockfile.HeaderFile)
	} else if err != nil {
		return "", false, err
	} else if !st.Mode().IsRegular() {
		return "", false, fmt.Errorf("%s is not a regular file; a package holds regular files only", headerPath)
	}
	files, err := lockfile.ReadDir(srcDir)
	if err != nil {
		return "", false, err
	}
	header, ok := files[lockfile.HeaderFile]
	if !ok {
		return "", false, fmt.Errorf("%s has no %s: it is not a package folder", srcDir, lockfile.HeaderFile)
	}
	name, err = lockfile.HeaderName(header)
	if err != nil {
		return "", false, err
	}
	changed, err = Install(projectDir, name, files)
	return name, changed, err
}

// NewerInCatalogue reports whether the catalogue holds a newer copy of the
// package than the one installed with digest: the installed copy is one the
// catalogue published earlier, and its current copy differs. The earlier
// copy stays valid; `jadpo package add NAME` updates it.
func NewerInCatalogue(name, digest string) bool {
	if !catalog.Has(name) || !slices.Contains(catalog.Published(name), digest) {
		return false
	}
	return lockfile.Digest(catalog.Files(name)) != digest
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
