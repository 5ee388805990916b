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
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// Kind is which of minikube's ISOs to build.
type Kind string

const (
	BIOS   Kind = "bios"   // isolinux, xorriso -as mkisofs
	Hybrid Kind = "hybrid" // the same, then isohybrid -t 0x96
	EFI    Kind = "efi"    // GRUB in a FAT efiboot.img, genisoimage
)

// Cmdline is the kernel command line both configurations give.
const Cmdline = "console=ttyS0 panic=-1 rdinit=/init"

// IsolinuxCfg is minikube's isolinux.cfg, with a serial console.
const IsolinuxCfg = "default 1\ntimeout 1\nlabel 1\n  kernel /boot/bzImage\n  initrd /boot/initrd\n  append " + Cmdline + "\n"

// GrubCfg is minikube's grub.cfg for EFI, with a serial console.
const GrubCfg = "set default=0\nset timeout=0\nmenuentry \"minikube\" {\n  linux /boot/bzImage " + Cmdline + "\n  initrd /boot/initrd\n}\n"

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
// initrd as /boot/initrd, with extra files (path in the image: content).
func Build(t testing.TB, kind Kind, kernel, initrd, out string, extra map[string]string) {
	t.Helper()
	for _, tool := range Tools(kind) {
		archivetest.RequireTool(t, tool)
	}
	root := t.TempDir()
	boot := filepath.Join(root, "boot")
	must(t, os.MkdirAll(boot, 0o755))
	copyFile(t, kernel, filepath.Join(boot, "bzImage"))
	copyFile(t, initrd, filepath.Join(boot, "initrd"))
	for p, content := range extra {
		dst := filepath.Join(root, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		must(t, os.WriteFile(dst, []byte(content), 0o644))
	}
	switch kind {
	case BIOS, Hybrid:
		buildBIOS(t, root, out, kind == Hybrid)
	case EFI:
		buildEFI(t, root, out)
	default:
		t.Fatalf("isotest: unknown kind %q", kind)
	}
}

// Isolinux is where Debian's isolinux package puts isolinux.bin, and
// syslinux-common ldlinux.c32.
var Isolinux = []string{"/usr/lib/ISOLINUX/isolinux.bin", "/usr/lib/syslinux/modules/bios/ldlinux.c32"}

func buildBIOS(t testing.TB, root, out string, hybrid bool) {
	dir := filepath.Join(root, "isolinux")
	must(t, os.MkdirAll(dir, 0o755))
	for _, f := range Isolinux {
		requireFile(t, f)
		copyFile(t, f, filepath.Join(dir, filepath.Base(f)))
	}
	if cfg := filepath.Join(dir, "isolinux.cfg"); !exists(cfg) { // extra may give its own
		must(t, os.WriteFile(cfg, []byte(IsolinuxCfg), 0o644))
	}
	run(t, root, "xorriso", "-as", "mkisofs", "-J", "-R", "-b", "isolinux/isolinux.bin", "-no-emul-boot",
		"-boot-load-size", "4", "-boot-info-table", "-o", out, root)
	if hybrid {
		run(t, root, "isohybrid", "-t", "0x96", out)
	}
}

func buildEFI(t testing.TB, root, out string) {
	work := t.TempDir()
	embedded := filepath.Join(work, "embedded.cfg")
	must(t, os.WriteFile(embedded, []byte(grubEmbedded), 0o644))
	efi := filepath.Join(work, "BOOTX64.EFI")
	run(t, work, "grub-mkstandalone", "-O", "x86_64-efi", "-o", efi,
		"--modules=part_msdos part_gpt iso9660 search search_label linux normal configfile serial terminal",
		"--install-modules=linux normal configfile search search_label iso9660 part_msdos part_gpt serial terminal fat echo test",
		"--locales=", "--fonts=", "boot/grub/grub.cfg="+embedded)
	cfg := filepath.Join(work, "grub.cfg")
	must(t, os.WriteFile(cfg, []byte(GrubCfg), 0o644))
	img := filepath.Join(work, "efiboot.img")
	fi, err := os.Stat(efi)
	must(t, err)
	kb := fi.Size()/1024 + 512
	run(t, work, "mkfs.fat", "-C", "-n", "EFIBOOT", img, itoa(kb))
	run(t, work, "mmd", "-i", img, "::/EFI", "::/EFI/BOOT")
	run(t, work, "mcopy", "-i", img, efi, cfg, "::/EFI/BOOT/")
	dst := filepath.Join(root, "EFI", "BOOT")
	must(t, os.MkdirAll(dst, 0o755))
	copyFile(t, efi, filepath.Join(dst, "BOOTX64.EFI"))
	copyFile(t, cfg, filepath.Join(dst, "grub.cfg"))
	copyFile(t, img, filepath.Join(dst, "efiboot.img"))
	run(t, filepath.Dir(root), "mkisofs", "-o", out, "-R", "-J", "-v", "-d", "-N", "-hide-rr-moved",
		"-no-emul-boot", "-eltorito-platform=efi", "-eltorito-boot", "EFI/BOOT/efiboot.img",
		"-V", "EFIBOOTISO", "-A", "EFI Boot ISO", root)
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

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
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

func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// SOURCE_DATE_EPOCH would change xorriso's dates; MTOOLS_SKIP_CHECK
	// lets mtools take an image without a partition table.
	cmd.Env = append(withoutEnv("SOURCE_DATE_EPOCH"), "MTOOLS_SKIP_CHECK=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, &stderr)
	}
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

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(dst, b, 0o644))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
