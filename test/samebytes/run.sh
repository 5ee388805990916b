#!/usr/bin/env bash
# test/samebytes/run.sh: proves a restructuring changed no output. Builds
# rootfs-trim at a base revision and at a new one (each in a temporary `git
# worktree add`; the new one by default from the working tree, uncommitted
# changes included), runs both on the same inputs and compares stdout,
# stderr, exit status, output archives, manifests, locks, rendered trees and
# output trees (with their metadata) byte for byte.
#
#   test/samebytes/run.sh [BASE_REV [NEW_REV]]   BASE_REV defaults to main
#   SAMEBYTES_MB=N      genrootfs size, MiB (default 8)
#   SAMEBYTES_KEEP=1    keep the work directory (printed at the end)
#
# Inputs: a bench/genrootfs tree (the bench's input, small), the bundled
# example target, the testdata ISO targets (both architectures), the
# testdata package trees, and an edge tree (every entry type, owners, modes,
# hard links, long and odd names, a sparse file), each packed the ways
# rootfs-trim reads: cpio newc and crc, tar (GNU, PAX), concatenated cpio
# members, in every compression (gzip, xz in one block and in several,
# lz4-legacy, zstd, none). What runs on them: apply (the default reuse:
# gzip splice, lz4 and multi-block xz block copies; --recompress full;
# --backend go), repack (no change, conversions between formats and
# compressions, directory output), apply and repack to a directory, apply
# in place twice, render on an applied tree, list (text and JSON), audit
# (JSON, SARIF), check (--update-lock into a lock of its own, and against
# the committed locks), diff, export, version --rules. See CONTRIBUTING.md.
#
# Exit status 0 when every output is identical, 1 when one differs, 2 when
# it could not run.
set -euo pipefail
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=1700000000
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${1:-main}
NEW=${2:-}
MB=${SAMEBYTES_MB:-8}
WORK=$(mktemp -d)
die() {
	echo "samebytes: $*" >&2
	exit 2
}
cleanup() {
	local wt
	for wt in "$WORK"/src-*; do
		[[ -d $wt ]] && git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1
	done
	if [[ -n ${SAMEBYTES_KEEP:-} ]]; then
		echo "samebytes: work directory kept: $WORK"
		return 0
	fi
	chmod -R u+rwX "$WORK" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
[[ $MB =~ ^[1-9][0-9]*$ ]] || die "SAMEBYTES_MB must be a positive number, got '$MB'"
for t in go git cpio tar gzip xz lz4 zstd sha256sum cmp; do
	command -v "$t" >/dev/null || die "$t is needed"
done

# build NAME REV: rootfs-trim at REV (the working tree when REV is empty)
# as $WORK/NAME.
build() {
	local name=$1 rev=$2 src=$ROOT
	if [[ -n $rev ]]; then
		src=$WORK/src-$name
		git -C "$ROOT" worktree add --detach --quiet "$src" "$rev"
	fi
	(cd "$src" && CGO_ENABLED=0 go build -o "$WORK/$name" ./cmd/rootfs-trim) || die "cannot build $name (${rev:-working tree})"
}
BASE_ID=$(git -C "$ROOT" rev-parse --short "$BASE^{commit}") || die "no revision $BASE"
if [[ -n $NEW ]]; then
	NEW_ID=$(git -C "$ROOT" rev-parse --short "$NEW^{commit}") || die "no revision $NEW"
	echo "base $BASE_ID ($BASE), new $NEW_ID ($NEW)"
else
	dirty=
	[[ -z $(git -C "$ROOT" status --porcelain) ]] || dirty=", with uncommitted changes"
	echo "base $BASE_ID ($BASE), new: the working tree at $(git -C "$ROOT" rev-parse --short HEAD)$dirty"
fi
build base "$BASE"
build new "$NEW"
(cd "$ROOT" && go build -o "$WORK/genrootfs" ./bench/genrootfs) || die "cannot build bench/genrootfs"

# ---------------------------------------------------------------------------
# Inputs, made once and shared (read-only) by both runs.
IN=$WORK/in
RULES=$ROOT/rules
mkdir -p "$IN"

# edge_tree DIR: every entry type and the metadata a rewrite must keep.
edge_tree() {
	local d=$1 i long
	mkdir -p "$d/etc/cni/net.d" "$d/usr/bin" "$d/tmp" "$d/srv/private" "$d/srv/setgid" "$d/empty" "$d/dev" "$d/var/lib"
	printf '{"cniVersion":"0.4.0","name":"podman"}\n' >"$d/etc/cni/net.d/87-podman-bridge.conflist"
	printf 'runtime-endpoint: unix:///run/containerd/containerd.sock\n' >"$d/etc/crictl.yaml"
	printf '#!/bin/sh\necho hi\n' >"$d/usr/bin/tool"
	for i in 1 2 3; do ln "$d/usr/bin/tool" "$d/usr/bin/tool-link$i"; done
	ln -s tool "$d/usr/bin/rel-link"
	ln -s /usr/bin/tool "$d/usr/bin/abs-link"
	ln -s ../missing/target "$d/usr/bin/dangling"
	: >"$d/empty-file"
	printf 'suid\n' >"$d/usr/bin/suid" && chmod 4755 "$d/usr/bin/suid"
	chmod 1777 "$d/tmp"
	chmod 0700 "$d/srv/private"
	chmod 2755 "$d/srv/setgid"
	printf 'secret\n' >"$d/srv/private/key" && chmod 0400 "$d/srv/private/key"
	long=$d/var/lib/$(printf 'a%.0s' {1..60})/$(printf 'b%.0s' {1..60})
	mkdir -p "$long"
	printf 'long\n' >"$long/$(printf 'c%.0s' {1..90}).conf"
	ln -s "$(printf '../%.0s' {1..40})etc/crictl.yaml" "$d/var/lib/long-target-link"
	printf 'space\n' >"$d/var/lib/name with spaces"
	printf 'utf8\n' >"$d/var/lib/ünïcödé-名前"
	mkfifo "$d/var/lib/fifo"
	head -c 4096 /dev/urandom >"$d/var/lib/random.bin"
	truncate -s 3M "$d/var/lib/sparse.img" && printf 'end' | dd of="$d/var/lib/sparse.img" bs=1 seek=2M conv=notrunc status=none
	if ((EUID == 0)); then
		mknod "$d/dev/null" c 1 3
		mknod "$d/dev/loop0" b 7 0
		chown 1000:1000 "$d/srv/setgid"
		chown 65534:65534 "$d/var/lib/random.bin"
		chown -h 123:456 "$d/usr/bin/rel-link"
	fi
	# touch changes no directory's mtime: every entry gets the epoch, then
	# two get older ones.
	find "$d" -exec touch -h -d @1700000000 {} +
	touch -h -d @1 "$d/usr/bin/rel-link"
	touch -d @0 "$d/empty-file"
}

# pack NAME DIR FULL: the archives of a tree. FULL=1: every format and
# compression; else cpio.gz and tar.gz only.
pack() {
	local name=$1 dir=$2 full=$3
	(cd "$dir" && find . | sort | cpio --quiet -o -H newc --reproducible) >"$IN/$name.cpio"
	gzip -9 -n -c "$IN/$name.cpio" >"$IN/$name.cpio.gz"
	tar --sort=name --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -czf "$IN/$name.tar.gz" -C "$dir" .
	((full)) || { rm "$IN/$name.cpio"; return 0; }
	(cd "$dir" && find . | sort | cpio --quiet -o -H crc --reproducible) >"$IN/$name.crc.cpio"
	xz -9 -C crc32 -T1 -c "$IN/$name.cpio" >"$IN/$name.cpio.xz"
	xz -9 -C crc32 -T2 --block-size=1MiB -c "$IN/$name.cpio" >"$IN/$name.blocks.cpio.xz"
	lz4 -q -l -9 -c "$IN/$name.cpio" >"$IN/$name.cpio.lz4"
	zstd -q -19 -c "$IN/$name.cpio" >"$IN/$name.cpio.zst"
	tar --sort=name --numeric-owner -cf "$IN/$name.tar" -C "$dir" .
	tar --sort=name --numeric-owner --format=pax --sparse --pax-option=comment=samebytes -cf "$IN/$name.pax.tar" -C "$dir" .
	xz -9 -C crc32 -T1 -c "$IN/$name.tar" >"$IN/$name.tar.xz"
	zstd -q -19 -c "$IN/$name.tar" >"$IN/$name.tar.zst"
	lz4 -q -l -9 -c "$IN/$name.tar" >"$IN/$name.tar.lz4"
}

"$WORK/genrootfs" -out "$IN/gen/target" -size-mb "$MB" -pkglist "$IN/gen/files.txt" >/dev/null
cp -a "$ROOT/examples/minikube/target" "$IN/example"
cp "$ROOT/examples/minikube/packages-file-list.txt" "$IN/example.files"
cp "$ROOT/examples/minikube/show-info.json" "$IN/example.show-info.json"
for arch in x86_64 aarch64; do
	cp -a "$ROOT/testdata/packages/iso/$arch/target" "$IN/iso-$arch"
	cp "$ROOT/testdata/packages/iso/$arch/packages-file-list.txt" "$IN/iso-$arch.files"
	cp "$ROOT/testdata/packages/iso/$arch/show-info.json" "$IN/iso-$arch.show-info.json"
done
edge_tree "$IN/edge"
mv "$IN/gen/target" "$IN/gen.tree" && mv "$IN/gen/files.txt" "$IN/gen.files" && rmdir "$IN/gen"
mv "$IN/example" "$IN/example.tree"
for arch in x86_64 aarch64; do mv "$IN/iso-$arch" "$IN/iso-$arch.tree"; done
mv "$IN/edge" "$IN/edge.tree"
pack gen "$IN/gen.tree" 1
pack example "$IN/example.tree" 1
pack edge "$IN/edge.tree" 1
for arch in x86_64 aarch64; do pack "iso-$arch" "$IN/iso-$arch.tree" 0; done
# Concatenated members, as an initramfs may be: two cpio archives, two gzip members.
cat "$IN/edge.cpio" "$IN/example.cpio" >"$IN/members.cpio"
cat "$IN/edge.cpio.gz" "$IN/example.cpio.gz" >"$IN/members.cpio.gz"
# The package fixtures, as package tarballs, with their committed locks.
FIXTURES=()
for d in "$ROOT"/testdata/packages/debian-12/* "$ROOT"/testdata/packages/upstream/*; do
	[[ -d $d/root && -f $d/check.lock ]] || continue
	fx=pkg-${d##*/}
	FIXTURES+=("$fx")
	tar --sort=name --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -czf "$IN/$fx.tar.gz" -C "$d/root" .
	cp "$d/check.lock" "$IN/$fx.lock"
	sed -n 's/^    "\([^"]*\)": {$/\1/p' "$d/check.lock" | head -n 1 >"$IN/$fx.name"
	tr -d '\n' <"$d/version" >"$IN/$fx.version"
