package render

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// tree is the root render works beneath. Every name under /etc is reached
// one component at a time with O_NOFOLLOW: a symlink anywhere on the way,
// even one that stays inside the root, is refused, so that a file can only
// be written or taken back where it really is.
type tree struct {
	fd int
}

func openTree(dir string) (*tree, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &tree{fd: fd}, nil
}

func (t *tree) Close() error { return unix.Close(t.fd) }

// errSymlinkOnPath says a component of a name is a symlink or not a
// directory.
var errSymlinkOnPath = errors.New("a parent directory is a symlink or not a directory")

// openDir opens dir (a clean relative name, "." for the root) without
// following any symlink, creating missing directories when create is set.
func (t *tree) openDir(dir string, create bool) (int, error) {
	return t.walkDir(dir, create, nil)
}

// walkDir is openDir that also hands each directory on the way, the root
// first, to check (if set) with its name from the root ("/", "/var", ...);
// an error from check stops the walk.
func (t *tree) walkDir(dir string, create bool, check func(fd int, shown string) error) (int, error) {
	fd, err := unix.Dup(t.fd)
	if err != nil {
		return -1, err
	}
	if check != nil {
		if err := check(fd, "/"); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if dir == "." {
		return fd, nil
	}
	for i, c := range strings.Split(dir, "/") {
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
			return -1, errSymlinkOnPath
		default:
			return -1, err
		}
		if check != nil {
			if err := check(fd, "/"+strings.Join(strings.Split(dir, "/")[:i+1], "/")); err != nil {
				unix.Close(fd)
				return -1, err
			}
		}
	}
	return fd, nil
}

func openatRetry(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// maxFileSize bounds what render reads back from /etc: its files are a few
// hundred bytes; anything larger is not one of them.
const maxFileSize = 16 << 20

// readFile reads the regular file name without following a symlink on the
// way or at the end. A name that is missing gives fs.ErrNotExist.
func (t *tree) readFile(name string) ([]byte, error) {
	return t.readFileChecked(name, nil)
}

// readFileChecked is readFile that hands every directory on the way and
// the file itself to check (see walkDir), which may refuse them.
func (t *tree) readFileChecked(name string, check func(fd int, shown string) error) ([]byte, error) {
	dir, err := t.walkDir(path.Dir(name), false, check)
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
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err == nil && len(data) > maxFileSize {
		err = fmt.Errorf("is larger than %d bytes", maxFileSize)
	}
	return data, err
}

// ownedBy returns a check for readFileChecked that refuses a file or
// directory someone other than uid (or root, who can write anything
// anyway) can have written: another owner, or group or other write
// permission. A sticky directory owned by root (/tmp) is the exception:
// others may add to it but not replace what uid or root put there.
func ownedBy(uid int) func(fd int, shown string) error {
	return func(fd int, shown string) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return &os.PathError{Op: "fstat", Path: shown, Err: err}
		}
		var why string
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		switch w := st.Mode & 0o022; {
		case int(st.Uid) != uid && st.Uid != 0:
			owners := fmt.Sprintf("uid %d (the user running render) or root", uid)
			if uid == 0 {
				owners = "root (the user running render)"
			}
			why = fmt.Sprintf("is owned by uid %d, not by %s", st.Uid, owners)
		case w != 0 && !(isDir && st.Mode&unix.S_ISVTX != 0 && st.Uid == 0):
			who := map[uint32]string{0o020: "its group", 0o002: "others", 0o022: "its group and others"}[w]
			why = fmt.Sprintf("is writable by %s (mode %04o)", who, st.Mode&0o7777)
		default:
			return nil
		}
		return &untrustedError{path: shown, why: why, dir: isDir}
	}
}

// untrustedError says which file or directory on the way to a record
// someone else can have written. Its message follows the file's name.
type untrustedError struct {
	path, why string
	dir       bool
}

func (e *untrustedError) Error() string {
	what := e.path
	if !e.dir {
		what = "it"
	}
	return fmt.Sprintf("not trusted: %s %s; only the user running render may be able to write it and every directory above it", what, e.why)
}

// remove unlinks the file name (never a directory), without following a
// symlink on the way.
func (t *tree) remove(name string) error {
	dir, err := t.openDir(path.Dir(name), false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return unix.Unlinkat(dir, path.Base(name), 0)
}

// tempName is the name render writes name under before renaming it into
// place.
func tempName(name string) string {
	return path.Join(path.Dir(name), "."+path.Base(name)+".rootfs-trim.tmp")
}

// removeStaleTemp removes a temporary file a killed render left for name,
// if there is one and it is a regular file.
func (t *tree) removeStaleTemp(name string) (bool, error) {
	dir, err := t.openDir(path.Dir(name), false)
	if err == unix.ENOENT || err == errSymlinkOnPath {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	base := path.Base(tempName(name))
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

// writeFile writes data to name atomically: a temporary file beside it,
// owned and moded, then renamed over it. A symlink at name is replaced,
// never written through; a symlink on the way is refused.
// readEntry reads a regular file, or a symlink's target, never following
// it: what render wrote at name, either way.
func (t *tree) readEntry(name string) ([]byte, error) {
	dir, err := t.openDir(path.Dir(name), false)
	if err != nil {
		if err == unix.ENOENT {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	var st unix.Stat_t
	err = unix.Fstatat(dir, path.Base(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, path.Base(name), buf)
		unix.Close(dir)
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
	unix.Close(dir)
	return t.readFile(name)
}

// tempIn opens name's directory (making it as needed) and clears the
// temporary name a write of name goes through, left by a killed run.
func (t *tree) tempIn(name string) (dir int, tmp string, err error) {
	dir, err = t.openDir(path.Dir(name), true)
	if err != nil {
		return -1, "", err
	}
	tmp = path.Base(tempName(name))
	if err := unix.Unlinkat(dir, tmp, 0); err != nil && err != unix.ENOENT {
		unix.Close(dir)
		return -1, "", err
	}
	return dir, tmp, nil
}

// writeSymlink creates name as a symlink to target under a temporary name
// and renames it into place; nothing follows the link.
func (t *tree) writeSymlink(name, target string, uid, gid int) error {
	dir, tmp, err := t.tempIn(name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Symlinkat(target, dir, tmp); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		err = unix.Fchownat(dir, tmp, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, path.Base(name))
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

func (t *tree) writeFile(name string, data []byte, mode uint32, uid, gid int) error {
	dir, tmp, err := t.tempIn(name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	fd, err := openatRetry(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil && os.Geteuid() == 0 {
		err = unix.Fchown(fd, uid, gid)
	}
	if err == nil {
		// After chown, which clears setuid and setgid.
		err = unix.Fchmod(fd, mode&0o7777)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, path.Base(name))
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}
