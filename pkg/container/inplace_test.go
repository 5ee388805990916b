package container

import (
	"bytes"
	"errors"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"golang.org/x/sys/unix"
)

// writeLz4Archive writes a legacy lz4 cpio of a few 8 MiB blocks to a
// file: a big entry of half random, half repeated data, then a small one.
func writeLz4Archive(t *testing.T) (path string, data map[string]string) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(7, 11))
	var big bytes.Buffer
	for i := 0; big.Len() < 40<<20; i++ {
		if i%2 == 0 {
			chunk := make([]byte, 4096)
			for j := range chunk {
				chunk[j] = byte(rnd.Uint32())
			}
			big.Write(chunk)
		} else {
			big.WriteString(strings.Repeat("kubelet ", 512))
		}
	}
	data = map[string]string{"big": big.String(), "small": "after the big one\n"}
	mt := time.Unix(1700000000, 0).UTC()
	entries := []*archive.Entry{
		{Name: "big", Type: archive.TypeRegular, Mode: 0o644, ModTime: mt, Size: int64(big.Len()), Nlink: 1},
		{Name: "small", Type: archive.TypeRegular, Mode: 0o4755, ModTime: mt, Size: int64(len(data["small"])), Nlink: 1},
	}
	var z bytes.Buffer
	zw, _, err := compress.NewWriter(&z, compress.Lz4Legacy, compress.WriterOptions{Level: 1, Backend: compress.PureGo})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, archive.NewCpioWriter(zw, archive.Newc), entries, data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "rootfs.cpio.lz4")
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	requireLeases(t, path)
	return path, data
}

// requireLeases skips a test of reading in place where the file system
// of TMPDIR grants no read leases (some network and union file systems):
// there the input is read, not mapped, which the other tests cover.
func requireLeases(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		t.Skipf("no read lease on %s: %v", filepath.Dir(path), err)
	}
	releaseLease(int(f.Fd()))
}

// TestOpenLz4InPlace reads a legacy lz4 archive through Open, whose
// decoder maps the file and decodes its blocks in place; but not a file
// open for writing, on which no read lease can be had: that one is read.
func TestOpenLz4InPlace(t *testing.T) {
	for _, tt := range []struct {
		name       string
		openForW   bool
		wantMapped bool
	}{
		{name: "mapped", wantMapped: true},
		{name: "open for writing", openForW: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, want := writeLz4Archive(t)
			if tt.openForW {
				w, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}
			in, err := Open(path, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			_, got := readAll(t, in)
			if diff := cmp.Diff(len(want["big"]), len(got["big"])); diff != "" {
				t.Fatalf("big entry size (-want +got):\n%s", diff)
			}
			if got["big"] != want["big"] || got["small"] != want["small"] {
				t.Error("the entries' data differ from what was written")
			}
			if mapped := in.src.(*streamSource).counter.m != nil; mapped != tt.wantMapped {
				t.Errorf("mapped: %v, want %v", mapped, tt.wantMapped)
			}
			if in.Consumed() != in.Size {
				t.Errorf("consumed %d of %d bytes", in.Consumed(), in.Size)
			}
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if in.src.(*streamSource).counter.m != nil {
				t.Error("Close left the mapping")
			}
		})
	}
}

// TestOpenLz4Truncated truncates the input while it is read in place:
// the truncate waits on the read lease and breaks it, and the blocks not
// yet decoded then fail with errInputModified instead of faulting on the
// mapping. Once the input is closed, the truncate goes through.
func TestOpenLz4Truncated(t *testing.T) {
	path, _ := writeLz4Archive(t)
	in, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.src.(*streamSource).counter.m == nil {
		t.Fatal("the input was not mapped")
	}
	truncated := make(chan error, 1)
	go func() { truncated <- os.Truncate(path, in.Size/3) }()
	for deadline := time.Now().Add(10 * time.Second); in.src.(*streamSource).counter.Check() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the truncate did not break the lease")
		}
	}
	for err == nil {
		if _, err = in.Next(); err == nil {
			_, err = io.Copy(io.Discard, in)
		}
	}
	if !errors.Is(err, errInputModified) {
		t.Fatalf("got %v, want %v", err, errInputModified)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-truncated; err != nil {
		t.Fatal(err)
	}
}