done
((${#FIXTURES[@]} >= 16)) || die "only ${#FIXTURES[@]} package fixtures found under testdata/packages"
chmod -R a-w "$IN"

# snapshot DIR [wallclock]: a tree as text, so two trees compare with cmp:
# per entry (sorted by path) type, mode, owner, size (not for directories:
# that is the file system's), mtime, link count, symlink target, and the
# first path of its hard-link group; device numbers; then every regular
# file's sha256. "wallclock": mtimes left out, for a tree render wrote into
# (render runs at boot and stamps what it writes with the time of day).
snapshot() {
	local wall=${2:-}
	(
		cd "$1"
		find . -printf '%i\t%p\t%y\t%m\t%U:%G\t%s\t%T@\t%n\t%l\n' | sort -t $'\t' -k2,2 |
			awk -F'\t' -v OFS='\t' -v wall="$wall" '{
				if (!($1 in first)) first[$1] = $2
				$1 = "group " first[$1]
				if ($3 == "d") $6 = "-"
				if (wall != "") $7 = "-"
				print
			}'
		find . \( -type b -o -type c \) -exec stat -c '%n device %t:%T' {} + | sort
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum
	)
}

# r NAME CMD...: run CMD; keep its stdout, stderr (work paths replaced) and
# exit status as NAME.stdout, NAME.stderr, NAME.status.
r() {
	local n=$1
	shift
	set +e
	"$@" >"$n.stdout" 2>"$n.stderr"
	echo $? >"$n.status"
	set -e
	sed -i "s#$WORK/[a-z-]*#WORK#g" "$n.stdout" "$n.stderr"
}

# tree_out NAME: replace the output tree NAME by NAME.snapshot.
tree_out() {
	if [[ -d $1 ]]; then
		snapshot "$1" >"$1.snapshot"
		chmod -R u+rwX "$1"
		rm -rf "$1"
	fi
}

# ext FILE: the archive's extension (what names its format and compression).
ext() {
	local b=${1##*/}
	case $b in
	*.blocks.cpio.xz) echo blocks.cpio.xz ;;
	*.crc.cpio) echo crc.cpio ;;
	*.pax.tar) echo pax.tar ;;
	*.cpio* | *.tar*) echo "${b#*.}" ;;
	esac
}

