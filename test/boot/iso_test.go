package boot

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// ovmfCode is Debian's ovmf firmware, and its variable store's template.
var ovmfCode, ovmfVars = "/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"

// TestBootISO boots the ISOs rootfs-trim apply wrote from minikube's two
// (pkg/iso9660/isotest): the BIOS one from the CD as SeaBIOS and isolinux
// boot it, and the EFI one (GRUB in efiboot.img, an El Torito entry
// genisoimage marks x86) under OVMF; then the EFI one with an initrd of
// two files (GRUB "initrd /boot/early.cpio /boot/initrd": an early raw
// cpio, kept byte for byte, and the gzip main, to which apply adds a
// segment). In each guest the kernel unpacked the trimmed initrd exactly
// as GNU cpio extracts it from the image (for two files, the merged view
// rootfs-trim repack makes of them), /etc/cni/net.d holds no runtime's
// config, and /usr/share/minikube is there. One boot per image: each
// costs a minute or more under TCG.
func TestBootISO(t *testing.T) {
	fx := newBootFixture(t)
	input := filepath.Join(fx.work, "rootfs.cpio.gz")
	makeCpioGz(t, fx.tree, input)
	for _, tc := range []struct {
		name  string
		kind  isotest.Kind
		early bool
	}{{"bios", isotest.BIOS, false}, {"efi", isotest.EFI, false}, {"efi-two-files", isotest.EFI, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var firmware []string
			if tc.kind == isotest.EFI {
				firmware = ovmf(t)
			}
			in := filepath.Join(fx.work, tc.name+".iso")
			var extra map[string]string
			if tc.early {
				extra = map[string]string{isotest.Early: string(earlyCpio(t))}
			}
			isotest.Build(t, tc.kind, fx.tools.kernel, input, in, extra)
			out := filepath.Join(fx.work, tc.name+".out.iso")
			t.Logf("rootfs-trim apply:\n%s", fx.apply(t, "--quiet", in, out))

			initrd := filepath.Join(t.TempDir(), "initrd.cpio.gz")
			if tc.early {
				mergedInitrd(t, fx.rootfsTrim, out, initrd)
			} else {
				extractInitrd(t, out, initrd)
			}
			want := archiveManifest(t, initrd, filepath.Join(t.TempDir(), "extracted"))

			args := append(firmware, "-cdrom", out, "-boot", "d")
			r := fx.bootWith(t, "the "+tc.name+" ISO", args...)
			if !r.done {
				t.Errorf("/init did not get to the end (no @@DONE on the console)")
			}
			checkUnpacked(t, want, r.lines(t, "manifest"))
			r.wantLines(t, "netd-initial", ".", "..", ".keep")
			got := manifestPaths(r.lines(t, "manifest"))
			paths := []string{"/usr/share/minikube", "/usr/share/minikube/rootfs-trim/index.json"}
			if tc.early {
				paths = append(paths, "/boot-test-early")
			}
			for _, p := range paths {
				if !got[p] {
					t.Errorf("%s is not in the booted guest", p)
				}
			}
		})
	}
}

// mergedInitrd is the merged view of the image's initrd of several files,
// as rootfs-trim reads it, archived as one gzip cpio for GNU cpio.
func mergedInitrd(t *testing.T, rootfsTrim, image, dst string) {
	t.Helper()
	merged := filepath.Join(t.TempDir(), "merged")
	if out, err := exec.Command(rootfsTrim, "repack", "--archive-format", "dir", image, merged).CombinedOutput(); err != nil {
		t.Fatalf("repack to a tree: %v\n%s", err, out)
	}
	makeCpioGz(t, merged, dst)
}

// ovmf returns QEMU's arguments for OVMF, with a copy of its variables.
func ovmf(t *testing.T) []string {
	for _, f := range []string{ovmfCode, ovmfVars} {
		if _, err := os.Stat(f); err != nil {
			missing(t, "%s not found (apt-get install ovmf)", f)
		}
	}
	vars := filepath.Join(t.TempDir(), "OVMF_VARS.fd")
	b, err := os.ReadFile(ovmfVars)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vars, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"-drive", "if=pflash,format=raw,readonly=on,file=" + ovmfCode,
		"-drive", "if=pflash,format=raw,file=" + vars}
}

// extractInitrd copies the initrd the image's boot configuration names.
func extractInitrd(t *testing.T, image, dst string) {
	t.Helper()
	f, err := os.Open(image)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	im, err := iso9660.Open(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	b, err := im.ReadBoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, im.Section(b.Initrds[0].Files[0])); err != nil {
		t.Fatal(err)
	}
}
