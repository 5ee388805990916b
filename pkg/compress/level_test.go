package compress

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The hint each tool's header gives at each level, read from the tools'
// own output (fed on a pipe, as mkinitramfs and dracut feed them, so the
// size is not known to them).
func TestLevelHintByTool(t *testing.T) {
	data := mixedData(1<<20, 38)
	tests := []struct {
		tool string
		args []string
		c    Codec
		want LevelHint
	}{
		{"gzip", []string{"-9n"}, Gzip, LevelHint{9, 9, "XFL 2", true}},
		{"gzip", []string{"-1n"}, Gzip, LevelHint{1, 1, "XFL 4", true}},
		{"gzip", []string{"-n"}, Gzip, LevelHint{2, 8, "XFL 0", false}},
		{"pigz", []string{"-9n"}, Gzip, LevelHint{9, 9, "XFL 2", true}},
		{"pigz", []string{"-1n"}, Gzip, LevelHint{1, 1, "XFL 4", true}},
		{"pigz", []string{"-n"}, Gzip, LevelHint{2, 8, "XFL 0", false}},
		{"xz", []string{"-9", "--check=crc32"}, Xz, LevelHint{9, 9, "dictionary 64 MiB", false}},
		{"xz", []string{"--check=crc32", "--threads=0"}, Xz, LevelHint{5, 6, "dictionary 8 MiB", false}},
		{"xz", []string{"-1", "--check=crc32"}, Xz, LevelHint{1, 1, "dictionary 1 MiB", false}},
		{"xz", []string{"--check=crc32", "--lzma2=dict=1MiB", "-T0"}, Xz, LevelHint{1, 1, "dictionary 1 MiB", false}}, // dracut's
		{"zstd", []string{"-q", "-1", "-T0"}, Zstd, LevelHint{1, 1, "window 512 KiB", false}},
		{"zstd", []string{"-q", "-3"}, Zstd, LevelHint{3, 8, "window 2 MiB", false}},
		{"zstd", []string{"-q", "-9", "-T0"}, Zstd, LevelHint{9, 16, "window 4 MiB", false}},  // initramfs-tools'
		{"zstd", []string{"-q", "-15", "-T0"}, Zstd, LevelHint{9, 16, "window 4 MiB", false}}, // dracut's
		{"zstd", []string{"-q", "-19"}, Zstd, LevelHint{17, 19, "window 8 MiB", false}},       // Buildroot's
		{"lz4", []string{"-l", "-9"}, Lz4Legacy, LevelHint{}},
	}
	for _, tt := range tests {
		out := mustRunTool(t, data, tt.tool, tt.args...)
		if diff := cmp.Diff(tt.want, ReadLevelHint(tt.c, out[:min(len(out), HintBytes)])); diff != "" {
			t.Errorf("%s %v: hint (-want +got):\n%s", tt.tool, tt.args, diff)
		}
	}
}

// A window that fits the content (the tool knew the size) says nothing;
// nor does a dictionary set by hand, nor headers cut short or of another
// codec.
func TestLevelHintSaysNothing(t *testing.T) {
	small := filepath.Join(t.TempDir(), "small")
	if err := os.WriteFile(small, mixedData(100000, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	zstdSmall := mustRunTool(t, nil, "zstd", "-q", "-19", "-c", small)
	tests := []struct {
		name string
		c    Codec
		head []byte
	}{
		{"zstd of a file whose size it knew", Zstd, zstdSmall},
		{"xz with a dictionary no preset has", Xz, mustRunTool(t, []byte("x"), "xz", "--lzma2=dict=6MiB")},
		{"zstd cut short", Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd}},
		{"xz cut short", Xz, []byte("\xfd7zXZ\x00\x00\x01")},
		{"gzip of another method", Gzip, []byte{0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 2, 3}},
		{"lz4", Lz4Legacy, []byte{0x02, 0x21, 0x4c, 0x18}},
	}
	for _, tt := range tests {
		if got := ReadLevelHint(tt.c, tt.head); got != (LevelHint{}) {
			t.Errorf("%s: hint %+v, want none", tt.name, got)
		}
	}
}

func FuzzReadLevelHint(f *testing.F) {
	f.Add(uint8(Xz), []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x04\xc0\xcd\x8d\x02\xa0\x8d\x06\x21\x01\x16\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(Zstd), []byte{0x28, 0xb5, 0x2f, 0xfd, 0x84, 0x48, 0xc0, 0xc6, 0x2d, 0})
	f.Add(uint8(Gzip), []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3})
	f.Fuzz(func(t *testing.T, c uint8, head []byte) {
		h := ReadLevelHint(Codec(c%8), head)
		if h.Lo > h.Hi || h.Lo < 0 || (h.Lo == 0) != (h.Field == "") {
			t.Fatalf("hint %+v", h)
		}
	})
}

func TestChooseLevel(t *testing.T) {
	gzipXFL := func(xfl byte) []byte { return []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3} }
	zstdWindow := func(wd byte) []byte { return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, wd} }
	tests := []struct {
		name      string
		c         Codec
		head      []byte
		segmented bool
		want      LevelChoice
	}{
		{"gzip -1", Gzip, gzipXFL(4), true, LevelChoice{1, "the input's: its XFL 4", false}},
		{"gzip -9", Gzip, gzipXFL(2), false, LevelChoice{9, "the input's: its XFL 2", false}},
		{"gzip default, segmented", Gzip, gzipXFL(0), true,
			LevelChoice{6, "initramfs-tools' default; the input's XFL 0 is written at levels 2-8", true}},
		{"gzip default, lone", Gzip, gzipXFL(0), false,
			LevelChoice{6, "initramfs-tools' default; the input's XFL 0 is written at levels 2-8", true}},
		{"zstd -9 or -15, segmented", Zstd, zstdWindow(0x60), true,
			LevelChoice{9, "initramfs-tools' default; the input's window 4 MiB is written at levels 9-16", true}},
		{"zstd -19, segmented", Zstd, zstdWindow(0x68), true,
			LevelChoice{19, "Buildroot's default; the input's window 8 MiB is written at levels 17-19", true}},
		{"zstd -3", Zstd, zstdWindow(0x58), true,
			LevelChoice{3, "the input's window 2 MiB is written at levels 3-8", true}},
		{"zstd -1", Zstd, zstdWindow(0x48), false, LevelChoice{1, "the input's window 512 KiB is written at level 1", false}},
		{"zstd, no window, segmented", Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x10}, true,
			LevelChoice{9, "initramfs-tools' default; the input does not record its level", true}},
		{"zstd, no window, lone", Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x10}, false,
			LevelChoice{19, "Buildroot's default; the input does not record its level", true}},
		{"xz -1 or dracut's", Xz, []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x02\x00\x21\x01\x10\x00\x00\x00\x00\x00\x00\x00"), true,
			LevelChoice{1, "the input's dictionary 1 MiB is written at level 1", false}},
		{"xz -6, lone", Xz, []byte("\xfd7zXZ\x00\x00\x01\x69\x22\xde\x36\x02\x00\x21\x01\x16\x00\x00\x00\x00\x00\x00\x00"), false,
			LevelChoice{6, "initramfs-tools' default; the input's dictionary 8 MiB is written at levels 5-6", true}},
		{"lz4", Lz4Legacy, []byte{0x02, 0x21, 0x4c, 0x18}, true,
			LevelChoice{9, "what Buildroot, initramfs-tools and dracut all write", false}},
		{"bzip2 is not written", Bzip2, []byte("BZh9"), true, LevelChoice{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ChooseLevel(tt.c, tt.head, tt.segmented)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
