package archive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// Hard-link groups crafted to reach through a symlink or into a device
// (issue 12): the kernel links only members of one file type, and never
// a directory or a symlink; DirWriter must do no more, and must never
// chmod, open or write through what a later entry put at a member's name.
func TestDirWriterHardLinkTypes(t *testing.T) {
	outsideDir := t.TempDir()
	outside := filepath.Join(outsideDir, "passwd")
	const outsideData = "root:x:0:0::/root:/bin/sh\n"
	member := func(name string, typ Type, mode uint32, size int64) *Entry {
		return &Entry{Name: name, Type: typ, Mode: mode, Size: size, Inode: 77, Nlink: 3, ModTime: dirTestTime}
	}
	symlink := func(name, target string) *Entry {
		e := member(name, TypeSymlink, 0o777, 0)
		e.Linkname = target
		return e
	}
	tests := []struct {
		name    string
		root    bool // needs device nodes
		entries []*Entry
		data    map[string]string
		wantErr string // the entry named, or "" for success
		check   func(t *testing.T, tree string)
	}{{
		// min1.cpio: a fifo of the group is not linked to the symlink
		// that replaced the regular member, so its chmod stays inside.
		name: "fifo after a symlink at the file's name",
		entries: []*Entry{
			member("a", TypeRegular, 0o644, 0),
			symlink("a", outside),
			member("b", TypeFifo, 0o6777, 0),
		},
		check: func(t *testing.T, tree string) {
			if fi, err := os.Lstat(filepath.Join(tree, "b")); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
				t.Errorf("b: %v %v, want a fifo", fi, err)
			}
		},
	}, {
		// Same type, same inode: the later regular member would be linked
		// to what now stands at "a", a symlink to a file in the tree, and
		// its data written there.
		name: "regular member after a symlink at the first member's name",
		entries: []*Entry{
			{Name: "t", Type: TypeRegular, Mode: 0o644, Size: 5, Nlink: 1, Inode: 5, ModTime: dirTestTime},
			member("a", TypeRegular, 0o644, 0),
			symlink("a", "t"),
			member("c", TypeRegular, 0o6755, 6),
		},
		data:    map[string]string{"t": "keep\n", "c": "PWNED\n"},
		wantErr: `entry "c"`,
		check: func(t *testing.T, tree string) {
			if b, _ := os.ReadFile(filepath.Join(tree, "t")); string(b) != "keep\n" {
				t.Errorf("t now holds %q", b)
			}
			if fi, _ := os.Stat(filepath.Join(tree, "t")); fi.Mode() != 0o644 {
				t.Errorf("t is now %v", fi.Mode())
			}
		},
	}, {
		// min2.cpio: a device and a regular file with data sharing an
		// inode are two files; the data never goes into the device.
		name: "regular member with data after a device",
		root: true,
		entries: []*Entry{
			{Name: "x", Type: TypeChar, Mode: 0o600, Inode: 88, Nlink: 2, RdevMajor: 1, RdevMinor: 3},
			{Name: "y", Type: TypeRegular, Mode: 0o644, Size: 6, Inode: 88, Nlink: 2},
		},
		data: map[string]string{"y": "PWNED\n"},
		check: func(t *testing.T, tree string) {
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(tree, "y"), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
				t.Errorf("y: mode %o nlink %d (%v), want a regular file of its own", st.Mode, st.Nlink, err)
			}
			if b, _ := os.ReadFile(filepath.Join(tree, "y")); string(b) != "PWNED\n" {
				t.Errorf("y holds %q", b)
			}
		},
	}, {
		// Directories and symlinks are never linked, whatever their
		// inode; the regular file of the same inode stays a file.
		name: "directory and symlinks sharing an inode with files",
		entries: []*Entry{
			member("d", TypeDir, 0o755, 0),
			symlink("s1", "d"),
			symlink("s2", "elsewhere"),
			member("f", TypeRegular, 0o600, 2),
		},
		data: map[string]string{"f": "f\n"},
		check: func(t *testing.T, tree string) {
			if l, _ := os.Readlink(filepath.Join(tree, "s2")); l != "elsewhere" {
				t.Errorf("s2 -> %q", l)
			}
			if fi, err := os.Lstat(filepath.Join(tree, "f")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("f: %v %v", fi, err)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("device nodes need root")
			}
			mustDo(t, os.WriteFile(outside, []byte(outsideData), 0o644))
			mustDo(t, os.Chmod(outside, 0o644))
			tree := t.TempDir()
			w, err := NewDirWriter(tree, DirWriterOptions{})
			mustDo(t, err)
			err = writeEntries(w, tc.entries, tc.data)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one naming %s", err, tc.wantErr)
			}
			if fi, err := os.Stat(outside); err != nil || fi.Mode() != 0o644 {
				t.Errorf("the file outside the tree is now %v (%v)", fi.Mode(), err)
			}
			if b, _ := os.ReadFile(outside); string(b) != outsideData {
				t.Errorf("the file outside the tree now holds %q", b)
			}
			tc.check(t, tree)
		})
	}
}

