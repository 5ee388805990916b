package fsat

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Extended attributes have no *at system calls before Linux 6.13
// (getxattrat, setxattrat), and fgetxattr and fsetxattr refuse O_PATH
// descriptors, while lgetxattr and lsetxattr resolve a whole path, so
// that a symlink on the way could lead them out of the tree. So they are
// reached through /proc/self/fd: "/proc/self/fd/DIR/BASE", BASE one
// component, names the entry in the directory DIR holds, whatever path
// led there; "/proc/self/fd/FD", followed, names the inode FD holds.
// Where /proc is not mounted (a chroot, `apply /` in a bare jail), a
// regular file's or a directory's are reached through a descriptor opened
// for reading, checked to be the same inode; a symlink's, a device's or a
// fifo's cannot be read then (opening a device runs its driver), and
// setting them is an error.

// procMissing says /proc/self/fd cannot be used.
var procMissing = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err != nil
})

// MaxXattrs bounds what ListXattrs reads of one entry: the kernel allows
// 64 KiB of names and 64 KiB per value; a file's attributes on ext4 fit
// in a block.
const MaxXattrs = 1 << 20

func procFd(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// ListXattrs returns the extended attributes of base, an entry of the
// directory dir, without following it if it is a symlink; nil when it has
// none. name is how errors show it. Without /proc, only a regular file's
// or a directory's are read, through a descriptor; anything else has none.
func ListXattrs(dir int, base, name string, st *unix.Stat_t) (map[string]string, error) {
	if !procMissing() {
		p := procFd(dir) + "/" + base
		return listXattrs(name,
			func(b []byte) (int, error) { return unix.Llistxattr(p, b) },
			func(k string, b []byte) (int, error) { return unix.Lgetxattr(p, k, b) })
	}
	var x map[string]string
	err := withOpenEntry(dir, base, name, st, func(fd int) error {
		var err error
		x, err = listXattrs(name,
			func(b []byte) (int, error) { return unix.Flistxattr(fd, b) },
			func(k string, b []byte) (int, error) { return unix.Fgetxattr(fd, k, b) })
		return err
	})
	if err == errNoDescriptor {
		return nil, nil
	}
	return x, err
}

// errNoDescriptor: an entry that is not opened for its attributes.
var errNoDescriptor = errors.New("only a regular file's or a directory's extended attributes can be reached without /proc")

// withOpenEntry opens base, in dir, for reading, without following it or
// blocking, checks it is the inode st describes, and runs fn on it.
func withOpenEntry(dir int, base, name string, st *unix.Stat_t, fn func(fd int) error) error {
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
		return errNoDescriptor
	}
	f, err := openSame(dir, base, name, unix.O_RDONLY, st)
	if err != nil {
		return err
	}
	defer f.Close()
	return WithFd(f, fn)
}

func listXattrs(name string, list func([]byte) (int, error), get func(string, []byte) (int, error)) (map[string]string, error) {
	names, err := xattrCall(list)
	if err == unix.ENOTSUP {
		return nil, nil // a filesystem without attributes
	}
	if err != nil {
		return nil, &os.PathError{Op: "listxattr", Path: name, Err: err}
	}
	if len(names) == 0 {
		return nil, nil
	}
	x := map[string]string{}
	total := 0
	for _, k := range strings.Split(strings.TrimSuffix(string(names), "\x00"), "\x00") {
		v, err := xattrCall(func(b []byte) (int, error) { return get(k, b) })
		if err == unix.ENODATA {
			continue // removed since listed
		}
		if err != nil {
			return nil, &os.PathError{Op: "getxattr " + k, Path: name, Err: err}
		}
		if total += len(k) + len(v); total > MaxXattrs {
			return nil, fmt.Errorf("%s: extended attributes over %d bytes", name, MaxXattrs)
		}
		x[k] = string(v)
	}
	return x, nil
}

// xattrCall runs a list or get call: the size first, then the read, again
// while the read says ERANGE (the attribute grew in between).
func xattrCall(call func([]byte) (int, error)) ([]byte, error) {
	for {
		n, err := call(nil)
		if err != nil || n == 0 {
			return nil, err
		}
		b := make([]byte, n)
		n, err = call(b)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		return b[:n], nil
	}
}

// SetXattrs gives the entry at (found by OnEntry) the attributes x, in
// order of name. A symlink's own attributes are set through its directory
// and name, not following it; anything else's through its descriptor.
// Setting security.capability needs CAP_SETFCAP and trusted.* needs
// CAP_SYS_ADMIN: without them the error names the file and the attribute.
func SetXattrs(at *At, name string, x map[string]string) error {
	setAll := func(set func(k string, v []byte) error) error {
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := set(k, []byte(x[k])); err != nil {
				return &os.PathError{Op: "setxattr " + k, Path: name, Err: err}
			}
		}
		return nil
	}
	if len(x) > 0 && procMissing() {
		err := withOpenEntry(at.Dir, at.Base, name, &at.Stat, func(fd int) error {
			return setAll(func(k string, v []byte) error { return unix.Fsetxattr(fd, k, v, 0) })
		})
		if err == errNoDescriptor {
			return &os.PathError{Op: "setxattr", Path: name, Err: err}
		}
		return err
	}
	p, set := procFd(at.Fd), unix.Setxattr
	if at.Stat.Mode&unix.S_IFMT == unix.S_IFLNK {
		p, set = procFd(at.Dir)+"/"+at.Base, unix.Lsetxattr
	}
	return setAll(func(k string, v []byte) error { return set(p, k, v, 0) })
}
