package isotest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// GrubEFI is an EFI ISO whose GRUB is made as the test says: with
// grub-mkimage -p PREFIX -c EMBEDDED, as Buildroot's boot/grub2/grub2.mk
// makes minikube's aarch64 GRUB (BR2_TARGET_GRUB2_BUILTIN_CONFIG_EFI),
// or with grub-mkstandalone, whose memdisk holds Embedded as
// /boot/grub/grub.cfg. Built here for x86_64-efi, the GRUB Debian ships
// for this machine; the modules area is the same for arm64-efi. As in
// minikube's post-image.sh, the FAT efiboot.img (label EFIBOOTISO, as
// genimage.cfg gives it) holds EFI/BOOT/BOOTX64.EFI and grub.cfg, which
// are copied to the ISO's EFI/BOOT too.
type GrubEFI struct {
	Standalone bool
	Prefix     string // grub-mkimage's -p; "/EFI/BOOT" when empty
	Embedded   string // -c's file, or the memdisk's grub.cfg
	// Memdisk are more files of grub-mkstandalone's memdisk.
	Memdisk map[string]string
	Grub    string // EFI/BOOT/grub.cfg
	// Files are more files of the ISO (path: content); Kernel and Initrd
	// where the ISO has them ("boot/bzimage", "boot/initrd").
	Files          map[string]string
	Kernel, Initrd string
	// Partition, an MBR partition type ("0xef"), makes the ISO with
	// xorriso, efiboot.img an appended partition of that type that the
	// El Torito entry points at, as Debian's images are made
	// (-append_partition 2 0xef efiboot.img -e
	// --interval:appended_partition_2:all::).
	Partition string
}

// MinikubeModules are BR2_TARGET_GRUB2_BUILTIN_MODULES_EFI of minikube's
// aarch64 defconfig (eb25dbc7), but efi_gop, which x86_64-efi has too.
var MinikubeModules = []string{"boot", "linux", "ext2", "fat", "squash4", "part_msdos", "part_gpt", "normal",
	"efi_gop", "udf", "iso9660", "search", "search_fs_file", "search_fs_uuid", "search_label"}

// GrubTools are the commands GrubEFI.Build runs.
var GrubTools = []string{"grub-mkimage", "grub-mkstandalone", "mkfs.fat", "mmd", "mcopy", "mkisofs", "xorriso"}

// Build makes the ISO at out around kernel and initrd; a missing tool
// skips t (fails it under ROOTFS_TRIM_REQUIRE_TOOLS=1).
func (g GrubEFI) Build(t testing.TB, kernel, initrd, out string) {
	t.Helper()
	for _, tool := range GrubTools {
		archivetest.RequireTool(t, tool)
	}
	requireFile(t, "/usr/lib/grub/x86_64-efi/moddep.lst")
	if err := g.Make(t.TempDir(), kernel, initrd, out); err != nil {
		t.Fatal(err)
	}
}

// Make is Build for callers without a testing.TB (a testscript command),
// in work, an empty directory.
func (g GrubEFI) Make(work, kernel, initrd, out string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	root := filepath.Join(work, "root")
	files := map[string]string{}
	for p, c := range g.Files {
		files[p] = c
	}
	put := func(dst, src string) error {
		b, err := os.ReadFile(src)
		files[dst] = string(b)
		return err
	}
	kp, ip := g.Kernel, g.Initrd
	if kp == "" {
		kp = "boot/bzimage"
	}
	if ip == "" {
		ip = "boot/initrd"
	}
	if err := put(kp, kernel); err != nil {
		return err
	}
	if err := put(ip, initrd); err != nil {
		return err
	}
	for p, c := range files {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(p)), c); err != nil {
			return err
		}
	}
	embedded, cfg, efi := filepath.Join(work, "embedded.cfg"), filepath.Join(work, "grub.cfg"), filepath.Join(work, "BOOTX64.EFI")
	if err := writeFile(embedded, g.Embedded); err != nil {
		return err
	}
	if err := writeFile(cfg, g.Grub); err != nil {
		return err
	}
	if g.Standalone {
		args := []string{"-O", "x86_64-efi", "-o", efi, "--modules=" + strings.Join(MinikubeModules, " ") + " configfile",
			"--install-modules=" + strings.Join(MinikubeModules, " ") + " configfile", "--locales=", "--fonts=", "--themes=",
			"boot/grub/grub.cfg=" + embedded}
		for p, c := range g.Memdisk {
			src := filepath.Join(work, "memdisk", filepath.FromSlash(p))
			if err := writeFile(src, c); err != nil {
				return err
			}
			args = append(args, p+"="+src)
		}
		err = run(work, "grub-mkstandalone", args...)
	} else {
		prefix := g.Prefix
		if prefix == "" {
			prefix = "/EFI/BOOT"
		}
		err = run(work, "grub-mkimage", append([]string{"-O", "x86_64-efi", "-o", efi, "-p", prefix, "-c", embedded}, MinikubeModules...)...)
	}
	if err != nil {
		return err
	}
	img := filepath.Join(work, "efiboot.img")
	fi, err := os.Stat(efi)
	if err != nil {
		return err
	}
	for _, s := range [][]string{
		{"mkfs.fat", "-C", "-n", "EFIBOOTISO", img, itoa(fi.Size()/1024 + 512)},
		{"mmd", "-i", img, "::/EFI", "::/EFI/BOOT"},
		{"mcopy", "-i", img, efi, cfg, "::/EFI/BOOT/"},
	} {
		if err := run(work, s[0], s[1:]...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "EFI", "BOOT"), 0o755); err != nil {
		return err
	}
	for _, f := range []string{efi, cfg, img} {
		if err := copyFile(f, filepath.Join(root, "EFI", "BOOT", filepath.Base(f))); err != nil {
			return err
		}
	}
	if g.Partition != "" {
		return run(work, "xorriso", "-as", "mkisofs", "-R", "-J", "-V", "EFIBOOTISO", "-append_partition", "2", g.Partition, img,
			"-e", "--interval:appended_partition_2:all::", "-no-emul-boot", "-o", out, root)
	}
	return run(work, "mkisofs", "-o", out, "-R", "-J", "-v", "-d", "-N", "-hide-rr-moved",
		"-no-emul-boot", "-eltorito-platform=efi", "-eltorito-boot", "EFI/BOOT/efiboot.img",
		"-V", "EFIBOOTISO", "-A", "EFI Boot ISO", root)
}

func writeFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}