# archive_ops BIN NAME IN FILES: what runs on one archive.
archive_ops() {
	local bin=$1 n=$2 in=$3 files=$4 e
	e=$(ext "$in")
	local -a own=(--packages-file-list "$files")
	[[ $files == package:* ]] && own=(--package "${files#package:}")
	r "list-$n" "$bin" list "$in"
	r "listjson-$n" "$bin" list --json "$in"
	r "audit-$n" "$bin" audit --report json --rules "$RULES" "${own[@]}" "$in"
	r "apply-$n" "$bin" apply --rules "$RULES" "${own[@]}" --manifest "apply-$n.json" "$in" "apply-$n.out.$e"
	r "listjson-applied-$n" "$bin" list --json "apply-$n.out.$e"
	r "repack-$n" "$bin" repack "$in" "repack-$n.out.$e"
	# The whole output compressed again: for cpio (the codecs are the
	# same for tar; this is the slow part).
	if [[ $e == *cpio.gz || $e == *cpio.xz || $e == *cpio.lz4 || $e == *cpio.zst ]]; then
		r "apply-full-$n" "$bin" apply --quiet --recompress full --rules "$RULES" "${own[@]}" \
			--manifest "apply-full-$n.json" "$in" "apply-full-$n.out.$e"
		r "repack-full-$n" "$bin" repack --recompress full "$in" "repack-full-$n.out.$e"
	fi
}

