package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// newcHeader builds one header by hand, independently of CpioWriter.
func newcHeader(magic string, ino, mode, uid, gid, nlink, mtime, size, dmaj, dmin, rmaj, rmin, check uint32, name string) string {
	h := magic + fmt.Sprintf("%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, uid, gid, nlink, mtime, size, dmaj, dmin, rmaj, rmin, uint32(len(name)+1), check) + name + "\x00"
	for len(h)%4 != 0 {
		h += "\x00"
	}
	return h
}

func pad(s string) string {
	for len(s)%4 != 0 {
		s += "\x00"
	}
	return s
}

func TestNewcHexFixture(t *testing.T) {
	mt := uint32(1740830400)
	raw := newcHeader("070701", 1, 0o40755, 0, 0, 2, mt, 0, 0, 0, 0, 0, 0, ".") +
		newcHeader("070701", 2, 0o20622, 0, 5, 1, mt, 0, 8, 1, 5, 1, 0, "dev/console") +
		newcHeader("070701", 3, 0o104755, 0, 0, 1, mt, 5, 0, 0, 0, 0, 0, "bin/su") + pad("hello") +
		newcHeader("070701", 4, 0o120777, 0, 0, 1, mt, 6, 0, 0, 0, 0, 0, "bin/sh") + pad("../bin") +
		newcHeader("070701", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)
	when := time.Unix(int64(mt), 0).UTC()
	want := []*Entry{
		{Name: ".", Type: TypeDir, Mode: 0o755, Inode: 1, Nlink: 2, ModTime: when},
		{Name: "dev/console", Type: TypeChar, Mode: 0o622, GID: 5, Inode: 2, Nlink: 1, ModTime: when, DevMajor: 8, DevMinor: 1, RdevMajor: 5, RdevMinor: 1},
		{Name: "bin/su", Type: TypeRegular, Mode: 0o4755, Inode: 3, Nlink: 1, ModTime: when, Size: 5},
		{Name: "bin/sh", Type: TypeSymlink, Mode: 0o777, Inode: 4, Nlink: 1, ModTime: when, Linkname: "../bin"},
		{Name: trailerName, Type: TypeTrailer, Nlink: 1, ModTime: time.Unix(0, 0).UTC()},
	}
	got, data := readAll(t, NewCpioReader(strings.NewReader(raw)))
	if d := diffEntries(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if data["bin/su"] != "hello" {
		t.Errorf("bin/su data = %q", data["bin/su"])
	}
	// And the writer puts the very same bytes back.
	var buf bytes.Buffer
	w := NewCpioWriter(&buf, Newc)
	writeAll(t, w, got, data)
	if d := cmp.Diff(raw, buf.String()); d != "" {
		t.Errorf("rewritten bytes differ (-want +got):\n%s", d)
	}
}

// sampleEntries covers every type and mode bit a rootfs has.
func sampleEntries() ([]*Entry, map[string]string) {
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	e := func(name string, typ Type, mode uint32, size int64) *Entry {
		return &Entry{Name: name, Type: typ, Mode: mode, ModTime: mt, Size: size, Nlink: 1}
	}
	entries := []*Entry{
		e(".", TypeDir, 0o755, 0),
		e("dev", TypeDir, 0o755, 0),
		{Name: "dev/console", Type: TypeChar, Mode: 0o622, ModTime: mt, Nlink: 1, RdevMajor: 5, RdevMinor: 1},
		{Name: "dev/sda", Type: TypeBlock, Mode: 0o660, GID: 6, ModTime: mt, Nlink: 1, RdevMajor: 8, RdevMinor: 300},
		e("dev/initctl", TypeFifo, 0o600, 0),
		e("dev/log", TypeSocket, 0o666, 0),
		e("tmp", TypeDir, 0o1777, 0),
		e("usr", TypeDir, 0o755, 0),
		e("usr/bin", TypeDir, 0o755, 0),
		e("usr/bin/passwd", TypeRegular, 0o4755, 11),
		e("usr/bin/wall", TypeRegular, 0o2755, 4),
		e("usr/bin/busybox", TypeRegular, 0o755, 3),
		{Name: "usr/bin/sh", Type: TypeSymlink, Mode: 0o777, ModTime: mt, Nlink: 1, Linkname: "busybox"},
		{Name: "usr/bin/mkfs.ext2", Type: TypeRegular, Mode: 0o755, ModTime: mt, Inode: 42, Nlink: 2},
		{Name: "usr/bin/mkfs.ext4", Type: TypeRegular, Mode: 0o755, ModTime: mt, Inode: 42, Nlink: 2, Size: 9},
		e("usr/share", TypeDir, 0o755, 0),
		{Name: "usr/share/ünïcødé with space", Type: TypeRegular, Mode: 0o644, UID: 1000, GID: 100, ModTime: mt, Nlink: 1, Size: 5},
	}
	data := map[string]string{
		"usr/bin/passwd":               "setuid root",
		"usr/bin/wall":                 "tty!",
		"usr/bin/busybox":              "box",
		"usr/bin/mkfs.ext4":            "e2fsprogs",
		"usr/share/ünïcødé with space": "utf-8",
	}
	return entries, data
}

func TestCpioRoundTrip(t *testing.T) {
	for _, v := range []CpioVariant{Newc, CRC} {
		t.Run(v.magic(), func(t *testing.T) {
			entries, data := sampleEntries()
			var buf bytes.Buffer
			writeAll(t, NewCpioWriter(&buf, v), entries, data)
			if _, err := archivetest.CheckInitramfs(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatalf("kernel rules: %v", err)
			}
			got, gotData := readAll(t, NewCpioReader(&buf))
			if got[len(got)-1].Type != TypeTrailer {
				t.Fatalf("last entry is %v, want trailer", got[len(got)-1].Type)
			}
			got = got[:len(got)-1]
			for _, e := range got {
				e.Check = 0 // the crc variant fills it in
			}
			if d := diffEntries(entries, got); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			if d := cmp.Diff(data, gotData); d != "" {
				t.Errorf("data (-want +got):\n%s", d)
			}
		})
	}
}

// copyCpio copies a cpio stream through reader and writer untouched.
func copyCpio(t *testing.T, in []byte, v CpioVariant) []byte {
	t.Helper()
	var out bytes.Buffer
	w := NewCpioWriter(&out, v)
	if err := Copy(w, NewCpioReader(bytes.NewReader(in)), CopyOptions{Dest: KindCpio}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestGNUCpioByteIdentical(t *testing.T) {
	tree := makeRootfsTree(t)
	for _, tc := range []struct {
		format  string
		variant CpioVariant
	}{{"newc", Newc}, {"crc", CRC}} {
		t.Run(tc.format, func(t *testing.T) {
			in := gnuCpio(t, tree, tc.format)
			out := copyCpio(t, in, tc.variant)
			if !bytes.Equal(in, out) {
				t.Fatalf("repacked archive differs from GNU cpio's (%d vs %d bytes); first difference at %d", len(in), len(out), firstDiff(in, out))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestWrittenArchiveReadByTools writes a tree's entries with CpioWriter and
// checks that GNU cpio and bsdtar list it exactly as they list GNU cpio's
// own archive of the same tree, and that cpio extracts the crc variant
// (which verifies every checksum).
func TestWrittenArchiveReadByTools(t *testing.T) {
	tree := makeRootfsTree(t)
	ref := gnuCpio(t, tree, "newc")
	for _, v := range []CpioVariant{Newc, CRC} {
		t.Run(v.magic(), func(t *testing.T) {
			dr, err := NewDirReader(tree, DirReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			w := NewCpioWriter(&out, v)
			if err := Copy(w, dr, CopyOptions{Dest: KindCpio}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := archivetest.CheckInitramfs(bytes.NewReader(out.Bytes())); err != nil {
				t.Fatalf("kernel rules: %v", err)
			}
			for _, tool := range [][]string{{"cpio", "-itv", "--quiet"}, {"bsdtar", "-tvf", "-"}} {
				want := run(t, ref, tool[0], tool[1:]...)
				got := run(t, out.Bytes(), tool[0], tool[1:]...)
				if d := cmp.Diff(string(want), string(got)); d != "" {
					t.Errorf("%s listing (-GNU cpio's archive +ours):\n%s", tool[0], d)
				}
			}
			dest := t.TempDir()
			cmd := exec.Command("cpio", "-id", "--quiet", "--no-absolute-filenames")
			cmd.Dir, cmd.Stdin = dest, bytes.NewReader(out.Bytes())
			if b, err := cmd.CombinedOutput(); err != nil || len(b) > 0 {
				t.Fatalf("cpio -id: %v: %s", err, b)
			}
		})
	}
}

func TestConcatenatedMembers(t *testing.T) {
	a := newcHeader("070701", 1, 0o40755, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, "etc") +
		newcHeader("070701", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)
	b := newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, "etc/x") + pad("hi") +
		newcHeader("070701", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)
	raw := a + strings.Repeat("\x00", 512-len(a)) + b + strings.Repeat("\x00", 12)
	got, data := readAll(t, NewCpioReader(strings.NewReader(raw)))
	var names []string
	for _, e := range got {
		names = append(names, fmt.Sprintf("%s:%d", e.Name, e.Pad))
	}
	want := []string{"etc:0", "TRAILER!!!:" + fmt.Sprint(512-len(a)), "etc/x:0", "TRAILER!!!:12"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if data["etc/x"] != "hi" {
		t.Errorf("etc/x = %q", data["etc/x"])
	}
	if out := copyCpio(t, []byte(raw), Newc); string(out) != raw {
		t.Errorf("concatenated archive not reproduced; first difference at %d", firstDiff([]byte(raw), out))
	}
	if st, err := archivetest.CheckInitramfs(strings.NewReader(raw)); err != nil || st.Members != 2 {
		t.Errorf("CheckInitramfs = %+v, %v; want 2 members", st, err)
	}
}

func TestCpioBadInput(t *testing.T) {
	good := newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 5, 0, 0, 0, 0, 0, "etc/f") + pad("hello") +
		newcHeader("070701", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)
	crc := newcHeader("070702", 1, 0o100644, 0, 0, 1, 0, 5, 0, 0, 0, 0, 0x1FF, "etc/f") + pad("hello") +
		newcHeader("070702", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)
	long := strings.Repeat("a/", 2100)
	tests := []struct {
		name  string
		input string
		want  string // substring of the error
	}{
		{"truncated header", good[:50], "offset 0: truncated header"},
		{"truncated name", good[:112], "truncated name"},
		{"truncated data", good[:len(newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 5, 0, 0, 0, 0, 0, "etc/f"))+2], `entry "etc/f" at offset 0: truncated data, 3 bytes missing`},
		{"missing trailer", good[:len(good)-124], "truncated header"},
		{"bad magic", "070799" + good[6:], `bad magic "070799"`},
		{"old ascii", "070707" + good[6:], "070707"},
		{"invalid hex", good[:14] + "0000Z000" + good[22:], "field mode: invalid hex"},
		{"name size zero", newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, "x")[:94] + "00000000" + "00000000x\x00\x00\x00", "name size is 0"},
		{"name too long", newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, long), "exceeds PATH_MAX"},
		{"symlink target too long", newcHeader("070701", 1, 0o120777, 0, 0, 1, 0, 5000, 0, 0, 0, 0, 0, "l") + strings.Repeat("x", 5000), "symlink target of 5000 bytes"},
		{"dir with data", newcHeader("070701", 1, 0o40755, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0, "d") + "abcd", "dir has 4 data bytes"},
		{"unknown type", newcHeader("070701", 1, 0o770755, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, "d"), "unknown file type"},
		{"bad checksum", crc, "bad data checksum"},
		{"absurd size", newcHeader("070701", 1, 0o100644, 0, 0, 1, 0, 0xFFFFFFFF, 0, 0, 0, 0, 0, "big") + "tiny", "truncated data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewCpioReader(strings.NewReader(tc.input))
			var err error
			for err == nil {
				_, err = r.Next()
				if err == nil {
					_, err = io.Copy(io.Discard, r)
				}
			}
			if err == io.EOF {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
		})
	}
}

func TestCpioWriterRefuses(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{"tar hard link", Entry{Name: "a", Type: TypeHardlink, Linkname: "b"}, "convert it"},
		{"long name", Entry{Name: strings.Repeat("n", pathx.PathMax+1), Type: TypeRegular}, "PATH_MAX"},
		{"uid too big", Entry{Name: "a", Type: TypeRegular, UID: 1 << 33}, "uid"},
		{"mtime before 1970", Entry{Name: "a", Type: TypeRegular, ModTime: time.Unix(-5, 0)}, "mtime"},
		{"data on a fifo", Entry{Name: "a", Type: TypeFifo, Size: 3}, "fifo with 3 data bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := NewCpioWriter(io.Discard, Newc).WriteHeader(&tc.e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WriteHeader = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("short data", func(t *testing.T) {
		w := NewCpioWriter(io.Discard, Newc)
		w.WriteHeader(&Entry{Name: "a", Type: TypeRegular, Size: 4})
		w.Write([]byte("ab"))
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), "2 bytes missing") {
			t.Errorf("Close = %v, want data shorter error", err)
		}
	})
	t.Run("long data", func(t *testing.T) {
		w := NewCpioWriter(io.Discard, Newc)
		w.WriteHeader(&Entry{Name: "a", Type: TypeRegular, Size: 1})
		if _, err := w.Write([]byte("ab")); err == nil {
			t.Error("Write past Size succeeded")
		}
	})
}

// TestCRCSpill writes a 070702 entry larger than the in-memory stage.
func TestCRCSpill(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (crcSpillThreshold/16)+1000)
	var buf bytes.Buffer
	w := NewCpioWriter(&buf, CRC)
	writeAll(t, w, []*Entry{{Name: "big", Type: TypeRegular, Mode: 0o644, Nlink: 1, Size: int64(len(big))}}, map[string]string{"big": string(big)})
	_, data := readAll(t, NewCpioReader(&buf))
	if data["big"] != string(big) {
		t.Fatal("data of the spilled entry changed")
	}
}

func FuzzNewcReader(f *testing.F) {
	entries, data := sampleEntries()
	for _, v := range []CpioVariant{Newc, CRC} {
		var buf bytes.Buffer
		w := NewCpioWriter(&buf, v)
		for _, e := range entries {
			w.WriteHeader(e)
			io.WriteString(w, data[e.Name])
		}
		w.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte(newcHeader("070701", 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, trailerName)))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewCpioReader(bytes.NewReader(in))
		var read []*Entry
		var err error
		for {
			var e *Entry
			e, err = r.Next()
			if err != nil {
				break
			}
			if _, err = io.Copy(io.Discard, r); err != nil {
				break
			}
			read = append(read, e)
		}
		if err != io.EOF {
			return
		}
		// Whatever reads cleanly must write back and read back the same.
		var out bytes.Buffer
		w := NewCpioWriter(&out, Newc)
		rr := NewCpioReader(bytes.NewReader(in))
		if err := Copy(w, rr, CopyOptions{Dest: KindCpio}); err != nil {
			t.Fatalf("copy of a readable archive failed: %v", err)
		}
		w.Close()
		again, _ := readAllQuiet(NewCpioReader(&out))
		if len(again) < len(read) {
			t.Fatalf("rewrite lost entries: %d -> %d", len(read), len(again))
		}
	})
}

func readAllQuiet(r Reader) ([]*Entry, error) {
	var entries []*Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return entries, err
		}
		entries = append(entries, e)
	}
}
