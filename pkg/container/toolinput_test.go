package container

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// TestOpenXzToolReadsTheFile opens an xz archive with the default
// backend: xz reads the file itself (this process reads only what sniffing
// takes), Consumed follows xz through the file, and the entries are those
// the Go decoder reads. With a digest asked for, every byte goes through
// this process instead, to be hashed.
func TestOpenXzToolReadsTheFile(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		if os.Getenv("ROOTFS_TRIM_REQUIRE_TOOLS") == "1" {
			t.Fatalf("xz not found and ROOTFS_TRIM_REQUIRE_TOOLS=1: %v", err)
		}
		t.Skipf("xz not found: %v", err)
	}
	big := strings.Repeat("the kubelet takes the first CNI config in lexical order\n", 40000)
	entries, data := sampleEntries()
	entries = append(entries, &archive.Entry{Name: "usr/share/big", Type: archive.TypeRegular, Mode: 0o644,
		ModTime: time.Unix(1700000000, 0).UTC(), Size: int64(len(big)), Nlink: 1})
	data["usr/share/big"] = big
	var z bytes.Buffer
	zw, _, err := compress.NewWriter(&z, compress.Xz, compress.WriterOptions{Level: 1, Backend: compress.PureGo})
	mustDo(t, err)
	writeAll(t, archive.NewCpioWriter(zw, archive.Newc), entries, data)
	mustDo(t, zw.Close())
	path := filepath.Join(t.TempDir(), "rootfs.cpio.xz")
	mustDo(t, os.WriteFile(path, z.Bytes(), 0o644))
	sum := sha256.Sum256(z.Bytes())

	read := func(opt OpenOptions) (*Input, []*archive.Entry, map[string]string) {
		t.Helper()
		in, err := Open(path, opt)
		mustDo(t, err)
		t.Cleanup(func() { in.Close() })
		got, gotData := readAll(t, in.Reader)
		return in, got, gotData
	}
	_, wantEntries, wantData := read(OpenOptions{Backend: compress.PureGo})

	in, got, gotData := read(OpenOptions{})
	if in.src.(*streamSource).counter.tool == nil {
		t.Fatal("xz was not handed the file")
	}
	if diff := cmp.Diff(wantEntries, got); diff != "" {
		t.Errorf("entries differ from the Go decoder's (-go +tool):\n%s", diff)
	}
	if diff := cmp.Diff(wantData, gotData); diff != "" {
		t.Errorf("data differs from the Go decoder's (-go +tool):\n%s", diff)
	}
	if in.src.(*streamSource).counter.n > 64<<10 {
		t.Errorf("this process read %d bytes of the file, want no more than the sniffing's 64 KiB", in.src.(*streamSource).counter.n)
	}
	if got, want := in.Consumed(), int64(z.Len()); got != want {
		t.Errorf("Consumed() = %d after the end, want the file's %d bytes", got, want)
	}

	in, got, _ = read(OpenOptions{Digest: true})
	if in.src.(*streamSource).counter.tool != nil {
		t.Fatal("xz was handed the file, but the digest needs every byte")
	}
	if diff := cmp.Diff(wantEntries, got); diff != "" {
		t.Errorf("entries differ from the Go decoder's (-go +piped):\n%s", diff)
	}
	d, err := in.Digest()
	mustDo(t, err)
	if want := "sha256:" + hex.EncodeToString(sum[:]); d != want {
		t.Errorf("Digest() = %s, want %s", d, want)
	}
}
