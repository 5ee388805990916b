package main

// Hard-link groups crafted to reach outside the tree being written: the
// red team's min1.cpio and min2.cpio (issue 12), run through the binary.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// newcMember is one newc record as the red team wrote them: every field
// given, nothing normalised.
type newcMember struct {
	name       string
	mode       uint32 // st_mode, type bits included
	data       []byte
	ino, nlink uint32
	rdev       [2]uint32
}

func craftNewc(members ...newcMember) []byte {
	var b bytes.Buffer
	for _, m := range append(members, newcMember{name: "TRAILER!!!", nlink: 1}) {
		name := m.name + "\x00"
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s",
			m.ino, m.mode, 0, 0, m.nlink, 0, len(m.data), 0, 0, m.rdev[0], m.rdev[1], len(name), 0, name)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		b.Write(m.data)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

// loopDevice attaches a loop device to a file of known content and returns
// its device number; ok is false where loop devices cannot be had.
func loopDevice(t *testing.T, backing string) (major, minor uint32, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("losetup"); err != nil {
		return 0, 0, false
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		t.Logf("losetup: %v; falling back to /dev/null's number", err)
		return 0, 0, false
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "--detach", dev).Run() })
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	return unix.Major(st.Rdev), unix.Minor(st.Rdev), true
}

// A hard-link group mixing a regular file, a symlink out of the tree and a
// setuid fifo must not chmod the symlink's target; a block device and a
// regular file with data sharing an inode must not get the data written
// into the device. Both through repack and apply to a tree, as root.
func TestHardLinkGroupsStayInTheTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: device nodes, and the chmod that root may do anywhere")
	}
	bin := binary(t)
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside-passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	backing := filepath.Join(dir, "disk.img")
	disk := bytes.Repeat([]byte("untouched disk block\n"), 4096)
	if err := os.WriteFile(backing, disk, 0o600); err != nil {
		t.Fatal(err)
	}
	major, minor, ok := loopDevice(t, backing)
	if !ok {
		// /dev/null: a write through it harms nothing, and the checks of
		// the tree below still tell whether one was attempted.
		major, minor = 1, 3
	}

	root := newcMember{name: ".", mode: 0o40755, ino: 1, nlink: 2}
	min1 := craftNewc(root,
		newcMember{name: "a", mode: 0o100644, ino: 77, nlink: 3},
		newcMember{name: "a", mode: 0o120777, data: []byte(outside), ino: 77, nlink: 3},
		newcMember{name: "b", mode: 0o10000 | 0o6777, ino: 77, nlink: 3})
	min2 := craftNewc(root,
		newcMember{name: "x", mode: 0o60600, ino: 88, nlink: 2, rdev: [2]uint32{major, minor}},
		newcMember{name: "y", mode: 0o100644, data: []byte("PWNED\n"), ino: 88, nlink: 2})
	for name, data := range map[string][]byte{"min1.cpio": min1, "min2.cpio": min2} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// reset puts both back, so that each run is judged on its own.
	reset := func(t *testing.T) {
		t.Helper()
		if err := os.Chmod(outside, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(backing, disk, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	checkOutside := func(t *testing.T) {
		t.Helper()
		fi, err := os.Stat(outside)
		if err != nil {
			t.Fatal(err)
		}
		if got := uint32(fi.Sys().(*syscall.Stat_t).Mode) & 0o7777; got != 0o644 {
			t.Errorf("the file outside the tree is now mode %04o", got)
		}
		if data, _ := os.ReadFile(outside); string(data) != "root:x:0:0::/root:/bin/sh\n" {
			t.Errorf("the file outside the tree now holds %q", data)
		}
		if data, _ := os.ReadFile(backing); !bytes.Equal(data, disk) {
			t.Errorf("the loop device's backing file was written: starts %q", data[:min(32, len(data))])
		}
	}
	// checkTree says what the kernel would have made: no member linked to
	// one of another type.
	checkTree := func(t *testing.T, tree, archive string) {
		t.Helper()
		lstat := func(name string) (unix.Stat_t, bool) {
			var st unix.Stat_t
			err := unix.Lstat(filepath.Join(tree, name), &st)
			return st, err == nil
		}
		switch archive {
		case "min1.cpio":
			// "a" may be either of its two entries: the copy holds a
			// hard-link member back until its group is complete, here the
			// end of the archive.
			if st, ok := lstat("a"); !ok || (st.Mode&unix.S_IFMT != unix.S_IFLNK && st.Mode&unix.S_IFMT != unix.S_IFREG) {
				t.Errorf("a: mode %o, want the file or the symlink", st.Mode)
			}
			if st, ok := lstat("b"); !ok || st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Mode&0o7777 != 0o6777 {
				t.Errorf("b: mode %o, want a fifo of its own, mode 6777", st.Mode)
			}
		case "min2.cpio":
			if st, ok := lstat("x"); !ok || st.Mode&unix.S_IFMT != unix.S_IFBLK {
				t.Errorf("x: mode %o, want a block device", st.Mode)
			}
			st, ok := lstat("y")
			if !ok || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
				t.Errorf("y: mode %o nlink %d, want a regular file of its own", st.Mode, st.Nlink)
			}
			if data, _ := os.ReadFile(filepath.Join(tree, "y")); string(data) != "PWNED\n" {
				t.Errorf("y holds %.40q", data)
			}
		}
	}

	for _, archive := range []string{"min1.cpio", "min2.cpio"} {
		for _, cmdline := range [][]string{
			{"repack", "--format", "dir"},
			{"apply", "--quiet", "--rules", "../../rules", "--format", "dir"},
		} {
			t.Run(cmdline[0]+"/"+archive, func(t *testing.T) {
				reset(t)
				tree := filepath.Join(t.TempDir(), "tree")
				args := append(append([]string{}, cmdline...), filepath.Join(dir, archive), tree)
				r := runBinary(t, exec.Command(bin, args...))
				checkOutside(t)
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				checkTree(t, tree, archive)
			})
		}
	}
}
