#!/bin/sh
# Usage: test/sarif/fetch-multitool.sh DIR
#
# Puts the SARIF SDK's multitool for Linux, npm's
# @microsoft/sarif-multitool-linux, in DIR without installing it, and prints
# the directory that holds its two files the SARIF tests use
# (ROOTFS_TRIM_SARIF): sarif-2.1.0.json, the SARIF 2.1.0 JSON Schema, and
# Sarif.Multitool, whose `validate --rule-kind "Sarif;Gh"` checks a log
# against the schema, the spec's rules and GitHub code scanning's ingestion
# rules (the GH rules). Needs npm (npm pack checks the tarball against the
# registry's integrity hash) and nothing else: no root, nothing installed.
#
# DIR is a cache: when it already holds this version, nothing is downloaded.
# The schema's sha256 is pinned: another file is refused.
set -eu
dir=${1:?usage: $0 DIR}
version=5.7.0
schema_sha256=1c49a0f2b60444c71bb14878e21e0d882198eff4c539861b133093ad89ed798c
want=$dir/sarif-multitool-linux-$version/package
if [ -x "$want/Sarif.Multitool" ] && [ -f "$want/sarif-2.1.0.json" ]; then
	echo "$0: sarif-multitool-linux $version already in $dir" >&2
	echo "$want"
	exit 0
fi
command -v npm >/dev/null || { echo "$0: npm is not installed" >&2; exit 1; }
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# 44 MB: a self-contained .NET build.
echo "$0: fetching @microsoft/sarif-multitool-linux@$version (44 MB) into $dir" >&2
(cd "$tmp" && npm pack --silent "@microsoft/sarif-multitool-linux@$version" >/dev/null)
mkdir "$tmp/x"
tar -xzf "$tmp/microsoft-sarif-multitool-linux-$version.tgz" -C "$tmp/x"
echo "$schema_sha256  $tmp/x/package/sarif-2.1.0.json" | sha256sum -c --quiet >&2
chmod +x "$tmp/x/package/Sarif.Multitool"
rm -rf "$dir/sarif-multitool-linux-$version"
mv "$tmp/x" "$dir/sarif-multitool-linux-$version"
echo "$want"
