package fsat

import (
	"errors"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Mode is how a Tree resolves the directories on the way to a name.
type Mode int

const (
	// Beneath follows a symlink on the way while it stays inside the tree
	// (os.Root); one that leads out is an error.
	Beneath Mode = iota
	// NoSymlinks refuses a symlink anywhere on the way (ErrSymlinkOnPath),
	// even one that stays inside, so that a file is only ever written, read
	// or removed where it really is.
	NoSymlinks
)

// Options configures a Tree's writes.
type Options struct {
	// MakeParents creates the missing directories on the way to a file or
	// symlink written (0755, as umask allows).
	MakeParents bool
	// ReplaceTemp removes what a killed run left at a write's temporary
	// name; otherwise the write fails there (the temporary name is created
	// with O_EXCL, never written through).
	ReplaceTemp bool
	// Sync makes each file durable before it is renamed into place.
	Sync bool
	// BeforeStep, if set, runs before each change a write or a removal
	// makes: tests stop a run there, as a kill would.
	BeforeStep func()
}

// Tree is a directory tree every name is resolved beneath. Names are clean
// relative paths (pathx.Clean), "." for the root itself.
type Tree struct {
	mode Mode
	root *os.Root // Beneath
	fd   int      // NoSymlinks: the root directory
	opts Options
}

// New returns a Beneath tree on root, which stays the caller's to close.
func New(root *os.Root, opts Options) *Tree {
	return &Tree{mode: Beneath, root: root, fd: -1, opts: opts}
}

// OpenNoSymlinks opens the directory dir as a NoSymlinks tree.
func OpenNoSymlinks(dir string, opts Options) (*Tree, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Tree{mode: NoSymlinks, fd: fd, opts: opts}, nil
}

// Close releases what OpenNoSymlinks opened; a Beneath tree's root is its
// caller's.
func (t *Tree) Close() error {
	if t.mode == NoSymlinks {
		return unix.Close(t.fd)
	}
	return nil
}

// Step runs the BeforeStep hook, for a change the caller makes itself.
func (t *Tree) Step() {
	if t.opts.BeforeStep != nil {
		t.opts.BeforeStep()
	}
}

// ErrSymlinkOnPath says a component of a name is a symlink or not a
// directory, in a NoSymlinks tree.
var ErrSymlinkOnPath = errors.New("a parent directory is a symlink or not a directory")

// InParent runs fn with a descriptor of the directory holding name and
// name's last component, so that the *at call fn makes acts inside the tree
// whatever the path holds. For "." it is the root itself.
func (t *Tree) InParent(name string, fn func(dir int, base string) error) error {
	return t.inParent(name, false, fn)
}

func (t *Tree) inParent(name string, create bool, fn func(dir int, base string) error) error {
	parent, base := path.Dir(name), path.Base(name) // ".", "." for the root
	if t.mode == NoSymlinks {
		fd, err := t.OpenDir(parent, create, nil)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return fn(fd, base)
	}
	if create {
		if err := t.root.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	d, err := t.root.Open(parent)
	if err != nil {
		return err
	}
	defer d.Close()
	return WithFd(d, func(fd int) error { return fn(fd, base) })
}

// WithFd runs fn with f's descriptor without switching f to blocking
// mode, as f.Fd would.
func WithFd(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// OpenDir opens dir (a clean relative name, "." for the root) in a
// NoSymlinks tree, one component at a time with O_NOFOLLOW, creating
// missing directories when create is set, and hands each directory on the
// way, the root first, to check (if set) with its name from the root ("/",
// "/var", ...); an error from check stops the walk. The descriptor is the
// caller's to close. Errors are the system's (unix.ENOENT, ...),
// ErrSymlinkOnPath or check's.
func (t *Tree) OpenDir(dir string, create bool, check func(fd int, shown string) error) (int, error) {
	if t.mode != NoSymlinks {
		return -1, errors.New("fsat: a descriptor walk needs a NoSymlinks tree")
	}
	fd, err := unix.Dup(t.fd)
	if err != nil {
		return -1, err
	}
	var comps []string
	if dir != "." {
		comps = strings.Split(dir, "/")
	}
	for i := 0; ; i++ {
		if check != nil {
			if err := check(fd, "/"+strings.Join(comps[:i], "/")); err != nil {
				unix.Close(fd)
				return -1, err
			}
		}
		if i == len(comps) {
			return fd, nil
		}
		c := comps[i]
		const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		next, err := openatRetry(fd, c, flags, 0)
		if err == unix.ENOENT && create {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || err == unix.EEXIST {
				next, err = openatRetry(fd, c, flags, 0)
			}
		}
		unix.Close(fd)
		switch err {
		case nil:
			fd = next
		case unix.ELOOP, unix.ENOTDIR:
			return -1, ErrSymlinkOnPath
		default:
			return -1, err
		}
	}
}

func openatRetry(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// At is an entry opened with O_PATH|O_NOFOLLOW by OnEntry: the directory
// holding it, its last component, the descriptor and what fstat says.
type At struct {
	Dir  int
	Base string
	Fd   int
	Stat unix.Stat_t
}

// OnEntry opens name with O_PATH|O_NOFOLLOW, which follows nothing and opens
// nothing for reading or writing (a device's open routine does not run),
// and runs fn on it: fn checks the type before it changes anything, and
// changes it through At.Fd.
func (t *Tree) OnEntry(name string, fn func(at *At) error) error {
	return t.InParent(name, func(dir int, base string) error {
		fd, err := unix.Openat(dir, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: name, Err: err}
		}
		defer unix.Close(fd)
		at := &At{Dir: dir, Base: base, Fd: fd}
		if err := unix.Fstat(fd, &at.Stat); err != nil {
			return &os.PathError{Op: "stat", Path: name, Err: err}
		}
		return fn(at)
	})
}

// ErrReplaced says the name an O_PATH descriptor was opened by now holds
// another inode.
var ErrReplaced = errors.New("the name now holds another file")

// OpenWrite opens the regular file at (found by OnEntry) for writing,
// again by its name with O_NOFOLLOW, and checks it got the same inode: the
// data goes into that file or nowhere.
func OpenWrite(at *At, name string) (*os.File, error) {
	return openSame(at.Dir, at.Base, name, unix.O_WRONLY, &at.Stat)
}

// openSame opens base, in dir, with flags, without following it or
// blocking, and checks it is the inode st describes.
func openSame(dir int, base, name string, flags int, st *unix.Stat_t) (*os.File, error) {
	fd, err := openatRetry(dir, base, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	var got unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil || got.Dev != st.Dev || got.Ino != st.Ino {
		f.Close()
		return nil, ErrReplaced
	}
	return f, nil
}

// inParentErr is InParent with call's error naming name and op.
func (t *Tree) inParentErr(name, op string, call func(dir int, base string) error) error {
	return t.InParent(name, func(dir int, base string) error {
		if err := call(dir, base); err != nil {
			return &os.PathError{Op: op, Path: name, Err: err}
		}
		return nil
	})
}

// Mknod creates a device node or fifo at name, its permission bits without
// setuid, setgid and sticky: the mode is the caller's to set afterwards.
func (t *Tree) Mknod(name string, mode uint32, dev uint64) error {
	return t.inParentErr(name, "mknod", func(dir int, base string) error {
		return unix.Mknodat(dir, base, mode&^0o7000, int(dev))
	})
}

// Mkdir creates the directory name with perm (as umask allows).
func (t *Tree) Mkdir(name string, perm uint32) error {
	return t.inParentErr(name, "mkdirat", func(dir int, base string) error {
		return unix.Mkdirat(dir, base, perm&0o777)
	})
}
