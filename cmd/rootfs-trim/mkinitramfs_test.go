package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// mkinitramfsNS runs mkinitramfs (its arguments after the first three)
// in the private mount namespace unshare(1) made, where /boot and
// /lib/modules show the kernel tree $1 holds for version $2:
// mkinitramfs reads /boot/config-VERSION and /lib/modules/VERSION and
// nothing else, and the host's /boot and /lib/modules stay as they are
// (the host may have no /lib/modules at all, so the directory holding it
// is overlaid, the change kept in a tmpfs at $3).
const mkinitramfsNS = `set -eu
root=$1 ver=$2 work=$3
shift 3
mount -t tmpfs tmpfs "$work"
mkdir "$work/lib" "$work/lib.work" "$work/boot" "$work/boot.work"
lib=$(readlink -f /lib)
mount -t overlay overlay -o "lowerdir=$lib,upperdir=$work/lib,workdir=$work/lib.work" "$lib"
mkdir -p "/lib/modules/$ver"
mount --bind "$root/lib/modules/$ver" "/lib/modules/$ver"
cp "$root/boot/config-$ver" "$work/boot/"
mount -t overlay overlay -o "lowerdir=/boot,upperdir=$work/boot,workdir=$work/boot.work" /boot
exec mkinitramfs "$@"
`

// earlyHook is a hook of mkinitramfs's configuration directory that
// makes the early microcode cpio (from the tree at %[1]s) as Debian's
// intel-microcode hook does, and hands it to prepend_earlyinitramfs; it
// also puts %[2]s in the initrd as etc/crictl.yaml.
const earlyHook = `#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
early=$(mktemp "${TMPDIR:-/var/tmp}/early_XXXXXX")
(cd '%[1]s' && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 --reproducible) >"$early"
prepend_earlyinitramfs "$early"
rm -f "$early"
copy_file config '%[2]s' /etc/crictl.yaml
`

// mkinitramfsInitrd has Debian's mkinitramfs write an initrd for the
// kernel the boot test fetched, MODULES=list with an empty list (what
// initramfs-tools' own hooks add comes in: fan from thermal), an early
// segment from a hook. It runs as root, in a private mount namespace.
func mkinitramfsInitrd(t *testing.T, dir, crictl, codec string) (string, []string) {
	for _, tool := range []string{"mkinitramfs", "unshare", "depmod"} {
		archivetest.RequireTool(t, tool)
	}
	archivetest.RequireRoot(t, "mkinitramfs against a kernel's modules mounted in a private mount namespace")
	root, ver := kernelTree(t)
	conf := filepath.Join(dir, "initramfs-tools")
	ucode := filepath.Join(dir, "ucode")
	for _, d := range []string{"conf.d", "hooks", "scripts"} {
		mustOK(t, os.MkdirAll(filepath.Join(conf, d), 0o755))
	}
	mustOK(t, os.MkdirAll(filepath.Join(ucode, "kernel/x86/microcode"), 0o755))
	mustOK(t, os.WriteFile(filepath.Join(ucode, "kernel/x86/microcode/GenuineIntel.bin"), []byte("microcode made for the test\n"), 0o644))
	mustOK(t, os.WriteFile(filepath.Join(conf, "initramfs.conf"),
		[]byte("MODULES=list\nBUSYBOX=auto\nKEYMAP=n\nCOMPRESS=gzip\nRUNSIZE=10%\nFSTYPE=auto\nRESUME=none\n"), 0o644))
	mustOK(t, os.WriteFile(filepath.Join(conf, "modules"), nil, 0o644))
	mustOK(t, os.WriteFile(filepath.Join(conf, "hooks", "early-microcode"), []byte(fmt.Sprintf(earlyHook, ucode, crictl)), 0o755))
	img := filepath.Join(dir, "mkinitramfs-"+codec+".img")
	work := filepath.Join(dir, "ns-"+codec)
	mustOK(t, os.MkdirAll(work, 0o755))
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", mkinitramfsNS, "sh",
		root, ver, work, "-d", conf, "-c", codec, "-o", img, ver)
	// SOURCE_DATE_EPOCH: reproducible, gzip -n rather than pigz.
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000", "TMPDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkinitramfs: %v\n%s", err, out)
	}
	return img, []string{"usr/lib/modules/" + ver + "/kernel/drivers/acpi/fan.ko", "init", "usr/bin/busybox"}
}

// kernelTree finds a kernel's config and modules (modules.dep made) for
// mkinitramfs: beside ROOTFS_TRIM_KERNEL (test/boot/fetch-kernel.sh keeps
// them there), then the host's, then in the caches make test fetches the
// kernel into. It returns the tree's root and the kernel's version.
func kernelTree(t *testing.T) (root, version string) {
	t.Helper()
	type cand struct{ root, version string }
	var cands []cand
	if k := os.Getenv("ROOTFS_TRIM_KERNEL"); k != "" {
		if v, ok := strings.CutPrefix(filepath.Base(k), "vmlinuz-"); ok {
			cands = append(cands, cand{filepath.Dir(filepath.Dir(k)), v})
		}
	}
	home, _ := os.UserHomeDir()
	for _, r := range []string{"/", "/var/cache/rootfs-trim-kernel", filepath.Join(home, ".cache/rootfs-trim-kernel")} {
		configs, _ := filepath.Glob(filepath.Join(r, "boot/config-*"))
		sort.Sort(sort.Reverse(sort.StringSlice(configs)))
		for _, c := range configs {
			cands = append(cands, cand{r, strings.TrimPrefix(filepath.Base(c), "config-")})
		}
	}
	for _, c := range cands {
		_, err1 := os.Stat(filepath.Join(c.root, "boot", "config-"+c.version))
		_, err2 := os.Stat(filepath.Join(c.root, "lib/modules", c.version, "modules.dep"))
		if err1 == nil && err2 == nil {
			return c.root, c.version
		}
	}
	msg := "no kernel config and modules for mkinitramfs: test/boot/fetch-kernel.sh DIR keeps them beside the kernel (DIR/boot/config-VERSION, DIR/lib/modules/VERSION); set ROOTFS_TRIM_KERNEL to DIR/boot/vmlinuz-VERSION"
	if os.Getenv(archivetest.RequireToolsEnv) == "1" {
		t.Fatalf("%s; %s=1 forbids skipping", msg, archivetest.RequireToolsEnv)
	}
	t.Skip(msg)
	return "", ""
}