// writeEntries writes entries and their data, stopping at the first error.
func writeEntries(w Writer, entries []*Entry, data map[string]string) error {
	for _, e := range entries {
		if err := w.WriteHeader(e); err != nil {
			return err
		}
		if d := data[e.Name]; d != "" && e.Type == TypeRegular {
			if _, err := w.Write([]byte(d)); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestDirWriterWithoutFchmodat2 writes as on kernels before 6.6 (the boot
// test's 6.1), where modes go through /proc/self/fd: the same protections
// and the same tree.
func TestDirWriterWithoutFchmodat2(t *testing.T) {
	fsat.NoFchmodat2.Store(true)
	defer fsat.NoFchmodat2.Store(false)
	t.Run("hard-link types", TestDirWriterHardLinkTypes)
	t.Run("round trip", TestDirRoundTrip)
	t.Run("cpio links", TestDirWriterCpioLinks)
}

// A tar hard link to a directory or a symlink names no file that can be
// linked: it is refused with the entry's name, for every destination,
// never turned into an empty file.
func TestCopyRefusesHardLinksToDirsAndSymlinks(t *testing.T) {
	targets := map[string]*tar.Header{
		"directory": {Name: "etc/d/", Typeflag: tar.TypeDir, Mode: 0o755},
		"symlink":   {Name: "etc/s", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow", Mode: 0o777},
	}
	for what, target := range targets {
		for _, dest := range []Kind{KindTar, KindCpio, KindDir} {
			t.Run(what+"/"+dest.String(), func(t *testing.T) {
				link := &tar.Header{Name: "etc/l", Typeflag: tar.TypeLink, Linkname: strings.TrimSuffix(target.Name, "/"), Mode: 0o644}
				in := tarOf(t, &tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, target, link)
				opt := CopyOptions{Dest: dest}
				var w Writer
				switch dest {
				case KindTar:
					w = NewTarWriter(io.Discard, tar.FormatPAX)
				case KindCpio:
					scan, err := ScanLinks(NewTarReader(bytes.NewReader(in.Bytes())))
					mustDo(t, err)
					opt.Links = scan
					w = NewCpioWriter(io.Discard, Newc)
				case KindDir:
					tree := t.TempDir()
					dw, err := NewDirWriter(tree, DirWriterOptions{})
					mustDo(t, err)
					defer dw.Close()
					w = dw
				}
				err := Copy(w, NewTarReader(in), opt)
				want := `hard link "etc/l": target "etc/` + strings.TrimPrefix(strings.TrimSuffix(target.Name, "/"), "etc/") + `" is a ` + what
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
			})
		}
	}
}

// A tree is held whole until sorted, so what each entry costs decides
// the memory of reading a large one (issue 12: 10^6 entries took 379 MB
// to list, about 216 bytes an entry of heap). bench/tree-rss.sh measures
// the whole process.
func TestDirReaderBytesPerEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 20,000 files")
	}
	root := t.TempDir()
	const dirs, files = 20, 1000
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", d))
		mustDo(t, os.Mkdir(dir, 0o755))
		for f := range files {
			mustDo(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", f)), nil, 0o644))
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewDirReader(root, DirReaderOptions{})
	mustDo(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / (dirs * (files + 1))
	t.Logf("%d bytes of heap per entry", per)
	if per > 150 {
		t.Errorf("%d bytes of heap per entry, want at most 150", per)
	}
}

// tar output groups hard links as DirWriter does: by (dev, inode) and
// type. A fifo that shares a symlink's and a file's inode number stays a
// fifo instead of becoming a tar hard link to one of them, which GNU tar
// and bsdtar would make into a link to whatever "a" is by then.
func TestCopyToTarGroupsByType(t *testing.T) {
	var in bytes.Buffer
	cw := NewCpioWriter(&in, Newc)
	entries := []*Entry{
		{Name: ".", Type: TypeDir, Mode: 0o755, Nlink: 2, Inode: 1},
		{Name: "a", Type: TypeRegular, Mode: 0o644, Nlink: 3, Inode: 77},
		{Name: "a", Type: TypeSymlink, Mode: 0o777, Nlink: 3, Inode: 77, Linkname: "/etc/passwd"},
		{Name: "b", Type: TypeFifo, Mode: 0o6777, Nlink: 3, Inode: 77},
	}
	for _, e := range entries {
		mustDo(t, cw.WriteHeader(e))
	}
	mustDo(t, cw.Close())
	var out bytes.Buffer
	tw := NewTarWriter(&out, tar.FormatPAX)
	mustDo(t, Copy(tw, NewCpioReader(&in), CopyOptions{Dest: KindTar}))
	mustDo(t, tw.Close())
	got := map[string][]byte{}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		mustDo(t, err)
		got[h.Name] = append(got[h.Name], h.Typeflag)
	}
	want := map[string][]byte{".": {tar.TypeDir}, "a": {tar.TypeSymlink, tar.TypeReg}, "b": {tar.TypeFifo}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("type flags %q, want %q", got, want)
	}
}

// FuzzCopyLinks: whatever newc input the reader accepts, Copy to tar, to
// newc with members dropped, and tar to newc again never panics, and a tar
// hard link it writes always names an earlier file, fifo or device, never
// a directory, a symlink or nothing.
func FuzzCopyLinks(f *testing.F) {
	seed := func(entries ...*Entry) []byte {
		var b bytes.Buffer
		w := NewCpioWriter(&b, Newc)
		for _, e := range entries {
			w.WriteHeader(e)
			w.Write(bytes.Repeat([]byte("d"), int(e.Size)))
		}
		w.Close()
		return b.Bytes()
	}
	root := &Entry{Name: ".", Type: TypeDir, Mode: 0o755, Nlink: 2, Inode: 1}
	f.Add(seed(root,
		&Entry{Name: "a", Type: TypeRegular, Mode: 0o644, Nlink: 3, Inode: 77},
		&Entry{Name: "a", Type: TypeSymlink, Mode: 0o777, Nlink: 3, Inode: 77, Linkname: "/x"},
		&Entry{Name: "b", Type: TypeFifo, Mode: 0o6777, Nlink: 3, Inode: 77}))
	f.Add(seed(root,
		&Entry{Name: "f", Type: TypeRegular, Mode: 0o644, Nlink: 2, Inode: 5, Size: 3},
		&Entry{Name: "h", Type: TypeRegular, Mode: 0o644, Nlink: 2, Inode: 5},
		&Entry{Name: "g", Type: TypeRegular, Mode: 0o644, Nlink: 3, Inode: 6},
		&Entry{Name: "gg", Type: TypeRegular, Mode: 0o644, Nlink: 3, Inode: 6, Size: 4},
		&Entry{Name: "ggg", Type: TypeRegular, Mode: 0o644, Nlink: 3, Inode: 6}))
	f.Fuzz(fuzzCopyBody)
}

func fuzzCopyBody(t *testing.T, in []byte) {
	// Drops every entry whose name has an odd length: data carriers and
	// not, first members and last.
	decide := func(e *Entry) (Action, error) {
		if len(e.Name)%2 == 1 && e.Name != "." {
			return Drop, nil
		}
		return Keep, nil
	}
	{
		for _, d := range []func(*Entry) (Action, error){nil, decide} {
			var tarOut bytes.Buffer
			tw := NewTarWriter(&tarOut, tar.FormatPAX)
			if Copy(tw, NewCpioReader(bytes.NewReader(in)), CopyOptions{Dest: KindTar, Decide: d}) != nil || tw.Close() != nil {
				continue
			}
			kinds := map[string]byte{}
			tr := tar.NewReader(bytes.NewReader(tarOut.Bytes()))
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("reading our tar: %v", err)
				}
				name, err := pathx.Clean(h.Name)
				if err != nil {
					break // written as the input named it; not ours to judge
				}
				if h.Typeflag == tar.TypeLink {
					target, _ := pathx.Clean(h.Linkname)
					switch kinds[target] {
					case tar.TypeReg, tar.TypeFifo, tar.TypeChar, tar.TypeBlock:
					default:
						t.Fatalf("hard link %q to %q, which is %q", h.Name, h.Linkname, kinds[target])
					}
					continue
				}
				kinds[name] = h.Typeflag
			}
			scan, err := ScanLinks(NewTarReader(bytes.NewReader(tarOut.Bytes())))
			if err != nil {
				continue
			}
			cw := NewCpioWriter(io.Discard, Newc)
			if err := Copy(cw, NewTarReader(bytes.NewReader(tarOut.Bytes())), CopyOptions{Dest: KindCpio, Links: scan}); err == nil {
				cw.Close()
			}
		}
		cw := NewCpioWriter(io.Discard, Newc)
		if err := Copy(cw, NewCpioReader(bytes.NewReader(in)), CopyOptions{Dest: KindCpio, Decide: decide}); err == nil {
			cw.Close()
		}
	}
}
