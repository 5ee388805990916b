#!/bin/sh
# Usage: test/boot/fetch-systemd.sh DIR KERNEL_VERSION
#
# Makes DIR/root: Debian's systemd and busybox-static with everything they
# depend on, unpacked from the packages (apt-get download, dpkg-deb -x; no
# install, no dpkg database change, no root needed), and the kernel modules
# the booted minikube test loads for its persistent disk (virtio-blk, ext4)
# from linux-image-KERNEL_VERSION, under DIR/root/lib/modules. Prints
# DIR/root. A DIR/root made earlier for the same KERNEL_VERSION is reused:
# the test caches it under /var/cache like fetch-kernel.sh's kernel.
# Needs apt's lists (apt-get update).
set -eu
dir=${1:?usage: $0 DIR KERNEL_VERSION}
kver=${2:?usage: $0 DIR KERNEL_VERSION}
root=$dir/root
if [ -f "$root/.rootfs-trim-complete" ] && [ "$(cat "$root/.rootfs-trim-complete")" = "$kver" ]; then
	echo "$root"
	exit 0
fi
rm -rf "$root"
mkdir -p "$dir/debs" "$root"

# What systemd needs to run, and busybox-static for the shell tools. The
# closure also names packages only their maintainer scripts use (debconf,
# dpkg, tar and what they pull in): they are never run here.
skip=' cdebconf debconf dpkg install-info libdebian-installer4 libnewt0.52 libslang2 libtextwrap1 readline-common libreadline8 tar '
pkgs=
for p in $(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances systemd busybox-static | grep -v '^[ <]' | sort -u); do
	case "$skip" in *" $p "*) continue ;; esac
	pkgs="$pkgs $p"
done
[ -n "$pkgs" ] || { echo "$0: apt-cache knows no systemd (apt-get update?)" >&2; exit 1; }
# apt-get download writes into the current directory. As root it warns
# that _apt cannot write there and downloads unsandboxed: harmless.
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get -q download $pkgs "linux-image-$kver" >&2)
for p in $pkgs; do
	deb=$(ls "$dir/debs/${p}_"*.deb | tail -n 1)
	dpkg-deb -x "$deb" "$root"
done

# Only the modules for the disk: virtio-pci, virtio-blk and ext4 with what
# they depend on, in load order. Debian builds them as modules.
mods="lib/crc16.ko fs/mbcache.ko fs/jbd2/jbd2.ko crypto/crc32c_generic.ko fs/ext4/ext4.ko
drivers/virtio/virtio.ko drivers/virtio/virtio_ring.ko drivers/virtio/virtio_pci_modern_dev.ko
drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci.ko drivers/block/virtio_blk.ko"
kdeb=$(ls "$dir/debs/linux-image-${kver}_"*.deb | tail -n 1)
list=
for m in $mods; do list="$list ./lib/modules/$kver/kernel/$m"; done
# shellcheck disable=SC2086
dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$root" $list
rm -f "$kdeb"

# Documentation and locales are not needed to boot.
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/locale" \
	"$root/usr/share/info" "$root/usr/share/lintian" "$root/usr/share/zsh" \
	"$root/usr/share/bash-completion" "$root/usr/lib/x86_64-linux-gnu/gconv"
echo "$kver" >"$root/.rootfs-trim-complete"
echo "$root"
