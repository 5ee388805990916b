package container

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// TestISOVerifyCatches: the check of the image xorriso wrote against the
// input's boot records fails on each thing it checks: a boot image's
// bytes, an identifier, the isohybrid MBR, the volume date, the initrd.
func TestISOVerifyCatches(t *testing.T) {
	f := archive.Format{Kind: archive.KindCpio, Codec: compress.Gzip, Container: ContainerISO}
	in := isoOf(t, isotest.Hybrid, f, makeRootfsTree(t))
	out := filepath.Join(t.TempDir(), "out.iso")
	// A level asks for recompression: the output is xorriso's, not a copy.
	res, err := Rewrite(in, out, RewriteOptions{Level: 1})
	mustDo(t, err)
	if !strings.HasSuffix(res.Compressor, "; image: "+CompressorXorriso) {
		t.Fatalf("compressor %q: not written by xorriso", res.Compressor)
	}
	good, err := os.ReadFile(out)
	mustDo(t, err)
	src, err := Open(in, OpenOptions{})
	mustDo(t, err)
	defer src.Close()
	im, err := iso9660.Open(bytes.NewReader(good), int64(len(good)))
	mustDo(t, err)
	isolinux, err := im.Lookup("/isolinux/isolinux.bin")
	mustDo(t, err)
	initrd, err := im.Lookup("/boot/initrd")
	mustDo(t, err)
	written := filepath.Join(t.TempDir(), "initrd")
	mustDo(t, os.WriteFile(written, good[initrd.Offset:initrd.Offset+initrd.Size], 0o644))

	for _, tc := range []struct {
		name, want string
		spoil      func(img []byte)
	}{
		{"sound", "", func([]byte) {}},
		{"boot-image", "boot image /isolinux/isolinux.bin: its bytes differ", func(b []byte) { b[isolinux.Offset+100] ^= 1 }},
		{"identifier", "identifiers", func(b []byte) { b[16*iso9660.SectorSize+574] = 'x' }},
		{"mbr", "MBR (isohybrid) is not there", func(b []byte) { b[510] = 0 }},
		{"volume-date", "volume", func(b []byte) { b[16*iso9660.SectorSize+830] = '1' }},
		{"initrd", "its initrd is not the one written", func(b []byte) { b[initrd.Offset+initrd.Size-1] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := bytes.Clone(good)
			tc.spoil(img)
			p := filepath.Join(t.TempDir(), "spoilt.iso")
			mustDo(t, os.WriteFile(p, img, 0o644))
			x := &isoOutput{from: src, out: p, inner: &Output{tmp: written}}
			err := x.verify()
			if tc.want == "" {
				mustDo(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify: %v, want %q", err, tc.want)
			}
		})
	}
	// The image from an ISO with nothing to change is the input's bytes.
	again := filepath.Join(t.TempDir(), "again.iso")
	_, err = Rewrite(out, again, RewriteOptions{Reuse: true})
	mustDo(t, err)
	a, _ := os.ReadFile(again)
	if !bytes.Equal(a, good) {
		t.Errorf("rewritten unchanged: %d bytes, not the input's %d", len(a), len(good))
	}
}
