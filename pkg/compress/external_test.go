package compress

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// The external backend: the tools' output is read back by our decoders and
// theirs, does not depend on the thread count, and a damaged stream is an
// error, never short data.
func TestExternalBackend(t *testing.T) {
	data := mixedData(1<<20, 7)
	for _, c := range []Codec{Gzip, Xz, Zstd, Lz4Legacy, Lz4Frame} {
		t.Run(c.String(), func(t *testing.T) {
			tool := map[Codec]string{Gzip: "pigz", Xz: "xz", Zstd: "zstd", Lz4Legacy: "lz4", Lz4Frame: "lz4"}[c]
			requireTool(t, tool)
			var outs [][]byte
			for _, threads := range []int{1, 2} {
				var buf bytes.Buffer
				w, desc, err := NewWriter(&buf, c, WriterOptions{Level: 6, Threads: threads, Backend: External})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(desc, "external "+tool) || strings.Contains(desc, "/") {
					t.Errorf("description %q: want the tool's name and no path", desc)
				}
				w.Write(data)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, buf.Bytes())
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Errorf("output with 1 and 2 threads differs")
			}
			for _, b := range []Backend{PureGo, Auto, External} {
				r, got, err := NewReader(bytes.NewReader(outs[0]), ReaderOptions{Backend: b})
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(plain, data) || got != c {
					t.Fatalf("backend %v: read back %d bytes, %v, codec %v", b, len(plain), err, got)
				}
			}
			// Truncated: an error from the reader, whichever backend.
			for _, b := range []Backend{PureGo, Auto, External} {
				r, _, err := NewReader(bytes.NewReader(outs[0][:len(outs[0])*2/3]), ReaderOptions{Backend: b})
				if err == nil {
					_, err = io.ReadAll(r)
					r.Close()
				}
				if err == nil {
					t.Errorf("backend %v: a truncated stream read without error", b)
				}
			}
		})
	}
}

func TestExternalWriterReportsToolFailure(t *testing.T) {
	requireTool(t, "xz")
	// The output fails, as a full disk would: the tool dies of it, and
	// its error reaches the caller.
	w, _, err := NewWriter(failingWriter{}, Xz, WriterOptions{Level: 1, Backend: External})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(mixedData(4<<20, 8))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "xz") {
		t.Fatalf("Close = %v, want an xz error", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// TestLz4LegacyBlockTool: the block the splicer gets is exactly the block
// `lz4 -l -9` writes for those bytes, size header included.
func TestLz4LegacyBlockTool(t *testing.T) {
	requireTool(t, "lz4")
	data := mixedData(3<<20, 7)
	whole := mustRunTool(t, data, "lz4", "-l", "-9", "-q", "-c")
	tool, ok, err := Lz4LegacyBlockTool(0, Auto)
	if err != nil || !ok {
		t.Fatalf("Lz4LegacyBlockTool: %v, %v", ok, err)
	}
	got, err := tool(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, whole[4:]) {
		t.Errorf("block of %d bytes differs from lz4 -l -9's stream after its magic (%d bytes)", len(got), len(whole)-4)
	}
	if _, err := tool(make([]byte, lz4LegacyBlock+1)); err == nil {
		t.Error("a block over 8 MiB was accepted")
	}
	if _, ok, _ := Lz4LegacyBlockTool(0, PureGo); ok {
		t.Error("--backend go runs the lz4 tool")
	}
}
