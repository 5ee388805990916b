package compress

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zstdRawFrame returns a frame with the given window exponent (window =
// 1 << (10+exp)) holding one raw block of data: it declares a window
// without needing one.
func zstdRawFrame(exp byte, data []byte) []byte {
	// Descriptor 0x00: no single segment, no checksum, no content size,
	// no dictionary; so the window descriptor byte follows.
	b := concat(magicZstd, []byte{0x00, exp << 3})
	hdr := uint32(len(data))<<3 | 1 // raw block, last
	b = append(b, byte(hdr), byte(hdr>>8), byte(hdr>>16))
	return append(b, data...)
}

func TestZstdWindowLimit(t *testing.T) {
	tests := []struct {
		name    string
		exp     byte
		wantErr bool
	}{
		{"8 MiB, zstd -19", 13, false},
		{"128 MiB, --long", 17, false},
		{"256 MiB", 18, true},
		{"2 GiB", 21, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := decompress(bytes.NewReader(zstdRawFrame(tt.exp, []byte("payload"))))
			if tt.wantErr {
				var ce *Error
				if !errors.As(err, &ce) || ce.Codec != Zstd {
					t.Fatalf("error = %v, want a zstd error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("payload", string(got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestZstdFrameChecksum: we always write the content checksum, without
// which a damaged frame could decode to wrong data silently.
func TestZstdFrameChecksum(t *testing.T) {
	for _, size := range []int{0, 1, 100 << 10} {
		out := compress(t, Zstd, WriterOptions{}, mixedData(size, 61))
		if out[4]&0x04 == 0 {
			t.Errorf("%d bytes: frame descriptor %#02x lacks the checksum flag", size, out[4])
		}
	}
}
