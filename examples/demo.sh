#!/usr/bin/env bash
# The main job on the bundled example: a small Buildroot-like target with
# the minikube runtime packages' files and its packages-file-list.txt.
# Needs only the rootfs-trim binary (make demo builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOTFS_TRIM:-bin/rootfs-trim}
ex=examples/minikube
out=out/demo
rm -rf "$out"
mkdir -p "$out"
# Buildroot exports this when BR2_REPRODUCIBLE is set; the demo does too.
export SOURCE_DATE_EPOCH=1700000000

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "The example target, archived as Buildroot's rootfs.cpio.gz"
"$bin" repack --format newc --compress gzip "$ex/target" "$out/rootfs.cpio.gz"
"$bin" list "$out/rootfs.cpio.gz" | grep -E '^#|etc/(cni|crictl|containers)'

step "audit: what the packages ship that they must not, and who shipped it"
"$bin" audit --rules rules --packages-file-list "$ex/packages-file-list.txt" "$out/rootfs.cpio.gz" || true

step "apply: strip, relocate, inject templates; the archive streams through"
"$bin" apply --rules rules --packages-file-list "$ex/packages-file-list.txt" \
	--manifest "$out/manifest.json" "$out/rootfs.cpio.gz" "$out/rootfs-trimmed.cpio.gz"

step "audit again: clean"
"$bin" audit --rules rules --packages-file-list "$ex/packages-file-list.txt" "$out/rootfs-trimmed.cpio.gz"

step "At boot: unpack, then render for cri-o with the bridge CNI"
"$bin" repack --format dir "$out/rootfs-trimmed.cpio.gz" "$out/root"
"$bin" render --root "$out/root" --runtime crio --cni bridge --pod-cidr 10.244.0.0/16
printf -- '--- /etc/crictl.yaml\n'; cat "$out/root/etc/crictl.yaml"
printf -- '--- /etc/cni/net.d\n'; ls -A "$out/root/etc/cni/net.d"

step "Switch to containerd with kindnet: nothing may pre-empt kindnet"
"$bin" render --root "$out/root" --runtime containerd --cni kindnet
printf -- '--- /etc/crictl.yaml\n'; cat "$out/root/etc/crictl.yaml"
printf -- '--- /etc/cni/net.d\n'; ls -A "$out/root/etc/cni/net.d"

printf '\nThe manifest of the apply is %s.\n' "$out/manifest.json"
