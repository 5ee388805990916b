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
// bytes, an identifier of the primary or the Joliet descriptor, the
// isohybrid MBR, the volume date, the initrd.
func TestISOVerifyCatches(t *testing.T) {
	in := isoOf(t, isotest.Hybrid, Want{Format: "newc", Codec: "gzip"}, makeRootfsTree(t))
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
	joliet := jolietDescriptor(t, good)
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
		{"joliet-volume-id", "the Joliet descriptor: volume", func(b []byte) { b[joliet+41] = 'x' }},
		{"joliet-identifier", "the Joliet descriptor: volume", func(b []byte) { b[joliet+575] = 'x' }},
		{"volume-date", "volume", func(b []byte) { b[16*iso9660.SectorSize+830] = '1' }},
		{"initrd", "its initrd is not the one written", func(b []byte) { b[initrd.Offset+initrd.Size-1] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := bytes.Clone(good)
			tc.spoil(img)
			p := filepath.Join(t.TempDir(), "spoilt.iso")
			mustDo(t, os.WriteFile(p, img, 0o644))
			x := &isoOutput{from: src, out: p, files: []isoFile{{Path: "/boot/initrd", New: written}}}
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

// TestISOSeveralFiles: an initrd of two files (syslinux "initrd=a,b") is
// read as the bootloader hands it to the kernel, one file after the other
// at a multiple of 4 bytes (a raw cpio after an odd-sized gzip file is
// found there); apply rewrites only the file that changes, keeps the
// other byte for byte, and the image's boot configuration still names
// both. An image whose boot entries load different initrds is refused.
func TestISOSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	newc := func(names ...string) []byte {
		var buf bytes.Buffer
		w := archive.NewCpioWriter(&buf, archive.Newc)
		for _, name := range names {
			mustDo(t, w.WriteHeader(&archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, Size: 2}))
			_, err := w.Write([]byte("x\n"))
			mustDo(t, err)
		}
		mustDo(t, w.Close())
		return buf.Bytes()
	}
	var gz bytes.Buffer
	zw, _, err := compress.NewWriter(&gz, compress.Gzip, compress.WriterOptions{})
	mustDo(t, err)
	_, err = zw.Write(newc("etc/first"))
	mustDo(t, err)
	mustDo(t, zw.Close())
	main := gz.Bytes()
	for len(main)%2 == 0 { // odd-sized: the next file starts at the next multiple of 4
		main = append(main, 0) // zeros after a member, which the kernel skips
	}
	initrd, kernel := filepath.Join(dir, "initrd"), filepath.Join(dir, "kernel")
	mustDo(t, os.WriteFile(initrd, main, 0o644))
	mustDo(t, os.WriteFile(kernel, []byte("a kernel"), 0o644))
	two := filepath.Join(dir, "two.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, two, map[string]string{
		"isolinux/isolinux.cfg": "label a\n kernel /boot/bzImage\n append initrd=/boot/initrd,/boot/second.cpio\n",
		"boot/second.cpio":      string(newc("etc/second", "etc/drop")),
	})
	names := func(path string) string {
		var out []string
		for _, l := range listEntries(t, path) {
			if strings.HasPrefix(l, "etc/") {
				out = append(out, strings.Fields(l)[0])
			}
		}
		return strings.Join(out, " ")
	}
	if got := names(two); got != "etc/first etc/second etc/drop" {
		t.Errorf("entries %q, want both files' in load order", got)
	}
	out := filepath.Join(dir, "out.iso")
	drop := func(e *archive.Entry) (archive.Action, error) {
		if e.Name == "etc/drop" {
			return archive.Drop, nil
		}
		return archive.Keep, nil
	}
	res, err := Rewrite(two, out, RewriteOptions{Reuse: true, Transform: func(e Entries) error {
		return archive.Copy(e.Out, e.In, archive.CopyOptions{Dest: e.OutFormat.Kind, Decide: drop})
	}})
	mustDo(t, err)
	if !strings.HasSuffix(res.Compressor, "; image: "+CompressorXorriso) {
		t.Errorf("compressor %q: not written by xorriso", res.Compressor)
	}
	if got := names(out); got != "etc/first etc/second" {
		t.Errorf("entries of the output %q, want etc/drop gone", got)
	}
	a, b := isoFileBytes(t, two), isoFileBytes(t, out)
	if !bytes.Equal(a["/boot/initrd"], b["/boot/initrd"]) {
		t.Errorf("/boot/initrd, which did not change, is not the input's bytes")
	}
	if !bytes.Equal(b["/boot/second.cpio"], newc("etc/second")) {
		t.Errorf("/boot/second.cpio is not the raw cpio without etc/drop")
	}
	if !bytes.Equal(a["/isolinux/isolinux.cfg"], b["/isolinux/isolinux.cfg"]) {
		t.Errorf("the boot configuration changed")
	}

	other := filepath.Join(dir, "other.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, other, map[string]string{
		"boot/grub/grub.cfg": "menuentry x {\n initrd /boot/second.cpio\n}\n",
		"boot/second.cpio":   string(newc("etc/second")),
	})
	_, err = Open(other, OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "its boot entries load different initrds: /boot/second.cpio (/boot/grub/grub.cfg:2), /boot/initrd (/isolinux/isolinux.cfg:5)") {
		t.Errorf("Open of an image with two initrds: %v", err)
	}
}

// isoFileBytes reads every regular file of the image at path.
func isoFileBytes(t *testing.T, path string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	mustDo(t, err)
	im, err := iso9660.Open(bytes.NewReader(data), int64(len(data)))
	mustDo(t, err)
	files := map[string][]byte{}
	mustDo(t, im.Walk(func(f iso9660.File) error {
		if f.Mode.IsRegular() {
			files[f.Path] = data[f.Offset : f.Offset+f.Size]
		}
		return nil
	}))
	return files
}

// jolietDescriptor is where the image's Joliet supplementary volume
// descriptor (type 2, a UCS-2 escape sequence) starts.
func jolietDescriptor(t *testing.T, img []byte) int {
	t.Helper()
	for lba := 16; (lba+1)*iso9660.SectorSize <= len(img); lba++ {
		sec := img[lba*iso9660.SectorSize:]
		if string(sec[1:6]) != "CD001" || sec[0] == 255 {
			break
		}
		if sec[0] == 2 && sec[88] == '%' && sec[89] == '/' {
			return lba * iso9660.SectorSize
		}
	}
	t.Fatal("no Joliet descriptor in the image")
	return 0
}
