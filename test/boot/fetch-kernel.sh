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
# DIR is a cache: when it already holds the kernel that linux-image-amd64
# points at, nothing is downloaded. Without apt's lists, the newest kernel
# already in DIR is used.
set -eu
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
want=$dir/boot/vmlinuz-${pkg#linux-image-}
if [ -f "$want" ]; then
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
dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$dir" --wildcards './boot/vmlinuz-*'
[ -f "$want" ] || { echo "$0: $pkg has no ${want#"$dir"/}" >&2; exit 1; }
echo "$want"
