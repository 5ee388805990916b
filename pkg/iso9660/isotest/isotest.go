// Package isotest builds ISO images the way minikube's builds do, for the
// tests of every package that reads or writes one.
//
//   - BIOS (x86_64): Buildroot's fs/iso9660/iso9660.mk runs
//     "xorriso -as mkisofs -J -R -b isolinux/isolinux.bin -no-emul-boot
//     -boot-load-size 4 -boot-info-table" on a tree holding isolinux.bin,
//     ldlinux.c32, isolinux.cfg (board/minikube/x86_64/isolinux.cfg:
//     "kernel /boot/bzImage", "initrd /boot/initrd") and boot/; with
//     BR2_TARGET_ROOTFS_ISO9660_HYBRID it then runs "isohybrid -t 0x96".
//   - EFI (aarch64, here x86_64-efi): board/minikube/aarch64/post-image.sh
//     copies the initrd to boot/initrd and efiboot.img, a FAT image holding
//     GRUB and grub.cfg, to EFI/BOOT/, and runs genisoimage's mkisofs with
//     "-R -J -v -d -N -hide-rr-moved -no-emul-boot -eltorito-platform=efi
//     -eltorito-boot EFI/BOOT/efiboot.img -V EFIBOOTISO -A 'EFI Boot ISO'";
//     genisoimage has no -eltorito-platform, and the entry it writes says
//     platform x86.
package isotest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
)

// Kind is which of minikube's ISOs to build.
type Kind string

const (
	BIOS   Kind = "bios"   // isolinux, xorriso -as mkisofs
	Hybrid Kind = "hybrid" // the same, then isohybrid -t 0x96
	EFI    Kind = "efi"    // GRUB in a FAT efiboot.img, genisoimage
)

// Cmdline is the kernel command line both configurations give.
const Cmdline = "console=ttyS0 panic=-1 rdinit=/init quiet"

// IsolinuxCfg is minikube's isolinux.cfg, with a serial console.
const IsolinuxCfg = "default 1\ntimeout 1\nlabel 1\n  kernel /boot/bzImage\n  initrd /boot/initrd\n  append " + Cmdline + "\n"

// GrubCfg is minikube's grub.cfg for EFI, with a serial console.
const GrubCfg = "set default=0\nset timeout=0\nmenuentry \"minikube\" {\n  linux /boot/bzImage " + Cmdline + "\n  initrd /boot/initrd\n}\n"

// Early is where an extra file given to Make at this path goes: an
// early initrd, loaded before /boot/initrd, which both configurations
// then name first (syslinux "initrd /boot/early.cpio,/boot/initrd", GRUB
// "initrd /boot/early.cpio /boot/initrd").
const Early = "boot/early.cpio"

// configs are the isolinux and GRUB configurations, naming the early
// initrd too when there is one.
func configs(early bool) (isolinux, grub string) {
	if !early {
		return IsolinuxCfg, GrubCfg
	}
	return strings.Replace(IsolinuxCfg, "initrd /boot/initrd", "initrd /"+Early+",/boot/initrd", 1),
		strings.Replace(GrubCfg, "initrd /boot/initrd", "initrd /"+Early+" /boot/initrd", 1)
}

// grubEmbedded is GRUB's built-in configuration: it finds the ISO by its
// volume label and reads the grub.cfg there.
const grubEmbedded = "search --no-floppy --label EFIBOOTISO --set root\nset prefix=($root)/EFI/BOOT\nconfigfile ($root)/EFI/BOOT/grub.cfg\n"

// Tools returns the commands building kind needs.
func Tools(kind Kind) []string {
	switch kind {
	case EFI:
		return []string{"grub-mkstandalone", "mkfs.fat", "mmd", "mcopy", "mkisofs"}
	case Hybrid:
		return []string{"xorriso", "isohybrid"}
	}
	return []string{"xorriso"}
}

// Build makes an ISO of kind at out holding kernel as /boot/bzImage and
// initrd as /boot/initrd, with extra files (path in the image: content);
// a missing tool skips t (fails it under ROOTFS_TRIM_REQUIRE_TOOLS=1).
func Build(t testing.TB, kind Kind, kernel, initrd, out string, extra map[string]string) {
	t.Helper()
	for _, tool := range Tools(kind) {
		archivetest.RequireTool(t, tool)
	}
	if kind != EFI {
		for _, f := range Isolinux {
			requireFile(t, f)
		}
	}
	if err := Make(kind, t.TempDir(), kernel, initrd, out, extra); err != nil {
		t.Fatal(err)
	}
}

// Make is Build for callers without a testing.TB (a testscript command),
// in work, an empty directory.
func Make(kind Kind, work, kernel, initrd, out string, extra map[string]string) error {
	out, err := filepath.Abs(out) // the tools run in other directories
	if err != nil {
		return err
	}
	root := filepath.Join(work, "root")
	boot := filepath.Join(root, "boot")
	if err := os.MkdirAll(boot, 0o755); err != nil {
		return err
	}
	if err := copyFile(kernel, filepath.Join(boot, "bzImage")); err != nil {
		return err
	}
	if err := copyFile(initrd, filepath.Join(boot, "initrd")); err != nil {
		return err
	}
	for p, content := range extra {
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
			return err
		}
	}
	_, early := extra[Early]
	switch kind {
	case BIOS, Hybrid:
		return buildBIOS(root, out, kind == Hybrid, early)
	case EFI:
		return buildEFI(work, root, out, early)
	}
	return fmt.Errorf("isotest: unknown kind %q", kind)
}

// Isolinux is where Debian's isolinux package puts isolinux.bin, and
// syslinux-common ldlinux.c32.
var Isolinux = []string{"/usr/lib/ISOLINUX/isolinux.bin", "/usr/lib/syslinux/modules/bios/ldlinux.c32"}