# tree_ops BIN NAME: the runs on the tree NAME and its archives.
tree_ops() {
	local bin=$1 n=$2 files f e
	files=$IN/$n.files
	[[ $n == edge ]] && files=package:podman
	for f in "$IN/$n".*cpio* "$IN/$n".*tar*; do
		[[ -f $f ]] || continue
		e=$(ext "$f")
		archive_ops "$bin" "$n-$e" "$f" "$files"
	done
	local -a own=(--packages-file-list "$files")
	[[ $files == package:* ]] && own=(--package "${files#package:}")
	# The Go codecs, in every compression.
	for f in "$IN/$n".cpio.{gz,xz,lz4,zst} "$IN/$n.blocks.cpio.xz"; do
		[[ -f $f ]] || continue
		e=$(ext "$f")
		r "apply-go-$n-$e" "$bin" apply --quiet --backend go --recompress full --rules "$RULES" "${own[@]}" "$f" "apply-go-$n.out.$e"
		r "listjson-go-$n-$e" "$bin" list --backend go --json "$f"
	done
	# Conversions, and directory outputs.
	f=$IN/$n.cpio.gz
	r "repack-$n-totar" "$bin" repack --archive-format tar "$f" "repack-$n-totar.out.tar.gz"
	r "repack-$n-tonewc" "$bin" repack --archive-format newc "$IN/$n.tar.gz" "repack-$n-tonewc.out.cpio.gz"
	r "repack-$n-tocrc" "$bin" repack --archive-format crc --compress none "$f" "repack-$n-tocrc.out.cpio"
	for c in none xz zstd lz4-legacy; do
		r "repack-$n-to$c" "$bin" repack --compress "$c" "$f" "repack-$n-to$c.out"
	done
	r "repack-$n-tolz4frame" "$bin" repack --compress lz4 "$f" "repack-$n-tolz4frame.out"
	for src in cpio.gz tar.gz; do
		r "repack-$n-$src-todir" "$bin" repack --archive-format dir "$IN/$n.$src" "repack-$n-$src-todir.out"
		tree_out "repack-$n-$src-todir.out"
		r "apply-$n-$src-todir" "$bin" apply --quiet --rules "$RULES" "${own[@]}" --manifest "apply-$n-$src-todir.json" \
			--archive-format dir "$IN/$n.$src" "apply-$n-$src-todir.out"
		tree_out "apply-$n-$src-todir.out"
	done
	r "repack-$n-fromdir" "$bin" repack "$IN/$n.tree" "repack-$n-fromdir.out.cpio.gz"
	r "list-$n-tree" "$bin" list --json "$IN/$n.tree"
	r "audit-$n-tree" "$bin" audit --report json --rules "$RULES" "${own[@]}" "$IN/$n.tree"
	r "audit-sarif-$n" "$bin" audit --report sarif --rules "$RULES" "${own[@]}" "$IN/$n.cpio.gz"
	# Applied again on its own output: the earlier index and own paths.
	r "reapply-$n" "$bin" apply --quiet --rules "$RULES" "${own[@]}" --manifest "reapply-$n.json" \
		"apply-$n-cpio.gz.out.cpio.gz" "reapply-$n.out.cpio.gz"
	r "audit-applied-$n" "$bin" audit --report json --rules "$RULES" "${own[@]}" "apply-$n-cpio.gz.out.cpio.gz"
	r "diff-$n" "$bin" diff --report json --rules "$RULES" "${own[@]}" "$IN/$n.cpio.gz" "apply-$n-cpio.gz.out.cpio.gz"
	r "diff-manifests-$n" "$bin" diff --report json "apply-$n-cpio.gz.json" "reapply-$n.json"
	# A tree, in place, twice; then rendered.
	cp -a "$IN/$n.tree" "tree-$n"
	chmod -R u+w "tree-$n"
	r "apply-tree-$n" "$bin" apply --quiet --rules "$RULES" "${own[@]}" --manifest "apply-tree-$n.json" "tree-$n"
	r "apply-tree2-$n" "$bin" apply --quiet --rules "$RULES" "${own[@]}" --manifest "apply-tree2-$n.json" "tree-$n"
	snapshot "tree-$n" >"tree-$n.snapshot"
	[[ $n == edge ]] || render_ops "$bin" "$n" "tree-$n"
	chmod -R u+rwX "tree-$n" && rm -rf "tree-$n"
	# check: the whole image as one input, into a lock of its own.
	if [[ $files != package:* ]]; then
		local -a info=()
		[[ -f $IN/$n.show-info.json ]] && info=(--show-info "$IN/$n.show-info.json")
		r "check-$n" "$bin" check --rules "$RULES" --lock "check-$n.lock" --update-lock --allow-missing \
			--packages-file-list "$files" "${info[@]}" "$IN/$n.tar.gz"
		r "check-again-$n" "$bin" check --report json --rules "$RULES" --lock "check-$n.lock" --allow-missing \
			--packages-file-list "$files" "${info[@]}" "$IN/$n.cpio.gz"
	fi
}

