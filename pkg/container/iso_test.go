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

// TestISOSeveralFiles: an initrd of two files (syslinux "initrd a,b") is
// read as the bootloader loads it, one after the other; writing it back
// is refused for now, and so is an image whose boot entries load
// different initrds.
func TestISOSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	newc := func(name string) string {
		var buf bytes.Buffer
		w := archive.NewCpioWriter(&buf, archive.Newc)
		mustDo(t, w.WriteHeader(&archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, Size: 2}))
		_, err := w.Write([]byte("x\n"))
		mustDo(t, err)
		mustDo(t, w.Close())
		return buf.String()
	}
	initrd, kernel := filepath.Join(dir, "initrd"), filepath.Join(dir, "kernel")
	mustDo(t, os.WriteFile(initrd, []byte(newc("etc/first")), 0o644))
	mustDo(t, os.WriteFile(kernel, []byte("a kernel"), 0o644))
	two := filepath.Join(dir, "two.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, two, map[string]string{
		"isolinux/isolinux.cfg": "label a\n kernel /boot/bzImage\n append initrd=/boot/initrd,/boot/second.cpio\n",
		"boot/second.cpio":      newc("etc/second"),
	})
	var names []string
	for _, l := range listEntries(t, two) {
		if strings.HasPrefix(l, "etc/") {
			names = append(names, strings.Fields(l)[0])
		}
	}
	if strings.Join(names, " ") != "etc/first etc/second" {
		t.Errorf("entries %q, want both files' in load order", names)
	}
	_, err := Rewrite(two, filepath.Join(dir, "out.iso"), RewriteOptions{Level: 1})
	if err == nil || !strings.Contains(err.Error(), "its initrd is 2 files") {
		t.Errorf("Rewrite of a two-file initrd: %v", err)
	}

	other := filepath.Join(dir, "other.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, other, map[string]string{
		"boot/grub/grub.cfg": "menuentry x {\n initrd /boot/second.cpio\n}\n",
		"boot/second.cpio":   newc("etc/second"),
	})
	_, err = Open(other, OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "its boot entries load different initrds: /boot/second.cpio (/boot/grub/grub.cfg:2), /boot/initrd (/isolinux/isolinux.cfg:5)") {
		t.Errorf("Open of an image with two initrds: %v", err)
	}
}
