package fsat

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Extended attributes have no *at system calls before Linux 6.13
// (getxattrat, setxattrat), and fgetxattr and fsetxattr refuse O_PATH
// descriptors, while lgetxattr and lsetxattr resolve a whole path, so
// that a symlink on the way could lead them out of the tree. So they are
// reached through /proc/self/fd: "/proc/self/fd/DIR/BASE", BASE one
// component, names the entry in the directory DIR holds, whatever path
// led there; "/proc/self/fd/FD", followed, names the inode FD holds.

// MaxXattrs bounds what ListXattrs reads of one entry: the kernel allows
// 64 KiB of names and 64 KiB per value; a file's attributes on ext4 fit
// in a block.
const MaxXattrs = 1 << 20

func procFd(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// ListXattrs returns the extended attributes of base, an entry of the
// directory dir, without following it if it is a symlink; nil when it has
// none. name is how errors show it.
func ListXattrs(dir int, base, name string) (map[string]string, error) {
	p := procFd(dir) + "/" + base
	names, err := xattrCall(func(b []byte) (int, error) { return unix.Llistxattr(p, b) })
	if err == unix.ENOTSUP {
		return nil, nil // a filesystem without attributes
	}
	if err != nil {
		return nil, procErr("llistxattr", name, err)
	}
	if len(names) == 0 {
		return nil, nil
	}
	x := map[string]string{}
	total := 0
	for _, k := range strings.Split(strings.TrimSuffix(string(names), "\x00"), "\x00") {
		v, err := xattrCall(func(b []byte) (int, error) { return unix.Lgetxattr(p, k, b) })
		if err == unix.ENODATA {
			continue // removed since listed
		}
		if err != nil {
			return nil, procErr("lgetxattr "+k, name, err)
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

func procErr(op, name string, err error) error {
	if err == unix.ENOENT {
		return &os.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (is /proc mounted?)", err)}
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}

// SetXattrs gives the entry at (found by OnEntry) the attributes x, in
// order of name. A symlink's own attributes are set through its directory
// and name, not following it; anything else's through its descriptor.
// Setting security.capability needs CAP_SETFCAP and trusted.* needs
// CAP_SYS_ADMIN: without them the error names the file and the attribute.
func SetXattrs(at *At, name string, x map[string]string) error {
	p := procFd(at.Fd)
	set := unix.Setxattr
	if at.Stat.Mode&unix.S_IFMT == unix.S_IFLNK {
		p, set = procFd(at.Dir)+"/"+at.Base, unix.Lsetxattr
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if err := set(p, k, []byte(x[k]), 0); err != nil {
			return procErr("setxattr "+k, name, err)
		}
	}
	return nil
}
