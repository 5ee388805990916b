package compress

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGzipHeader checks that the header is that of `gzip -9 -n`: no name,
// no timestamp, nothing that would make two builds differ.
func TestGzipHeader(t *testing.T) {
	type header struct {
		Flags byte
		MTime [4]byte
		XFL   byte
	}
	tests := []struct {
		level int
		xfl   byte // 2: slowest compression, 4: fastest, 0: other
	}{
		{0, 2},
		{9, 2},
		{6, 0},
		{1, 4},
	}
	for _, tt := range tests {
		out := compress(t, Gzip, WriterOptions{Level: tt.level}, []byte("rootfs"))
		got := header{Flags: out[3], MTime: [4]byte(out[4:8]), XFL: out[8]}
		if diff := cmp.Diff(header{XFL: tt.xfl}, got); diff != "" {
			t.Errorf("level %d: header mismatch (-want +got):\n%s", tt.level, diff)
		}
	}
}
