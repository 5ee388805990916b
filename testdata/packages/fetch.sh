#!/usr/bin/env bash
# Refreshes the Debian fixtures under testdata/packages/debian-12/ from the
# real packages: for each one, `apt-get download` the .deb of Debian 12
# (bookworm, with its updates and security suites), then keep what the rules
# and the policy care about, never the binaries:
#   <pkg>/version                        the exact version downloaded
#   <pkg>/root/var/lib/dpkg/info/<pkg>.list
#                                        every path the package installs, as
#                                        dpkg writes it (one absolute path a
#                                        line, directories included, "/." first)
#   <pkg>/root/etc/...                   the package's files under /etc, as shipped
#   <pkg>/root/{lib,usr/lib}/systemd/system/...
#                                        its unit files (small text files)
# Everything else in the package stays out: the .list still names it.
# A refresh leaves <pkg>/check.lock alone: run `go test ./test/packages
# -update` after it and review both diffs.
#
# Tests never run this: Debian's point releases change the archive, so the
# fixtures are committed and a refresh is a reviewed diff. It needs apt-get
# and dpkg-deb (any Debian or Ubuntu), and uses an apt state of its own, so
# the machine's sources and lists are left alone.
#
# Usage: testdata/packages/fetch.sh [PACKAGE...]
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")"
out=$PWD/debian-12
suite=bookworm
arch=amd64
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	# cri-o is missing on purpose: no Debian 12 suite has it (README.md).
	pkgs=(podman containerd docker.io containernetworking-plugins golang-github-containers-common)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/debs"
cat >"$tmp/sources.list" <<SOURCES
deb [arch=$arch] http://deb.debian.org/debian $suite main
deb [arch=$arch] http://deb.debian.org/debian $suite-updates main
deb [arch=$arch] http://deb.debian.org/debian-security $suite-security main
SOURCES
apt_opts=(
	-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
	-o "Dir::State::status=/dev/null" -o APT::Sandbox::User=root -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
)
apt-get "${apt_opts[@]}" -qq update

for p in "${pkgs[@]}"; do
	(cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "$p")
	deb=$(ls "$tmp/debs/${p}"_*.deb)
	version=$(dpkg-deb -f "$deb" Version)
	dest=$out/$p
	# check.lock stays: test/packages -update rewrites it, for review.
	rm -rf "$dest/root"
	mkdir -p "$dest/root/var/lib/dpkg/info" "$tmp/x/$p"
	printf '%s\n' "$version" >"$dest/version"
	dpkg-deb -x "$deb" "$tmp/x/$p"
	# dpkg's .list: "/." then every path of the data archive, in its order,
	# without the leading "." and without a trailing slash.
	dpkg-deb --fsys-tarfile "$deb" | tar -t |
		sed -e 's|^\./|/|' -e 's|^\.$|/.|' -e 's|/$||' -e 's|^$|/.|' \
			>"$dest/root/var/lib/dpkg/info/$p.list"
	for d in etc lib/systemd/system usr/lib/systemd/system; do
		if [ -d "$tmp/x/$p/$d" ]; then
			mkdir -p "$dest/root/$(dirname "$d")"
			cp -a "$tmp/x/$p/$d" "$dest/root/$d"
		fi
	done
	rm -f "$deb"
	echo "$p $version"
done
