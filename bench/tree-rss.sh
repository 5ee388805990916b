#!/bin/sh
# Peak RSS of rootfs-trim reading a directory tree of N entries (default
# 10^6: 1,000 directories of 999 empty files): `list`, and `apply` in place
# with the shipped rules. A tree is read whole and sorted before its first
# entry comes out (Buildroot's `find | LC_ALL=C sort` order), so this memory
# grows with the number of entries, unlike an archive's.
#
#   ./bench/tree-rss.sh            # builds bin/rootfs-trim, about 3 minutes
#   TREE_DIRS=100 ./bench/tree-rss.sh
set -eu
cd "$(dirname "$0")/.."
dirs=${TREE_DIRS:-1000}
per=${TREE_FILES_PER_DIR:-999}
make -s build
work=$(mktemp -d "${TMPDIR:-/tmp}/rootfs-trim-tree-rss.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
i=0
while [ "$i" -lt "$dirs" ]; do
	d=$(printf '%s/tree/d%04d' "$work" "$i")
	mkdir "$d"
	(cd "$d" && seq -f 'f%04.0f' 1 "$per" | xargs touch)
	i=$((i + 1))
done
n=$(find "$work/tree" | wc -l)
echo "entries: $n"
/usr/bin/time -f 'list: peak RSS %M KiB, %e s' bin/rootfs-trim list "$work/tree" > /dev/null
/usr/bin/time -f 'apply in place: peak RSS %M KiB, %e s' bin/rootfs-trim apply --quiet --rules rules "$work/tree"
