#!/bin/sh
# Usage: test/boot/fetch-kernel.sh DIR
#
# Puts Debian's current amd64 kernel image (the one linux-image-amd64 points
# at) in DIR/boot without installing it, and prints its path for
# ROOTFS_TRIM_KERNEL. Installing linux-image-amd64 works too, but its
# postinst builds an initramfs for the host with mkinitramfs, minutes in a
# container, and the boot test needs only the bzImage. Needs apt's lists
# (apt-get update) and nothing else: no root, no dpkg database change.
set -eu
dir=${1:?usage: $0 DIR}
pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
[ -n "$pkg" ] || { echo "$0: no kernel behind linux-image-amd64 (apt-get update?)" >&2; exit 1; }
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download writes into the current directory. As root it warns
# that _apt cannot write there and downloads unsandboxed: harmless.
(cd "$tmp" && apt-get -q download "$pkg" >&2)
dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$dir" --wildcards './boot/vmlinuz-*'
ls "$dir"/boot/vmlinuz-*
