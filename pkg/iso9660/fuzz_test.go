package iso9660_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// FuzzImage: whatever the bytes, Open, Walk, ReadBoot and BootImages end
// with entries inside the image or an error, never a panic or an endless
// walk. The seeds: a small image xorriso makes, the same with its Joliet
// descriptor made a second primary one, with /boot's record saying a
// directory of 4 GiB, with two records named initrd in /boot (Rock
// Ridge, ISO 9660 and Joliet names), and a volume descriptor set alone.
func FuzzImage(f *testing.F) {
	if img := seedImage(f); img != nil {
		f.Add(img)
		two := bytes.Clone(img)
		copy(two[17*iso9660.SectorSize:18*iso9660.SectorSize], two[16*iso9660.SectorSize:])
		f.Add(two)
		huge := bytes.Clone(img)
		if i := bytes.Index(huge, []byte("BOOT")); i > 33 {
			putBoth32(huge[i-33+10:], 0xFFFFF800)
		}
		f.Add(huge)
		dup := bytes.Clone(img)
		for _, r := range [][2]string{{"LINK.;1", "INITRD."}, {"NM\x09\x01\x00link", "NM\x09\x01\x00init"}, {string(ucs2("link")), string(ucs2("init"))}} {
			dup = bytes.ReplaceAll(dup, []byte(r[0]), []byte(r[1]))
		}
		f.Add(dup)
	}
	vd := make([]byte, 18*iso9660.SectorSize)
	copy(vd[16*iso9660.SectorSize:], "\x01CD001\x01")
	copy(vd[17*iso9660.SectorSize:], "\xffCD001\x01")
	f.Add(vd)
	f.Fuzz(func(t *testing.T, img []byte) {
		im, err := iso9660.Open(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		im.Walk(func(fl iso9660.File) error {
			if !fl.IsDir() && (fl.Offset < 0 || fl.Offset+fl.Size > int64(len(img))) {
				t.Fatalf("%s: extent %d+%d beyond the %d-byte image", fl.Path, fl.Offset, fl.Size, len(img))
			}
			return nil
		})
		im.BootImages()
		if b, err := im.ReadBoot(); err == nil {
			for _, ird := range b.Initrds {
				for _, fl := range ird.Files {
					io.Copy(io.Discard, im.Section(fl))
				}
			}
		}
	})
}

// seedImage builds, if xorriso is here, a small image with Rock Ridge,
// Joliet, an isolinux.cfg and the initrd it names (no boot image: the
// fuzzer is slow on large inputs), without the zeros at its end.
func seedImage(f *testing.F) []byte {
	if _, err := exec.LookPath("xorriso"); err != nil {
		return nil
	}
	dir := f.TempDir()
	root := filepath.Join(dir, "root")
	must(f, os.MkdirAll(filepath.Join(root, "isolinux"), 0o755))
	must(f, os.MkdirAll(filepath.Join(root, "boot"), 0o755))
	must(f, os.WriteFile(filepath.Join(root, "isolinux", "isolinux.cfg"), []byte(isotest.IsolinuxCfg), 0o644))
	must(f, os.WriteFile(filepath.Join(root, "boot", "initrd"), []byte("070701"), 0o644))
	must(f, os.Symlink("initrd", filepath.Join(root, "boot", "link")))
	out := filepath.Join(dir, "out.iso")
	if b, err := exec.Command("xorriso", "-as", "mkisofs", "-R", "-J", "-o", out, root).CombinedOutput(); err != nil {
		f.Fatalf("xorriso: %v\n%s", err, b)
	}
	img, err := os.ReadFile(out)
	must(f, err)
	n := len(img)
	for n > 0 && img[n-1] == 0 {
		n--
	}
	return img[:(n+iso9660.SectorSize-1)/iso9660.SectorSize*iso9660.SectorSize]
}

// FuzzFAT: whatever the bytes, OpenFAT and FindFunc end with files read from
// within the filesystem or an error, never a panic or an endless chain.
// The seed is a small FAT image holding EFI/BOOT/grub.cfg, made with
// mkfs.fat and mtools when they are here.
func FuzzFAT(f *testing.F) {
	if img := seedFAT(f); img != nil {
		f.Add(img)
	}
	f.Fuzz(func(t *testing.T, img []byte) {
		r := bytes.NewReader(img)
		if !iso9660.IsFAT(r, 0) {
			return
		}
		fat, err := iso9660.OpenFAT(r, 0, int64(len(img)))
		if err != nil {
			return
		}
		files, err := fat.FindFunc(func(name string) bool { return strings.EqualFold(name, "grub.cfg") }, 1<<16)
		if err != nil {
			return
		}
		for _, fl := range files {
			if size := fatSize(img); int64(len(fl.Data)) > size {
				t.Fatalf("%s: %d bytes from a %d-byte filesystem", fl.Path, len(fl.Data), size)
			}
		}
	})
}

// fatSize is the size the boot sector gives the filesystem: its sectors
// (the 16-bit count, or the 32-bit one when that is 0) times their size.
func fatSize(img []byte) int64 {
	total := int64(binary.LittleEndian.Uint16(img[19:]))
	if total == 0 {
		total = int64(binary.LittleEndian.Uint32(img[32:]))
	}
	return total * int64(binary.LittleEndian.Uint16(img[11:]))
}

func seedFAT(f *testing.F) []byte {
	for _, tool := range []string{"mkfs.fat", "mmd", "mcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil
		}
	}
	dir := f.TempDir()
	img, cfg := filepath.Join(dir, "efiboot.img"), filepath.Join(dir, "grub.cfg")
	must(f, os.WriteFile(cfg, []byte(isotest.GrubCfg), 0o644))
	for _, c := range [][]string{{"mkfs.fat", "-C", img, "64"}, {"mmd", "-i", img, "::/EFI", "::/EFI/BOOT"}, {"mcopy", "-i", img, cfg, "::/EFI/BOOT/"}} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			f.Fatalf("%s: %v\n%s", c[0], err, b)
		}
	}
	b, err := os.ReadFile(img)
	must(f, err)
	return b
}
