package fslock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrBusy reports that another process holds the lock.
var ErrBusy = errors.New("another rootfs-trim is working on it")

// Lock takes an exclusive flock(2) on the directory dir. With wait it
// blocks until the lock is free; otherwise it fails with ErrBusy. The lock
// is released by the returned function, or when the process dies, so a
// crash never leaves a stale lock behind.
func Lock(dir string, wait bool) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", dir, ErrBusy)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
