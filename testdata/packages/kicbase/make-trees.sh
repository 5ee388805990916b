#!/usr/bin/env bash
# Writes amd64/, arm64/, s390x/ and ppc64le/: a kicbase-like root for each
# of the platforms minikube builds kicbase for (Makefile KICBASE_ARCH at
# kubernetes/minikube eb25dbc7), as deploy/kicbase/Dockerfile at that commit
# leaves it, reduced to what the rules and the policy care about:
#
#   Debian 12 packages (clean-install: apt-get install --no-install-recommends):
#     the real .debs for each architecture (apt-get download, as ../fetch.sh
#     does), their files under etc/ and their units as shipped, and their
#     .list in var/lib/dpkg/info as dpkg writes it. Debian 12 is merged-/usr
#     (bin, lib, sbin -> usr/...): a .list says /lib/systemd/system/x, the
#     file is at usr/lib/systemd/system/x, as in the image.
#   Docker's packages (download.docker.com), mirrored from their packaging:
#     docker-ce, docker-ce-cli, docker-buildx-plugin: docker/docker-ce-packaging
#       deb/common/rules (override_dh_auto_install), docker-ce.dirs, the
#       docker.{service,socket,default,init} files dh_installsystemd and
#       dh_installinit install under the name docker (debhelper-compat 12:
#       /lib/systemd/system), at 2f12fe8 (Aug 2026);
#     containerd.io: docker/containerd-packaging debian/rules
#       (override_dh_auto_install: bin/* to /usr/bin, containerd.service to
#       /lib/systemd/system, common/containerd.toml to /etc/containerd), at
#       2161c61. kicbase COPYs its own containerd.toml first and installs
#       with --force-confold, so the file is minikube's, the owner
#       containerd.io.
#   cri-o (isv:cri-o:stable:v1.35, not on ppc64le): ../upstream/cri-o-deb-v1.35.0.
#   Tarball installs, with no dpkg owner, each recorded in
#     usr/local/share/rootfs-trim/owners/<package>.{list,version} as the
#     patched Dockerfile's RUN steps write them (integrations/minikube):
#     cri-dockerd (amd64 and arm64
#     only: /usr/bin and its units fetched into /usr/lib/systemd/system),
#     nerdctl and nerdctld (/usr/local/bin), buildkit (/usr/local/bin, units
#     in /usr/local/lib/systemd/system, /etc/buildkit/buildkitd.toml),
#     crictl (/usr/local/bin), the CNI plugins v1.9.1 (/opt/cni/bin).
#   What the Dockerfile COPYs and its RUN steps write: the files of
#     deploy/kicbase at eb25dbc7 (02-crio.conf, the sysctl files, nerdctld's
#     units, the automount and scheduled-stop units, byte for byte), and
#     what systemctl enable/disable/mask leaves in /etc/systemd/system.
#     kicbase's `systemctl disable crio && rm -f /etc/crictl.yaml` is left
#     out: the tree is what the build has before that workaround, which the
#     patch in integrations/minikube drops.
# Binaries are one-line placeholders. Versions are in var/lib/dpkg/status
# (Debian's as downloaded; Docker's are the ISO's at eb25dbc7: docker 28.5.2,
# containerd 2.3.4, and buildx v0.34.1, docker-ce-packaging's
# DOCKER_BUILDX_REF).
#
# Tests never run this (it downloads); the trees are committed and a
# refresh is a reviewed diff. Needs apt-get and dpkg-deb.
# Usage: testdata/packages/kicbase/make-trees.sh
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")"
here=$PWD
# deploy/kicbase at eb25dbc7, kept for the patch test too.
kicbase_src=$here/../../minikube-eb25dbc7/deploy/kicbase
crio=$here/../upstream/cri-o-deb-v1.35.0
debian_pkgs=(podman golang-github-containers-common golang-github-containers-image
	containernetworking-plugins conmon crun catatonit openssh-server dbus sudo)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch_debs() { # fetch_debs DEBARCH: downloads debian_pkgs into $tmp/debs/DEBARCH
	local a=$1
	mkdir -p "$tmp/$a/lists/partial" "$tmp/$a/cache/archives/partial" "$tmp/debs/$a"
	cat >"$tmp/$a/sources.list" <<SOURCES
deb [arch=$a] http://deb.debian.org/debian bookworm main
deb [arch=$a] http://deb.debian.org/debian bookworm-updates main
deb [arch=$a] http://deb.debian.org/debian-security bookworm-security main
SOURCES
	apt_opts=(
		-o "Dir::Etc::SourceList=$tmp/$a/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$tmp/$a/lists" -o "Dir::Cache=$tmp/$a/cache"
		-o "Dir::State::status=/dev/null" -o APT::Sandbox::User=root -o "APT::Architecture=$a" -o "APT::Architectures=$a"
	)
	apt-get "${apt_opts[@]}" -qq update
	(cd "$tmp/debs/$a" && apt-get "${apt_opts[@]}" -qq download "${debian_pkgs[@]}")
}

