package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/check"
)

// inplaceEntry is an entry of TestCheckLocksWhatTheKernelWrites: a
// regular file (ino 0: one name; else a member of a group of nlink 2,
// its data as given) or, with link set, a symlink.
type inplaceEntry struct {
	name string
	ino  uint64
	data string
	link string
}

// TestCheckLocksWhatTheKernelWrites: check locks, for a deferred file
// that is one name of a hard-link group, the content the kernel leaves
// there (init/initramfs.c, do_name): a later regular file at another
// name of the group is written in place, and so is a later group's first
// member; the group's data may come with any member. Each segment is a
// raw newc archive of its own.
func TestCheckLocksWhatTheKernelWrites(t *testing.T) {
	const bridge = "etc/cni/net.d/10-crio-bridge.conflist"
	for _, tc := range []struct {
		name string
		segs [][]inplaceEntry
		want string
	}{
		{"a later file over the group", [][]inplaceEntry{{{"usr/x", 7, "", ""}, {bridge, 7, "old", ""}}, {{"usr/x", 0, "new", ""}}}, "new"},
		{"in one segment", [][]inplaceEntry{{{"usr/x", 7, "", ""}, {bridge, 7, "old", ""}, {"usr/x", 0, "new", ""}}}, "new"},
		{"the data with the first member", [][]inplaceEntry{{{"usr/x", 7, "old", ""}, {bridge, 7, "", ""}}}, "old"},
		{"a later group over the group", [][]inplaceEntry{{{"usr/x", 7, "", ""}, {bridge, 7, "old", ""}}, {{"usr/x", 9, "", ""}, {"usr/y", 9, "new", ""}}}, "new"},
		{"a symlink takes the name out first", [][]inplaceEntry{{{"usr/x", 7, "", ""}, {bridge, 7, "old", ""}}, {{"usr/x", 0, "", "/z"}, {"usr/x", 0, "new", ""}}}, "old"},
		{"groups do not span segments", [][]inplaceEntry{{{"usr/x", 7, "", ""}, {bridge, 7, "old", ""}}, {{"usr/y", 7, "", ""}, {"usr/z", 7, "new", ""}}}, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			img := filepath.Join(dir, "initrd.img")
			writeSegments(t, img, tc.segs)
			lock := filepath.Join(dir, "check.lock")
			r := runBinary(t, exec.Command(binary(t), "check", "--rules", "../../rules", "--lock", lock, "--update-lock", "crio-bin="+img))
			if r.code != 0 {
				t.Fatalf("check: exit %d: %s", r.code, r.stderr)
			}
			l, err := check.ReadLock(lock)
			if err != nil {
				t.Fatal(err)
			}
			got := "(not locked)"
			for _, f := range l.Packages["crio-bin"].Files {
				if f.Path == bridge {
					got = f.Content
				}
			}
			if got != tc.want {
				t.Errorf("locked content of %s: %q, want %q", bridge, got, tc.want)
			}
		})
	}
}

// writeSegments writes each segment as a raw newc archive, the
// directories the names need in the first.
func writeSegments(t *testing.T, name string, segs [][]inplaceEntry) {
	t.Helper()
	f, err := os.Create(name)
	mustOK(t, err)
	defer f.Close()
	for i, seg := range segs {
		w := archive.NewCpioWriter(f, archive.Newc)
		if i == 0 {
			for _, d := range []string{"etc", "etc/cni", "etc/cni/net.d", "usr"} {
				mustOK(t, w.WriteHeader(&archive.Entry{Name: d, Type: archive.TypeDir, Mode: 0o755, Nlink: 2}))
			}
		}
		for j, e := range seg {
			a := &archive.Entry{Name: e.name, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, Inode: 1000 + uint64(10*i+j), Size: int64(len(e.data))}
			switch {
			case e.link != "":
				a.Type, a.Mode, a.Linkname, a.Size = archive.TypeSymlink, 0o777, e.link, 0
			case e.ino != 0:
				a.Inode, a.Nlink = e.ino, 2
			}
			mustOK(t, w.WriteHeader(a))
			if a.Type == archive.TypeRegular {
				_, err := w.Write([]byte(e.data))
				mustOK(t, err)
			}
		}
		mustOK(t, w.Close())
	}
}
