package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 1 << 20}
	for _, c := range writableCodecs {
		for _, size := range sizes {
			t.Run(fmt.Sprintf("%v/%d", c, size), func(t *testing.T) {
				data := mixedData(size, uint64(size))
				compressed := compress(t, c, WriterOptions{}, data)
				got, gotCodec, err := decompress(bytes.NewReader(compressed))
				if err != nil {
					t.Fatalf("decompress: %v", err)
				}
				if diff := cmp.Diff(digestOf(c, data), digestOf(gotCodec, got)); diff != "" {
					t.Errorf("round trip mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestRoundTripShortReads feeds the compressed data a byte at a time and
// reads the output in odd-sized pieces, the way pipes deliver data.
func TestRoundTripShortReads(t *testing.T) {
	data := mixedData(200<<10, 7)
	for _, c := range writableCodecs {
		t.Run(c.String(), func(t *testing.T) {
			compressed := compress(t, c, WriterOptions{}, data)
			zr, gotCodec, err := NewReader(iotest.OneByteReader(bytes.NewReader(compressed)), ReaderOptions{Backend: PureGo})
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			var got []byte
			buf := make([]byte, 1013)
			for {
				n, err := zr.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(digestOf(c, data), digestOf(gotCodec, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriterLevels round-trips every accepted level and rejects the others.
func TestWriterLevels(t *testing.T) {
	data := mixedData(64<<10, 3)
	tests := []struct {
		codec   Codec
		valid   []int
		invalid []int
	}{
		{Gzip, []int{1, 5, 9}, []int{-1, 10}},
		{Xz, []int{1, 6, 9}, []int{-1, 10}},
		{Lz4Legacy, []int{1, 2, 3, 9, 12}, []int{-1, 13}},
		{Lz4Frame, []int{1, 3, 9, 12}, []int{-1, 13}},
		{Zstd, []int{1, 3, 7, 19, 22}, []int{-1, 23}},
	}
	for _, tt := range tests {
		for _, lvl := range tt.valid {
			t.Run(fmt.Sprintf("%v/%d", tt.codec, lvl), func(t *testing.T) {
				compressed := compress(t, tt.codec, WriterOptions{Level: lvl}, data)
				got, c, err := decompress(bytes.NewReader(compressed))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(digestOf(tt.codec, data), digestOf(c, got)); diff != "" {
					t.Errorf("mismatch (-want +got):\n%s", diff)
				}
			})
		}
		for _, lvl := range tt.invalid {
			if _, _, err := NewWriter(io.Discard, tt.codec, WriterOptions{Level: lvl, Backend: PureGo}); err == nil {
				t.Errorf("%v: level %d accepted", tt.codec, lvl)
			}
		}
	}
}

func TestNewWriterErrors(t *testing.T) {
	tests := []struct {
		name        string
		codec       Codec
		opt         WriterOptions
		unsupported bool
	}{
		{name: "bzip2", codec: Bzip2, unsupported: true},
		{name: "unknown codec", codec: Codec(42)},
		{name: "negative threads", codec: Zstd, opt: WriterOptions{Threads: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := tt.opt
			opt.Backend = PureGo
			w, _, err := NewWriter(io.Discard, tt.codec, opt)
			if err == nil {
				w.Close()
				t.Fatal("NewWriter succeeded")
			}
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, got, tt.unsupported)
			}
		})
	}
}

// TestWriterDeterministic guards reproducible images: the same input and
// options must give the same bytes.
func TestWriterDeterministic(t *testing.T) {
	data := mixedData(1<<20, 11)
	for _, c := range compressedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			first := compress(t, c, WriterOptions{}, data)
			second := compress(t, c, WriterOptions{Threads: 1}, data)
			if diff := cmp.Diff(digestOf(c, first), digestOf(c, second)); diff != "" {
				t.Errorf("output differs between runs (-first +second):\n%s", diff)
			}
		})
	}
}

// TestWriterThreads checks the documented effect of Threads on input long
// enough for several lz4 blocks and several zstd sections: the output is
// the same for every thread count that must agree, and it decompresses.
func TestWriterThreads(t *testing.T) {
	tests := []struct {
		codec   Codec
		size    int
		level   int
		threads []int // thread counts that must all give the same output
	}{
		{Lz4Legacy, 20 << 20, 3, []int{1, 3}},
		{Lz4Frame, 20 << 20, 3, []int{1, 3}},
		{Gzip, 4 << 20, 1, []int{1, 3}},
		{Xz, 1 << 20, 1, []int{1, 3}},
		{Zstd, 70 << 20, 3, []int{2, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.codec.String(), func(t *testing.T) {
			if testing.Short() && tt.size > 8<<20 {
				t.Skip("large input in -short mode")
			}
			data := mixedData(tt.size, 12)
			var first []byte
			for _, n := range tt.threads {
				got := compress(t, tt.codec, WriterOptions{Level: tt.level, Threads: n}, data)
				if first == nil {
					first = got
					continue
				}
				if diff := cmp.Diff(digestOf(tt.codec, first), digestOf(tt.codec, got)); diff != "" {
					t.Errorf("threads=%d differs from threads=%d (-want +got):\n%s", n, tt.threads[0], diff)
				}
			}
			back, c, err := decompress(bytes.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(tt.codec, data), digestOf(c, back)); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriterClose(t *testing.T) {
	for _, c := range writableCodecs {
		t.Run(c.String(), func(t *testing.T) {
			var buf bytes.Buffer
			w, _, err := NewWriter(&buf, c, WriterOptions{Backend: PureGo})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("data")); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			size := buf.Len()
			if err := w.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if buf.Len() != size {
				t.Errorf("second Close wrote %d more bytes", buf.Len()-size)
			}
			if _, err := w.Write([]byte("more")); err == nil {
				t.Error("Write after Close succeeded")
			}
		})
	}
}

// closeRecorder fails the test if the package closes the caller's stream.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error {
	c.closed = true
	return nil
}

func TestCloseLeavesUnderlyingOpen(t *testing.T) {
	for _, c := range writableCodecs {
		t.Run(c.String(), func(t *testing.T) {
			dst := &closeRecorder{}
			w, _, err := NewWriter(dst, c, WriterOptions{Backend: PureGo})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(mixedData(1000, 2)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			src := &closeRecorder{}
			src.Write(dst.Bytes())
			r, _, err := NewReader(src, ReaderOptions{Backend: PureGo})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if dst.closed || src.closed {
				t.Errorf("closed the underlying writer (%v) or reader (%v)", dst.closed, src.closed)
			}
			if _, err := r.Read(make([]byte, 1)); err == nil || err == io.EOF {
				t.Errorf("Read after Close = %v, want an error", err)
			}
		})
	}
}

// TestConcatenated checks that several streams back to back read as one,
// as `cat a.gz b.gz | gzip -d` and the kernel allow.
func TestConcatenated(t *testing.T) {
	a, b := mixedData(70<<10, 21), mixedData(5<<10, 22)
	for _, c := range compressedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			in := concat(compress(t, c, WriterOptions{}, a), compress(t, c, WriterOptions{}, b))
			got, gotCodec, err := decompress(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(c, concat(a, b)), digestOf(gotCodec, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("xz with stream padding", func(t *testing.T) {
		in := concat(compress(t, Xz, WriterOptions{}, a), make([]byte, 8), compress(t, Xz, WriterOptions{}, b), make([]byte, 4))
		got, _, err := decompress(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, concat(a, b)) {
			t.Error("mismatch")
		}
	})
}