status() { # status PKG VERSION ARCH
	printf 'Package: %s\nStatus: install ok installed\nArchitecture: %s\nVersion: %s\n\n' "$1" "$3" "$2" >>"$t/var/lib/dpkg/status"
}

# merged: the path where a /lib, /bin or /sbin path lands in a merged-/usr root.
merged() {
	case $1 in
	lib/* | bin/* | sbin/*) printf 'usr/%s' "$1" ;;
	*) printf '%s' "$1" ;;
	esac
}

debian_pkg() { # debian_pkg DEB DEBARCH: its .list, /etc and units, and status
	local deb=$1 a=$2 p v ma list x
	p=$(dpkg-deb -f "$deb" Package)
	v=$(dpkg-deb -f "$deb" Version)
	ma=$(dpkg-deb -f "$deb" Multi-Arch)
	list=$p.list
	[ "$ma" = same ] && list=$p:$a.list
	dpkg-deb --fsys-tarfile "$deb" | tar -t |
		sed -e 's|^\./|/|' -e 's|^\.$|/.|' -e 's|/$||' -e 's|^$|/.|' >"$t/var/lib/dpkg/info/$list"
	x=$tmp/x/$a/$p
	mkdir -p "$x"
	dpkg-deb -x "$deb" "$x"
	for d in etc lib/systemd/system usr/lib/systemd/system; do
		if [ -d "$x/$d" ]; then
			mkdir -p "$t/$(merged "$d")"
			cp -a "$x/$d/." "$t/$(merged "$d")/"
		fi
	done
	status "$p" "$v" "$(dpkg-deb -f "$deb" Architecture)"
}

# own PKG KIND PATH [SRC]: a file of a package mirrored by hand (KIND file:
# a placeholder binary; conf: a placeholder config; real: SRC's bytes), and
# its line in PKG's .list when PKG is a dpkg package.
own() {
	local pkg=$1 kind=$2 path=$3 at
	at=$(merged "$path")
	mkdir -p "$t/$(dirname "$at")"
	case $kind in
	file) printf '%s binary (placeholder)\n' "$pkg" >"$t/$at" ;;
	conf) printf '# %s (placeholder)\n' "$pkg" >"$t/$at" ;;
	real) cp "$4" "$t/$at" ;;
	esac
	case $kind in file) chmod 0755 "$t/$at" ;; *) chmod 0644 "$t/$at" ;; esac
	if [ -n "${dpkg_list:-}" ]; then
		printf '/%s\n' "$path" >>"$dpkg_list"
	elif [ "$pkg" != kicbase ]; then
		# A tarball install: the patched Dockerfile's RUN step records it
		# (docs/commands.md, "What no package manager installed").
		mkdir -p "$t/usr/local/share/rootfs-trim/owners"
		printf '/%s\n' "$path" >>"$t/usr/local/share/rootfs-trim/owners/$pkg.list"
	fi
}

tarball_version() { # tarball_version PKG VERSION: the RUN step's .version
	printf '%s\n' "$2" >"$t/usr/local/share/rootfs-trim/owners/$1.version"
}

# deb_list PKG: starts a hand-made .list (written sorted, with its
# directories, when done_list is called).
deb_list() { dpkg_list=$tmp/list.$1; : >"$dpkg_list"; dpkg_pkg=$1; }
done_list() {
	local out=$t/var/lib/dpkg/info/$dpkg_pkg.list
	{
		echo /.
		while read -r f; do
			d=$(dirname "$f")
			while [ "$d" != / ]; do echo "$d"; d=$(dirname "$d"); done
			echo "$f"
		done <"$dpkg_list"
	} | sort -u >"$out"
	dpkg_list=
}

kicbase_file() { # kicbase_file SRC DEST: a file deploy/kicbase COPYs
	own kicbase real "$2" "$kicbase_src/$1"
}

for arch in amd64 arm64 s390x ppc64le; do
	debarch=$arch
	[ "$arch" = ppc64le ] && debarch=ppc64el
	fetch_debs "$debarch"
	t=$here/$arch/root
	# check.lock and owners stay: test/packages -update rewrites the lock.
	rm -rf "$t"
	mkdir -p "$t/var/lib/dpkg/info" "$t/usr/bin" "$t/usr/lib" "$t/usr/sbin" "$t/etc/cni/net.d"
	ln -s usr/bin "$t/bin"
	ln -s usr/lib "$t/lib"
	ln -s usr/sbin "$t/sbin"
	: >"$t/var/lib/dpkg/status"

	for deb in "$tmp/debs/$debarch"/*.deb; do
		debian_pkg "$deb" "$debarch"
	done

	deb_list docker-ce
	own docker-ce file usr/bin/dockerd
	own docker-ce file usr/bin/docker-proxy
	own docker-ce file usr/libexec/docker/docker-init
	own docker-ce conf etc/default/docker
	own docker-ce file etc/init.d/docker
	own docker-ce conf lib/systemd/system/docker.service
	own docker-ce conf lib/systemd/system/docker.socket
	mkdir -p "$t/etc/docker"
	echo /etc/docker >>"$dpkg_list"
	done_list
	status docker-ce 5:28.5.2-1~debian.12~bookworm "$debarch"

	deb_list docker-ce-cli
	own docker-ce-cli file usr/bin/docker
	own docker-ce-cli conf usr/share/bash-completion/completions/docker
	own docker-ce-cli conf usr/share/fish/vendor_completions.d/docker.fish
	own docker-ce-cli conf usr/share/zsh/vendor-completions/_docker
	done_list
	status docker-ce-cli 5:28.5.2-1~debian.12~bookworm "$debarch"

	deb_list docker-buildx-plugin
	own docker-buildx-plugin file usr/libexec/docker/cli-plugins/docker-buildx
	done_list
	status docker-buildx-plugin 0.34.1-1~debian.12~bookworm "$debarch"

	deb_list containerd.io
	for f in containerd containerd-shim-runc-v2 ctr runc; do own containerd.io file usr/bin/$f; done
	own containerd.io conf lib/systemd/system/containerd.service
	# kicbase's containerd.toml, kept by --force-confold: the .list names it.
	kicbase_file containerd.toml etc/containerd/config.toml
	done_list
	status containerd.io 2.3.4-1 "$debarch"

	if [ "$arch" != ppc64le ]; then
		(cd "$crio/root" && find . -type f ! -path './var/*' | sed 's|^\./||') | while read -r f; do
			mkdir -p "$t/$(dirname "$f")"
			cp -p "$crio/root/$f" "$t/$f"
		done
		cp "$crio/root/var/lib/dpkg/info/cri-o.list" "$t/var/lib/dpkg/info/cri-o.list"
		status cri-o "1.35.0-150500.1.1" "$debarch"
	fi

	# Tarball installs: no .list.
	if [ "$arch" = amd64 ] || [ "$arch" = arm64 ]; then
		own cri-dockerd file usr/bin/cri-dockerd
		own cri-dockerd conf usr/lib/systemd/system/cri-docker.socket
		own cri-dockerd conf usr/lib/systemd/system/cri-docker.service
	fi
	for f in nerdctl containerd-rootless.sh containerd-rootless-setuptool.sh; do own nerdctl file usr/local/bin/$f; done
	own nerdctld file usr/local/bin/nerdctld
	own buildkit file usr/local/bin/buildctl
	own buildkit file usr/local/bin/buildkitd
	own buildkit file usr/local/bin/buildkit-runc
	for q in aarch64 arm i386 mips64 mips64el ppc64le riscv64 s390x x86_64; do
		case $arch:$q in amd64:x86_64 | arm64:aarch64 | s390x:s390x | ppc64le:ppc64le) continue ;; esac
		own buildkit file usr/local/bin/buildkit-qemu-$q
	done
	own buildkit conf usr/local/lib/systemd/system/buildkit.service
	own buildkit conf usr/local/lib/systemd/system/buildkit.socket
	mkdir -p "$t/etc/buildkit"
	printf '[worker.oci]\n  enabled = false\n[worker.containerd]\n  enabled = true\n  namespace = "k8s.io"\n' >"$t/etc/buildkit/buildkitd.toml"
	own crictl file usr/local/bin/crictl
	for f in bandwidth bridge dhcp dummy firewall host-device host-local ipvlan loopback macvlan portmap ptp sbr static tap tuning vlan vrf; do
		own cni-plugins file opt/cni/bin/$f
	done

	for v in cri-dockerd=v0.4.3 nerdctl=2.3.5 nerdctld=0.7.0 buildkit=v0.32.2 crictl=v1.35.0 cni-plugins=v1.9.1; do
		if [ -f "$t/usr/local/share/rootfs-trim/owners/${v%%=*}.list" ]; then
			tarball_version "${v%%=*}" "${v#*=}"
		fi
	done

	# COPYed by the Dockerfile.
	kicbase_file 10-network-security.conf etc/sysctl.d/10-network-security.conf
	kicbase_file 11-tcp-mtu-probing.conf etc/sysctl.d/11-tcp-mtu-probing.conf
	kicbase_file 02-crio.conf etc/crio/crio.conf.d/02-crio.conf
	kicbase_file containerd_docker_io_hosts.toml etc/containerd/certs.d/docker.io/hosts.toml
	kicbase_file clean-install usr/local/bin/clean-install
	kicbase_file entrypoint usr/local/bin/entrypoint
	kicbase_file nerdctld/nerdctl.socket usr/local/lib/systemd/system/nerdctl.socket
	kicbase_file nerdctld/nerdctl.service usr/local/lib/systemd/system/nerdctl.service
	own kicbase file usr/bin/auto-pause
	kicbase_file automount/minikube-automount usr/sbin/minikube-automount
	kicbase_file automount/minikube-automount.service usr/lib/systemd/system/minikube-automount.service
	kicbase_file scheduled-stop/minikube-scheduled-stop var/lib/minikube/scheduled-stop/minikube-scheduled-stop
	kicbase_file scheduled-stop/minikube-scheduled-stop.service usr/lib/systemd/system/minikube-scheduled-stop.service
	chmod 0755 "$t/usr/local/bin/clean-install" "$t/usr/local/bin/entrypoint" "$t/usr/sbin/minikube-automount" \
		"$t/var/lib/minikube/scheduled-stop/minikube-scheduled-stop"

	# What the RUN steps' systemctl and printf leave in /etc/systemd/system.
	s=$t/etc/systemd/system
	mkdir -p "$s/multi-user.target.wants" "$s/sockets.target.wants" "$s/nerdctl.socket.d" \
		"$s/nerdctl.service.d" "$s/podman.socket.d" "$t/etc/tmpfiles.d" "$t/etc/kubernetes/manifests"
	printf '[Socket]\nSocketMode=0660\nSocketGroup=nerdctl\n' >"$s/nerdctl.socket.d/override.conf"
	printf '[Service]\nEnvironment=CONTAINERD_NAMESPACE=k8s.io\n' >"$s/nerdctl.service.d/override.conf"
	printf '[Socket]\nSocketMode=0660\nSocketUser=root\nSocketGroup=podman\n' >"$s/podman.socket.d/override.conf"
	echo "d /run/podman 0770 root podman" >"$t/etc/tmpfiles.d/podman.conf"
	ln -s /dev/null "$s/systemd-binfmt.service"
	ln -s /lib/systemd/system/ssh.service "$s/sshd.service"
	ln -s /lib/systemd/system/ssh.service "$s/multi-user.target.wants/ssh.service"
	ln -s /lib/systemd/system/docker.service "$s/multi-user.target.wants/docker.service"
	ln -s /usr/lib/systemd/system/minikube-automount.service "$s/multi-user.target.wants/minikube-automount.service"
	ln -s /usr/local/lib/systemd/system/buildkit.socket "$s/sockets.target.wants/buildkit.socket"
	ln -s /lib/systemd/system/docker.socket "$s/sockets.target.wants/docker.socket"
	if [ "$arch" != ppc64le ]; then
		ln -s /lib/systemd/system/podman.socket "$s/sockets.target.wants/podman.socket"
	fi
	ln -s /usr/bin/systemd "$t/usr/sbin/init"
	echo "kic! Build: fixture" >"$t/kic.txt"
	mkdir -p "$t/kind" "$t/proc" "$t/sys" "$t/dev" "$t/run" "$t/tmp"
	: >"$t/etc/hosts"
	: >"$t/etc/resolv.conf"
	: >"$t/etc/hostname"
	echo "$arch: $(ls "$t/var/lib/dpkg/info" | wc -l) packages with a .list"
done
