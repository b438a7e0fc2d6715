package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileSize is the largest source file the toolchain reads: 8 MiB. A
// .jadpo file is hand-written text; the limit keeps a mistake (a symlink to
// /dev/zero, a log file renamed .jadpo) from taking the machine's memory.
const MaxFileSize = 8 << 20

// ErrNotRegular is the cause of a read refused because the path is not a
// regular file (a named pipe, a device, a socket, a folder).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the cause of a read refused because the file is larger than
// the limit.
var ErrTooLarge = errors.New("file too large")

// ReadError says why ReadFile refused a file, in words for a diagnostic.
type ReadError struct {
	Path   string
	Reason string // "is a named pipe, not a regular file"
	Err    error  // ErrNotRegular, ErrTooLarge
}

func (e *ReadError) Error() string { return fmt.Sprintf("`%s` %s", e.Path, e.Reason) }
func (e *ReadError) Unwrap() error { return e.Err }

// ReadFile reads name from fsys when it is a regular file of at most limit
// bytes. It looks at the file's kind before opening it, so a named pipe
// never blocks the read, and again on the opened file, so a file swapped in
// between is refused too; it never reads more than limit+1 bytes.
func ReadFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	if bf, ok := fsys.(BytesFS); ok {
		if b, st, ok := bf.FileBytes(name); ok {
			if err := checkInfo(name, st, limit); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := checkInfo(name, st, limit); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkInfo(name, st, limit); err != nil {
		return nil, err
	}
	b, err := readSized(f, st.Size(), limit)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(name, 0, limit)
	}
	return b, nil
}

// BytesFS is a file system that holds some of its files in memory and
// never changes their bytes (the language server's copy of a project
// folder, with the editor's documents over it): ReadFile takes those bytes
// as they are instead of copying them. FileBytes is false for a file it
// does not hold so; ReadFile then reads it as from any file system.
type BytesFS interface {
	fs.FS
	FileBytes(name string) ([]byte, fs.FileInfo, bool)
}

// readSized reads at most limit+1 bytes into a buffer of the size the
// file says it has (one allocation, where io.ReadAll grows one several
// times: a project's check reads every file).
func readSized(r io.Reader, size, limit int64) ([]byte, error) {
	b := make([]byte, 0, min(size, limit)+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if int64(len(b)) > limit {
			return b, nil
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: make room
		}
	}
}

// ReadLocalFile is ReadFile for a path on disk (.env.local, a package being
// installed); like DiskFS it opens without blocking.
func ReadLocalFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkInfo(path, st, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkInfo(path, st, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, 0, limit)
	}
	return b, nil
}

func checkInfo(name string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return &ReadError{Path: name, Reason: "is " + kind(st.Mode()) + ", not a regular file", Err: ErrNotRegular}
	}
	if st.Size() > limit {
		return tooLarge(name, st.Size(), limit)
	}
	return nil
}

// tooLarge is the refusal of a file over limit; size is 0 when only the
// read found it (the file grew, or its kind reports no size).
func tooLarge(name string, size, limit int64) error {
	what := "is larger than"
	if size > 0 {
		what = fmt.Sprintf("is %s, over", Size(size))
	}
	return &ReadError{Path: name, Reason: fmt.Sprintf("%s the limit of %s", what, Size(limit)), Err: ErrTooLarge}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// Size renders a byte count for people: 8 MiB, 1.5 MiB, 900 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// DiskFS is the project folder dir as a file system that stays inside it:
// a symbolic link is followed only when it leads to a place inside dir (a
// link out of the folder, like one to /dev/zero, is an error), and files
// are opened without blocking, so ReadFile can refuse a named pipe that was
// swapped in after it looked.
func DiskFS(dir string) (fs.FS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return diskFS{fsys: r.FS(), root: r}, nil
}

type diskFS struct {
	fsys fs.FS // the root's: Stat, ReadDir, ReadLink and Lstat, bounded to it
	root *os.Root
}

func (d diskFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(d.fsys, name) }
func (d diskFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.fsys, name) }
func (d diskFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(d.fsys, name) }
func (d diskFS) ReadLink(name string) (string, error)       { return fs.ReadLink(d.fsys, name) }

// Close releases the folder; a DiskFS not closed is released when
// collected (os.Root's own finalizer).
func (d diskFS) Close() error { return d.root.Close() }

func (d diskFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// MaxAnyFileSize bounds fs.ReadFile on a DiskFS (jadpo.lock, which grows
// with the packages' file count, is read that way): 64 MiB.
const MaxAnyFileSize = 64 << 20

// ReadFile keeps fs.ReadFile on a DiskFS to regular files, bounded (the
// root's own ReadFile would open a named pipe and wait).
func (d diskFS) ReadFile(name string) ([]byte, error) { return ReadFile(d, name, MaxAnyFileSize) }
