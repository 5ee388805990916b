package container

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// Every producer names a level for every codec rootfs-trim writes, and
// the writer takes it.
func TestProducersHaveEveryCodec(t *testing.T) {
	for c := compress.None + 1; c <= compress.Lzo; c++ {
		if !c.CanWrite() {
			continue
		}
		for _, p := range producers {
			l, ok := p.levels[c]
			if !ok {
				t.Errorf("%s: no level for %s", p.name, c)
				continue
			}
			if _, _, err := compress.NewWriter(io.Discard, c, compress.WriterOptions{Level: l, Backend: compress.PureGo}); err != nil {
				t.Errorf("%s: %s level %d: %v", p.name, c, l, err)
			}
		}
	}
}

func TestChooseLevel(t *testing.T) {
	gzipXFL := func(xfl byte) []byte { return []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3} }
	zstdWindow := func(wd byte) []byte { return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, wd} }
	tests := []struct {
		name      string
		c         compress.Codec
		head      []byte
		segmented bool
		want      levelChoice
	}{
		{"gzip -1", compress.Gzip, gzipXFL(4), true, levelChoice{1, "the input's: its XFL 4", false}},
		{"gzip -9", compress.Gzip, gzipXFL(2), false, levelChoice{9, "the input's: its XFL 2", false}},
		{"gzip default, segmented", compress.Gzip, gzipXFL(0), true,
			levelChoice{6, "initramfs-tools' default; the input's XFL 0 is written at levels 2-8", true}},
		{"gzip default, lone", compress.Gzip, gzipXFL(0), false,
			levelChoice{6, "initramfs-tools' default; the input's XFL 0 is written at levels 2-8", true}},
		{"zstd -9 or -15, segmented", compress.Zstd, zstdWindow(0x60), true,
			levelChoice{9, "initramfs-tools' default; the input's window 4 MiB is written at levels 9-16", true}},
		{"zstd -19, segmented", compress.Zstd, zstdWindow(0x68), true,
			levelChoice{19, "Buildroot's default; the input's window 8 MiB is written at levels 17-19", true}},
		{"zstd -3", compress.Zstd, zstdWindow(0x58), true,
			levelChoice{3, "the input's window 2 MiB is written at levels 3-8", true}},
		{"zstd -1", compress.Zstd, zstdWindow(0x48), false, levelChoice{1, "the input's window 512 KiB is written at level 1", false}},
		{"zstd, no window, segmented", compress.Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x10}, true,
			levelChoice{9, "initramfs-tools' default; the input does not record its level", true}},
		{"zstd, no window, lone", compress.Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x10}, false,
			levelChoice{19, "Buildroot's default; the input does not record its level", true}},
		{"xz -1 or dracut's", compress.Xz, []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x02\x00\x21\x01\x10\x00\x00\x00\x00\x00\x00\x00"), true,
			levelChoice{1, "the input's dictionary 1 MiB is written at level 1", false}},
		{"xz -6, lone", compress.Xz, []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x02\x00\x21\x01\x16\x00\x00\x00\x00\x00\x00\x00"), false,
			levelChoice{6, "initramfs-tools' default; the input's dictionary 8 MiB is written at levels 5-6", true}},
		{"lz4", compress.Lz4Legacy, []byte{0x02, 0x21, 0x4c, 0x18}, true,
			levelChoice{9, "what Buildroot, initramfs-tools and dracut all write", false}},
		{"bzip2 is not written", compress.Bzip2, []byte("BZh9"), true, levelChoice{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, chooseLevel(tt.c, tt.head, tt.segmented)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
