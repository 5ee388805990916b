package fsat

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// File is a regular file WriteFile writes.
type File struct {
	Data     io.Reader
	Mode     uint32    // permission bits with setuid, setgid and sticky
	UID, GID int       // given when running as root
	ModTime  time.Time // zero: left as the write leaves it
}

// WriteFile writes name atomically: under tmp, a name beside it, created
// with O_EXCL|O_NOFOLLOW and worked on through its descriptor, complete
// with owner, mode (after chown, which clears setuid and setgid) and
// mtime, then renamed over name. A symlink at name is replaced, never
// written through; on failure tmp is removed and name is as it was.
func (t *Tree) WriteFile(name, tmp string, f File) error {
	return t.viaTemp(name, tmp, func(dir int, tbase string) (bool, error) {
		fd, err := openatRetry(dir, tbase, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return false, &os.PathError{Op: "openat", Path: tmp, Err: err}
		}
		if err := t.fill(os.NewFile(uintptr(fd), tmp), f); err != nil {
			return true, err
		}
		t.Step()
		return true, SetMtime(dir, tbase, tmp, f.ModTime)
	})
}

// fill writes the data, owner and mode of file, then closes it.
func (t *Tree) fill(file *os.File, f File) error {
	t.Step()
	_, err := io.Copy(file, f.Data)
	if err == nil {
		t.Step()
		if os.Geteuid() == 0 {
			err = file.Chown(f.UID, f.GID)
		}
	}
	if err == nil {
		err = WithFd(file, func(fd int) error { return unix.Fchmod(fd, f.Mode&0o7777) })
		if err != nil {
			err = &os.PathError{Op: "chmod", Path: file.Name(), Err: err}
		}
	}
	if err == nil && t.opts.Sync {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// Symlink is a symlink WriteSymlink writes.
type Symlink struct {
	Target   string
	UID, GID int       // given when running as root
	ModTime  time.Time // zero: left as the write leaves it
}

// WriteSymlink creates name as a symlink under tmp, a name beside it, with
// its owner and mtime (on the link itself, AT_SYMLINK_NOFOLLOW), then
// renames it over name; nothing follows the link.
func (t *Tree) WriteSymlink(name, tmp string, l Symlink) error {
	return t.viaTemp(name, tmp, func(dir int, tbase string) (bool, error) {
		if err := unix.Symlinkat(l.Target, dir, tbase); err != nil {
			return false, &os.LinkError{Op: "symlinkat", Old: l.Target, New: tmp, Err: err}
		}
		if os.Geteuid() == 0 {
			if err := unix.Fchownat(dir, tbase, l.UID, l.GID, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return true, &os.PathError{Op: "lchown", Path: tmp, Err: err}
			}
		}
		return true, SetMtime(dir, tbase, tmp, l.ModTime)
	})
}

// viaTemp makes name anew under tmp, in the same directory: create makes
// the entry at tmp and says whether it did (what it made is removed when
// anything fails after), then tmp is renamed over name. With ReplaceTemp,
// what a killed run left at tmp goes first; otherwise create fails there.
func (t *Tree) viaTemp(name, tmp string, create func(dir int, tbase string) (bool, error)) error {
	return t.inParent(name, t.opts.MakeParents, func(dir int, base string) error {
		tbase := path.Base(tmp)
		if t.opts.ReplaceTemp {
			if err := unix.Unlinkat(dir, tbase, 0); err != nil && err != unix.ENOENT {
				return &os.PathError{Op: "unlinkat", Path: tmp, Err: err}
			}
		}
		t.Step()
		made, err := create(dir, tbase)
		if err == nil {
			t.Step()
			if err = unix.Renameat(dir, tbase, dir, base); err != nil {
				err = &os.LinkError{Op: "renameat", Old: tmp, New: name, Err: err}
			}
		}
		if err != nil && made {
			unix.Unlinkat(dir, tbase, 0)
		}
		return err
	})
}

// Unlink removes the file (never a directory) at name.
func (t *Tree) Unlink(name string) error {
	return t.inParentErr(name, "unlinkat", func(dir int, base string) error {
		return unix.Unlinkat(dir, base, 0)
	})
}

// RemoveAll removes name and everything beneath it, one entry at a time
// (deepest first, names sorted), never following a symlink: a run killed
// half way leaves what a rerun finds and removes. A missing name, or a
// missing parent, is no error.
func (t *Tree) RemoveAll(name string) error {
	var removeErr error
	err := t.InParent(name, func(dir int, base string) error {
		removeErr = t.removeAt(dir, base)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return removeErr
}

func (t *Tree) removeAt(dirfd int, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
		t.Step()
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
		}
		return nil
	case err != nil:
		return &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, n := range names {
		if err := t.removeAt(fd, n); err != nil {
			return fmt.Errorf("%s/%w", name, err)
		}
	}
	t.Step()
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
	}
	return nil
}
