#!/usr/bin/env bash
# Writes x86_64/ and aarch64/: what the minikube ISO's runtime packages put
# in Buildroot's target directory, by the package names Buildroot gives them
# (the directory of each .mk: containerd-bin on x86_64,
# containerd-bin-aarch64 on arm64), with the packages-file-list.txt and the
# `make show-info` versions Buildroot would write. Mirrored by hand from
# kubernetes/minikube deploy/iso/minikube-iso (commit eb25dbc7, Aug 2026):
#   package/crio-bin/crio-bin.mk                      crio-bin v1.35.0
#   package/podman/podman.mk                          podman v3.4.7
#   arch/x86_64/package/<name>/<name>.mk, and
#   arch/aarch64/package/<name>-aarch64/<name>.mk     containerd-bin 2.3.4,
#     buildkit-bin v0.32.2, cri-dockerd 0.4.3, docker-bin 28.5.2,
#     crictl-bin v1.35.0, cni-plugins-latest v1.9.1
#   board/minikube/<arch>/rootfs-overlay/etc/cni/net.d/.keep (no package)
# Each file is the path its INSTALL_TARGET_CMDS / INSTALL_INIT_SYSTEMD
# writes. Binaries and minikube's own configuration files are one-line
# placeholders (no rule reads them); the one file a rule handles,
# podman's cni/87-podman-bridge.conflist, is podman v3.4.7's, as shipped
# (../upstream/podman-v3.4.7). crio-bin.mk's `$(call link-service,...)`
# names a macro neither minikube nor Buildroot defines, so it installs
# nothing.
#
# Buildroot lists regular files and symlinks, not directories, in
# packages-file-list.txt (package/pkg-utils.mk, _pkg_size_before/after), in
# install order; so does this.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")"

emit() { # emit PKG KIND PATH [TARGET]: KIND is file, conf, link or real
	local pkg=$1 kind=$2 path=$3
	mkdir -p "$t/$(dirname "$path")"
	case $kind in
	file) printf '%s binary (placeholder)\n' "$pkg" >"$t/$path" ;;
	conf) printf '# %s: minikube deploy/iso/minikube-iso (placeholder)\n' "$pkg" >"$t/$path" ;;
	link) ln -sfn "$4" "$t/$path" ;;
	real) cp "$4" "$t/$path" ;;
	esac
	printf '%s,./%s\n' "$pkg" "$path" >>"$list"
}

for arch in x86_64 aarch64; do
	sfx=''
	[ "$arch" = aarch64 ] && sfx=-aarch64
	# check.lock stays: test/packages -update rewrites it, for review.
	rm -rf "$arch/target"
	t=$arch/target list=$arch/packages-file-list.txt
	mkdir -p "$t/etc/cni/net.d"
	: >"$t/etc/cni/net.d/.keep"
	: >"$list"

	p=crio-bin
	for f in usr/bin/crio usr/bin/pinns; do emit $p file $f; done
	for f in etc/crio/crio.conf etc/containers/policy.json etc/containers/registries.conf \
		etc/crio/crio.conf.d/02-crio.conf etc/sysconfig/crio usr/lib/systemd/system/crio.service; do
		emit $p conf $f
	done

	p=containerd-bin$sfx
	for f in containerd containerd-shim-runc-v2 ctr containerd-stress; do emit $p file usr/bin/$f; done
	for f in etc/containerd/config.toml etc/containerd/certs.d/docker.io/hosts.toml \
		usr/lib/systemd/system/containerd.service usr/lib/systemd/system-preset/50-minikube.preset; do
		emit $p conf $f
	done

	p=buildkit-bin$sfx
	emit $p file usr/bin/buildctl
	for f in buildkit-runc buildkit-qemu-aarch64 buildkit-qemu-riscv64 buildkitd; do emit $p file usr/sbin/$f; done
	for f in usr/lib/tmpfiles.d/buildkit.conf etc/buildkit/buildkitd.toml usr/lib/systemd/system/buildkit.service \
		usr/lib/systemd/system/buildkit.socket usr/lib/systemd/system-preset/51-buildkit.preset; do
		emit $p conf $f
	done

	p=cri-dockerd$sfx
	emit $p file usr/bin/cri-dockerd
	emit $p conf usr/lib/systemd/system/cri-docker.service
	emit $p conf usr/lib/systemd/system/cri-docker.socket

	p=docker-bin$sfx
	for f in docker dockerd docker-init docker-proxy; do emit $p file bin/$f; done
	for f in etc/docker/daemon.json usr/lib/systemd/system/docker.socket etc/sysctl.d/forward.conf; do
		emit $p conf $f
	done

	p=crictl-bin$sfx
	emit $p file usr/bin/crictl

	p=cni-plugins-latest$sfx
	for f in bandwidth bridge vlan tuning ptp portmap macvlan loopback ipvlan host-local dhcp firewall; do
		emit $p file opt/cni/bin/$f
		emit $p link usr/bin/$f ../../opt/cni/bin/$f
	done

	p=podman
	emit $p file usr/bin/podman
	emit $p real etc/cni/net.d/87-podman-bridge.conflist ../upstream/podman-v3.4.7/root/etc/cni/net.d/87-podman-bridge.conflist
	for f in usr/lib/systemd/system/podman.service usr/lib/systemd/system/podman.socket \
		usr/lib/systemd/system/podman.socket.d/override.conf usr/lib/tmpfiles.d/podman.conf; do
		emit $p conf $f
	done

	cat >"$arch/show-info.json" <<JSON
{
  "buildkit-bin$sfx": {"type": "target", "name": "buildkit-bin$sfx", "version": "v0.32.2"},
  "cni-plugins-latest$sfx": {"type": "target", "name": "cni-plugins-latest$sfx", "version": "v1.9.1"},
  "containerd-bin$sfx": {"type": "target", "name": "containerd-bin$sfx", "version": "2.3.4"},
  "cri-dockerd$sfx": {"type": "target", "name": "cri-dockerd$sfx", "version": "0.4.3"},
  "crictl-bin$sfx": {"type": "target", "name": "crictl-bin$sfx", "version": "v1.35.0"},
  "crio-bin": {"type": "target", "name": "crio-bin", "version": "v1.35.0"},
  "docker-bin$sfx": {"type": "target", "name": "docker-bin$sfx", "version": "28.5.2"},
  "podman": {"type": "target", "name": "podman", "version": "v3.4.7"}
}
JSON
done
