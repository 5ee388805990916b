package container

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// FuzzSegments reads sequences of initrd segments: raw and compressed by
// each method, padded, cut between and within segments. Whatever the
// bytes, the reader ends with an error or io.EOF, and the segments it
// reports lie one after the other within the file.
func FuzzSegments(f *testing.F) {
	early := cpioOf(f, "kernel/", "kernel/x86/microcode/GenuineIntel.bin")
	main := cpioOf(f, "etc/", "etc/crictl.yaml")
	f.Add(cat(early, main))
	for _, tool := range [][]string{{"gzip", "-n", "-c"}, {"zstd", "-q", "-c"}, {"xz", "--check=crc32", "-c"},
		{"lz4", "-l", "-q", "-c"}, {"bzip2", "-c"}, {"lzma", "-c"}, {"lzop", "-c"}} {
		z := squeeze(f, main, tool...)
		f.Add(cat(early, z))
		f.Add(cat(pad(z, 8-len(z)%4), early))
		f.Add(cat(early, z[:len(z)/2]))
		f.Add(cat(early, z, z))
	}
	// Segments around the cap (MaxSegments): the last one read, the next
	// refused.
	many, gz := early, pad(squeeze(f, main, "gzip", "-n", "-c"), 3)
	for range MaxSegments {
		many = cat(many, gz)
	}
	f.Add(many)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "initrd.img")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := Open(path, OpenOptions{MaxSize: 1 << 20, Backend: compress.PureGo})
		if err != nil {
			return
		}
		defer in.Close()
		for i := 0; ; i++ {
			_, err := in.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, in); err != nil {
				return
			}
			if i > 1<<16 {
				t.Fatal("no end")
			}
		}
		var at int64
		for _, s := range in.Segments() {
			if s.Offset < at || s.Length <= 0 || s.Offset+s.Length+s.Pad > int64(len(b)) {
				t.Fatalf("segment %+v after offset %d in a file of %d bytes", s, at, len(b))
			}
			at = s.Offset + s.Length + s.Pad
		}
	})
}
