package archive

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

var dirTestTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// setTimes sets atime and mtime of p without following a symlink.
func setTimes(t *testing.T, p string, mt time.Time) {
	t.Helper()
	ts, err := unix.TimeToTimespec(mt)
	mustDo(t, err)
	mustDo(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW))
}

// makeDirTestTree builds a tree with every entry type: a hard-link group of
// three, setuid/setgid files, a sticky directory, relative, absolute and
// dangling symlinks, a fifo, and as root device nodes and a foreign owner.
// Every entry gets its own sub-second mtime; directories are stamped last,
// children first, so that the stamps stay.
func makeDirTestTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "src")
	for _, d := range []string{"", "a", "a/b", "bin", "dev", "etc", "sticky", "sp ace", "ünïcødé", "empty dir"} {
		mustDo(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := map[string]string{
		"a-c":             "sorts before a/b\n",
		"a/b/f":           "deep\n",
		"a.d":             "dot\n",
		"bin/busybox":     strings.Repeat("\x7fELF", 4096),
		"bin/sgid":        "sgid\n",
		"etc/passwd":      "root:x:0:0::/root:/bin/sh\n",
		"etc/empty":       "",
		"sp ace/fi le":    "space\n",
		"ünïcødé/fichier": "utf-8\n",
	}
	for n, d := range files {
		mustDo(t, os.WriteFile(filepath.Join(root, n), []byte(d), 0o644))
	}
	mustDo(t, os.Chmod(filepath.Join(root, "bin/busybox"), 0o755|os.ModeSetuid))
	mustDo(t, os.Chmod(filepath.Join(root, "bin/sgid"), 0o750|os.ModeSetgid))
	mustDo(t, os.Chmod(filepath.Join(root, "etc/passwd"), 0o600))
	mustDo(t, os.Chmod(filepath.Join(root, "sticky"), 0o777|os.ModeSticky))
	mustDo(t, os.Chmod(filepath.Join(root, "empty dir"), 0o555))
	// The group: the data must end up on "sp ace/link3", the last in order.
	mustDo(t, os.Link(filepath.Join(root, "bin/busybox"), filepath.Join(root, "a/link1")))
	mustDo(t, os.Link(filepath.Join(root, "bin/busybox"), filepath.Join(root, "sp ace/link3")))
	mustDo(t, os.Symlink("busybox", filepath.Join(root, "bin/sh")))
	mustDo(t, os.Symlink("../etc/passwd", filepath.Join(root, "bin/rel")))
	mustDo(t, os.Symlink("/etc/passwd", filepath.Join(root, "etc/abs")))
	mustDo(t, os.Symlink("nowhere", filepath.Join(root, "dangling")))
	mustDo(t, unix.Mkfifo(filepath.Join(root, "dev/initctl"), 0o600))
	// Linked fifos: GNU cpio gives them one inode, in place.
	mustDo(t, os.Link(filepath.Join(root, "dev/initctl"), filepath.Join(root, "dev/initctl.link")))
	if os.Geteuid() == 0 {
		mustDo(t, unix.Mknod(filepath.Join(root, "dev/console"), unix.S_IFCHR|0o600, int(unix.Mkdev(5, 1))))
		mustDo(t, unix.Mknod(filepath.Join(root, "dev/loop0"), unix.S_IFBLK|0o660, int(unix.Mkdev(7, 0))))
		mustDo(t, os.Chmod(filepath.Join(root, "dev/loop0"), 0o660)) // past the umask
		mustDo(t, unix.Mknod(filepath.Join(root, "dev/big"), unix.S_IFCHR|0o600, int(unix.Mkdev(300, 70000))))
		mustDo(t, os.Lchown(filepath.Join(root, "etc/passwd"), 1000, 100))
		mustDo(t, os.Lchown(filepath.Join(root, "bin/rel"), 1000, 100))
		mustDo(t, os.Lchown(filepath.Join(root, "bin/sgid"), 0, 100))
		// chown cleared setgid.
		mustDo(t, os.Chmod(filepath.Join(root, "bin/sgid"), 0o750|os.ModeSetgid))
	}
	var all []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		all = append(all, p)
		return err
	})
	// Deepest first, so that stamping a child does not disturb its parent.
	slices.Reverse(all)
	for i, p := range all {
		setTimes(t, p, dirTestTime.Add(time.Duration(i)*time.Second+time.Duration(i*1000+1)))
	}
	return root
}

