package format

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files lists the files a path given to `jadpo fmt` stands for, in lexical
// order: a file as it is named (whatever its extension), and a folder's
// *.jadpo files at any depth. A walk skips hidden folders, node_modules,
// symbolic links, and a project's own build/ and packages/ folders (those
// next to an app.jadpo): build/ is generated, and packages/ holds installed
// packages, which jadpo.lock records by digest, so rewriting one would make
// `jadpo check` report package.lock_mismatch. A packages/ folder, or a file
// in it, named as the path itself is formatted like any other.
func Files(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && skipDir(p, d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".jadpo") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func skipDir(path, name string) bool {
	if strings.HasPrefix(name, ".") || name == "node_modules" {
		return true
	}
	if name == "build" || name == "packages" {
		_, err := os.Stat(filepath.Join(filepath.Dir(path), "app.jadpo"))
		return err == nil
	}
	return false
}

// WriteFile replaces the file at path with content at once: the content is
// written to a new file beside it, given the old one's permissions, and
// renamed over it, so a reader (or a crash) never sees half a file. A
// symbolic link is kept and its target replaced.
func WriteFile(path string, content []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".fmt-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(content); err != nil {
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	done = true
	return nil
}
