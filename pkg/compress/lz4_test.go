package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLz4LegacyFormat checks the framing the kernel's unlz4 expects: the
// magic, then blocks of at most 8 MiB of input each, each prefixed by its
// compressed size and no flags, with no end marker or checksum.
func TestLz4LegacyFormat(t *testing.T) {
	data := mixedData(17<<20, 51) // three blocks
	out := compress(t, Lz4Legacy, WriterOptions{Level: 1}, data)
	if !bytes.HasPrefix(out, magicLz4Legacy) {
		t.Fatalf("magic % x", out[:4])
	}
	var sizes []uint32
	off := 4
	for off < len(out) {
		if off+4 > len(out) {
			t.Fatalf("partial block size at %d", off)
		}
		size := binary.LittleEndian.Uint32(out[off:])
		// The kernel rejects a chunk larger than LZ4_compressBound(8 MiB);
		// the top bit, which flags uncompressed blocks in frames, must
		// never be set here.
		if int(size) > lz4LegacyBound {
			t.Fatalf("block at %d: size %#x beyond the kernel's bound", off, size)
		}
		sizes = append(sizes, size)
		off += 4 + int(size)
	}
	if off != len(out) {
		t.Fatalf("blocks end at %d, stream at %d", off, len(out))
	}
	if len(sizes) != 3 {
		t.Errorf("%d blocks, want 3 (8 MiB each)", len(sizes))
	}
}

// TestLz4LegacyIncompressible makes sure random input, which the frame
// format would store raw with a flag, still becomes ordinary blocks.
func TestLz4LegacyIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 52))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	out := compress(t, Lz4Legacy, WriterOptions{}, data)
	if size := binary.LittleEndian.Uint32(out[4:]); size>>31 != 0 {
		t.Fatalf("block size %#x has the top bit set", size)
	}
	got, _, err := decompress(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("mismatch")
	}
}

// TestLz4LegacyConcatenated: the kernel reads a legacy magic in place of a
// block size as the start of another frame.
func TestLz4LegacyConcatenated(t *testing.T) {
	a, b, c := mixedData(10<<10, 53), mixedData(0, 0), mixedData(9<<20, 54)
	in := concat(
		compress(t, Lz4Legacy, WriterOptions{}, a),
		compress(t, Lz4Legacy, WriterOptions{}, b),
		compress(t, Lz4Legacy, WriterOptions{Level: 1}, c),
		compress(t, Lz4Legacy, WriterOptions{}, a),
	)
	got, codec, err := decompress(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(digestOf(Lz4Legacy, concat(a, b, c, a)), digestOf(codec, got)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestSkippableFrames covers the skippable frames LZ4 and Zstandard share,
// before, between and after data frames.
func TestSkippableFrames(t *testing.T) {
	a, b := mixedData(3<<10, 55), mixedData(2<<10, 56)
	skip := skippable(7, []byte("build-id 1234"))
	legacy := func(d []byte) []byte { return compress(t, Lz4Legacy, WriterOptions{}, d) }
	frame := func(d []byte) []byte { return compress(t, Lz4Frame, WriterOptions{}, d) }
	zst := func(d []byte) []byte { return compress(t, Zstd, WriterOptions{}, d) }
	tests := []struct {
		name    string
		in      []byte
		codec   Codec
		want    []byte
		wantErr bool
	}{
		{name: "before legacy", in: concat(skip, legacy(a)), codec: Lz4Legacy, want: a},
		{name: "before frame", in: concat(skip, skip, frame(a)), codec: Lz4Frame, want: a},
		{name: "between frames", in: concat(frame(a), skip, frame(b)), codec: Lz4Frame, want: concat(a, b)},
		{name: "after frame", in: concat(frame(a), skip), codec: Lz4Frame, want: a},
		{name: "before zstd", in: concat(skip, zst(a)), codec: Zstd, want: a},
		{name: "between zstd", in: concat(zst(a), skip, zst(b)), codec: Zstd, want: concat(a, b)},
		{name: "empty skippable", in: concat(skippable(0, nil), zst(a)), codec: Zstd, want: a},
		{name: "only skippable", in: concat(skip, skip), codec: None, want: nil},
		// Legacy streams have no frame boundaries for a skippable frame to
		// sit on: the kernel would read its magic as a block size.
		{name: "between legacy", in: concat(legacy(a), skip, legacy(b)), codec: Lz4Legacy, wantErr: true},
		{name: "truncated", in: concat(skip[:len(skip)-1]), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, c, err := decompress(bytes.NewReader(tt.in))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error, %d bytes out", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(tt.codec, tt.want), digestOf(c, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLz4FrameHeader checks the frame descriptor we write: version 1,
// independent blocks, content checksum, 4 MiB blocks.
func TestLz4FrameHeader(t *testing.T) {
	out := compress(t, Lz4Frame, WriterOptions{}, []byte("x"))
	if diff := cmp.Diff([]byte{0x04, 0x22, 0x4D, 0x18, 0x64, 0x70}, out[:6]); diff != "" {
		t.Errorf("magic, FLG and BD (-want +got):\n%s", diff)
	}
}

// TestLz4LegacyParallelDecode reads streams of many blocks, which the
// decoder spreads over workers, on one and on several cores: the blocks
// must come out in stream order whatever finishes first.
func TestLz4LegacyParallelDecode(t *testing.T) {
	data := mixedData(5*lz4LegacyBlock+4321, 57)
	stream := concat(compress(t, Lz4Legacy, WriterOptions{Level: 1}, data), compress(t, Lz4Legacy, WriterOptions{Level: 1}, data[:lz4LegacyBlock]))
	want := digestOf(Lz4Legacy, concat(data, data[:lz4LegacyBlock]))
	for _, procs := range []int{1, 2, 7} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			got, c, err := decompress(bytes.NewReader(stream))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, digestOf(c, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLz4LegacySizeTrailer: the kernel's build appends the uncompressed
// size to its lz4 images (size_append). Those 4 bytes end the stream when
// they match what was decoded; otherwise they are a truncated block.
func TestLz4LegacySizeTrailer(t *testing.T) {
	data := mixedData(lz4LegacyBlock+999, 58)
	stream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, data)
	le32 := func(v int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

	got, _, err := decompress(bytes.NewReader(concat(stream, le32(len(data)))))
	if err != nil {
		t.Fatalf("with the right size: %v", err)
	}
	if diff := cmp.Diff(digestOf(Lz4Legacy, data), digestOf(Lz4Legacy, got)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	_, _, err = decompress(bytes.NewReader(concat(stream, le32(len(data)-1))))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("with a wrong size: got %v, want an unexpected EOF", err)
	}
	checkCorruptErr(t, Lz4Legacy, "wrong size trailer", err)
}

// TestLz4LegacyCloseEarly stops reading mid-stream: Close must return at
// once and release the decoder's goroutines, with blocks still in flight.
func TestLz4LegacyCloseEarly(t *testing.T) {
	data := mixedData(6*lz4LegacyBlock, 59)
	stream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, data)
	before := runtime.NumGoroutine()
	for range 20 {
		zr, _, err := NewReader(bytes.NewReader(stream), ReaderOptions{Backend: PureGo})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(zr, make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := zr.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := zr.Read(make([]byte, 1)); err == nil {
			t.Fatal("Read after Close succeeded")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}