# render_ops BIN NAME TREE: render on an applied tree, the choices in turn
# (each taking back the one before), then from the record, as at boot.
render_ops() {
	local bin=$1 n=$2 t=$3 i=0 choice rt cni
	for choice in "containerd bridge" "crio false" "docker kindnet" "containerd false" "crio calico"; do
		i=$((i + 1))
		read -r rt cni <<<"$choice"
		r "render-$n-$i-dry" "$bin" render --dry-run --root "$t" --runtime "$rt" --cni "$cni"
		r "render-$n-$i" "$bin" render --root "$t" --runtime "$rt" --cni "$cni" --pod-cidr 10.88.0.0/16
		snapshot "$t" wallclock >"render-$n-$i.snapshot"
	done
	r "render-$n-record" "$bin" render --root "$t" --from-record
	snapshot "$t" wallclock >"render-$n-record.snapshot"
}

# fixture_ops BIN FX: a package fixture as its package tarball.
fixture_ops() {
	local bin=$1 fx=$2 name version lock
	name=$(cat "$IN/$fx.name")
	version=$(cat "$IN/$fx.version")
	r "audit-$fx" "$bin" audit --report json --rules "$RULES" "$IN/$fx.tar.gz"
	r "audit-pkg-$fx" "$bin" audit --report json --rules "$RULES" --package "$name" "$IN/$fx.tar.gz"
	r "apply-$fx" "$bin" apply --rules "$RULES" --package "$name" --manifest "apply-$fx.json" "$IN/$fx.tar.gz" "apply-$fx.out.tar.gz"
	r "check-$fx" "$bin" check --report json --rules "$RULES" --lock "$IN/$fx.lock" "$name@$version=$IN/$fx.tar.gz"
	lock=check-$fx.lock
	cp "$IN/$fx.lock" "$lock" && chmod u+w "$lock"
	r "check-update-$fx" "$bin" check --rules "$RULES" --lock "$lock" --update-lock "$name@$version-new=$IN/$fx.tar.gz"
}

