package archive

// These tests record why rootfs-trim has its own newc codec instead of
// github.com/cavaliergopher/cpio, the library the design first named. Each
// runs one property a rootfs rewrite needs through both codecs: ours must
// keep it, and the library must still lose it. If a library release fixes a
// defect, its test fails and tells us to revisit the decision (README,
// "Dependencies").

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	cavalier "github.com/cavaliergopher/cpio"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// roundTripCavalier reads a newc archive with the library and writes every
// header and body back with it, as a naive strip tool would.
func roundTripCavalier(t *testing.T, in []byte) []byte {
	t.Helper()
	r := cavalier.NewReader(bytes.NewReader(in))
	var out bytes.Buffer
	w := cavalier.NewWriter(&out)
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("cavaliergopher read: %v", err)
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatalf("cavaliergopher write %s: %v", h.Name, err)
		}
		if _, err := io.Copy(w, r); err != nil {
			t.Fatalf("cavaliergopher copy %s: %v", h.Name, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func roundTripOurs(t *testing.T, in []byte) []byte {
	t.Helper()
	return copyCpio(t, in, Newc)
}

func findEntry(t *testing.T, archive []byte, name string) *Entry {
	t.Helper()
	entries, _ := readAll(t, NewCpioReader(bytes.NewReader(archive)))
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("%s not in archive", name)
	return nil
}

func TestCavalierDefects(t *testing.T) {
	mt := time.Unix(1740830400, 0).UTC()
	var src bytes.Buffer
	writeAll(t, NewCpioWriter(&src, Newc), []*Entry{
		{Name: "dev", Type: TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
		{Name: "dev/console", Type: TypeChar, Mode: 0o622, Nlink: 1, RdevMajor: 5, RdevMinor: 1, ModTime: mt},
		{Name: "bin", Type: TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
		{Name: "bin/sh", Type: TypeSymlink, Mode: 0o777, Nlink: 1, Linkname: "busybox", ModTime: mt},
	}, nil)

	defects := []struct {
		name  string
		entry string
		keeps func(*Entry) bool
	}{
		{"device numbers", "dev/console", func(e *Entry) bool { return e.RdevMajor == 5 && e.RdevMinor == 1 }},
		{"symlink target", "bin/sh", func(e *Entry) bool { return e.Linkname == "busybox" }},
	}
	for _, d := range defects {
		t.Run(d.name, func(t *testing.T) {
			if e := findEntry(t, roundTripOurs(t, src.Bytes()), d.entry); !d.keeps(e) {
				t.Errorf("our codec lost the %s of %s: %+v", d.name, d.entry, e)
			}
			if e := findEntry(t, roundTripCavalier(t, src.Bytes()), d.entry); d.keeps(e) {
				t.Errorf("cavaliergopher/cpio now keeps the %s of %s: revisit the dependency decision", d.name, d.entry)
			}
		})
	}
}

// TestCavalierCRCMagicLeak runs in a child process: the defect corrupts
// package state of the library for the rest of the process.
func TestCavalierCRCMagicLeak(t *testing.T) {
	if os.Getenv("ROOTFS_TRIM_CAVALIER_CHILD") == "1" {
		cavalierLeakChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCavalierCRCMagicLeak$")
	cmd.Env = append(os.Environ(), "ROOTFS_TRIM_CAVALIER_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	// The child wrote, with a brand-new Writer, one plain entry after some
	// other Writer had written a checksummed one.
	archive := out[bytes.Index(out, []byte("0707")):]
	archive = archive[:bytes.LastIndex(archive, []byte("TRAILER!!!"))+12]
	if string(archive[:6]) != magicCRC {
		t.Fatalf("cavaliergopher/cpio no longer leaks the 070702 magic (got %q): revisit the dependency decision", archive[:6])
	}
	if _, err := archivetest.CheckInitramfs(bytes.NewReader(padBlock(archive))); err == nil {
		t.Error("the kernel rules accept the leaked header; expected a bad data checksum")
	}
	// Ours, given the same sequence, writes a plain newc header.
	var sum, plain bytes.Buffer
	writeAll(t, NewCpioWriter(&sum, CRC), []*Entry{{Name: "a", Type: TypeRegular, Mode: 0o644, Nlink: 1, Size: 1}}, map[string]string{"a": "x"})
	writeAll(t, NewCpioWriter(&plain, Newc), []*Entry{{Name: "b", Type: TypeRegular, Mode: 0o644, Nlink: 1, Size: 1}}, map[string]string{"b": "y"})
	if string(plain.Bytes()[:6]) != magicNewc {
		t.Errorf("our newc writer wrote magic %q after a crc writer", plain.Bytes()[:6])
	}
	if _, err := archivetest.CheckInitramfs(&plain); err != nil {
		t.Errorf("kernel rules: %v", err)
	}
}

func cavalierLeakChild() {
	first := cavalier.NewWriter(io.Discard)
	first.WriteHeader(&cavalier.Header{Name: "a", Mode: cavalier.TypeReg | 0o644, Size: 1, Checksum: 0x78})
	first.Write([]byte("x"))
	first.Close()
	second := cavalier.NewWriter(os.Stdout)
	second.WriteHeader(&cavalier.Header{Name: "b", Mode: cavalier.TypeReg | 0o644, Size: 1})
	second.Write([]byte("y"))
	second.Close()
	os.Stdout.Sync()
}

func padBlock(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
