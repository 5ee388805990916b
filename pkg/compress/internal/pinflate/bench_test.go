package pinflate

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// benchInput is PINFLATE_FILE (a raw deflate stream, such as the bench's
// rootfs.cpio.gz without its 10-byte header and 8-byte trailer), or
// sample data.
func benchInput(b *testing.B) []byte {
	if p := os.Getenv("PINFLATE_FILE"); p != "" {
		comp, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return comp
	}
	return deflate(b, sample(32<<20, 1), 9)
}

func BenchmarkKlauspost(b *testing.B) {
	comp := benchInput(b)
	for b.Loop() {
		n, err := io.Copy(io.Discard, flate.NewReader(bytes.NewReader(comp)))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n)
	}
}

func BenchmarkSequential(b *testing.B) {
	comp := benchInput(b)
	for b.Loop() {
		st := newStream(comp, 0, nil, nil, 1<<20)
		var n int64
		for !st.s.done {
			p, err := st.next(1 << 62)
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(p))
		}
		b.SetBytes(n)
	}
}

// BenchmarkParallel reads PINFLATE_GZ (a gzip file, such as the bench's
// rootfs.cpio.gz) with the parallel reader; BenchmarkKlauspostGzip is
// the same file through klauspost's gzip reader.
func BenchmarkParallel(b *testing.B) {
	f, size := gzFile(b)
	for b.Loop() {
		chunk, _ := strconv.Atoi(os.Getenv("PINFLATE_CHUNK_KIB"))
		r, err := NewReader(f, 0, size, Options{ChunkSize: chunk << 10})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
		b.SetBytes(n)
		b.ReportMetric(float64(r.Stats().Stretch), "stretches")
	}
}

func BenchmarkKlauspostGzip(b *testing.B) {
	f, size := gzFile(b)
	for b.Loop() {
		zr, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, zr)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n)
	}
}

func gzFile(b testing.TB) (*os.File, int64) {
	p := os.Getenv("PINFLATE_GZ")
	if p == "" {
		b.Skip("PINFLATE_GZ not set")
	}
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return f, fi.Size()
}
