package container

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// TestStreamSegments: an initrd whose first segment is raw, read from a
// stream (a pipe, standard input), gives the file's entries when it is one
// segment, and is refused (ErrSegmentsOnStream) when a compressed segment
// follows, whatever the compression, never ending early as if clean.
func TestStreamSegments(t *testing.T) {
	early := cpioOf(t, "kernel/", "kernel/x86/microcode/GenuineIntel.bin")
	main := cpioOf(t, "etc/", "etc/crictl.yaml")
	cases := []struct {
		name    string
		initrd  []byte
		refused bool
	}{
		{"one raw segment", early, false},
		{"raw members, zeros between and after", cat(pad(early, 512), main, make([]byte, 1024)), false},
		{"raw then gzip", cat(early, squeeze(t, main, "gzip", "-n", "-c")), true},
		{"raw then zstd", cat(pad(early, 512), squeeze(t, main, "zstd", "-q", "-c")), true},
		{"raw then xz", cat(early, squeeze(t, main, "xz", "--check=crc32", "-c")), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file, ferr := readEntries(t, openFileBytes(t, tc.initrd))
			if ferr != nil {
				t.Fatalf("the file: %v", ferr)
			}
			stream, serr := readEntries(t, openStreamBytes(tc.initrd))
			if tc.refused {
				if !errors.Is(serr, ErrSegmentsOnStream) {
					t.Fatalf("the stream: %v; want %v", serr, ErrSegmentsOnStream)
				}
				return
			}
			if serr != nil {
				t.Fatalf("the stream: %v", serr)
			}
			if diff := cmp.Diff(file, stream); diff != "" {
				t.Errorf("entries (-file +stream):\n%s", diff)
			}
		})
	}
}

// FuzzStreamSegments: an initrd whose first segment is raw, followed by
// anything, read from a stream, never ends cleanly where the file goes
// on: when the stream's reader reaches io.EOF, the file's does too, with
// the same entries.
func FuzzStreamSegments(f *testing.F) {
	early := cpioOf(f, "kernel/", "kernel/x86/microcode/GenuineIntel.bin")
	main := cpioOf(f, "etc/", "etc/crictl.yaml")
	f.Add([]byte{})
	f.Add(make([]byte, 600))
	f.Add(cat(make([]byte, 512), main))
	f.Add(squeeze(f, main, "gzip", "-n", "-c"))
	f.Add(squeeze(f, main, "zstd", "-q", "-c"))
	f.Add([]byte("junk"))
	f.Fuzz(func(t *testing.T, rest []byte) {
		b := cat(early, rest)
		stream, serr := readEntries(t, openStreamBytes(b))
		if serr != nil {
			return
		}
		file, ferr := readEntries(t, openFileBytes(t, b))
		if ferr != nil {
			t.Fatalf("the stream ended cleanly after %d entries; the file: %v", len(stream), ferr)
		}
		if diff := cmp.Diff(file, stream); diff != "" {
			t.Fatalf("entries (-file +stream):\n%s", diff)
		}
	})
}

var streamTestOptions = OpenOptions{MaxSize: 1 << 20, Backend: compress.PureGo}

// openFileBytes opens b as a file; openStreamBytes as a pipe's stream.
func openFileBytes(t *testing.T, b []byte) func() (*Input, error) {
	path := filepath.Join(t.TempDir(), "initrd.img")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() (*Input, error) { return Open(path, streamTestOptions) }
}

func openStreamBytes(b []byte) func() (*Input, error) {
	return func() (*Input, error) { return openStream(bytes.NewReader(b), nil, streamTestOptions, true) }
}

// streamEntry is what an entry's reader gives, for comparing.
type streamEntry struct {
	Name string
	Type archive.Type
	Data string
}

// readEntries reads the input open gives to its end: its entries, and the
// error that ended them (nil for io.EOF).
func readEntries(t *testing.T, open func() (*Input, error)) ([]streamEntry, error) {
	t.Helper()
	in, err := open()
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var out []streamEntry
	for len(out) < 1<<16 {
		e, err := in.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		data, err := io.ReadAll(in)
		if err != nil {
			return out, err
		}
		out = append(out, streamEntry{e.Name, e.Type, string(data)})
	}
	t.Fatal("no end")
	return nil, nil
}