func readDirTree(t *testing.T, root string) ([]*Entry, map[string]string) {
	t.Helper()
	r, err := NewDirReader(root, DirReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return collectEntries(t, r)
}

func writeDirTree(t *testing.T, root string, opts DirWriterOptions, entries []*Entry, data map[string]string) {
	t.Helper()
	w, err := NewDirWriter(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	emitEntries(t, w, entries, data)
}

func entryByName(entries []*Entry, name string) *Entry {
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

func TestDirRoundTrip(t *testing.T) {
	src := makeDirTestTree(t)
	e1, d1 := readDirTree(t, src)

	var names []string
	for _, e := range e1 {
		names = append(names, e.Name)
	}
	if names[0] != "." {
		t.Errorf("first entry %q, want .", names[0])
	}
	// The hard-link group comes together at its last member's place,
	// earlier members in reverse order, as GNU cpio writes it.
	group := []string{"bin/busybox", "a/link1", "sp ace/link3"}
	if i := slices.Index(names, group[0]); i < 0 || !slices.Equal(names[i:i+3], group) {
		t.Errorf("hard-link group not emitted as %q: %q", group, names)
	}
	rest := slices.DeleteFunc(slices.Clone(names[1:]), func(n string) bool { return slices.Contains(group, n) })
	if !slices.IsSorted(rest) {
		t.Errorf("names not sorted bytewise: %q", names)
	}
	if i, j := slices.Index(names, "sp ace/fi le"), slices.Index(names, "sticky"); names[i+1] != group[0] || names[j-1] != group[2] {
		t.Errorf("hard-link group not at the place of its last member: %q", names)
	}
	if i, j := slices.Index(names, "a-c"), slices.Index(names, "a/b"); i < 0 || j < 0 || i > j {
		t.Errorf(`"a-c" at %d, "a/b" at %d: want a-c first as in LC_ALL=C sort`, i, j)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "./") {
			t.Errorf("name %q has a ./ prefix", n)
		}
	}

	// Spot checks of what the reader reports.
	inode := func(n string) uint64 { return entryByName(e1, n).Inode }
	want := map[string]Entry{
		"bin/busybox":  {Type: TypeRegular, Mode: 0o4755, Nlink: 3, Size: 0},
		"a/link1":      {Type: TypeRegular, Mode: 0o4755, Nlink: 3, Size: 0},
		"sp ace/link3": {Type: TypeRegular, Mode: 0o4755, Nlink: 3, Size: 4 * 4096},
		"bin/sgid":     {Type: TypeRegular, Mode: 0o2750, Nlink: 1, Size: 5},
		"sticky":       {Type: TypeDir, Mode: 0o1777, Nlink: 2},
		"a":            {Type: TypeDir, Mode: 0o755, Nlink: 3},
		"empty dir":    {Type: TypeDir, Mode: 0o555, Nlink: 2},
		"bin/rel":      {Type: TypeSymlink, Mode: 0o777, Nlink: 1, Linkname: "../etc/passwd"},
		"etc/abs":      {Type: TypeSymlink, Mode: 0o777, Nlink: 1, Linkname: "/etc/passwd"},
		"dev/initctl":  {Type: TypeFifo, Mode: 0o600, Nlink: 2},
	}
	if os.Geteuid() == 0 {
		want["dev/console"] = Entry{Type: TypeChar, Mode: 0o600, Nlink: 1, RdevMajor: 5, RdevMinor: 1}
		want["dev/loop0"] = Entry{Type: TypeBlock, Mode: 0o660, Nlink: 1, RdevMajor: 7, RdevMinor: 0}
		want["dev/big"] = Entry{Type: TypeChar, Mode: 0o600, Nlink: 1, RdevMajor: 300, RdevMinor: 70000}
	}
	for name, w := range want {
		e := entryByName(e1, name)
		if e == nil {
			t.Errorf("%s missing", name)
			continue
		}
		got := Entry{Type: e.Type, Mode: e.Mode, Nlink: e.Nlink, Size: e.Size, Linkname: e.Linkname,
			RdevMajor: e.RdevMajor, RdevMinor: e.RdevMinor}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if e.Offset != -1 || e.DevMajor != 0 || e.DevMinor != 0 {
			t.Errorf("%s: offset %d, dev %d,%d", name, e.Offset, e.DevMajor, e.DevMinor)
		}
	}
	if a, b, c := inode("bin/busybox"), inode("a/link1"), inode("sp ace/link3"); a != b || b != c {
		t.Errorf("hard-link group inodes %d %d %d", a, b, c)
	}
	if inode(".") != 0 || inode("a") != 1 || inode("a/link1") != inode("a/b/f")+1 || inode("bin") != inode("a/link1")+1 {
		t.Errorf("inodes not numbered in sorted order from 0: . %d, a %d, a/b/f %d, a/link1 %d, bin %d",
			inode("."), inode("a"), inode("a/b/f"), inode("a/link1"), inode("bin"))
	}
	seen := map[uint64]string{}
	for _, e := range e1 {
		if k, ok := e.LinkKey(); ok && (k.Inode == inode("bin/busybox") || k.Inode == inode("dev/initctl")) {
			continue
		}
		if prev, dup := seen[e.Inode]; dup {
			t.Errorf("%s and %s share inode %d", prev, e.Name, e.Inode)
		}
		seen[e.Inode] = e.Name
	}

	dst := filepath.Join(t.TempDir(), "dst")
	mustDo(t, os.Mkdir(dst, 0o700))
	writeDirTree(t, dst, DirWriterOptions{}, e1, d1)
	e2, d2 := readDirTree(t, dst)
	if diff := cmp.Diff(e1, e2, ignoreOffset); diff != "" {
		t.Errorf("entries after DirWriter (-src +dst):\n%s", diff)
	}
	if diff := cmp.Diff(d1, d2); diff != "" {
		t.Errorf("data after DirWriter (-src +dst):\n%s", diff)
	}

	same := func(a, b string) bool {
		fa, err1 := os.Lstat(filepath.Join(dst, a))
		fb, err2 := os.Lstat(filepath.Join(dst, b))
		return err1 == nil && err2 == nil && os.SameFile(fa, fb)
	}
	if !same("bin/busybox", "a/link1") || !same("bin/busybox", "sp ace/link3") {
		t.Error("hard-link group is not one file in the output")
	}
	if inode("dev/initctl") != inode("dev/initctl.link") || !same("dev/initctl", "dev/initctl.link") {
		t.Error("the linked fifos are not one file")
	}
	for _, d := range []string{".", "a", "a/b", "sticky", "empty dir"} {
		s, _ := os.Lstat(filepath.Join(src, d))
		o, err := os.Lstat(filepath.Join(dst, d))
		if err != nil || !o.ModTime().Equal(s.ModTime()) {
			t.Errorf("directory %s mtime %v, want %v (%v)", d, o.ModTime(), s.ModTime(), err)
		}
	}
}

func TestDirWriterEscapes(t *testing.T) {
	mtime := dirTestTime
	file := func(name string) *Entry {
		return &Entry{Name: name, Type: TypeRegular, Mode: 0o644, ModTime: mtime, Size: 4, Nlink: 1}
	}
	symlink := func(name, target string) *Entry {
		return &Entry{Name: name, Type: TypeSymlink, Mode: 0o777, ModTime: mtime, Linkname: target, Nlink: 1}
	}
	unique := fmt.Sprintf("rootfs-trim-escape-%d", os.Getpid())
	tests := []struct {
		name    string
		entries func(outside string) []*Entry
		// probe is where an escaped write would land, relative to dst
		// unless absolute.
		probe func(outside string) string
	}{
		{
			name:    "absolute symlink to /",
			entries: func(string) []*Entry { return []*Entry{symlink("x", "/"), file("x/" + unique)} },
			probe:   func(string) string { return "/" + unique },
		},
		{
			name:    "absolute symlink to a directory outside",
			entries: func(o string) []*Entry { return []*Entry{symlink("x", o), file("x/" + unique)} },
			probe:   func(o string) string { return filepath.Join(o, unique) },
		},
		{
			name:    "relative symlink climbing out",
			entries: func(string) []*Entry { return []*Entry{symlink("x", "../../.."), file("x/" + unique)} },
			probe:   func(string) string { return "../../../" + unique },
		},
		{
			name: "relative symlink to the outside directory",
			entries: func(o string) []*Entry {
				return []*Entry{symlink("x", "../outside"), file("x/" + unique)}
			},
			probe: func(o string) string { return filepath.Join(o, unique) },
		},
		{
			name: "chain of symlinks",
			entries: func(string) []*Entry {
				return []*Entry{{Name: "d", Type: TypeDir, Mode: 0o755}, symlink("d/up", ".."), symlink("d/up2", "up/.."),
					{Name: "d/up2/" + unique, Type: TypeDir, Mode: 0o755}}
			},
			probe: func(string) string { return "../" + unique },
		},
		{
			name: "directory through symlink",
			entries: func(o string) []*Entry {
				return []*Entry{symlink("x", o), {Name: "x/" + unique, Type: TypeDir, Mode: 0o755}}
			},
			probe: func(o string) string { return filepath.Join(o, unique) },
		},
		{
			name: "symlink through symlink",
			entries: func(o string) []*Entry {
				return []*Entry{symlink("x", o), symlink("x/"+unique, "/etc/passwd")}
			},
			probe: func(o string) string { return filepath.Join(o, unique) },
		},
		{
			name: "fifo through symlink",
			entries: func(o string) []*Entry {
				return []*Entry{symlink("x", o), {Name: "x/" + unique, Type: TypeFifo, Mode: 0o600}}
			},
			probe: func(o string) string { return filepath.Join(o, unique) },
		},
		{
			name: "hard link to a file outside",
			entries: func(o string) []*Entry {
				return []*Entry{symlink("x", o), {Name: "stolen", Type: TypeHardlink, Linkname: "x/secret"}}
			},
			probe: func(string) string { return "stolen" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dst, outside := filepath.Join(base, "a", "b", "dst"), filepath.Join(base, "a", "b", "outside")
			mustDo(t, os.MkdirAll(dst, 0o755))
			mustDo(t, os.MkdirAll(outside, 0o755))
			mustDo(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
			probe := tc.probe(outside)
			if !filepath.IsAbs(probe) {
				probe = filepath.Join(dst, probe)
			}
			if _, err := os.Lstat(probe); err == nil {
				t.Fatalf("%s exists before the test", probe)
			}

			w, err := NewDirWriter(dst, DirWriterOptions{CreateParents: true})
			mustDo(t, err)
			entries := tc.entries(outside)
			var werr error
			for _, e := range entries {
				if werr = w.WriteHeader(e); werr != nil {
					break
				}
				io.WriteString(w, "evil"[:e.Size])
			}
			w.Close()
			if werr == nil {
				t.Errorf("writing %q succeeded", entries[len(entries)-1].Name)
			} else if last := entries[len(entries)-1].Name; !strings.Contains(werr.Error(), fmt.Sprintf("%q", last)) {
				t.Errorf("error %q does not name %q", werr, last)
			}
			if _, err := os.Lstat(probe); err == nil {
				os.RemoveAll(probe)
				t.Fatalf("%s was created outside the root", probe)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 1 {
				t.Errorf("outside directory now holds %v", ents)
			}
		})
	}
}

func TestDirWriterSymlinkInside(t *testing.T) {
	// A symlink that stays inside the tree is followed, as by the kernel.
	dst := t.TempDir()
	entries := []*Entry{
		{Name: "usr", Type: TypeDir, Mode: 0o755},
		{Name: "usr/lib", Type: TypeDir, Mode: 0o755},
		{Name: "lib", Type: TypeSymlink, Linkname: "usr/lib"},
		{Name: "lib/f", Type: TypeRegular, Mode: 0o644, Size: 2},
	}
	writeDirTree(t, dst, DirWriterOptions{}, entries, map[string]string{"lib/f": "ok"})
	b, err := os.ReadFile(filepath.Join(dst, "usr/lib/f"))
	if err != nil || string(b) != "ok" {
		t.Errorf("usr/lib/f = %q, %v", b, err)
	}
}

func TestDirWriterUnsafeNames(t *testing.T) {
	tests := []*Entry{
		{Name: "../evil", Type: TypeRegular},
		{Name: "/etc/evil", Type: TypeRegular},
		{Name: "a/../../evil", Type: TypeDir},
		{Name: "./../evil", Type: TypeSymlink, Linkname: "x"},
		{Name: "h", Type: TypeHardlink, Linkname: "../evil"},
		{Name: "h", Type: TypeHardlink, Linkname: "/etc/passwd"},
	}
	for _, e := range tests {
		t.Run(e.Name+" -> "+e.Linkname, func(t *testing.T) {
			dst := t.TempDir()
			w, err := NewDirWriter(dst, DirWriterOptions{})
			mustDo(t, err)
			defer w.Close()
			err = w.WriteHeader(e)
			if !errors.Is(err, pathx.ErrUnsafePath) {
				t.Fatalf("err = %v, want pathx.ErrUnsafePath", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", e.Name)) {
				t.Errorf("error %q does not name the entry", err)
			}
		})
	}
}

func TestDirWriterErrors(t *testing.T) {
	reg := func(name string, size int64) *Entry {
		return &Entry{Name: name, Type: TypeRegular, Mode: 0o644, Size: size, Nlink: 1}
	}
	tests := []struct {
		name    string
		opts    DirWriterOptions
		entries []*Entry
		data    string // written for each entry with a Size
		wantErr string // "" for success
		check   func(t *testing.T, dst string)
	}{
		{
			name:    "missing parent",
			entries: []*Entry{reg("nodir/f", 0)},
			wantErr: `"nodir/f": parent directory "nodir" does not exist`,
		},
		{
			name:    "missing parent created on request",
			opts:    DirWriterOptions{CreateParents: true},
			entries: []*Entry{reg("no/dir/f", 1)},
			data:    "x",
			check: func(t *testing.T, dst string) {
				if _, err := os.Stat(filepath.Join(dst, "no/dir/f")); err != nil {
					t.Error(err)
				}
			},
		},
		{
			name:    "parent is a file",
			entries: []*Entry{reg("f", 0), reg("f/g", 0)},
			wantErr: `"f/g": parent "f" is not a directory`,
		},
		{
			name:    "directory in the way",
			entries: []*Entry{{Name: "d", Type: TypeDir, Mode: 0o755}, reg("d", 0)},
			wantErr: `"d": a directory is in the way`,
		},
		{
			name:    "short data",
			entries: []*Entry{reg("short", 10), reg("next", 0)},
			data:    "12345",
			wantErr: `"short": data ends 5 bytes short of 10`,
		},
		{
			name:    "too much data",
			entries: []*Entry{reg("f", 2)},
			data:    "123",
			wantErr: `"f": more than its 2 bytes`,
		},
		{
			name:    "root must be a directory",
			entries: []*Entry{reg(".", 0)},
			wantErr: `".": the root can only be a directory`,
		},
		{
			name: "file and symlink are replaced, not followed",
			entries: []*Entry{reg("f", 3), reg("f", 3),
				{Name: "l", Type: TypeSymlink, Linkname: "f"}, reg("l", 3),
				{Name: "d", Type: TypeDir, Mode: 0o700}, {Name: "./d/", Type: TypeDir, Mode: 0o750}},
			data: "new",
			check: func(t *testing.T, dst string) {
				for _, n := range []string{"f", "l"} {
					fi, err := os.Lstat(filepath.Join(dst, n))
					if err != nil || !fi.Mode().IsRegular() {
						t.Errorf("%s: %v %v", n, fi, err)
					}
				}
				if fi, err := os.Stat(filepath.Join(dst, "d")); err != nil || fi.Mode().Perm() != 0o750 {
					t.Errorf("d: %v %v", fi, err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			w, err := NewDirWriter(dst, tc.opts)
			mustDo(t, err)
			err = func() error {
				for _, e := range tc.entries {
					if err := w.WriteHeader(e); err != nil {
						return err
					}
					if e.Size > 0 {
						if _, err := io.WriteString(w, tc.data); err != nil {
							return err
						}
					}
				}
				return w.Close()
			}()
			w.Close()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %s", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, dst)
			}
		})
	}
}

func TestDirWriterSkips(t *testing.T) {
	entries := []*Entry{
		{Name: "dev", Type: TypeDir, Mode: 0o755},
		{Name: "dev/log", Type: TypeSocket, Mode: 0o666},
		{Name: "dev/console", Type: TypeChar, Mode: 0o600, RdevMajor: 5, RdevMinor: 1},
		{Name: "dev/null", Type: TypeChar, Mode: 0o666, RdevMajor: 1, RdevMinor: 3},
	}
	t.Run("socket skipped, devices need root", func(t *testing.T) {
		dst := t.TempDir()
		w, err := NewDirWriter(dst, DirWriterOptions{})
		mustDo(t, err)
		dw := w
		dw.mknod = false // as a non-root user
		mustDo(t, w.WriteHeader(entries[0]))
		mustDo(t, w.WriteHeader(entries[1]))
		if err := w.WriteHeader(entries[2]); err == nil || !strings.Contains(err.Error(), `"dev/console"`) {
			t.Errorf("err = %v", err)
		}
		w.Close()
		if ents, _ := os.ReadDir(filepath.Join(dst, "dev")); len(ents) != 0 {
			t.Errorf("dev holds %v", ents)
		}
	})
	t.Run("devices created as root", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("mknod needs root")
		}
		dst := t.TempDir()
		w, err := NewDirWriter(dst, DirWriterOptions{})
		mustDo(t, err)
		emitEntries(t, w, entries, nil)
		var st unix.Stat_t
		mustDo(t, unix.Lstat(filepath.Join(dst, "dev/console"), &st))
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != 5 || unix.Minor(st.Rdev) != 1 || st.Mode&0o7777 != 0o600 {
			t.Errorf("dev/console: mode %o rdev %d,%d", st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
		}
	})
}

func TestDirWriterCpioLinks(t *testing.T) {
	member := func(name string, ino uint64, size int64) *Entry {
		return &Entry{Name: name, Type: TypeRegular, Mode: 0o4555, Inode: ino, Nlink: 3, Size: size, ModTime: dirTestTime}
	}
	entries := []*Entry{
		member("a", 7, 0), member("b", 7, 0), member("c", 7, 4),
		// A member boundary ends the group scope: same inode, new file.
		{Name: "TRAILER!!!", Type: TypeTrailer},
		{Name: "d", Type: TypeRegular, Mode: 0o644, Inode: 7, Nlink: 2, Size: 3},
		{Name: "p1", Type: TypeFifo, Mode: 0o600, Inode: 9, Nlink: 2},
		{Name: "p2", Type: TypeFifo, Mode: 0o600, Inode: 9, Nlink: 2},
	}
	dst := t.TempDir()
	w, err := NewDirWriter(dst, DirWriterOptions{})
	mustDo(t, err)
	dw := w
	dw.owners, dw.mknod = false, false // the read-only group data path of a non-root user
	emitEntries(t, w, entries, map[string]string{"c": "data", "d": "new"})

	stat := func(n string) os.FileInfo {
		fi, err := os.Lstat(filepath.Join(dst, n))
		mustDo(t, err)
		return fi
	}
	if !os.SameFile(stat("a"), stat("b")) || !os.SameFile(stat("a"), stat("c")) {
		t.Error("a, b, c are not one file")
	}
	if os.SameFile(stat("a"), stat("d")) {
		t.Error("d was linked across a trailer")
	}
	if !os.SameFile(stat("p1"), stat("p2")) {
		t.Error("fifo group not linked")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a")); string(b) != "data" {
		t.Errorf("a = %q", b)
	}
	if m := stat("a").Mode(); m.Perm() != 0o555 || m&os.ModeSetuid == 0 {
		t.Errorf("a mode %v", m)
	}
	if !stat("b").ModTime().Equal(dirTestTime) {
		t.Errorf("b mtime %v", stat("b").ModTime())
	}
}

func TestDirWriterRootAndOwners(t *testing.T) {
	dst := t.TempDir()
	mt := dirTestTime.Add(123456789)
	entries := []*Entry{
		{Name: ".", Type: TypeDir, Mode: 0o750, ModTime: mt},
		{Name: "su", Type: TypeRegular, Mode: 0o4755, UID: 1234, GID: 5678, Size: 2, ModTime: mt},
		{Name: "l", Type: TypeSymlink, Linkname: "/nonexistent", UID: 1234, GID: 5678, ModTime: mt},
	}
	if os.Geteuid() != 0 {
		for _, e := range entries {
			e.UID, e.GID = os.Getuid(), os.Getgid()
		}
	}
	writeDirTree(t, dst, DirWriterOptions{}, entries, map[string]string{"su": "#!"})
	got, _ := readDirTree(t, dst)
	for _, e := range got {
		e.Inode, e.Nlink = 0, 0
	}
	want := []*Entry{
		{Name: ".", Type: TypeDir, Mode: 0o750, ModTime: mt, UID: entries[0].UID, GID: entries[0].GID, Offset: -1},
		{Name: "l", Type: TypeSymlink, Mode: 0o777, Linkname: "/nonexistent", UID: entries[2].UID, GID: entries[2].GID, ModTime: mt, Offset: -1},
		{Name: "su", Type: TypeRegular, Mode: 0o4755, UID: entries[1].UID, GID: entries[1].GID, Size: 2, ModTime: mt, Offset: -1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDirReaderReplacedFile(t *testing.T) {
	src := t.TempDir()
	mustDo(t, os.WriteFile(filepath.Join(src, "f"), []byte("hello"), 0o644))
	r, err := NewDirReader(src, DirReaderOptions{})
	mustDo(t, err)
	for {
		e, err := r.Next()
		mustDo(t, err)
		if e.Name == "f" {
			break
		}
	}
	// Both exist at once, so the inode cannot be reused.
	mustDo(t, os.WriteFile(filepath.Join(src, "g"), []byte("other"), 0o644))
	mustDo(t, os.Rename(filepath.Join(src, "g"), filepath.Join(src, "f")))
	if _, err := io.ReadAll(r); err == nil || !strings.Contains(err.Error(), "replaced") || !strings.Contains(err.Error(), "/f") {
		t.Errorf("err = %v", err)
	}
	r.Close()
}

// newcRecord is one member of a newc archive, as parsed by parseNewcForTest.
type newcRecord struct {
	Name                                     string
	Ino, Mode, UID, GID, Nlink, Mtime, Size  uint32
	DevMajor, DevMinor, RdevMajor, RdevMinor uint32
	Data                                     string
}

// parseNewcForTest is a minimal newc parser, independent of CpioReader, so
// that the comparison with GNU cpio checks DirReader alone.
func parseNewcForTest(t *testing.T, b []byte) []newcRecord {
	t.Helper()
	pad4 := func(n int) int { return (n + 3) &^ 3 }
	var out []newcRecord
	for off := 0; ; {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at %d", off)
		}
		var f [13]uint32
		for i := range f {
			var v uint32
			if _, err := fmt.Sscanf(string(b[off+6+8*i:off+14+8*i]), "%08x", &v); err != nil {
				t.Fatalf("header at %d: %v", off, err)
			}
			f[i] = v
		}
		namesize, size := int(f[11]), int(f[6])
		name := string(b[off+110 : off+110+namesize-1])
		off = pad4(off + 110 + namesize)
		data := string(b[off : off+size])
		off = pad4(off + size)
		if name == "TRAILER!!!" {
			return out
		}
		out = append(out, newcRecord{Name: name, Ino: f[0], Mode: f[1], UID: f[2], GID: f[3], Nlink: f[4],
			Mtime: f[5], Size: f[6], DevMajor: f[7], DevMinor: f[8], RdevMajor: f[9], RdevMinor: f[10], Data: data})
	}
}

// TestDirReaderMatchesGNUCpio checks that the entries are those of
// Buildroot's `find . | LC_ALL=C sort | cpio -o -H newc --reproducible`: same
// order, inode numbers, link counts and hard-link data placement.
func TestDirReaderMatchesGNUCpio(t *testing.T) {
	requireTool(t, "cpio")
	src := makeDirTestTree(t)
	cmd := exec.Command("sh", "-c", "find . | LC_ALL=C sort | cpio --quiet -o -H newc --reproducible")
	cmd.Dir = src
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cpio: %v", err)
	}
	want := parseNewcForTest(t, out)

	entries, data := readDirTree(t, src)
	var got []newcRecord
	for _, e := range entries {
		r := newcRecord{Name: e.Name, Ino: uint32(e.Inode), Mode: e.UnixMode(), UID: uint32(e.UID), GID: uint32(e.GID),
			Nlink: e.Nlink, Mtime: uint32(e.ModTime.Unix()), Size: uint32(e.Size),
			RdevMajor: e.RdevMajor, RdevMinor: e.RdevMinor, Data: data[e.Name]}
		if e.Type == TypeSymlink {
			// newc stores the target as the data.
			r.Size, r.Data = uint32(len(e.Linkname)), e.Linkname
		}
		got = append(got, r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DirReader vs GNU cpio (-cpio +ours):\n%s", diff)
	}
}

// TestDirReaderNamesOnly lists the test tree without lstat: the same names
// in the same order with the same types; after Stat, every field of the
// full reader but the hard-link ones, and the same data.
func TestDirReaderNamesOnly(t *testing.T) {
	src := makeDirTestTree(t)
	full, fullData := readDirTree(t, src)
	byName := map[string]*Entry{}
	var wantNames []string
	for _, e := range full {
		byName[e.Name] = e
		wantNames = append(wantNames, e.Name)
	}
	slices.Sort(wantNames) // the full reader moves hard-link groups

	r, err := NewDirReader(src, DirReaderOptions{NamesOnly: true})
	mustDo(t, err)
	var names []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		mustDo(t, err)
		names = append(names, e.Name)
		want := byName[e.Name]
		if want == nil {
			t.Fatalf("%q: not in the full listing", e.Name)
		}
		if e.Type != want.Type {
			t.Errorf("%s: type %s before Stat, want %s", e.Name, e.Type, want.Type)
		}
		if e.Type == TypeRegular && e.Name != "." {
			if _, err := r.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "before Stat") {
				t.Errorf("%s: Read before Stat: %v", e.Name, err)
			}
		}
		mustDo(t, r.Stat(e))
		got, wantE := *e, *want
		got.Inode, got.Nlink, wantE.Inode, wantE.Nlink = 0, 0, 0, 0
		if want.Type == TypeRegular && want.Nlink >= 2 {
			wantE.Size = got.Size // the full reader keeps data on one group member
		}
		if diff := cmp.Diff(wantE, got); diff != "" {
			t.Errorf("%s: after Stat (-full +namesOnly):\n%s", e.Name, diff)
		}
		if e.Type == TypeRegular {
			b, err := io.ReadAll(r)
			mustDo(t, err)
			if want := fullData[e.Name]; want != "" && string(b) != want {
				t.Errorf("%s: data %q, want %q", e.Name, b, want)
			}
		}
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// TestDirReaderNamesOnlyChangedType: an entry swapped for another type
// between the listing and Stat is an error, not a wrong entry.
func TestDirReaderNamesOnlyChangedType(t *testing.T) {
	src := t.TempDir()
	mustDo(t, os.WriteFile(filepath.Join(src, "f"), []byte("hello"), 0o644))
	r, err := NewDirReader(src, DirReaderOptions{NamesOnly: true})
	mustDo(t, err)
	defer r.Close()
	for {
		e, err := r.Next()
		mustDo(t, err)
		if e.Name != "f" {
			continue
		}
		mustDo(t, os.Remove(filepath.Join(src, "f")))
		mustDo(t, os.Symlink("/etc/passwd", filepath.Join(src, "f")))
		if err := r.Stat(e); err == nil || !strings.Contains(err.Error(), "changed from file to symlink") {
			t.Errorf("Stat: %v", err)
		}
		return
	}
}

// TestDirReaderWithoutOpenat2 reads the test tree through os.Root alone,
// as on kernels without openat2, and expects what openat2 gave.
func TestDirReaderWithoutOpenat2(t *testing.T) {
	src := makeDirTestTree(t)
	want, wantData := readDirTree(t, src)
	openat2Missing.Store(true)
	defer openat2Missing.Store(false)
	got, gotData := readDirTree(t, src)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-openat2 +os.Root):\n%s", diff)
	}
	if diff := cmp.Diff(wantData, gotData); diff != "" {
		t.Errorf("data (-openat2 +os.Root):\n%s", diff)
	}
}
