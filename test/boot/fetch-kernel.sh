#!/bin/sh
# Usage: test/boot/fetch-kernel.sh DIR
#
# Puts Debian's current amd64 kernel image (the one linux-image-amd64 points
# at) in DIR/boot without installing it, and prints its path for
# ROOTFS_TRIM_KERNEL. Installing linux-image-amd64 works too, but its
# postinst builds an initramfs for the host with mkinitramfs, minutes in a
# container, and the boot test needs only the bzImage. Needs apt's lists
# (apt-get update) and nothing else: no root, no dpkg database change.
#
# Beside it, for mkinitramfs in TestInitrdProducers (cmd/rootfs-trim), which
# reads /boot/config-VERSION and /lib/modules/VERSION: the package's
# DIR/boot/config-VERSION and DIR/lib/modules/VERSION with its modules.*
# files and the modules initramfs-tools' own hooks add with MODULES=list
# (dmsetup: dm-mod; thermal: fan, thermal; udev: input), then depmod -b DIR,
# as the package's postinst runs depmod. Not the whole tree: 400 MB, and an
# absent module is one mkinitramfs leaves out without a word.
#
# DIR is a cache: when it already holds the kernel that linux-image-amd64
# points at, with its config and modules.dep, nothing is downloaded. Without
# apt's lists, the newest kernel already in DIR is used.
set -eu
PATH=$PATH:/usr/sbin:/sbin
dir=${1:?usage: $0 DIR}
cached=$(ls "$dir"/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1) || true
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }') || true
if [ -z "$pkg" ]; then
	if [ -n "$cached" ]; then
		echo "$0: no apt lists; using the cached $cached" >&2
		echo "$cached"
		exit 0
	fi
	echo "$0: no kernel behind linux-image-amd64 (apt-get update?)" >&2
	exit 1
fi
ver=${pkg#linux-image-}
want=$dir/boot/vmlinuz-$ver
if [ -f "$want" ] && [ -f "$dir/boot/config-$ver" ] && [ -f "$dir/lib/modules/$ver/modules.dep" ]; then
	echo "$0: $pkg already in $dir" >&2
	echo "$want"
	exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download writes into the current directory. As root it warns
# that _apt cannot write there and downloads unsandboxed: harmless.
(cd "$tmp" && apt-get -q download "$pkg" >&2)
mods=./lib/modules/$ver
rm -rf "${dir:?}/lib/modules/$ver"
dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$dir" --wildcards './boot/vmlinuz-*' "./boot/config-$ver" \
	"$mods/modules.*" "$mods/kernel/drivers/acpi" "$mods/kernel/drivers/thermal" "$mods/kernel/drivers/md" "$mods/kernel/drivers/input"
[ -f "$want" ] || { echo "$0: $pkg has no ${want#"$dir"/}" >&2; exit 1; }
depmod -b "$dir" "$ver"
echo "$want"
