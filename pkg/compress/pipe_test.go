package compress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countingReads counts the reads that reach the pipe.
type countingReads struct {
	r     io.Reader
	reads int
}

func (c *countingReads) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestBatchedPipeBatches writes as xz does, 8 KiB at a time at a steady
// pace, and checks that the reader lets the pipe fill: a reader that reads
// whenever there is something does about one read per write (and so one
// wake-up of each side), which is what cost the xz pipeline a fifth of its
// time on two cores.
func TestBatchedPipeBatches(t *testing.T) {
	bp, w, err := newToolPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer bp.Close()
	const chunk, chunks = 8 << 10, 2048 // 16 MiB
	want := mixedData(chunk*chunks, 7)
	go func() {
		defer w.Close()
		for i := 0; i < chunks; i++ {
			if _, err := w.Write(want[i*chunk : (i+1)*chunk]); err != nil {
				return
			}
			if i%4 == 3 {
				time.Sleep(100 * time.Microsecond) // about 150 MB/s at most
			}
		}
	}()
	counted := &countingReads{r: bp.src}
	bp.src = counted
	got, err := io.ReadAll(bp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if counted.reads > chunks/8 {
		t.Errorf("%d reads for %d writes of 8 KiB, want at most %d (the pipe is %d bytes)", counted.reads, chunks, chunks/8, bp.capacity)
	}
}

// fileSource reads path from offset base, and hands the tool a file of
// its own when allowed.
type fileSource struct {
	f      *os.File
	path   string
	base   int64
	n      int64 // bytes Read returned
	allow  bool
	handed *os.File
}

func (s *fileSource) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	s.n += int64(n)
	return n, err
}

func (s *fileSource) ToolInput(unread int) (*os.File, bool) {
	if !s.allow {
		return nil, false
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, false
	}
	if _, err := f.Seek(s.base+s.n-int64(unread), io.SeekStart); err != nil {
		f.Close()
		return nil, false
	}
	s.handed = f
	return f, true
}

// TestToolReadsTheFileItself puts an xz stream after unrelated bytes in a
// file, as a segment sits in an initrd, and checks that xz is handed the
// file at the stream's first byte (after what the sniffing buffered) and
// reads the rest itself, the bytes and the errors as through the pipe.
func TestToolReadsTheFileItself(t *testing.T) {
	requireTool(t, "xz")
	data := mixedData(3<<20, 11)
	stream := mustRunTool(t, data, "xz", "-1", "-C", "crc32", "-c")
	prefix := bytes.Repeat([]byte("junk"), 1000)
	for _, tc := range []struct {
		name    string
		cut     int // bytes dropped from the stream's end
		allow   bool
		wantErr string
	}{
		{name: "handed", allow: true},
		{name: "piped", allow: false},
		{name: "truncated handed", cut: 100, allow: true, wantErr: "Unexpected end of input"},
		{name: "truncated piped", cut: 100, allow: false, wantErr: "Unexpected end of input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in")
			if err := os.WriteFile(path, append(append([]byte{}, prefix...), stream[:len(stream)-tc.cut]...), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Seek(int64(len(prefix)), io.SeekStart); err != nil {
				t.Fatal(err)
			}
			src := &fileSource{f: f, path: path, base: int64(len(prefix)), allow: tc.allow}
			r, c, err := NewReader(src, ReaderOptions{Backend: External})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if src.handed != nil {
				src.handed.Close()
			}
			if c != Xz {
				t.Fatalf("codec %v, want xz", c)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if diff := cmp.Diff(digestOf(Xz, data), digestOf(Xz, got)); diff != "" {
				t.Fatalf("decoded data differs (-want +got):\n%s", diff)
			}
			read := src.n
			if tc.allow {
				if src.handed == nil {
					t.Fatal("the tool was not handed the file")
				}
				if read > readBufSize {
					t.Errorf("this process read %d bytes of the stream, want at most the sniffing's %d", read, readBufSize)
				}
			} else if want := int64(len(stream) - tc.cut); read != want {
				t.Errorf("read %d bytes through the pipe, want the stream's %d", read, want)
			}
		})
	}
}
