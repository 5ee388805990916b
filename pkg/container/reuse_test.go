package container

import (
	"bytes"
	"compress/gzip"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// TestReuseRefusesAReplacedInput: the compressed bytes an output reuses
// (the copy made while the input is read, the blocks a splice copies, the
// start decompressed again) are read from the input's path opened again.
// A file put at that path since the input was opened is not the stream
// that was read and compared: the run fails and writes nothing.
func TestReuseRefusesAReplacedInput(t *testing.T) {
	entries, data := sampleEntries()
	dir := t.TempDir()
	var stream bytes.Buffer
	w, err := archive.NewWriterFor(&stream, archive.Format{Kind: archive.KindCpio})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, entries, data)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(stream.Bytes())
	zw.Close()
	want := gz.Bytes()
	for _, replace := range []bool{false, true} {
		t.Run(map[bool]string{false: "same file", true: "replaced"}[replace], func(t *testing.T) {
			in := filepath.Join(dir, "in.cpio.gz")
			if err := os.WriteFile(in, want, 0o644); err != nil {
				t.Fatal(err)
			}
			m := splice.NewMatcher(0)
			input, err := Open(in, OpenOptions{taps: taps{0: m}, Backend: compress.PureGo})
			if err != nil {
				t.Fatal(err)
			}
			defer input.Close()
			if replace {
				// The same bytes, in another file, put there after the
				// input was opened: still not the one being read.
				other := filepath.Join(dir, "other")
				if err := os.WriteFile(other, want, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(other, in); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, "out.cpio.gz")
			os.Remove(out)
			o, err := createStream(out, input.Format.Format, OutputOptions{Compress: compress.WriterOptions{Backend: compress.PureGo},
				Reuse: &Reuse{Path: in, Info: input.FileInfo(), Codec: compress.Gzip, Backend: compress.PureGo, Matcher: m}})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Abort()
			if err := archive.Copy(o, input, archive.CopyOptions{Dest: archive.KindCpio}); err != nil {
				t.Fatal(err)
			}
			err = o.Commit()
			if !replace {
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(out)
				if !bytes.Equal(got, want) || o.Compressor != CompressorCopy {
					t.Fatalf("no change: %d bytes by %q, want a copy of the %d input bytes", len(got), o.Compressor, len(want))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "replaced or changed while it was read") {
				t.Fatalf("Commit after the input was replaced: %v", err)
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("an output was written: %v", err)
			}
		})
	}
}
