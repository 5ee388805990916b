package pinflate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os/exec"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestReaderToolFixtures: what gzip and pigz write, as Buildroot runs them
// and with every header field they can set, whole, cut and damaged, reads
// as klauspost's reader reads it.
func TestReaderToolFixtures(t *testing.T) {
	data := sample(3<<20, 11)
	fixtures := []struct {
		tool string
		args []string
	}{
		{"gzip", []string{"-9", "-n"}}, // Buildroot's
		{"gzip", []string{"-1"}},
		{"gzip", []string{"-6", "-N"}},
		{"pigz", []string{"-9", "-n"}},
		{"pigz", []string{"-6", "--rsyncable"}},
		{"pigz", []string{"-9", "-i"}}, // independent blocks
		{"pigz", []string{"-6", "-N", "-C", "a comment"}},
	}
	for _, f := range fixtures {
		name := fmt.Sprint(f.tool, f.args)
		t.Run(name, func(t *testing.T) {
			archivetest.RequireTool(t, f.tool)
			cmd := exec.Command(f.tool, append(f.args, "-c")...)
			cmd.Stdin = bytes.NewReader(data)
			in, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if st := compareStats(t, in, Options{ChunkSize: 128 << 10}); st.Replay || st.Chunks == 0 {
				t.Errorf("not decoded in parallel: %+v", st)
			}
			compare(t, in, smallChunks)
			compare(t, append(bytes.Clone(in), in...), smallChunks)
			compare(t, append(bytes.Clone(in), 0, 0, 0, 0), smallChunks)
			for _, at := range []int{len(in) / 3, len(in) - 8, len(in) - 3} {
				compare(t, in[:at], smallChunks)
				bad := bytes.Clone(in)
				bad[at] ^= 0x40
				compare(t, bad, smallChunks)
			}
		})
	}
}

// compareStats compares like compare and returns how the parallel reader
// decoded in.
func compareStats(t *testing.T, in []byte, opt Options) Stats {
	t.Helper()
	compare(t, in, opt)
	r, err := NewReader(bytes.NewReader(in), 0, int64(len(in)), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return r.Stats()
}

// TestReaderFile compares the two readers on PINFLATE_GZ, a file too big
// for the fixtures (the bench's rootfs.cpio.gz), by digest.
func TestReaderFile(t *testing.T) {
	f, size := gzFile(t)
	r, err := NewReader(f, 0, size, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := sha256.New()
	if _, err := io.Copy(got, r); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bufio.NewReader(io.NewSectionReader(f, 0, size)))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	want := sha256.New()
	if _, err := io.Copy(want, zr); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("outputs differ (%+v)", r.Stats())
	}
	t.Logf("same output; %+v, member ends at %d of %d", r.Stats(), r.End(), size)
	if r.End() != size {
		t.Errorf("End() = %d, want %d", r.End(), size)
	}
}
