package fsat

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// NoFchmodat2 is set once fchmodat2(2) with AT_EMPTY_PATH, Linux 6.6 and
// later, turns out to be unavailable; tests set it to take the fallback.
var NoFchmodat2 atomic.Bool

// Chmod changes the mode of the file fd refers to, an O_PATH descriptor or
// an open one. chmod by name follows a symlink, and fchmodat's
// AT_SYMLINK_NOFOLLOW fails with EOPNOTSUPP before Linux 6.6 (the boot test
// runs 6.1); fchmod refuses O_PATH descriptors. So: fchmodat2 on the
// descriptor itself, or else chmod of /proc/self/fd/N, which names the
// inode fd holds, not a path that could lead elsewhere.
func Chmod(fd int, mode uint32) error {
	if !NoFchmodat2.Load() {
		err := unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH)
		switch err {
		case unix.EOPNOTSUPP, unix.ENOSYS, unix.EINVAL:
			NoFchmodat2.Store(true)
		case unix.EPERM:
			// A seccomp filter may say EPERM for a call it does not know;
			// a real EPERM comes back from the fallback as well.
		default:
			return err
		}
	}
	err := unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
	if err == unix.ENOENT {
		return fmt.Errorf("fchmodat2 is missing (Linux before 6.6) and /proc is not mounted: %w", err)
	}
	return err
}

// ChownFd gives the file fd refers to (O_PATH or open) its owner; a
// symlink's own owner when fd is a symlink.
func ChownFd(fd int, name string, uid, gid int) error {
	if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "lchown", Path: name, Err: err}
	}
	return nil
}

// SetMtime sets atime and mtime of base, in dir, to t, never through a
// symlink, so that the tree does not depend on when it was written. A zero
// t leaves both as they are.
func SetMtime(dir int, base, name string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	ts, err := unix.TimeToTimespec(t)
	if err != nil {
		return fmt.Errorf("mtime %v: %w", t, err)
	}
	if err := unix.UtimesNanoAt(dir, base, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "lutimes", Path: name, Err: err}
	}
	return nil
}
