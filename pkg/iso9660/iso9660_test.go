package iso9660_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// build makes an ISO of kind around a small initrd and kernel, returning
// its bytes and the initrd's.
func build(t *testing.T, kind isotest.Kind, extra map[string]string) (img, initrd []byte) {
	t.Helper()
	dir := t.TempDir()
	initrd = bytes.Repeat([]byte("initramfs "), 5000)
	k, i := filepath.Join(dir, "kernel"), filepath.Join(dir, "initrd")
	must(t, os.WriteFile(k, []byte("not a kernel"), 0o644))
	must(t, os.WriteFile(i, initrd, 0o644))
	out := filepath.Join(dir, "out.iso")
	isotest.Build(t, kind, k, i, out, extra)
	img, err := os.ReadFile(out)
	must(t, err)
	return img, initrd
}

func open(t *testing.T, img []byte) *iso9660.Image {
	t.Helper()
	im, err := iso9660.Open(bytes.NewReader(img), int64(len(img)))
	must(t, err)
	return im
}

// TestMinikubeISOs: the boot configuration of each of minikube's ISOs,
// found as the bootloader finds it, names /boot/initrd, whose bytes are
// the initrd's; the EFI image is found by being a FAT filesystem though
// genisoimage's catalogue says platform x86.
func TestMinikubeISOs(t *testing.T) {
	for _, tc := range []struct {
		kind    isotest.Kind
		volume  string
		configs []string
	}{
		{isotest.BIOS, "ISOIMAGE", []string{"/isolinux/isolinux.cfg"}},
		{isotest.Hybrid, "ISOIMAGE", []string{"/isolinux/isolinux.cfg"}},
		{isotest.EFI, "EFIBOOTISO", []string{"/EFI/BOOT/grub.cfg", "/EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(memdisk)/boot/grub/grub.cfg", "/EFI/BOOT/efiboot.img:/EFI/BOOT/GRUB.CFG"}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			img, initrd := build(t, tc.kind, nil)
			if !iso9660.Sniff(bytes.NewReader(img)) {
				t.Fatal("Sniff: not an ISO")
			}
			im := open(t, img)
			if im.VolumeID != tc.volume || !im.RockRidge() {
				t.Errorf("volume %q, Rock Ridge %v", im.VolumeID, im.RockRidge())
			}
			if im.Created.IsZero() || im.Modified.IsZero() {
				t.Errorf("volume dates not read: %v %v", im.Created, im.Modified)
			}
			boot, err := im.ReadBoot()
			must(t, err)
			if d := cmp.Diff(tc.configs, boot.Configs); d != "" {
				t.Errorf("configs (-want +got):\n%s", d)
			}
			if len(boot.Initrds) != 1 || strings.Join(boot.Initrds[0].Paths(), " ") != "/boot/initrd" {
				t.Fatalf("initrds: %+v", boot.Initrds)
			}
			if d := cmp.Diff([]string{"/boot/bzImage"}, boot.Kernels); d != "" {
				t.Errorf("kernels:\n%s", d)
			}
			got, err := io.ReadAll(im.Section(boot.Initrds[0].Files[0]))
			must(t, err)
			if !bytes.Equal(got, initrd) {
				t.Errorf("initrd: %d bytes, want its %d", len(got), len(initrd))
			}
			imgs, err := im.BootImages()
			must(t, err)
			if len(imgs) != 1 || imgs[0].Platform != 0 || !imgs[0].Bootable {
				t.Errorf("boot images: %+v", imgs)
			}
			f, err := im.Lookup("/boot/bzImage")
			must(t, err)
			if f.Mode != 0o444 && f.Mode.Perm() != 0o644 {
				t.Errorf("bzImage mode %v", f.Mode)
			}
		})
	}
}

// TestConfigs: syslinux's and GRUB's ways of naming initrds, relative
// paths, several files, and the refusals.
func TestConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, cfgPath, cfg string
		want               [][]string
		err                string
	}{
		{name: "append", cfgPath: "syslinux/syslinux.cfg", cfg: "LABEL a\n KERNEL /boot/bzImage\n APPEND console=ttyS0 initrd=/boot/initrd,../boot/bzImage\n",
			want: [][]string{{"/boot/initrd", "/boot/bzImage"}}},
		{name: "relative", cfgPath: "boot/isolinux.cfg", cfg: "label a\n kernel bzImage\n initrd initrd\n", want: [][]string{{"/boot/initrd"}}},
		{name: "grub-several", cfgPath: "boot/grub/grub.cfg", cfg: "menuentry x {\n linux ($root)/boot/bzImage\n initrd /boot/bzImage ($root)/boot/initrd\n}\nmenuentry y {\n initrd /boot/initrd\n}\n",
			want: [][]string{{"/boot/bzImage", "/boot/initrd"}, {"/boot/initrd"}}},
		{name: "grub-other-device", cfgPath: "boot/grub/grub.cfg", cfg: "menuentry x {\n initrd (hd0)/boot/initrd\n}\n",
			err: "/boot/grub/grub.cfg:2: (hd0)/boot/initrd: a device other than the image's"},
		{name: "missing", cfgPath: "isolinux/isolinux.cfg", cfg: "# c\n\ninitrd /boot/initrd.lz4\n", err: "/isolinux/isolinux.cfg:3: initrd /boot/initrd.lz4: no such file in the image"},
		{name: "none", cfgPath: "isolinux/isolinux.cfg", cfg: "label a\n kernel /boot/bzImage\n append initrd\n", err: "/isolinux/isolinux.cfg: no initrd named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, _ := build(t, isotest.BIOS, map[string]string{tc.cfgPath: tc.cfg})
			im := open(t, img)
			boot, err := im.ReadBoot()
			if tc.err != "" {
				wantErr(t, err, tc.err)
				return
			}
			must(t, err)
			var got [][]string
			for _, i := range boot.Initrds {
				if strings.HasPrefix(i.Where, "/isolinux/isolinux.cfg:") {
					continue
				}
				got = append(got, i.Paths())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("initrds (-want +got):\n%s", d)
			}
		})
	}
}

// TestRefused: what the reader refuses in an image otherwise sound.
func TestRefused(t *testing.T) {
	img, _ := build(t, isotest.BIOS, nil)
	for how, want := range map[string]string{
		"extent-beyond": "/boot/initrd: extent (bytes",
		"loop":          "/boot: directory loop",
		"no-config":     "no boot configuration",
	} {
		t.Run(how, func(t *testing.T) {
			bad := bytes.Clone(img)
			must(t, isotest.Corrupt(bad, how))
			_, err := open(t, bad).ReadBoot()
			wantErr(t, err, want)
		})
	}
	if _, err := iso9660.Open(bytes.NewReader(img[:17*iso9660.SectorSize]), 17*iso9660.SectorSize); err == nil {
		t.Error("a truncated image opened")
	}
	if iso9660.Sniff(strings.NewReader("\x1f\x8b")) {
		t.Error("gzip sniffed as ISO")
	}
	if _, err := open(t, img).Lookup("/nothing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lookup of a missing file: %v", err)
	}
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
