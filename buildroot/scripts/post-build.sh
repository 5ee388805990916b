#!/usr/bin/env bash
# Buildroot post-build script: `rootfs-trim apply` on the target directory,
# in place, before Buildroot makes the filesystem images.
#
# Add it to BR2_ROOTFS_POST_BUILD_SCRIPT, after any script already there:
#   BR2_ROOTFS_POST_BUILD_SCRIPT="... $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/scripts/post-build.sh"
# Buildroot runs it from its own tree as
#   post-build.sh TARGET_DIR [BR2_ROOTFS_POST_SCRIPT_ARGS] [BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS]
# with HOST_DIR, BUILD_DIR, BINARIES_DIR, BASE_DIR... exported, and
# SOURCE_DATE_EPOCH when BR2_REPRODUCIBLE is set (rootfs-trim uses it).
#
# Arguments after TARGET_DIR:
#   --rules DIR, --rules=DIR
#       the rule set; default $HOST_DIR/share/rootfs-trim/rules, installed
#       by host-rootfs-trim. A relative DIR is relative to the Buildroot
#       tree, like every other path in a Buildroot configuration.
#   anything else is ignored, and named in the log. Buildroot gives the
#       same BR2_ROOTFS_POST_SCRIPT_ARGS to every post-build and post-image
#       script (minikube's aarch64 configuration passes its genimage.cfg
#       that way), so refusing them would break the script list. Ignoring
#       is safe because this script takes no positional argument; what
#       could go wrong is a misspelt option of ours silently replaced by the
#       default rules, so an unknown option that looks like one of ours
#       (-rule..., --rule..., --rootfs-trim...) is an error instead.
# Environment:
#   ROOTFS_TRIM  the rootfs-trim binary; default $HOST_DIR/bin/rootfs-trim,
#                else rootfs-trim on PATH.
#
# Writes $BINARIES_DIR/rootfs-trim-manifest.json (what was changed, and the
# digests of the tree and the rules). Buildroot runs post-build scripts on
# every make: a second run changes nothing, and its manifest lists no
# changes.
#
# Exit status: 0 done; 1 the policy is violated (a file the policy forbids
# that no rule handles: rootfs-trim names the file, its package and the
# policy, and the target is left as it was); 2 anything else. Non-zero
# stops the build.
set -euo pipefail

me="rootfs-trim post-build"

die() {
	local status=$1
	shift
	printf '%s: %s\n' "$me" "$*" >&2
	exit "$status"
}

usage() {
	printf 'usage: %s TARGET_DIR [--rules DIR] [arguments of other scripts...]\n' "$0"
	printf 'Run by Buildroot from BR2_ROOTFS_POST_BUILD_SCRIPT; see the comment at the top.\n'
}

case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
"")
	usage >&2
	exit 2
	;;
esac
target=$1
shift

rules=
set_rules() {
	[ -z "$rules" ] || die 2 "--rules given twice ($rules, then $1)"
	[ -n "$1" ] || die 2 "--rules needs a directory"
	rules=$1
}
ignored=()
while [ $# -gt 0 ]; do
	case $1 in
	--rules)
		[ $# -ge 2 ] || die 2 "--rules needs a directory"
		set_rules "$2"
		shift 2
		;;
	--rules=*)
		set_rules "${1#--rules=}"
		shift
		;;
	-rule* | --rule* | -rootfs-trim* | --rootfs-trim*)
		die 2 "unknown option $1 (the options are: --rules DIR)"
		;;
	*)
		ignored+=("$1")
		shift
		;;
	esac
done
if [ ${#ignored[@]} -gt 0 ]; then
	printf '%s: ignoring arguments meant for other scripts: %s\n' "$me" "${ignored[*]}" >&2
fi

[ -d "$target" ] || die 2 "target directory $target does not exist"

# Buildroot exports these; BASE_DIR alone is enough to find the others.
base=${BASE_DIR:-}
host_dir=${HOST_DIR:-${base:+$base/host}}
build_dir=${BUILD_DIR:-${base:+$base/build}}
binaries_dir=${BINARIES_DIR:-${base:+$base/images}}
if [ -z "$host_dir" ] || [ -z "$build_dir" ] || [ -z "$binaries_dir" ]; then
	die 2 "HOST_DIR, BUILD_DIR or BINARIES_DIR is not set, nor BASE_DIR: not run by Buildroot?"
fi

if [ -n "${ROOTFS_TRIM:-}" ]; then
	bin=$(command -v -- "$ROOTFS_TRIM") || die 2 "ROOTFS_TRIM=$ROOTFS_TRIM is not an executable"
	[ -x "$bin" ] || die 2 "ROOTFS_TRIM=$ROOTFS_TRIM is not an executable"
elif [ -x "$host_dir/bin/rootfs-trim" ]; then
	bin=$host_dir/bin/rootfs-trim
elif bin=$(command -v rootfs-trim); then
	:
else
	die 2 "no rootfs-trim in $host_dir/bin nor on PATH: enable BR2_PACKAGE_HOST_ROOTFS_TRIM (host-rootfs-trim), or set ROOTFS_TRIM"
fi

if [ -z "$rules" ]; then
	rules=$host_dir/share/rootfs-trim/rules
	[ -d "$rules" ] || die 2 "no rules in $rules (host-rootfs-trim installs them there): enable BR2_PACKAGE_HOST_ROOTFS_TRIM, or pass --rules DIR in BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS"
fi
[ -d "$rules" ] || die 2 "rules directory $rules does not exist (relative paths are relative to $PWD)"
# Absolute in the log and the manifest, which are read from elsewhere.
rules=$(cd -- "$rules" && pwd)

list=$build_dir/packages-file-list.txt
[ -f "$list" ] || die 2 "$list does not exist: Buildroot writes it before running post-build scripts"

# The deferred files and templates are only written to /etc by the boot
# step; without it the image still boots, but with nothing deferred.
for f in usr/bin/rootfs-trim usr/lib/systemd/system/rootfs-trim-render.service; do
	if [ ! -e "$target/$f" ]; then
		printf '%s: warning: %s is not in the target: without the boot step (BR2_PACKAGE_ROOTFS_TRIM, with systemd) what is deferred under /usr/share/minikube is never written to /etc\n' "$me" "/$f" >&2
		break
	fi
done

# The manifest describes the target only after a successful run: a failed
# run leaves none, not the previous build's.
manifest=$binaries_dir/rootfs-trim-manifest.json
tmp=$binaries_dir/.rootfs-trim-manifest.json.tmp
mkdir -p "$binaries_dir"
rm -f "$manifest" "$tmp"

printf '%s: %s apply --rules %s --packages-file-list %s --manifest %s %s\n' \
	"$me" "$bin" "$rules" "$list" "$manifest" "$target"
status=0
"$bin" apply --rules "$rules" --packages-file-list "$list" --manifest "$tmp" "$target" || status=$?
case $status in
0)
	mv -f "$tmp" "$manifest"
	;;
1)
	rm -f "$tmp"
	die 1 "the target breaks the policy of $rules (above: each file, the package that installed it, the policy). Nothing was changed. Fix the package or overlay that installs the file, or add a rule for it"
	;;
*)
	rm -f "$tmp"
	die "$status" "rootfs-trim apply failed (exit status $status)"
	;;
esac
