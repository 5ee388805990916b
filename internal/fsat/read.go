package fsat

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// MaxReadSize bounds what ReadFile reads: the files read back from a tree
// (render's, in /etc) are a few hundred bytes; anything larger is not one
// of them.
const MaxReadSize = 16 << 20

// ReadFile reads the regular file name in a NoSymlinks tree without
// following a symlink on the way or at the end, and hands every directory
// on the way and the file itself to check, if set (see OpenDir), which
// may refuse them. A name that is missing gives fs.ErrNotExist.
func (t *Tree) ReadFile(name string, check func(fd int, shown string) error) ([]byte, error) {
	dir, err := t.OpenDir(path.Dir(name), false, check)
	if err != nil {
		if err == unix.ENOENT {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := openatRetry(dir, path.Base(name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ENOENT:
		return nil, os.ErrNotExist
	case unix.ELOOP:
		return nil, errors.New("is a symlink")
	default:
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("is not a regular file (%s)", fi.Mode().Type())
	}
	if check != nil {
		if err := check(fd, "/"+name); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReadSize+1))
	if err == nil && len(data) > MaxReadSize {
		err = fmt.Errorf("is larger than %d bytes", MaxReadSize)
	}
	return data, err
}

// ReadEntry reads a regular file, or a symlink's target, in a NoSymlinks
// tree, never following it: what was written at name, either way.
func (t *Tree) ReadEntry(name string) ([]byte, error) {
	buf := make([]byte, unix.PathMax)
	var n int
	err := t.InParent(name, func(dir int, base string) (err error) {
		n, err = unix.Readlinkat(dir, base, buf)
		return err
	})
	if err == nil {
		return buf[:n], nil
	}
	// Not a symlink (readlink says EINVAL), or not there: ReadFile says which.
	return t.ReadFile(name, nil)
}

// RemoveRegular removes name if it is a regular file, in a NoSymlinks tree,
// and reports whether it did; a name beneath a missing directory or a
// symlink is left, and no error.
func (t *Tree) RemoveRegular(name string) (bool, error) {
	dir, err := t.OpenDir(path.Dir(name), false, nil)
	if err == unix.ENOENT || err == ErrSymlinkOnPath {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	base := path.Base(name)
	if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return false, nil
		}
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	if err := unix.Unlinkat(dir, base, 0); err != nil && err != unix.ENOENT {
		return false, err
	}
	return true, nil
}