run_all() { # BIN OUTDIR
	local bin=$1 out=$2 n fx
	mkdir -p "$out"
	cd "$out"
	for n in gen example iso-x86_64 iso-aarch64 edge; do
		tree_ops "$bin" "$n"
	done
	for n in members.cpio members.cpio.gz; do
		archive_ops "$bin" "$n" "$IN/$n" "$IN/example.files"
	done
	for fx in "${FIXTURES[@]}"; do
		fixture_ops "$bin" "$fx"
	done
	r check-pkgs "$bin" check --rules "$RULES" --lock check-pkgs.lock --update-lock --allow-missing \
		cri-containerd-cni@1.7.0="$IN/example.tar.gz" podman@4.0.0="$IN/example.cpio.gz"
	r check-pkgs-json "$bin" check --format json --rules "$RULES" --lock check-pkgs.lock --allow-missing \
		cri-containerd-cni@1.7.1="$IN/example.tar.gz" podman@4.0.0="$IN/example.cpio"
	r export "$bin" export buildroot --rules "$RULES"
	r version "$bin" version --rules "$RULES"
	local modes
	modes=$(find . -type f -printf '%m %p\n' | sort -k2)
	printf '%s\n' "$modes" >modes.txt
	cd - >/dev/null
}

echo "running the base..."
run_all "$WORK/base" "$WORK/out-base"
echo "running the new..."
run_all "$WORK/new" "$WORK/out-new"

fail=0 n=0
while IFS= read -r -d '' f; do
	n=$((n + 1))
	if ! cmp -s "$WORK/out-base/$f" "$WORK/out-new/$f"; then
		echo "DIFF $f"
		diff <(head -c 4000 "$WORK/out-base/$f") <(head -c 4000 "$WORK/out-new/$f") | head -20 || true
		fail=1
	fi
done < <(cd "$WORK/out-base" && find . -type f -print0 | sort -z)
extra=$(comm -13 <(cd "$WORK/out-base" && find . -type f | sort) <(cd "$WORK/out-new" && find . -type f | sort))
[[ -z $extra ]] || {
	echo "only in new: $extra"
	fail=1
}
kinds() { # count the compared files by kind
	(cd "$WORK/out-base" && find . -type f) | awk '
		/\.status$/ { s++ } /\.stdout$/ { o++ } /\.stderr$/ { e++ } /\.snapshot$/ { t++ } /\.lock$/ { l++ }
		/\.out(\.|$)/ && !/\.snapshot$/ { a++ } /\.json$/ { m++ }
		END { printf "%d runs (stdout, stderr, status each), %d output archives, %d manifests, %d locks, %d trees", s, a, m, l, t }'
}
codes=$(cd "$WORK/out-base" && cat -- *.status | sort | uniq -c | awk '{ printf "%s%s x exit %s", sep, $1, $2; sep = ", " }')
echo "exit statuses (base): $codes"
if ((fail)); then
	echo "samebytes: outputs differ (base $BASE_ID)"
	exit 1
fi
echo "samebytes: $n files identical: $(kinds)"
