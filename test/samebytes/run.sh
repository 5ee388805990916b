#!/usr/bin/env bash
# test/samebytes/run.sh: proves a restructuring changed no output. Builds
# rootfs-trim at a base revision (a temporary `git worktree add`) and from
# the working tree, runs both on the same inputs (a bench/genrootfs tree, the
# bundled example target, as cpio.gz, cpio, tar.gz and as a tree) and
# compares stdout, stderr, exit status, output archives, manifests and
# trees byte for byte.
#
#   test/samebytes/run.sh [BASE]     BASE defaults to main
#   SAMEBYTES_MB                     genrootfs size (default 8)
#
# Exit status 0 when every output is identical, 1 when one differs.
set -euo pipefail
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=1700000000
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${1:-main}
MB=${SAMEBYTES_MB:-8}
WORK=$(mktemp -d)
cleanup() {
	git -C "$ROOT" worktree remove --force "$WORK/base-src" >/dev/null 2>&1 || true
	chmod -R u+rwX "$WORK" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

echo "base $(git -C "$ROOT" rev-parse --short "$BASE") ($BASE), new: working tree at $(git -C "$ROOT" rev-parse --short HEAD)"
git -C "$ROOT" worktree add --detach --quiet "$WORK/base-src" "$BASE"
(cd "$WORK/base-src" && CGO_ENABLED=0 go build -o "$WORK/base" ./cmd/rootfs-trim)
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/new" ./cmd/rootfs-trim)
(cd "$ROOT" && go build -o "$WORK/genrootfs" ./bench/genrootfs)

# Inputs, made once and shared (read-only) by both runs.
IN=$WORK/in
mkdir -p "$IN"
"$WORK/genrootfs" -out "$IN/gen/target" -size-mb "$MB" -pkglist "$IN/gen/files.txt" >/dev/null
cp -a "$ROOT/examples/minikube/target" "$IN/example-target"
cp "$ROOT/examples/minikube/packages-file-list.txt" "$IN/example-files.txt"
for t in gen:"$IN/gen/target" example:"$IN/example-target"; do
	name=${t%%:*} dir=${t#*:}
	(cd "$dir" && find . | sort | cpio --quiet -o -H newc --reproducible) >"$IN/$name.cpio"
	gzip -9 -n -c "$IN/$name.cpio" >"$IN/$name.cpio.gz"
	tar --sort=name --numeric-owner --mtime=@$SOURCE_DATE_EPOCH -czf "$IN/$name.tar.gz" -C "$dir" .
done
RULES=$ROOT/rules
chmod -R a-w "$IN"

# snapshot DIR: a tree as text (type, mode, owner, size, mtime, link target,
# content hash), so two trees compare with cmp.
snapshot() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s %T@ %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

run_all() { # BIN OUTDIR
	local bin=$1 out=$2
	mkdir -p "$out"
	cd "$out"
	r() { # NAME CMD...: stdout, stderr (temp paths removed) and status
		local n=$1
		shift
		set +e
		"$@" >"$n.stdout" 2>"$n.stderr"
		echo $? >"$n.status"
		set -e
		sed -i "s#$WORK/[a-z]*#WORK#g" "$n.stdout" "$n.stderr"
	}
	for name in gen example; do
		files=$IN/$name-files.txt
		[[ $name == gen ]] && files=$IN/gen/files.txt
		for fmt in cpio cpio.gz tar.gz; do
			r "apply-$name-$fmt" "$bin" apply --quiet --rules "$RULES" --packages-file-list "$files" \
				--manifest "apply-$name-$fmt.json" "$IN/$name.$fmt" "apply-$name-$fmt.out.$fmt"
			r "repack-$name-$fmt" "$bin" repack "$IN/$name.$fmt" "repack-$name-$fmt.out.$fmt"
			r "audit-$name-$fmt" "$bin" audit --format json --rules "$RULES" --packages-file-list "$files" "$IN/$name.$fmt"
		done
		# Applied again on its own output: the earlier index and own paths.
		r "reapply-$name" "$bin" apply --quiet --rules "$RULES" --packages-file-list "$files" \
			--manifest "reapply-$name.json" "apply-$name-cpio.gz.out.cpio.gz" "reapply-$name.out.cpio.gz"
		r "audit-applied-$name" "$bin" audit --format json --rules "$RULES" --packages-file-list "$files" "apply-$name-cpio.gz.out.cpio.gz"
		# A tree, in place, twice.
		cp -a "$IN/$([[ $name == gen ]] && echo gen/target || echo example-target)" "tree-$name"
		chmod -R u+w "tree-$name"
		r "apply-tree-$name" "$bin" apply --quiet --rules "$RULES" --packages-file-list "$files" --manifest "apply-tree-$name.json" "tree-$name"
		r "apply-tree2-$name" "$bin" apply --quiet --rules "$RULES" --packages-file-list "$files" --manifest "apply-tree2-$name.json" "tree-$name"
		snapshot "tree-$name" >"tree-$name.snapshot"
		rm -rf "tree-$name"
		r "audit-tree-$name" "$bin" audit --format json --rules "$RULES" --packages-file-list "$files" "$IN/$([[ $name == gen ]] && echo gen/target || echo example-target)"
		# check: the whole image as one input, then as package archives.
		r "check-$name" "$bin" check --rules "$RULES" --lock "check-$name.lock" --update-lock --allow-missing \
			--packages-file-list "$files" "$IN/$name.tar.gz"
		r "check-again-$name" "$bin" check --rules "$RULES" --lock "check-$name.lock" --allow-missing \
			--packages-file-list "$files" "$IN/$name.cpio.gz"
	done
	r check-pkgs "$bin" check --rules "$RULES" --lock check-pkgs.lock --update-lock --allow-missing \
		cri-containerd-cni@1.7.0="$IN/example.tar.gz" podman@4.0.0="$IN/example.cpio.gz"
	r check-pkgs-json "$bin" check --format json --rules "$RULES" --lock check-pkgs.lock --allow-missing \
		cri-containerd-cni@1.7.1="$IN/example.tar.gz" podman@4.0.0="$IN/example.cpio"
	cd - >/dev/null
}

run_all "$WORK/base" "$WORK/out-base"
run_all "$WORK/new" "$WORK/out-new"

fail=0 n=0
for f in $(cd "$WORK/out-base" && find . -type f | sort); do
	n=$((n + 1))
	if ! cmp -s "$WORK/out-base/$f" "$WORK/out-new/$f"; then
		echo "DIFF $f"
		diff <(head -c 4000 "$WORK/out-base/$f") <(head -c 4000 "$WORK/out-new/$f") | head -20 || true
		fail=1
	fi
done
extra=$(comm -13 <(cd "$WORK/out-base" && find . -type f | sort) <(cd "$WORK/out-new" && find . -type f | sort))
[[ -z $extra ]] || { echo "only in new: $extra"; fail=1; }
statuses=$(cd "$WORK/out-base" && for s in *.status; do printf '%s=%s ' "${s%.status}" "$(cat "$s")"; done)
echo "exit statuses: $statuses"
if ((fail)); then
	echo "samebytes: outputs differ"
	exit 1
fi
echo "samebytes: $n files identical (stdout, stderr, status, archives, manifests, locks, trees)"
