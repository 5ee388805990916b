package container

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// cpioOf is a newc archive of the files named (each holding its name),
// and a trailer.
func cpioOf(t testing.TB, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := archive.NewCpioWriter(&buf, archive.Newc)
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, n := range names {
		e := &archive.Entry{Name: n, Type: archive.TypeRegular, Mode: 0o644, ModTime: mt, Size: int64(len(n)), Nlink: 1, Inode: uint64(i + 1)}
		if strings.HasSuffix(n, "/") {
			e = &archive.Entry{Name: strings.TrimSuffix(n, "/"), Type: archive.TypeDir, Mode: 0o755, ModTime: mt, Nlink: 2, Inode: uint64(i + 1)}
		}
		if err := w.WriteHeader(e); err != nil {
			t.Fatal(err)
		}
		if e.Type == archive.TypeRegular {
			io.WriteString(w, n)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// squeeze compresses b with a codec's own tool.
func squeeze(t testing.TB, b []byte, tool ...string) []byte {
	t.Helper()
	archivetest.RequireTool(t, tool[0])
	cmd := exec.Command(tool[0], tool[1:]...)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", tool, err)
	}
	return out
}

type segRow struct {
	Offset, Length, Pad int64
	Codec               string
	Entries             int
}

// readSegments lists the file's entry names and its segments.
func readSegments(t *testing.T, file []byte) ([]string, []segRow, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "initrd.img")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(path, OpenOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	var names []string
	for {
		e, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return names, nil, err
		}
		b, err := io.ReadAll(in)
		if err != nil {
			return names, nil, err
		}
		if e.Type == archive.TypeRegular && string(b) != e.Name {
			t.Errorf("%s holds %q", e.Name, b)
		}
		names = append(names, e.Name)
	}
	var rows []segRow
	for _, s := range in.Segments() {
		rows = append(rows, segRow{s.Offset, s.Length, s.Pad, s.Codec.String(), s.Entries})
	}
	return names, rows, nil
}

func pad(b []byte, n int) []byte { return append(b, make([]byte, n)...) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestSegmentEnds: what ends a segment, and what the kernel refuses.
func TestSegmentEnds(t *testing.T) {
	early := cpioOf(t, "a")
	main := cpioOf(t, "b")
	gz := squeeze(t, main, "gzip", "-n", "-c")
	lz := squeeze(t, main, "lz4", "-l", "-q", "-c")
	for _, tc := range []struct {
		name    string
		file    []byte
		segs    int
		wantErr string
	}{
		// unlz4 takes a block size of 0 for the end of the stream.
		{name: "lz4 zero block then raw", file: cat(lz, make([]byte, 4+(4-len(lz)%4)%4), early), segs: 2},
		{name: "gzip gzip with grub's padding", file: cat(pad(gz, 4-len(gz)%4), gz), segs: 2},
		{name: "two raw members", file: cat(early, early), segs: 1},
		// unzstd decompresses one frame: the next is a segment of its own.
		{name: "two zstd frames", file: cat(squeeze(t, main, "zstd", "-q", "-c"), squeeze(t, main, "zstd", "-q", "-c")), segs: 2},
		{name: "unknown magic", file: cat(early, []byte("junk")), wantErr: "segment 2 at offset 512 (after segment 1, none at offset 0): invalid magic at start of compressed archive (6a756e6b)"},
		{name: "cut within an entry", file: squeeze(t, main[:100], "gzip", "-c"), wantErr: "junk at the end of compressed archive"},
		{name: "junk inside", file: cat(early, squeeze(t, cat(main, []byte("x")), "gzip", "-c")), wantErr: "segment 2 (gzip at offset 512): offset 512: junk within compressed archive"},
		{name: "cut gzip", file: cat(early, gz[:len(gz)-4]), wantErr: "segment 2 (gzip at offset 512)"},
		{name: "misaligned raw", file: cat(gz, []byte{0}, early), wantErr: "not a multiple of 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, segs, err := readSegments(t, tc.file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(segs) != tc.segs {
				t.Errorf("%d segments, want %d: %v", len(segs), tc.segs, segs)
			}
		})
	}
}
