package iso9660_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// minikubeBoard is where minikube's board files are, byte for byte from
// kubernetes/minikube at eb25dbc7 (deploy/iso/minikube-iso/board/minikube).
const minikubeBoard = "../../testdata/minikube-eb25dbc7/deploy/iso/minikube-iso/board/minikube"

func readBoard(t *testing.T, arch, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(minikubeBoard, arch, name))
	must(t, err)
	return string(b)
}

// buildGrub builds g around a small kernel and initrd, returning the
// image's bytes.
func buildGrub(t *testing.T, g isotest.GrubEFI) []byte {
	t.Helper()
	dir := t.TempDir()
	k, i := filepath.Join(dir, "kernel"), filepath.Join(dir, "initrd")
	must(t, os.WriteFile(k, []byte("not a kernel"), 0o644))
	must(t, os.WriteFile(i, bytes.Repeat([]byte("initramfs "), 500), 0o644))
	out := filepath.Join(dir, "out.iso")
	g.Build(t, k, i, out)
	img, err := os.ReadFile(out)
	must(t, err)
	return img
}

// TestMinikubeGrub: minikube's own EFI ISOs, their real grub.cfg (whose
// initrd line ends with "# rootfs") and grub-stub.cfg, the embedded
// configuration of a grub-mkimage -p /EFI/BOOT program, which searches
// the ISO by its label and leaves normal mode to read $prefix/grub.cfg.
// aarch64's is what its ISO boots; x86_64's board has the same files
// for EFI beside isolinux. On a1bb362 "#" and "rootfs" were read as two
// more initrd files: "/EFI/BOOT/grub.cfg:14: initrd /#: no such file".
func TestMinikubeGrub(t *testing.T) {
	for _, tc := range []struct{ arch, initrdAt string }{{"aarch64", "/EFI/BOOT/grub.cfg:14"}, {"x86_64", "/EFI/BOOT/grub.cfg:6"}} {
		t.Run(tc.arch, func(t *testing.T) {
			img := buildGrub(t, isotest.GrubEFI{Embedded: readBoard(t, tc.arch, "grub-stub.cfg"), Grub: readBoard(t, tc.arch, "grub.cfg")})
			boot, err := open(t, img).ReadBoot()
			must(t, err)
			want := []string{
				"/EFI/BOOT/grub.cfg",
				"/EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(embedded configuration)",
				"/EFI/BOOT/efiboot.img:/EFI/BOOT/GRUB.CFG",
			}
			if d := cmp.Diff(want, boot.Configs); d != "" {
				t.Errorf("configs (-want +got):\n%s", d)
			}
			var got []string
			for _, i := range boot.Initrds {
				got = append(got, strings.Join(i.Paths(), " ")+" at "+i.Where)
			}
			if d := cmp.Diff([]string{"/boot/initrd at " + tc.initrdAt}, got); d != "" {
				t.Errorf("initrds (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"/boot/bzimage"}, boot.Kernels); d != "" {
				t.Errorf("kernels (-want +got):\n%s", d)
			}
		})
	}
}

// TestGrubHostile: ISOs whose GRUB loads another initrd than the
// grub.cfg a line-by-line reading sees, built with grub-mkimage,
// grub-mkstandalone and genisoimage as minikube's aarch64 ISO is. Each
// either shows the initrd GRUB loads among the image's initrds (the
// container refuses an image whose entries load different ones) or is
// refused naming the file and line. On a1bb362 each read as the one
// clean /boot/initrd, or as a file of that name in the image.
func TestGrubHostile(t *testing.T) {
	const stub = "insmod iso9660\nsearch --no-floppy --label EFIBOOTISO --set root\n"
	const decoy = "set default=0\nset timeout=0\nmenuentry m {\n  linux /boot/bzimage\n  initrd /boot/initrd\n}\n"
	evil := map[string]string{"boot/x/evil.gz": "evil"}
	for _, tc := range []struct {
		name string
		g    isotest.GrubEFI
		want []string // the initrds, each "paths at where"
		err  string
	}{
		{name: "embedded-config", g: isotest.GrubEFI{Embedded: stub + "linux ($root)/boot/bzimage\ninitrd ($root)/boot/x/evil.gz\n", Grub: decoy, Files: evil},
			want: []string{"/boot/initrd at /EFI/BOOT/grub.cfg:5", "/boot/x/evil.gz at /EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(embedded configuration):4"}},
		{name: "embedded-boot", g: isotest.GrubEFI{Embedded: stub + "linux ($root)/boot/bzimage\ninitrd ($root)/boot/x/evil.gz\nboot\n", Grub: decoy, Files: evil},
			err: "/EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(embedded configuration):5: GRUB command \"boot\""},
		{name: "memdisk", g: isotest.GrubEFI{Standalone: true, Embedded: stub + "menuentry m {\n linux /boot/bzimage\n initrd /boot/x/evil.gz\n}\n", Grub: decoy, Files: evil},
			want: []string{"/boot/initrd at /EFI/BOOT/grub.cfg:5", "/boot/x/evil.gz at /EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(memdisk)/boot/grub/grub.cfg:5"}},
		{name: "configfile", g: isotest.GrubEFI{Embedded: stub, Grub: "configfile /boot/grub/real.conf\n",
			Files: map[string]string{"boot/x/evil.gz": "evil", "boot/grub/real.conf": "menuentry m {\n linux /boot/bzimage\n initrd /boot/x/evil.gz\n}\n"}},
			want: []string{"/boot/x/evil.gz at /boot/grub/real.conf:3"}},
		{name: "configfile-relative", g: isotest.GrubEFI{Embedded: stub, Grub: decoy + "configfile boot/grub/real.conf\n",
			Files: map[string]string{"boot/grub/real.conf": "menuentry m {\n initrd /boot/initrd\n}\n"}},
			err: "/EFI/BOOT/grub.cfg:7: boot/grub/real.conf: not an absolute path"},
		{name: "variable", g: isotest.GrubEFI{Embedded: stub, Grub: "set rd=/boot/x/evil.gz\nmenuentry m {\n linux /boot/bzimage\n initrd $rd\n}\n",
			Files: map[string]string{"boot/x/evil.gz": "evil", "$rd": "clean"}},
			err: "/EFI/BOOT/grub.cfg:4: '$' in a word"},
		{name: "loopback", g: isotest.GrubEFI{Embedded: stub, Grub: "menuentry m {\n loopback loop /boot/x/evil.iso\n linux (loop)/boot/bzimage\n initrd (loop)/boot/initrd\n}\n",
			Files: map[string]string{"boot/x/evil.iso": "evil"}},
			err: "/EFI/BOOT/grub.cfg:2: GRUB command \"loopback\""},
		{name: "newc", g: isotest.GrubEFI{Embedded: stub, Grub: "menuentry m {\n linux /boot/bzimage\n initrd /boot/initrd newc:init:/boot/evil-init\n}\n",
			Files: map[string]string{"boot/evil-init": "evil", "newc:init:/boot/evil-init": "clean"}},
			err: "/EFI/BOOT/grub.cfg:3: initrd newc:init:/boot/evil-init: GRUB's newc:NAME:FILE"},
		{name: "partition-esp", g: isotest.GrubEFI{Embedded: stub, Grub: decoy, Partition: "0xef"},
			err: "MBR partition 2 is an EFI system partition"},
		{name: "partition-maps", g: isotest.GrubEFI{Embedded: stub, Grub: decoy, Partition: "0x0c"},
			err: "): MBR partition 2 maps the EFI boot image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boot, err := open(t, buildGrub(t, tc.g)).ReadBoot()
			if tc.err != "" {
				wantErr(t, err, tc.err)
				return
			}
			must(t, err)
			var got []string
			for _, i := range boot.Initrds {
				got = append(got, strings.Join(i.Paths(), " ")+" at "+i.Where)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("initrds (-want +got):\n%s", d)
			}
		})
	}
}
