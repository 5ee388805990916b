package archive

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// diskBytes is what the file p takes on disk (st_blocks, as du counts it).
func diskBytes(t *testing.T, p string) int64 {
	t.Helper()
	var st unix.Stat_t
	mustDo(t, unix.Lstat(p, &st))
	return st.Blocks * 512
}

// TestDirSparse: a sparse file goes from tar to tree with its holes (a
// tar of kilobytes does not write 64 MiB of zeros), and from the tree to
// tar sparse again (PAX 1.0), which GNU tar extracts to the same bytes
// and the same holes. A dense tar's runs of zeros become holes too.
func TestDirSparse(t *testing.T) {
	requireGNUTar(t)
	const size = 64 << 20
	src := t.TempDir()
	holeyFile(t, filepath.Join(src, "disk.img"), size, map[int64]string{0: "head", size / 2: "middle", size - 4: "tail"})
	if diskBytes(t, filepath.Join(src, "disk.img")) > 1<<20 {
		t.Skip("the temporary directory's filesystem has no holes")
	}
	want, err := os.ReadFile(filepath.Join(src, "disk.img"))
	mustDo(t, err)
	for _, args := range [][]string{{"--format=posix", "--sparse"}, {"--format=gnu", "--sparse"}, {"--format=gnu"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in.tar")
			runIn(t, src, nil, "tar", append(args, "-cf", in, "disk.img")...)
			b, err := os.ReadFile(in)
			mustDo(t, err)

			tree := tarToTree(t, b)
			got := filepath.Join(tree, "disk.img")
			if n := diskBytes(t, got); n > 1<<20 {
				t.Errorf("tar -> tree: the file takes %d bytes on disk, want its holes kept", n)
			}
			if data, err := os.ReadFile(got); err != nil || !bytes.Equal(data, want) {
				t.Fatalf("tar -> tree: the file differs (%v)", err)
			}

			r, err := NewDirReader(tree, DirReaderOptions{})
			mustDo(t, err)
			var out bytes.Buffer
			tw := NewTarWriter(&out, tar.FormatUnknown)
			mustDo(t, Copy(tw, r, CopyOptions{Dest: KindTar}))
			mustDo(t, tw.Close())
			if out.Len() > 1<<20 {
				t.Errorf("tree -> tar: %d bytes, want the holes left out", out.Len())
			}
			back := filepath.Join(t.TempDir(), "back.tar")
			mustDo(t, os.WriteFile(back, out.Bytes(), 0o644))
			x := t.TempDir()
			runIn(t, x, nil, "tar", "-xf", back)
			if data, err := os.ReadFile(filepath.Join(x, "disk.img")); err != nil || !bytes.Equal(data, want) {
				t.Fatalf("GNU tar extracts other bytes from the tree's tar (%v)", err)
			}
			if n := diskBytes(t, filepath.Join(x, "disk.img")); n > 1<<20 {
				t.Errorf("GNU tar extracts the tree's tar with %d bytes on disk, want the holes", n)
			}
			if l := runIn(t, "", nil, "tar", "-tvf", back); !strings.Contains(l, " 67108864 ") {
				t.Errorf("GNU tar lists %q", l)
			}
		})
	}
}

// TestDirWriterMaxData: what lands on disk is counted; holes are not.
func TestDirWriterMaxData(t *testing.T) {
	w, err := NewDirWriter(t.TempDir(), DirWriterOptions{MaxData: 8192})
	mustDo(t, err)
	defer w.Close()
	mustDo(t, w.WriteHeader(&Entry{Name: "zeros", Type: TypeRegular, Mode: 0o644, Size: 1 << 20}))
	_, err = w.Write(make([]byte, 1<<20))
	mustDo(t, err)
	mustDo(t, w.WriteHeader(&Entry{Name: "data", Type: TypeRegular, Mode: 0o644, Size: 3 * 4096}))
	_, err = w.Write(bytes.Repeat([]byte{1}, 3*4096))
	if err == nil || !strings.Contains(err.Error(), "more than 8192 bytes of data written to the tree") {
		t.Errorf("err = %v, want the bound", err)
	}
}
