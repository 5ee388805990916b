package compress

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// benchInput is 8 MiB of the mixed data: a quarter random, the rest text,
// tables and zeros, so it compresses to roughly half like a rootfs does.
var benchInput = sync.OnceValue(func() []byte { return mixedData(8<<20, 91) })

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func BenchmarkCompress(b *testing.B) {
	data := benchInput()
	for _, c := range compressedCodecs {
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var out countWriter
			for b.Loop() {
				out = countWriter{}
				w, _, err := NewWriter(&out, c, WriterOptions{Backend: PureGo})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.Write(data); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.n)/float64(len(data)), "ratio")
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	data := benchInput()
	for _, c := range append(compressedCodecs[:len(compressedCodecs):len(compressedCodecs)], Bzip2) {
		b.Run(c.String(), func(b *testing.B) {
			var compressed []byte
			if c == Bzip2 {
				compressed = mustRunTool(b, data, "bzip2", "-9", "-c")
			} else {
				compressed = compress(b, c, WriterOptions{}, data)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r, _, err := NewReader(bytes.NewReader(compressed), ReaderOptions{Backend: PureGo})
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, r)
				if err != nil {
					b.Fatal(err)
				}
				if n != int64(len(data)) {
					b.Fatalf("%d bytes out, want %d", n, len(data))
				}
				r.Close()
			}
		})
	}
}
