package compress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// skippable returns a skippable frame (magic 0x184D2A50+nibble) holding
// payload.
func skippable(nibble byte, payload []byte) []byte {
	b := []byte{0x50 | nibble&0x0F, 0x2A, 0x4D, 0x18}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

func TestSniff(t *testing.T) {
	var (
		gz         = []byte{0x1F, 0x8B, 0x08, 0x00}
		xzMagic    = []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}
		legacy     = []byte{0x02, 0x21, 0x4C, 0x18}
		frame      = []byte{0x04, 0x22, 0x4D, 0x18}
		zst        = []byte{0x28, 0xB5, 0x2F, 0xFD}
		bz2Block   = []byte("BZh91AY&SY")
		bz2Empty   = []byte{'B', 'Z', 'h', '9', 0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
		lzop       = []byte{0x89, 'L', 'Z', 'O', 0x00, 0x0D, 0x0A, 0x1A, 0x0A, 0x10}
		lzmaHeader = concat([]byte{0x5D, 0x00, 0x00, 0x00, 0x04}, bytes.Repeat([]byte{0xFF}, 8))
	)
	tests := []struct {
		name        string
		in          []byte
		want        Codec
		unsupported bool // error wrapping ErrUnsupported
	}{
		{name: "empty", in: nil, want: None},
		{name: "1 byte gzip prefix", in: gz[:1], want: None},
		{name: "2 byte gzip prefix", in: gz[:2], want: None},
		{name: "3 byte gzip prefix", in: gz[:3], want: None},
		{name: "3 byte zstd prefix", in: zst[:3], want: None},
		{name: "3 byte lz4 prefix", in: legacy[:3], want: None},
		{name: "3 byte bzip2 prefix", in: []byte("BZh"), want: None},
		{name: "gzip", in: gz, want: Gzip},
		{name: "gzip with name flag", in: []byte{0x1F, 0x8B, 0x08, 0x08}, want: Gzip},
		{name: "gzip reserved flag", in: []byte{0x1F, 0x8B, 0x08, 0x20}, want: None},
		{name: "gzip other method", in: []byte{0x1F, 0x8B, 0x07, 0x00}, want: None},
		{name: "xz", in: xzMagic, want: Xz},
		{name: "xz 5 bytes", in: xzMagic[:5], want: None},
		{name: "lz4 legacy", in: legacy, want: Lz4Legacy},
		{name: "lz4 frame", in: frame, want: Lz4Frame},
		{name: "zstd", in: zst, want: Zstd},
		{name: "bzip2 block", in: bz2Block, want: Bzip2},
		{name: "bzip2 empty stream", in: bz2Empty, want: Bzip2},
		{name: "bzip2 bad level", in: []byte("BZh01AY&SY"), want: None},
		{name: "bzip2 magic then text", in: []byte("BZh9 is not a stream"), want: None},
		{name: "bzip2 short", in: bz2Block[:9], want: None},
		{name: "cpio newc", in: []byte("070701000000010000"), want: None},
		{name: "tar", in: append([]byte("./bin/busybox"), make([]byte, 100)...), want: None},
		// NewReader discards skippable frames first (TestSkippableFrames).
		{name: "skippable then zstd", in: concat(skippable(0, []byte("meta")), zst), want: None},
		{name: "lzop", in: lzop, unsupported: true},
		{name: "lzma alone", in: lzmaHeader, unsupported: true},
		{name: "lzma alone 1.5 MiB dict", in: concat([]byte{0x5D, 0x00, 0x00, 0x18, 0x00}, make([]byte, 8)), unsupported: true},
		{name: "lzma odd dict", in: concat([]byte{0x5D, 0x01, 0x02, 0x03, 0x04}, bytes.Repeat([]byte{0xFF}, 8)), want: None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReader(bytes.NewReader(tt.in))
			got, err := Sniff(br)
			switch {
			case tt.unsupported:
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("Sniff error = %v, want ErrUnsupported", err)
				}
			case err != nil:
				t.Fatalf("Sniff: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Sniff mismatch (-want +got):\n%s", diff)
			}
			// Sniff must not consume anything.
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.in, rest, cmpEmptyEqual); diff != "" {
				t.Errorf("Sniff consumed input (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyEqual = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

// TestSniffWriterOutput checks detection on what our writers produce,
// empty input included.
func TestSniffWriterOutput(t *testing.T) {
	for _, c := range writableCodecs {
		for _, size := range []int{0, 1, 4096} {
			data := compress(t, c, WriterOptions{}, mixedData(size, 1))
			got, err := Sniff(bufio.NewReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatalf("%v/%d: Sniff: %v", c, size, err)
			}
			want := c
			if c == None && size < 4 {
				want = None
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v/%d: Sniff mismatch (-want +got):\n%s", c, size, diff)
			}
		}
	}
}

// TestSniffLargeSkippable covers a skippable frame larger than the
// buffer, which NewReader discards before it sniffs.
func TestSniffLargeSkippable(t *testing.T) {
	payload := []byte("behind a large skippable frame")
	in := concat(skippable(3, make([]byte, 100<<10)), compress(t, Zstd, WriterOptions{}, payload))
	got, c, err := decompress(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(digestOf(Zstd, payload), digestOf(c, got)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