func buildBIOS(root, out string, hybrid, early bool) error {
	dir := filepath.Join(root, "isolinux")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range Isolinux {
		if err := copyFile(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return err
		}
	}
	if cfg := filepath.Join(dir, "isolinux.cfg"); !exists(cfg) { // extra may give its own
		isolinux, _ := configs(early)
		if err := os.WriteFile(cfg, []byte(isolinux), 0o644); err != nil {
			return err
		}
	}
	if err := run(root, "xorriso", "-as", "mkisofs", "-J", "-R", "-b", "isolinux/isolinux.bin", "-no-emul-boot",
		"-boot-load-size", "4", "-boot-info-table", "-o", out, root); err != nil {
		return err
	}
	if hybrid {
		return run(root, "isohybrid", "-t", "0x96", out)
	}
	return nil
}

func buildEFI(work, root, out string, early bool) error {
	embedded := filepath.Join(work, "embedded.cfg")
	cfg := filepath.Join(work, "grub.cfg")
	efi := filepath.Join(work, "BOOTX64.EFI")
	img := filepath.Join(work, "efiboot.img")
	_, grub := configs(early)
	for f, content := range map[string]string{embedded: grubEmbedded, cfg: grub} {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := run(work, "grub-mkstandalone", "-O", "x86_64-efi", "-o", efi,
		"--modules=part_msdos part_gpt iso9660 search search_label linux normal configfile serial terminal",
		"--install-modules=linux normal configfile search search_label iso9660 part_msdos part_gpt serial terminal fat echo test",
		"--locales=", "--fonts=", "boot/grub/grub.cfg="+embedded); err != nil {
		return err
	}
	fi, err := os.Stat(efi)
	if err != nil {
		return err
	}
	steps := [][]string{
		{"mkfs.fat", "-C", "-n", "EFIBOOT", img, itoa(fi.Size()/1024 + 512)},
		{"mmd", "-i", img, "::/EFI", "::/EFI/BOOT"},
		{"mcopy", "-i", img, efi, cfg, "::/EFI/BOOT/"},
	}
	for _, s := range steps {
		if err := run(work, s[0], s[1:]...); err != nil {
			return err
		}
	}
	dst := filepath.Join(root, "EFI", "BOOT")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range []string{efi, cfg, img} {
		if err := copyFile(f, filepath.Join(dst, filepath.Base(f))); err != nil {
			return err
		}
	}
	return run(filepath.Dir(root), "mkisofs", "-o", out, "-R", "-J", "-v", "-d", "-N", "-hide-rr-moved",
		"-no-emul-boot", "-eltorito-platform=efi", "-eltorito-boot", "EFI/BOOT/efiboot.img",
		"-V", "EFIBOOTISO", "-A", "EFI Boot ISO", root)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// requireFile is RequireTool for a data file a package installs.
func requireFile(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("%s is not installed, and %s=1 forbids skipping", path, archivetest.RequireToolsEnv)
		}
		t.Skipf("%s is not installed", path)
	}
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// SOURCE_DATE_EPOCH would change xorriso's dates; MTOOLS_SKIP_CHECK
	// lets mtools take an image without a partition table.
	cmd.Env = append(withoutEnv("SOURCE_DATE_EPOCH"), "MTOOLS_SKIP_CHECK=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %q: %v\n%s", name, args, err, &stderr)
	}
	return nil
}

func withoutEnv(name string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// Corruptions are the ways Corrupt breaks a sound image, as a hostile or
// damaged one would be.
var Corruptions = []string{"extent-beyond", "loop", "no-config"}

// Corrupt breaks img (a BIOS image Build made) in place: "extent-beyond"
// makes /boot/initrd's extent end past the image, "loop" makes /boot's
// record point at the root directory, "no-config" renames isolinux.cfg's
// Rock Ridge name to isolinux.old.
func Corrupt(img []byte, how string) error {
	im, err := iso9660.Open(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		return err
	}
	look := func(p string) iso9660.File {
		f, lerr := im.Lookup(p)
		if lerr != nil && err == nil {
			err = lerr
		}
		return f
	}
	root, boot, initrd := look("/"), look("/boot"), look("/boot/initrd")
	isolinux, cfg := look("/isolinux"), look("/isolinux/isolinux.cfg")
	if err != nil {
		return err
	}
	switch how {
	case "extent-beyond":
		rec, err := findRecord(img, boot.Offset, initrd.Offset)
		if err != nil {
			return err
		}
		putBoth32(img[rec+10:], uint32(len(img)))
	case "loop":
		rec, err := findRecord(img, root.Offset, boot.Offset)
		if err != nil {
			return err
		}
		putBoth32(img[rec+2:], uint32(root.Offset/iso9660.SectorSize))
	case "no-config":
		rec, err := findRecord(img, isolinux.Offset, cfg.Offset)
		if err != nil {
			return err
		}
		r := img[rec : rec+int(img[rec])]
		i := bytes.LastIndex(r, []byte("isolinux.cfg")) // NM follows the ISO name
		if i < 0 {
			return errors.New("no Rock Ridge name isolinux.cfg")
		}
		copy(r[i:], "isolinux.old")
	default:
		return fmt.Errorf("isotest: unknown corruption %q", how)
	}
	return nil
}

// findRecord returns the offset of the record in the directory at dir
// whose extent starts at byte off.
func findRecord(img []byte, dir, off int64) (int, error) {
	lba := uint32(off / iso9660.SectorSize)
	for i := int(dir); i < int(dir)+iso9660.SectorSize && img[i] != 0; i += int(img[i]) {
		if binary.LittleEndian.Uint32(img[i+2:]) == lba {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no record with extent %d in the directory at byte %d", lba, dir)
}

func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}
