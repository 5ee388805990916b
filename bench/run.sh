#!/usr/bin/env bash
# bench/run.sh: rootfs-trim side by side with the tools a Buildroot user would
# otherwise use (GNU cpio, bsdtar, gzip/pigz, xz, lz4, zstd), on a generated
# rootfs, in one run on one machine. See bench/README.md.
#
# Environment:
#   BENCH_SIZE_MB   size of the main rootfs, MiB of file data (default 400)
#   BENCH_SMALL_MB  size of the second rootfs for the peak-RSS comparison (default 100)
#   BENCH_RUNS      runs per measurement, the minimum time is kept (default 3,
#                   or 1 for a command whose first run takes over BENCH_SLOW_S)
#   BENCH_SLOW_S    seconds above which a command is run only once (default 30)
#   BENCH_CASES     comma-separated case names or globs, e.g. "repack-gzip,list-*"
#   BENCH_FASTEST_PEER=1  compare with the fastest peer pipeline of each codec only
#   BENCH_NO_PEERS=1 run no peer: rootfs-trim (and BENCH_BASE_BIN) only
#   BENCH_RSS_CODECS codecs of the peak-RSS comparison (default "none gzip xz lz4 zstd")
#   BENCH_RULES     rules directory of apply and audit (default the repository's rules/;
#                   an older one where BENCH_BASE_BIN cannot read today's)
#   BENCH_DIR       cache and work directory (default .bench in the repository)
#   BENCH_BIN       rootfs-trim binary (default bin/rootfs-trim, built if missing)
#   BENCH_BASE_BIN  a base rootfs-trim binary (e.g. built at an older revision)
#                   timed beside BENCH_BIN in every rootfs-trim measurement,
#                   runs interleaved; ratio current/base (default: none)
#   SOURCE_DATE_EPOCH  mtime of every generated file (default 1700000000)
# shellcheck disable=SC2016 # the bash -c scripts below expand their own "$1"...
set -euo pipefail
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
SIZE_MB=${BENCH_SIZE_MB:-400}
SMALL_MB=${BENCH_SMALL_MB:-100}
RUNS_ENV=${BENCH_RUNS:-}
SLOW_S=${BENCH_SLOW_S:-30}
CASES=${BENCH_CASES:-}
RULES=${BENCH_RULES:-$ROOT/rules}
RSS_CODECS=${BENCH_RSS_CODECS:-none gzip xz lz4 zstd}
BENCH_DIR=${BENCH_DIR:-$ROOT/.bench}
BIN=${BENCH_BIN:-$ROOT/bin/rootfs-trim}
BASE_BIN=${BENCH_BASE_BIN:-}
EPOCH=${SOURCE_DATE_EPOCH:-1700000000}

ALL_CASES=(repack-cpio list-cpio list-gzip list-xz list-lz4 list-zstd apply-dir
	repack-gzip repack-xz repack-xzblocks repack-lz4 repack-zstd
	apply-gzip apply-xz apply-xzblocks apply-lz4 apply-zstd apply-iso rss list-initrd repack-initrd)
ALL_CASES+=(apply-image)
ALL_CASES+=(audit-dpkg-gzip audit-dpkg-xz apply-dpkg-gzip)
ALL_CASES+=(audit-dpkg-xzblocks)
ALL_CASES+=(list-image audit-image)
ALL_CASES+=(apply-initrd-gzip apply-initrd-zstd)

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}
log() { printf '%s\n' "$*" >&2; }

for v in SIZE_MB SMALL_MB SLOW_S EPOCH; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
[[ -z $RUNS_ENV || $RUNS_ENV =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number, got '$RUNS_ENV'"
((BASH_VERSINFO[0] >= 5)) || die "bash 5 or later is needed (EPOCHREALTIME)"

# want CASE: is CASE selected by BENCH_CASES?
want() {
	local pat
	local -a pats
	if [[ -z $CASES ]]; then
		return 0
	fi
	IFS=, read -r -a pats <<<"$CASES"
	for pat in "${pats[@]}"; do
		pat=${pat// /}
		# shellcheck disable=SC2053 # glob match on purpose
		if [[ -n $pat && $1 == $pat ]]; then
			return 0
		fi
	done
	return 1
}
if [[ -n $CASES ]]; then
	IFS=, read -r -a pats <<<"$CASES"
	for pat in "${pats[@]}"; do
		pat=${pat// /}
		if [[ -z $pat ]]; then
			continue
		fi
		hit=
		for c in "${ALL_CASES[@]}"; do
			# shellcheck disable=SC2053
			if [[ $c == $pat ]]; then
				hit=1
			fi
		done
		[[ -n $hit ]] || die "BENCH_CASES: '$pat' matches no case (cases: ${ALL_CASES[*]})"
	done
fi

have() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || return 1
	done
}

for t in go cpio find sort cmp; do
	have "$t" || die "$t is needed (apt-get install -y ${t/go/golang})"
done
for t in bsdtar gzip pigz xz lz4 zstd; do
	have "$t" || log "bench: $t not found: its columns will say n/a (Debian: apt-get install -y ${t/bsdtar/libarchive-tools})"
done
TIME_BIN=/usr/bin/time
if [[ -x $TIME_BIN ]] && "$TIME_BIN" -f %M -o /dev/null true 2>/dev/null; then
	HAVE_TIME=1
else
	HAVE_TIME=
	log "bench: GNU time ($TIME_BIN) not found: peak RSS will say n/a. Install it with: apt-get install -y time"
fi
CPIO_REPRO=(--reproducible)
if ! cpio --help 2>/dev/null | grep -q -- --reproducible; then
	CPIO_REPRO=()
	log "bench: this GNU cpio has no --reproducible; archives are made without it"
fi

# ---------------------------------------------------------------------------
# Build and generate.

if [[ -z ${BENCH_BIN:-} && ! -x $BIN ]]; then
	log "== building bin/rootfs-trim"
	make -C "$ROOT" build >&2
fi
[[ -x $BIN ]] || die "$BIN is not an executable"
if [[ -n $BASE_BIN ]]; then
	[[ -f $BASE_BIN && -x $BASE_BIN ]] || die "BENCH_BASE_BIN: $BASE_BIN is not an executable"
	BASE_BIN=$(cd "$(dirname "$BASE_BIN")" && pwd)/$(basename "$BASE_BIN")
fi

mkdir -p "$BENCH_DIR/bin"
log "== building genrootfs"
(cd "$ROOT" && go build -o "$BENCH_DIR/bin/genrootfs" ./bench/genrootfs) ||
	die "cannot build bench/genrootfs"
GEN_ID=$(cksum <"$ROOT/bench/genrootfs/main.go" | cut -d' ' -f1)

WORK=$BENCH_DIR/work
rm -rf "$WORK"
mkdir -p "$WORK"

# rootfs_dir MB: the cache directory of one size.
rootfs_dir() { printf '%s/rootfs-%smb' "$BENCH_DIR" "$1"; }

# ensure_tree MB: generate the tree of MB MiB and its rootfs.cpio unless a
# complete one from the same generator is cached.
ensure_tree() {
	local mb=$1 dir stamp
	dir=$(rootfs_dir "$mb")
	stamp="genrootfs $GEN_ID size $mb epoch $EPOCH"
	if [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$stamp" && -f $dir/rootfs.cpio ]]; then
		return 0
	fi
	if [[ -e $dir ]]; then
		log "== $dir is stale or incomplete: regenerating"
		chmod -R u+rwX "$dir" 2>/dev/null || true
		rm -rf "$dir"
	fi
	mkdir -p "$dir"
	log "== generating a ${mb} MiB rootfs in $dir/target"
	SOURCE_DATE_EPOCH=$EPOCH "$BENCH_DIR/bin/genrootfs" -out "$dir/target" -size-mb "$mb" >&2 ||
		die "genrootfs failed"
	log "== making $dir/rootfs.cpio (find | sort | cpio -o -H newc ${CPIO_REPRO[*]})"
	(cd "$dir/target" && find . | LC_ALL=C sort | cpio --quiet -o -H newc "${CPIO_REPRO[@]}") >"$dir/rootfs.cpio.tmp" ||
		die "cpio -o failed"
	mv "$dir/rootfs.cpio.tmp" "$dir/rootfs.cpio" || die "mv failed"
	printf '%s\n' "$stamp" >"$dir/.stamp" || die "cannot write $dir/.stamp"
}

# Codec table: file suffix, the compressor Buildroot runs, the decompressor.
# xzblocks is xz in several blocks, as `xz -T0` cuts a bigger rootfs
# (192 MiB at -9), so that the 100 MiB case has some too.
declare -A EXT=([none]="" [gzip]=.gz [xz]=.xz [xzblocks]=.blocks.xz [lz4]=.lz4 [zstd]=.zst)
declare -A COMPRESS=(
	[gzip]="gzip -9 -n -c"
	[xz]="xz -9 -C crc32 -T1 -c"
	[xzblocks]="xz -9 -C crc32 -T0 --block-size=32MiB -c"
	[lz4]="lz4 -l -9 -c"
	[zstd]="zstd -19 -q -c"
)
declare -A DECOMPRESS=([gzip]="gzip -dc" [xz]="xz -dc" [xzblocks]="xz -dc" [lz4]="lz4 -dc" [zstd]="zstd -dc -q")

# ensure_archive MB CODEC: set ARCHIVE to the path of rootfs.cpio[.ext] of
# that size, compressing it first if needed. Returns 1 if the compressor is
# missing; exits on any other failure. (Errors are handled explicitly because
# set -e is off when this runs as an if condition.)
ARCHIVE=
ensure_archive() {
	local mb=$1 codec=$2 dir f
	local -a cmd
	ensure_tree "$mb"
	dir=$(rootfs_dir "$mb")
	f=$dir/rootfs.cpio${EXT[$codec]}
	ARCHIVE=$f
	if [[ -f $f ]]; then
		return 0
	fi
	read -r -a cmd <<<"${COMPRESS[$codec]}"
	if ! have "${cmd[0]}"; then
		return 1
	fi
	log "== compressing $f (${COMPRESS[$codec]}), this can take a while"
	"${cmd[@]}" <"$dir/rootfs.cpio" >"$f.tmp" || die "${COMPRESS[$codec]} failed"
	mv "$f.tmp" "$f" || die "mv failed"
	return 0
}

# ---------------------------------------------------------------------------
# Measuring.

# fmt_us MICROSECONDS: seconds with three decimals.
fmt_us() { printf '%d.%03d' $(($1 / 1000000)) $((($1 % 1000000) / 1000)); }

# run_once NAME CMD...: one timed run of CMD (stdout to /dev/null). Sets
# T_US (microseconds), T_KIB (peak RSS, KiB, or empty), T_MS (user + system
# CPU time, milliseconds, or empty) and T_STATUS; on a failure also M_OK=
# and M_ERR (tail of stderr), logged.
run_once() {
	local name=$1 start end
	shift
	T_STATUS=0
	T_KIB=
	T_MS=
	# CPU time from bash's own time (getrusage of the children, to the
	# microsecond): GNU time's %U and %S count centiseconds, a tenth of
	# a case that takes 0.15 s.
	local TIMEFORMAT='%3U %3S'
	start=$EPOCHREALTIME
	if [[ -n $HAVE_TIME ]]; then
		{ time "$TIME_BIN" -f '%M' -o "$WORK/time.out" "$@" >/dev/null 2>"$WORK/stderr" || T_STATUS=$?; } 2>"$WORK/cpu.out"
	else
		{ time "$@" >/dev/null 2>"$WORK/stderr" || T_STATUS=$?; } 2>"$WORK/cpu.out"
	fi
	end=$EPOCHREALTIME
	T_US=$((${end/./} - ${start/./}))
	if ((T_STATUS != 0)); then
		M_OK=
		M_ERR=$(tail -n 3 "$WORK/stderr" | tr '\n' ' ')
		log "   $name: FAILED (exit $T_STATUS): $M_ERR"
		return 0
	fi
	if [[ -n $HAVE_TIME ]]; then
		local kib
		kib=$(tail -n 1 "$WORK/time.out")
		if [[ $kib =~ ^[0-9]+$ ]]; then
			T_KIB=$kib
		fi
	fi
	local -a tf
	read -r -a tf < <(tail -n 1 "$WORK/cpu.out")
	if [[ ${tf[0]:-}${tf[1]:-} =~ ^[0-9]+\.[0-9]{3}[0-9]+\.[0-9]{3}$ ]]; then
		T_MS=$((10#${tf[0]/./} + 10#${tf[1]/./}))
	fi
}

# prepare NAME CLEAN: untimed, before each run: remove the path CLEAN (if
# not empty) and run the array MEASURE_PREP (if set).
prepare() {
	if [[ -n $2 ]]; then
		rm -rf -- "$2"
	fi
	if ((${#MEASURE_PREP[@]} > 0)); then
		"${MEASURE_PREP[@]}" || die "$1: preparing the run failed: ${MEASURE_PREP[*]}"
	fi
}

# keep_best PREFIX: fold the run of run_once into the variables PREFIX_US
# (fastest), PREFIX_KIB (largest peak RSS) and PREFIX_MS (least CPU time),
# and add its CPU time to the list PREFIX_MSL (for median_ms).
keep_best() {
	local -n best_us=${1}_US best_kib=${1}_KIB best_ms=${1}_MS all_ms=${1}_MSL
	if [[ -n $T_MS ]]; then
		all_ms+=("$T_MS")
	fi
	if [[ -n $T_KIB ]] && { [[ -z $best_kib ]] || ((T_KIB > best_kib)); }; then
		best_kib=$T_KIB
	fi
	if [[ -n $T_MS ]] && { [[ -z $best_ms ]] || ((T_MS < best_ms)); }; then
		best_ms=$T_MS
	fi
	if [[ -z $best_us ]] || ((T_US < best_us)); then
		best_us=$T_US
	fi
}

# runs_wanted: the runs of a measurement: BENCH_RUNS, else the current
# case's (CASE_RUNS), else 3.
runs_wanted() {
	if [[ -n $CASE_RUNS ]]; then
		printf '%s' "$CASE_RUNS"
	else
		printf '%s' "${RUNS_ENV:-3}"
	fi
}

# first_is_slow US: is a first run that took US long enough to stop at one
# (no BENCH_RUNS, no case's count to match)?
first_is_slow() {
	[[ -z $RUNS_ENV && -z $CASE_RUNS ]] && (($1 > SLOW_S * 1000000))
}

# measure NAME CLEAN -- CMD...: run CMD (stdout to /dev/null) RUNS times,
# each after prepare NAME CLEAN. Sets M_US (fastest run, microseconds),
# M_KIB (peak RSS over the runs, KiB, or empty), M_MS (least CPU time),
# M_OK (1 or empty), M_ERR (tail of stderr when it failed) and M_RUNS.
# With BASE_CMD set (set_base), each run is preceded by one of the base
# binary: base, current, base, current, ..., so that a change in the
# machine's load falls on both alike; B_US, B_KIB, B_MS and B_OK are its.
# ALONG_CMD, a peer, is run in turn the same way (A_US, A_KIB, A_MS, A_OK).
measure() {
	local name=$1 clean=$2 runs i base_note
	shift 3
	M_US='' M_KIB='' M_MS='' M_OK=1 M_ERR='' B_US='' B_KIB='' B_MS='' B_OK=1
	M_MSL=() B_MSL=() A_MSL=()
	A_US='' A_KIB='' A_MS='' A_OK=1
	runs=$(runs_wanted)
	M_RUNS=0
	for ((i = 1; i <= runs; i++)); do
		M_RUNS=$i
		base_note=
		if ((${#ALONG_CMD[@]} > 0)); then
			run_once "$ALONG_LABEL" "${ALONG_CMD[@]}"
			if [[ -n $M_OK ]]; then
				keep_best A
				base_note=" ($ALONG_LABEL $(fmt_us "$T_US")s)"
			else
				A_OK='' A_ERR=$M_ERR M_OK=1 ALONG_CMD=()
			fi
		fi
		if ((${#BASE_CMD[@]} > 0)); then
			prepare "base $name" "$BASE_CLEAN"
			run_once "base $name" "${BASE_CMD[@]}"
			if [[ -n $M_OK ]]; then
				keep_best B
				base_note+=" (base $(fmt_us "$T_US")s)"
			else
				B_OK='' M_OK=1 BASE_CMD=()
				NOTES+=("$CASE_NAME: the base binary failed: $M_ERR")
			fi
		fi
		prepare "$name" "$clean"
		run_once "$name" "$@"
		[[ -n $M_OK ]] || return 0
		keep_best M
		log "   $name: run $i/$runs $(fmt_us "$T_US")s$base_note"
		if ((i == 1)) && first_is_slow "$T_US"; then
			log "   $name: slower than ${SLOW_S}s, not repeated"
			break
		fi
	done
}

# base_path OUT: where the base binary writes the output that rootfs-trim
# writes to OUT: beside it, with the same extension (which names the output's
# compression).
base_path() { printf '%s/base-%s' "${1%/*}" "${1##*/}"; }

# set_base CLEAN CMD...: BASE_CMD, the base binary's command for the next
# measure: CMD with BIN replaced by BASE_BIN and CLEAN (the output, if not
# empty) by base_path CLEAN, which is BASE_CLEAN.
set_base() {
	local clean=$1 arg
	shift
	BASE_CMD=()
	BASE_CLEAN=
	if [[ -n $clean ]]; then
		BASE_CLEAN=$(base_path "$clean")
	fi
	for arg in "$@"; do
		if [[ $arg == "$BIN" ]]; then
			BASE_CMD+=("$BASE_BIN")
		elif [[ -n $clean && $arg == "$clean" ]]; then
			BASE_CMD+=("$BASE_CLEAN")
		else
			BASE_CMD+=("$arg")
		fi
	done
}

# fmt_ms MILLISECONDS: seconds with three decimals, or n/a.
# median_ms PREFIX: the median of the CPU times in PREFIX_MSL,
# milliseconds (the lower middle of an even count), or empty.
median_ms() {
	local -n list=${1}_MSL
	((${#list[@]} > 0)) || return 0
	local -a sorted
	mapfile -t sorted < <(printf '%s\n' "${list[@]}" | sort -n)
	printf '%s' "${sorted[$(((${#sorted[@]} - 1) / 2))]}"
}

fmt_ms() {
	if [[ -n $1 ]]; then
		printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
	else
		printf 'n/a'
	fi
}

fmt_mib() {
	if [[ -n $1 ]]; then
		awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'
	else
		printf 'n/a'
	fi
}

# ratio A_US B_US: A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else printf "-" }'; }

size_of() {
	if [[ -f $1 ]]; then
		stat -c %s -- "$1"
	else
		printf -- '-'
	fi
}

# bytes_cell OURS PEER: "ours / peer (+x.x%)"
bytes_cell() {
	local a=$1 b=$2
	if [[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] && ((b > 0)); then
		awk -v a="$a" -v b="$b" 'BEGIN{printf "%s / %s (%+.1f%%)", a, b, (a-b)*100/b}'
	else
		printf '%s / %s' "$a" "$b"
	fi
}

# Table rows are tab-separated cells.
join_tab() {
	local IFS=$'\t'
	printf '%s' "$*"
}
# add_row ARRAY CELL...: append a row to the array named ARRAY.
add_row() {
	local -n arr=$1
	shift
	arr+=("$(join_tab "$@")")
}

MEASURE_PREP=()
# BASE_CMD: the base binary's command in the current rootfs-trim
# measurement, if any (set_base).
BASE_CMD=()
ALONG_CMD=()
ALONG_LABEL=
BASE_CLEAN=
# CASE_RUNS: the runs rootfs-trim got in the current case, which its peers
# then get too, so that a minimum is never taken over more runs on one side.
CASE_RUNS=
ROWS=()
RSS_ROWS=()
BASE_ROWS=()
CASE_NAME=
NOTES=()
declare -A RSS_MAIN=()

# The measurement of rootfs-trim in the current case.
OURS_CELL=
OURS_US=
OURS_RSS_CELL=
OURS_OUT=

# run_ours CASE OUT -- CMD...: measure rootfs-trim for a case, and with
# BENCH_BASE_BIN the base binary beside it (base_row).
run_ours() {
	local case=$1 out=$2
	shift 3
	log "== $case"
	CASE_RUNS=
	CASE_NAME=$case
	if [[ -n $BASE_BIN ]]; then
		set_base "$out" "$@"
	fi
	measure "rootfs-trim" "$out" -- "$@"
	BASE_CMD=()
	CASE_RUNS=$M_RUNS
	OURS_OUT=$out
	if [[ -n $M_OK ]]; then
		OURS_US=$M_US
		OURS_CELL=$(fmt_us "$M_US")
		OURS_RSS_CELL=$(fmt_mib "$M_KIB")
	else
		OURS_US=
		OURS_CELL=error
		OURS_RSS_CELL=-
		NOTES+=("$case: rootfs-trim failed: $M_ERR")
	fi
	LAST_OURS_KIB=$M_KIB
	if [[ -n $BASE_BIN ]]; then
		base_row "$case" "$out"
	fi
	if [[ -n $ALONG_LABEL ]]; then
		along_row "$case"
	fi
}

# along_row CASE: the row of the peer measured in turn with rootfs-trim
# (run_along), then forgets it.
along_row() {
	local cell=error ratio_cell=-
	if [[ -n $A_OK && -n $A_US ]]; then
		cell=$(fmt_us "$A_US")
		if [[ -n $OURS_US ]]; then
			ratio_cell=$(ratio "$OURS_US" "$A_US")
		fi
	else
		NOTES+=("$1: peer '$ALONG_LABEL' failed: ${A_ERR:-}")
	fi
	add_row ROWS "$1" "$OURS_CELL" "$ALONG_LABEL (in turn)" "$cell" "$ratio_cell" "-" "$OURS_RSS_CELL"
	ALONG_LABEL='' ALONG_CMD=()
}

# run_along LABEL TOOL -- CMD...: the next run_ours runs the peer CMD in
# turn with rootfs-trim (peer, rootfs-trim, peer, ...), where a target is
# a ratio to that peer: on a shared host the speed of both drifts by a
# quarter within minutes, and runs minutes apart compare the drift.
run_along() {
	ALONG_LABEL='' ALONG_CMD=()
	if [[ ${BENCH_NO_PEERS:-} == 1 ]] || ! have "$2"; then
		return 0
	fi
	ALONG_LABEL=$1
	shift 3
	ALONG_CMD=("$@")
}

# same_output OURS BASE: whether the base binary wrote what rootfs-trim did:
# "identical", "DIFFERENT" or "-" (no file to compare: stdout, in place).
same_output() {
	if [[ -n $1 && -d $1 && -d $2 ]]; then
		# An image layout: every file of it.
		if diff -r -q -- "$1" "$2" >/dev/null 2>&1; then
			printf 'identical'
		else
			printf 'DIFFERENT'
		fi
	elif [[ -z $1 || ! -f $1 || ! -f $2 ]]; then
		printf -- '-'
	elif cmp -s -- "$1" "$2"; then
		printf 'identical'
	else
		printf 'DIFFERENT'
	fi
}

# base_row CASE OUT: the base binary's measurement (from measure) as a
# row of the main table, peer "base", ratio = current / base, and a row of
# the table of the base comparison.
base_row() {
	local case=$1 out=$2 base_cell=error ratio_cell=- bytes=- same=- bout=
	if [[ -n $out ]]; then
		bout=$(base_path "$out")
	fi
	if [[ -n $B_OK && -n $B_US ]]; then
		base_cell=$(fmt_us "$B_US")
		if [[ -n $OURS_US ]]; then
			ratio_cell=$(ratio "$OURS_US" "$B_US")
		fi
	fi
	if [[ -n $out && -d $out && -d $bout ]]; then
		same=$(same_output "$out" "$bout")
		if [[ $same == DIFFERENT ]]; then
			NOTES+=("$case: the output DIFFERS from the base binary's: $(diff -r -q -- "$out" "$bout" 2>&1 | head -n 1)")
		fi
	elif [[ -n $out && -f $out && -f $bout ]]; then
		bytes=$(bytes_cell "$(size_of "$out")" "$(size_of "$bout")")
		same=$(same_output "$out" "$bout")
		if [[ $same == DIFFERENT ]]; then
			NOTES+=("$case: the output DIFFERS from the base binary's: $(cmp -- "$out" "$bout" 2>&1 | head -n 1 || true)")
		fi
	fi
	add_row ROWS "$case" "$OURS_CELL" "base rootfs-trim" "$base_cell" "$ratio_cell" "$bytes" "$OURS_RSS_CELL"
	local bmed mmed cpu_ratio=-
	bmed=$(median_ms B)
	mmed=$(median_ms M)
	if [[ -n $bmed && -n $mmed ]] && ((bmed > 0)); then
		cpu_ratio=$(ratio "$mmed" "$bmed")
	fi
	add_row BASE_ROWS "$case" "$base_cell" "$OURS_CELL" "$ratio_cell" "$M_RUNS" \
		"$(fmt_ms "$B_MS") / $(fmt_ms "$M_MS")" "$(fmt_ms "$bmed") / $(fmt_ms "$mmed") ($cpu_ratio)" \
		"$(fmt_mib "$B_KIB") / $OURS_RSS_CELL" "$same"
	rm -rf -- "$bout"
}

# run_peer CASE LABEL OUT TOOLS -- CMD...: measure one peer and add its row.
# TOOLS is a space-separated list of programs the peer needs. PEER_CLEAN, if
# set, is removed before each run instead of OUT.
run_peer() {
	local case=$1 label=$2 out=$3 tools=$4 peer_cell ratio_cell bytes
	shift 5
	if [[ ${BENCH_NO_PEERS:-} == 1 ]]; then
		return 0
	fi
	# shellcheck disable=SC2086 # a list of tool names
	if ! have $tools; then
		add_row ROWS "$case" "$OURS_CELL" "$label" "n/a" "n/a" "-" "$OURS_RSS_CELL"
		return 0
	fi
	measure "$label" "${PEER_CLEAN:-$out}" -- "$@"
	if [[ -n $M_OK ]]; then
		peer_cell=$(fmt_us "$M_US")
		ratio_cell=-
		if [[ -n $OURS_US ]]; then
			ratio_cell=$(ratio "$OURS_US" "$M_US")
		fi
	else
		peer_cell=error
		ratio_cell=-
		NOTES+=("$case: peer '$label' failed: $M_ERR")
	fi
	bytes=-
	if [[ -n $out && -n $OURS_OUT ]]; then
		bytes=$(bytes_cell "$(size_of "$OURS_OUT")" "$(size_of "$out")")
	fi
	add_row ROWS "$case" "$OURS_CELL" "$label" "$peer_cell" "$ratio_cell" "$bytes" "$OURS_RSS_CELL"
}

# verify CASE FILE CODEC REF: note whether FILE, decompressed, equals REF.
verify() {
	local case=$1 f=$2 codec=$3 ref=$4 dec
	[[ -f $f ]] || return 0
	if [[ $codec == none ]]; then
		if cmp -s -- "$f" "$ref"; then
			NOTES+=("$case: rootfs-trim output is byte-identical to the input ($(size_of "$f") bytes)")
		else
			NOTES+=("$case: rootfs-trim output DIFFERS from the input: $(cmp -- "$f" "$ref" 2>&1 | head -n 1)")
		fi
		return 0
	fi
	local -a d
	read -r -a d <<<"${DECOMPRESS[$codec]}"
	if ! have "${d[0]}"; then
		return 0
	fi
	if "${d[@]}" "$f" 2>/dev/null | cmp -s - "$ref"; then
		dec="identical to rootfs.cpio"
	else
		dec="DIFFERENT from rootfs.cpio"
	fi
	NOTES+=("$case: rootfs-trim output decompressed with '${DECOMPRESS[$codec]}' is $dec")
}

# ---------------------------------------------------------------------------
# Cases.

case_repack_cpio() {
	local in out=$WORK/ours.cpio p
	ensure_archive "$SIZE_MB" none
	in=$ARCHIVE
	run_ours repack-cpio "$out" -- "$BIN" repack "$in" "$out"
	RSS_MAIN[none]=$LAST_OURS_KIB
	verify repack-cpio "$out" none "$in"
	run_peer repack-cpio "bsdtar --format newc -cf - @in" "$WORK/bsdtar.cpio" "bsdtar" -- \
		bash -c 'bsdtar --format newc -cf - @"$1" >"$2"' _ "$in" "$WORK/bsdtar.cpio"
	# GNU cpio cannot copy an archive to an archive: unpack, then pack as
	# Buildroot does. The unpacked tree is removed before each run, untimed.
	PEER_CLEAN=$WORK/cpio-x run_peer repack-cpio "cpio -i, then find|sort|cpio -o" "$WORK/gnu.cpio" "cpio" -- \
		bash -c 'set -e; mkdir "$2"; cd "$2"
			cpio -i -d -m --quiet --no-absolute-filenames <"$1"
			find . | LC_ALL=C sort | cpio --quiet -o -H newc "${@:4}" >"$3"' \
		_ "$in" "$WORK/cpio-x" "$WORK/gnu.cpio" "${CPIO_REPRO[@]}"
	for p in bsdtar gnu; do
		if [[ ! -f $WORK/$p.cpio ]]; then
			continue
		fi
		if cmp -s "$WORK/$p.cpio" "$in"; then
			NOTES+=("repack-cpio: the $p output is byte-identical to the input")
		elif [[ $p == gnu ]]; then
			NOTES+=("repack-cpio: the GNU cpio output differs from the input (cpio -i restores no directory or symlink mtime)")
		else
			NOTES+=("repack-cpio: the $p output differs from the input")
		fi
	done
	rm -rf "$WORK/cpio-x" "$out" "$WORK/bsdtar.cpio" "$WORK/gnu.cpio"
}

case_list() {
	local codec=$1 case in d
	case=list-${codec/none/cpio}
	if ! ensure_archive "$SIZE_MB" "$codec"; then
		add_row ROWS "$case" "n/a" "${COMPRESS[$codec]%% *} missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	in=$ARCHIVE
	run_ours "$case" "" -- "$BIN" list "$in"
	if [[ $codec == none ]]; then
		run_peer "$case" "cpio -it" "" "cpio" -- bash -c 'cpio -it --quiet <"$1"' _ "$in"
	else
		local -a dcmd
		read -r -a dcmd <<<"${DECOMPRESS[$codec]}"
		run_peer "$case" "${DECOMPRESS[$codec]}" "" "${dcmd[0]}" -- "${dcmd[@]}" "$in"
		if [[ $codec == gzip ]]; then
			run_peer "$case" "pigz -dc" "" "pigz" -- pigz -dc "$in"
		fi
	fi
	run_peer "$case" "bsdtar -tf" "" "bsdtar" -- bsdtar -tf "$in"
}

# ensure_initrd CODEC: set INITRD to an initrd of two segments as dracut
# and initramfs-tools write them, an early raw cpio (a microcode file,
# EARLY) then the rootfs in CODEC; false when CODEC's compressor is missing.
ensure_initrd() {
	local codec=$1
	ensure_archive "$SIZE_MB" "$codec" || return 1
	EARLY=$BENCH_DIR/early.cpio
	if [[ ! -f $EARLY ]]; then
		mkdir -p "$WORK/early/kernel/x86/microcode"
		head -c 65536 /dev/urandom >"$WORK/early/kernel/x86/microcode/GenuineIntel.bin"
		(cd "$WORK/early" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) >"$EARLY.tmp" || die "cpio failed"
		mv "$EARLY.tmp" "$EARLY" || die "mv failed"
		rm -rf "$WORK/early"
	fi
	INITRD=$BENCH_DIR/initrd-${SIZE_MB}mb${EXT[$codec]/.zst/}.img
	if [[ ! -f $INITRD ]]; then
		cat "$EARLY" "$ARCHIVE" >"$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD" || die "writing $INITRD failed"
	fi
}

# case_initrd: list, and repack with no change, of the zstd initrd
# (ensure_initrd), against the peers that read such a file, dracut's
# skipcpio with zstd -dc and cpio -t for the main segment plus cpio -t of
# the early one (issue 28: within 1.2x).
case_initrd() {
	local in early out=$WORK/ours-initrd.img
	if ! ensure_initrd zstd; then
		add_row ROWS list-initrd "n/a" "zstd missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	in=$INITRD early=$EARLY
	local skip=/usr/lib/dracut/skipcpio
	if want list-initrd; then
		run_ours list-initrd "" -- "$BIN" list "$in"
		run_peer list-initrd "skipcpio | zstd -dc | cpio -t, cpio -t of the early segment" "" "cpio zstd $skip" -- \
			bash -c '"$3" "$1" | zstd -dc | cpio -t --quiet && cpio -t --quiet <"$2"' _ "$in" "$early" "$skip"
	fi
	if want repack-initrd; then
		run_ours repack-initrd "$out" -- "$BIN" repack "$in" "$out"
		if ! cmp -s "$out" "$in"; then
			NOTES+=("repack-initrd: the output differs from the input")
		fi
		run_peer repack-initrd "skipcpio | zstd -dc | cpio -t, cpio -t of the early segment" "" "cpio zstd $skip" -- \
			bash -c '"$3" "$1" | zstd -dc | cpio -t --quiet && cpio -t --quiet <"$2"' _ "$in" "$early" "$skip"
		rm -f "$out"
	fi
}

# case_initrd_apply CODEC: apply with the shipped rules on the initrd of
# CODEC (ensure_initrd: gzip is spliced, zstd compressed anew; the early
# segment is copied), against the pipeline a user would script for it:
# the early segment copied with head -c, the main one through skipcpio,
# decompressed, bsdtar --exclude of the same three files and the codec's
# fastest compressor, the peer of apply-CODEC (issue 28: within the ratios
# docs/performance.md gives for one segment).
case_initrd_apply() {
	local codec=$1 case=apply-initrd-$1 out=$WORK/ours-initrd-apply.img peer=$WORK/peer-initrd-apply.img
	if ! ensure_initrd "$codec"; then
		add_row ROWS "$case" "n/a" "${COMPRESS[$codec]%% *} missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	local skip=/usr/lib/dracut/skipcpio comp
	case $codec in
	gzip) comp="pigz -9 -n" ;;
	zstd) comp="zstd -19 -T0 -q" ;;
	esac
	run_ours "$case" "$out" -- "$BIN" apply --quiet --rules "$RULES" \
		--packages-file-list "$(rootfs_dir "$SIZE_MB")/packages-file-list.txt" "$INITRD" "$out"
	if [[ -f $out ]]; then
		if cmp -s -n "$(size_of "$EARLY")" "$out" "$EARLY"; then
			NOTES+=("$case: the early segment copied byte for byte; output $(size_of "$out") bytes for an input of $(size_of "$INITRD") ($(pct "$(size_of "$out")" "$(size_of "$INITRD")"))")
		else
			NOTES+=("$case: the early segment DIFFERS in the output")
		fi
	fi
	local -a dc pc
	read -r -a dc <<<"${DECOMPRESS[$codec]}"
	read -r -a pc <<<"$comp"
	run_peer "$case" "head -c early; skipcpio | ${dc[*]} | bsdtar --exclude ... | $comp" "$peer" "bsdtar ${pc[0]} ${dc[0]} $skip" -- \
		bash -o pipefail -c 'in=$1 out=$2 early=$3 skip=$4 nd=$5 nc=$6; shift 6
			{ head -c "$early" "$in" && "$skip" "$in" | "${@:1:nd}" | bsdtar --format newc \
				--exclude etc/cni/net.d/87-podman-bridge.conflist --exclude etc/crictl.yaml \
				--exclude etc/systemd/system/containerd.service -cf - @- | "${@:nd+1:nc}" -c; } >"$out"' \
		_ "$INITRD" "$peer" "$(size_of "$EARLY")" "$skip" "${#dc[@]}" "${#pc[@]}" "${dc[@]}" "${pc[@]}"
	rm -f "$out" "$peer"
}

# The dpkg image (issue #29): the rootfs with a dpkg database made from
# its packages-file-list.txt (var/lib/dpkg/info/<pkg>.list, "/path" a
# line; "_" in a name becomes "-", as dpkg names allow), as a Debian root
# such as kicbase carries one, so that audit and apply take the owners from
# the image itself. The database comes after etc/ and usr/, as in any
# sorted image. Compressed with gzip -9 -n, xz -1 -T1 (one block: -1 to
# keep the bench's set-up short; decoding costs about what -9's does) and
# pzstd -3 -p 2 (several frames).
declare -A DPKG_COMPRESS=([gzip]="gzip -9 -n -c" [xz]="xz -1 -C crc32 -T1 -c" [xzblocks]="xz -1 -C crc32 -T0 --block-size=32MiB -c" [zstdframes]="pzstd -q -3 -p 2 -c")
declare -A DPKG_EXT=([gzip]=.gz [xz]=.xz [xzblocks]=.blocks.xz [zstdframes]=.zst)
ensure_dpkg_archive() {
	local mb=$1 codec=$2 dir f t
	local -a cmd
	ensure_tree "$mb"
	dir=$(rootfs_dir "$mb")
	t=$dir/dpkg-target
	if [[ ! -f $dir/rootfs-dpkg.cpio ]]; then
		log "== making $dir/rootfs-dpkg.cpio (the tree, hard-linked, and a dpkg database)"
		rm -rf "$t"
		cp -al "$dir/target" "$t" || die "cp -al failed"
		mkdir -p "$t/var/lib/dpkg/info"
		awk -F, -v d="$t/var/lib/dpkg/info" '{ p = $1; gsub(/_/, "-", p); f = d "/" p ".list"; sub(/^\./, "", $2); print $2 > f }' \
			"$dir/packages-file-list.txt" || die "awk failed"
		# A unit a rule relocates must not be a hard link (apply refuses):
		# break etc/'s links, by a copy beside and a rename, which leaves
		# the target's inode alone.
		find "$t/etc" -type f -links +1 -exec sh -c 'cp -p "$1" "$1.x" && mv "$1.x" "$1"' _ {} \;
		find "$t/var/lib/dpkg" "$t/var/lib" "$t/var" "$t/etc" -maxdepth 0 -exec touch -h -d "@$EPOCH" {} +
		find "$t/var/lib/dpkg" -exec touch -h -d "@$EPOCH" {} +
		(cd "$t" && find . | LC_ALL=C sort | cpio --quiet -o -H newc "${CPIO_REPRO[@]}") >"$dir/rootfs-dpkg.cpio.tmp" ||
			die "cpio -o failed"
		mv "$dir/rootfs-dpkg.cpio.tmp" "$dir/rootfs-dpkg.cpio"
	fi
	f=$dir/rootfs-dpkg.cpio${DPKG_EXT[$codec]}
	ARCHIVE=$f
	[[ -f $f ]] && return 0
	read -r -a cmd <<<"${DPKG_COMPRESS[$codec]}"
	have "${cmd[0]}" || return 1
	log "== compressing $f (${DPKG_COMPRESS[$codec]})"
	"${cmd[@]}" <"$dir/rootfs-dpkg.cpio" >"$f.tmp" || die "${DPKG_COMPRESS[$codec]} failed"
	mv "$f.tmp" "$f"
}

# case_dpkg CODEC [apply]: audit (or apply) of the dpkg image, the owners
# from its own database, against reading the archive at all: bsdtar -tf
# and the codec's decompressor on one core (pigz -dc decodes on one, its
# other threads read, write and check), beside pzstd on two for frames.
case_dpkg() {
	local codec=$1 mode=${2:-audit} in case out
	case=$mode-dpkg-$codec
	if ! ensure_dpkg_archive "$SIZE_MB" "$codec"; then
		add_row ROWS "$case" "n/a" "${DPKG_COMPRESS[$codec]%% *} missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	in=$ARCHIVE
	if [[ $mode == apply ]]; then
		out=$WORK/ours-dpkg.cpio${DPKG_EXT[$codec]}
		run_ours "$case" "$out" -- "$BIN" apply --quiet --rules "$RULES" "$in" "$out"
		rm -f "$out" "$(base_path "$out")"
	else
		# The target for several blocks is a ratio to one xz thread.
		if [[ $codec == xzblocks ]]; then
			run_along "xz -dc -T1" xz -- xz -dc -T1 "$in"
		fi
		# audit exits 1 when something offends, as here.
		run_ours "$case" "" -- bash -c '"$@"; (($? <= 1))' _ "$BIN" audit --rules "$RULES" "$in"
	fi
	run_peer "$case" "bsdtar -tf" "" "bsdtar" -- bsdtar -tf "$in"
	case $codec in
	gzip) run_peer "$case" "pigz -dc" "" "pigz" -- pigz -dc "$in" ;;
	xz) run_peer "$case" "xz -dc -T1" "" "xz" -- xz -dc -T1 "$in" ;;
	xzblocks)
		# The issue's target is against one thread (in turn, above, and
		# here on its own); xz -T0 is the fastest peer.
		run_peer "$case" "xz -dc -T1" "" "xz" -- xz -dc -T1 "$in"
		run_peer "$case" "xz -dc -T0" "" "xz" -- xz -dc -T0 "$in"
		;;
	zstdframes)
		run_peer "$case" "zstd -dc" "" "zstd" -- zstd -dc -q "$in"
		run_peer "$case" "pzstd -dc -p 2" "" "pzstd" -- pzstd -dc -q -p 2 "$in"
		;;
	esac
}

# pct A B: A relative to B, as +0.012%.
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f%%", (a - b) * 100 / b }'; }

# compressor_of OUT IN: the manifest's account of how OUT was written, from
# a second, untimed apply.
compressor_of() {
	local m=$WORK/compressor.json
	"$BIN" apply --quiet --rules "$RULES" --packages-file-list "$(rootfs_dir "$SIZE_MB")/packages-file-list.txt" \
		--manifest "$m" "$2" "$WORK/compressor.out" >/dev/null 2>&1 || { echo "compressor unknown"; return 0; }
	sed -n 's/.*"compressor": "\(.*\)",*$/\1/p' "$m" | tail -n 1
	rm -f "$m" "$WORK/compressor.out"
}

# case_repack_codec CODEC [apply]: with "apply", rootfs-trim runs apply with
# the shipped rules and the peers exclude the same three files with bsdtar,
# the pipeline a user would otherwise script.
case_repack_codec() {
	local codec=$1 mode=${2:-repack} in ext out
	local case=$mode-$codec
	ext=${EXT[$codec]}
	if ! ensure_archive "$SIZE_MB" "$codec"; then
		add_row ROWS "$case" "n/a" "${COMPRESS[$codec]%% *} missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	in=$ARCHIVE
	out=$WORK/ours.cpio$ext
	local -a excl=()
	if [[ $mode == apply ]]; then
		run_ours "$case" "$out" -- "$BIN" apply --quiet --rules "$RULES" \
			--packages-file-list "$(rootfs_dir "$SIZE_MB")/packages-file-list.txt" "$in" "$out"
		excl=(--exclude etc/cni/net.d/87-podman-bridge.conflist --exclude etc/crictl.yaml
			--exclude etc/systemd/system/containerd.service)
		# The reuse path: say what it wrote, against the input's size.
		if [[ -f $out ]]; then
			NOTES+=("$case: output $(size_of "$out") bytes for an input of $(size_of "$in") ($(pct "$(size_of "$out")" "$(size_of "$in")")), $(compressor_of "$out" "$in")")
		fi
		if [[ $codec == gzip ]]; then
			# The floor of a splice: one decompression of the input (issue 29).
			run_peer "$case" "pigz -dc (decompress alone)" "" "pigz" -- pigz -dc "$in"
		fi
	else
		run_ours "$case" "$out" -- "$BIN" repack "$in" "$out"
		RSS_MAIN[$codec]=$LAST_OURS_KIB
		verify "$case" "$out" "$codec" "$(rootfs_dir "$SIZE_MB")/rootfs.cpio"
		# Nothing changes, so the output is a copy of the input: the bound
		# is decompressing the input at all.
		local -a dc
		read -r -a dc <<<"${DECOMPRESS[$codec]}"
		run_peer "$case" "${DECOMPRESS[$codec]} (decompress alone)" "" "${dc[0]}" -- "${dc[@]}" "$in"
	fi
	local -a peers=()
	case $codec in
	gzip) peers=("gzip -9 -n" "pigz -9 -n") ;;
	xz) peers=("xz -9 -C crc32 -T1" "xz -9 -C crc32 -T0") ;;
	xzblocks) peers=("xz -9 -C crc32 -T0 --block-size=32MiB") ;;
	lz4) peers=("lz4 -l -9") ;;
	zstd) peers=("zstd -19" "zstd -19 -T0") ;;
	esac
	# BENCH_FASTEST_PEER=1 keeps only the last, fastest peer of each codec
	# (the multi-threaded one): the slow single-threaded xz and zstd runs
	# take most of a full run's hour.
	if [[ ${BENCH_FASTEST_PEER:-} == 1 ]]; then
		peers=("${peers[-1]}")
	fi
	local p i=0
	local -a pc
	for p in "${peers[@]}"; do
		i=$((i + 1))
		read -r -a pc <<<"$p"
		run_peer "$case" "bsdtar | $p" "$WORK/peer$i.cpio$ext" "bsdtar ${pc[0]}" -- \
			bash -o pipefail -c 'in=$1 out=$2 n=$3; shift 3; bsdtar --format newc "${@:1:n}" -cf - @"$in" | "${@:n+1}" -c >"$out"' \
			_ "$in" "$WORK/peer$i.cpio$ext" "${#excl[@]}" "${excl[@]}" "${pc[@]}"
		rm -f "$WORK/peer$i.cpio$ext"
	done
	rm -f "$out"
}

# case_apply_dir: apply in place on a Buildroot target directory, as the
# post-build script does, against listing the files with find. "first" runs
# on a fresh copy each time (copied untimed), "again" on a target already
# applied, as on every later `make`; "no epoch" without SOURCE_DATE_EPOCH,
# when what apply writes gets the newest mtime of the tree: a fresh target
# has every entry lstat'ed for it, an applied one only if apply writes.
# The manifest (--manifest) is left out: its digests read every byte of the
# tree, a cost of its own that no peer has.
case_apply_dir() {
	local src tgt list
	src=$(rootfs_dir "$SIZE_MB")/target
	list=$(rootfs_dir "$SIZE_MB")/packages-file-list.txt
	tgt=$WORK/apply-dir
	ensure_archive "$SIZE_MB" none
	local -a apply=("$BIN" apply --quiet --rules "$RULES" --packages-file-list "$list" "$tgt")

	MEASURE_PREP=(bash -c 'rm -rf "$2" && cp -a "$1" "$2"' _ "$src" "$tgt")
	run_ours "apply-dir first" "" -- env SOURCE_DATE_EPOCH="$EPOCH" "${apply[@]}"
	MEASURE_PREP=()
	run_peer "apply-dir first" "find -type f | wc -l" "" "find" -- bash -c 'find "$1" -type f | wc -l' _ "$tgt"

	MEASURE_PREP=(bash -c 'rm -rf "$2" && cp -a "$1" "$2"' _ "$src" "$tgt")
	run_ours "apply-dir first, no epoch" "" -- env -u SOURCE_DATE_EPOCH "${apply[@]}"
	MEASURE_PREP=()
	run_peer "apply-dir first, no epoch" "find -type f | wc -l" "" "find" -- bash -c 'find "$1" -type f | wc -l' _ "$tgt"
	run_peer "apply-dir first, no epoch" "find -printf '%T@ %m %s'" "" "find" -- bash -c 'find "$1" -printf "%T@ %m %s\n" | wc -l' _ "$tgt"

	run_ours "apply-dir again" "" -- env SOURCE_DATE_EPOCH="$EPOCH" "${apply[@]}"
	run_peer "apply-dir again" "find -type f | wc -l" "" "find" -- bash -c 'find "$1" -type f | wc -l' _ "$tgt"

	run_ours "apply-dir again, no epoch" "" -- env -u SOURCE_DATE_EPOCH "${apply[@]}"
	run_peer "apply-dir again, no epoch" "find -type f | wc -l" "" "find" -- bash -c 'find "$1" -type f | wc -l' _ "$tgt"
	run_peer "apply-dir again, no epoch" "find -printf '%T@ %m %s'" "" "find" -- bash -c 'find "$1" -printf "%T@ %m %s\n" | wc -l' _ "$tgt"
	rm -rf "$tgt"
}

# case_apply_iso: apply on minikube's x86_64 ISO (xorriso -as mkisofs with
# isolinux, the gzip rootfs as /boot/initrd) against what it replaces:
# apply on the initrd it holds, plus one cp of the ISO (the image's other
# files copied). The target is a ratio within 1.5.
case_apply_iso() {
	local dir iso out list tree
	dir=$(rootfs_dir "$SIZE_MB")
	list=$dir/packages-file-list.txt
	iso=$dir/minikube.iso
	out=$WORK/ours.iso
	if ! ensure_archive "$SIZE_MB" gzip || ! have xorriso || [[ ! -f /usr/lib/ISOLINUX/isolinux.bin ]]; then
		add_row ROWS "apply-iso" "n/a" "xorriso or isolinux missing" "n/a" "n/a" "-" "-"
		return 0
	fi
	if [[ ! -f $iso ]]; then
		log "== making $iso"
		tree=$WORK/iso-root
		rm -rf "$tree" && mkdir -p "$tree/isolinux" "$tree/boot"
		cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$tree/isolinux/"
		printf 'default 1\nlabel 1\n  kernel /boot/bzImage\n  initrd /boot/initrd\n' >"$tree/isolinux/isolinux.cfg"
		printf 'kernel\n' >"$tree/boot/bzImage"
		cp "$dir/rootfs.cpio.gz" "$tree/boot/initrd"
		env -u SOURCE_DATE_EPOCH xorriso -as mkisofs -J -R -b isolinux/isolinux.bin -no-emul-boot \
			-boot-load-size 4 -boot-info-table -o "$iso.tmp" "$tree" 2>/dev/null || die "xorriso failed"
		mv "$iso.tmp" "$iso" && rm -rf "$tree"
	fi
	run_ours "apply-iso" "$out" -- "$BIN" apply --quiet --rules "$RULES" --packages-file-list "$list" "$iso" "$out"
	PEER_CLEAN=$WORK/peer.iso
	run_peer "apply-iso" "apply on its initrd + cp of the ISO" "" "cp" -- \
		bash -c '"$1" apply --quiet --rules "$2" --packages-file-list "$3" "$4" "$5/peer.cpio.gz" && cp "$6" "$5/peer.iso"' \
		_ "$BIN" "$RULES" "$list" "$dir/rootfs.cpio.gz" "$WORK" "$iso"
	unset PEER_CLEAN
	rm -f "$out" "$WORK/peer.iso" "$WORK/peer.cpio.gz"
}

# ensure_image: set IMAGE to a multi-layer OCI layout of the main tree
# (bench/genimage: its top-level directories in 4 gzip layers, and a layer
# with a whiteout), made unless a complete one from the same generator is
# cached.
IMAGE=
ensure_image() {
	local dir stamp
	ensure_tree "$SIZE_MB"
	dir=$(rootfs_dir "$SIZE_MB")
	IMAGE=$dir/image
	stamp="genimage $(cksum <"$ROOT/bench/genimage/main.go" | cut -d' ' -f1)"
	if [[ -f $IMAGE.stamp && $(cat "$IMAGE.stamp") == "$stamp" && -f $IMAGE/index.json ]]; then
		return 0
	fi
	rm -rf "$IMAGE" "$IMAGE.stamp"
	(cd "$ROOT" && go build -o "$BENCH_DIR/bin/genimage" ./bench/genimage) || die "cannot build bench/genimage"
	log "== making the OCI layout $IMAGE (bench/genimage), this can take a while"
	"$BENCH_DIR/bin/genimage" -tree "$dir/target" -out "$IMAGE" -ref bench -layers 4 >&2 || die "genimage failed"
	printf '%s\n' "$stamp" >"$IMAGE.stamp" || die "cannot write $IMAGE.stamp"
}

# apply on the image, to a layout, against what a user would script with
# umoci: unpack the image, rm what apply strips and moves, repack it (into
# a copy of the layout, made before each run, untimed). apply keeps the
# input's layers as they are and writes one layer of the changes.
case_apply_image() {
	local out=$WORK/image-out bundle=$WORK/image-bundle peer=$WORK/image-peer list strip rootless=
	ensure_image
	list=$(rootfs_dir "$SIZE_MB")/packages-file-list.txt
	if ((EUID != 0)); then
		rootless=--rootless
	fi
	run_ours "apply-image" "$out" -- env SOURCE_DATE_EPOCH="$EPOCH" "$BIN" apply --quiet --rules "$RULES" --packages-file-list "$list" "$IMAGE" "$out"
	strip=$("$BIN" audit --rules "$RULES" --packages-file-list "$list" --report json "$IMAGE" | grep -o '"path": "[^"]*"' | sed 's/"path": "\(.*\)"/\1/' | tr '\n' ' ' || true)
	MEASURE_PREP=(bash -c 'rm -rf "$2" "$3" && cp -a "$1" "$2"' _ "$IMAGE" "$peer" "$bundle")
	run_peer "apply-image" "umoci unpack, rm, umoci repack" "" "umoci" -- \
		bash -c 'umoci unpack $4 --image "$1:bench" "$2" >/dev/null && (cd "$2/rootfs" && rm -rf -- $3) && umoci repack --image "$1:trimmed" "$2"' _ "$peer" "$bundle" "$strip" "$rootless"
	MEASURE_PREP=()
	if [[ -f $out/index.json ]]; then
		NOTES+=("apply-image: input $(du -sb "$IMAGE" | cut -f1) bytes in $(find "$IMAGE/blobs" -type f | wc -l) blobs; the output adds $(($(du -sb "$out" | cut -f1) - $(du -sb "$IMAGE" | cut -f1))) bytes (its new layer, config, manifest); the peer stripped: $strip")
	fi
	rm -rf "$out" "$peer" "$bundle"
}

# image_layers: IMAGE's layer blobs, bottom first (its manifest's order).
image_layers() {
	local man
	man=$(grep -o '"digest": *"sha256:[0-9a-f]*"' "$IMAGE/index.json" | head -n 1 | grep -o '[0-9a-f]\{64\}')
	[[ -n $man ]] || die "no manifest in $IMAGE/index.json"
	grep -o '"layers": *\[.*\]' "$IMAGE/blobs/sha256/$man" | grep -o 'sha256:[0-9a-f]\{64\}' | sed "s#sha256:#$IMAGE/blobs/sha256/#"
}

# case_image_read list|audit: list, or audit (owners from the file list),
# of the image against reading it once: every layer through gzip -dc (one
# core, the floor of one decompression) and pigz -dc.
case_image_read() {
	local mode=$1 case=$1-image list
	local -a layers
	ensure_image
	list=$(rootfs_dir "$SIZE_MB")/packages-file-list.txt
	mapfile -t layers < <(image_layers)
	if [[ $mode == list ]]; then
		run_ours "$case" "" -- "$BIN" list "$IMAGE"
	else
		# audit exits 1 when something offends, as here.
		run_ours "$case" "" -- bash -c '"$@"; (($? <= 1))' _ "$BIN" audit --rules "$RULES" --packages-file-list "$list" "$IMAGE"
	fi
	run_peer "$case" "gzip -dc of every layer" "" "gzip" -- gzip -dc "${layers[@]}"
	run_peer "$case" "pigz -dc of every layer" "" "pigz" -- pigz -dc "${layers[@]}"
}

# Peak RSS of rootfs-trim repack at two input sizes: it should not grow with
# the archive.
case_rss() {
	CASE_RUNS=
	local codec in out small main
	if [[ -z $HAVE_TIME ]]; then
		NOTES+=("rss: skipped: GNU time is not installed (apt-get install -y time)")
		return 0
	fi
	log "== rss (rootfs-trim repack at ${SMALL_MB} and ${SIZE_MB} MiB)"
	local -a codecs cells
	local mb
	read -r -a codecs <<<"$RSS_CODECS"
	for codec in "${codecs[@]}"; do
		if [[ ! -v "EXT[$codec]" ]]; then
			die "BENCH_RSS_CODECS: unknown codec '$codec' (none gzip xz lz4 zstd)"
		fi
		cells=()
		for mb in "$SMALL_MB" "$SIZE_MB"; do
			if [[ $mb == "$SIZE_MB" && -n ${RSS_MAIN[$codec]:-} ]]; then
				cells+=("$(fmt_mib "${RSS_MAIN[$codec]}") ($(size_of "$(rootfs_dir "$mb")/rootfs.cpio${EXT[$codec]}") B in)")
				continue
			fi
			if ! ensure_archive "$mb" "$codec"; then
				cells+=("n/a")
				continue
			fi
			in=$ARCHIVE
			out=$WORK/rss.cpio${EXT[$codec]}
			RUNS_ENV=1 measure "repack $codec @${mb}MiB" "$out" -- "$BIN" repack "$in" "$out"
			rm -f "$out"
			if [[ -n $M_OK ]]; then
				cells+=("$(fmt_mib "$M_KIB") ($(size_of "$in") B in)")
			else
				cells+=("error")
			fi
		done
		small=${cells[0]}
		main=${cells[1]}
		add_row RSS_ROWS "repack ${codec/none/cpio}" "$small" "$main"
	done
}

# ---------------------------------------------------------------------------
# Report.

# table HEADER ROW...: print tab-separated rows as a Markdown table with
# aligned columns ("|" in a cell escaped).
table() {
	printf '%s\n' "$@" | awk -F'\t' '
		{
			for (i = 1; i <= NF; i++) {
				v = $i
				gsub(/\|/, "\\|", v)
				c[NR, i] = v
				if (length(v) > w[i]) w[i] = length(v)
			}
			if (NF > nf) nf = NF
			n = NR
		}
		END {
			for (r = 1; r <= n; r++) {
				line = "|"
				for (i = 1; i <= nf; i++) line = line sprintf(" %-" w[i] "s |", c[r, i])
				print line
				if (r == 1) {
					line = "|"
					for (i = 1; i <= nf; i++) { d = ""; for (k = 0; k < w[i]; k++) d = d "-"; line = line " " d " |" }
					print line
				}
			}
		}'
}

tool_version() {
	if ! have "$1"; then
		printf '%s n/a' "$1"
		return 0
	fi
	case $1 in
	gzip | cpio) "$1" --version 2>&1 | head -n 1 ;;
	pigz | bsdtar) "$1" --version 2>&1 | head -n 1 ;;
	xz) xz --version | head -n 1 ;;
	lz4 | zstd) "$1" --version 2>&1 | head -n 1 | sed 's/^\*\*\* *//; s/ *\*\*\*$//; s/, by .*//' ;;
	esac
}

machine() {
	local cpu
	cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
	printf '# rootfs-trim benchmarks\n\n'
	printf -- '- date: %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	printf -- '- machine: %s CPUs (nproc), %s, %s MiB RAM, Linux %s\n' "$(nproc)" "${cpu:-unknown CPU}" \
		"$(awk '/^MemTotal/ {printf "%d", $2/1024}' /proc/meminfo 2>/dev/null || echo '?')" "$(uname -r)"
	local now busy=
	now=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
	if awk -v a="${LOAD_START%% *}" -v b="${now%% *}" -v n="$(nproc)" 'BEGIN { exit !(a + 0 > n || b + 0 > n) }'; then
		busy=" (above nproc: other work shared the CPUs, times are inflated)"
	fi
	printf -- '- load average (1, 5, 15 min): %s at start, %s now%s\n' "$LOAD_START" "$now" "$busy"
	printf -- '- %s\n' "$(go version)"
	printf -- '- rootfs-trim: %s (%s bytes)\n' "$BIN" "$(size_of "$BIN")"
	if [[ -n $BASE_BIN ]]; then
		printf -- '- base rootfs-trim (BENCH_BASE_BIN): %s (%s bytes), %s; runs interleaved, base first\n' \
			"$BASE_BIN" "$(size_of "$BASE_BIN")" "$("$BASE_BIN" version 2>/dev/null | head -n 1 || echo 'version unknown')"
	fi
	printf -- '- tools: %s; %s; %s; %s; %s; %s; %s\n' "$(tool_version cpio)" "$(tool_version bsdtar)" \
		"$(tool_version gzip)" "$(tool_version pigz)" "$(tool_version xz)" "$(tool_version lz4)" "$(tool_version zstd)"
	printf -- '- runs: %s (minimum time kept)\n' "${RUNS_ENV:-"3, 1 above ${SLOW_S}s"}"
}

inputs() {
	local mb dir f raw
	local -a sizes=("$SIZE_MB")
	if [[ $SMALL_MB != "$SIZE_MB" ]]; then
		sizes+=("$SMALL_MB")
	fi
	for mb in "${sizes[@]}"; do
		dir=$(rootfs_dir "$mb")
		if [[ ! -f $dir/rootfs.cpio ]]; then
			continue
		fi
		raw=$(size_of "$dir/rootfs.cpio")
		printf -- '- %s MiB rootfs (%s): %s regular files, %s directories, %s symlinks; rootfs.cpio %s bytes' \
			"$mb" "$dir" "$(find "$dir/target" -type f | wc -l)" "$(find "$dir/target" -type d | wc -l)" \
			"$(find "$dir/target" -type l | wc -l)" "$raw"
		for f in "$dir"/rootfs.cpio.*; do
			if [[ -f $f && $f != *.tmp ]]; then
				printf '; %s %s (%sx)' "${f##*/}" "$(size_of "$f")" "$(ratio "$raw" "$(size_of "$f")")"
			fi
		done
		printf '\n'
	done
	return 0
}

log "== rootfs-trim benchmarks: ${SIZE_MB} MiB rootfs, cases: ${CASES:-all}"
machine >&2

if want repack-cpio; then
	case_repack_cpio
fi
for codec in none gzip xz lz4 zstd; do
	if want "list-${codec/none/cpio}"; then
		case_list "$codec"
	fi
done
if want apply-dir; then
	case_apply_dir
fi
if want apply-iso; then
	case_apply_iso
fi
for codec in gzip xz xzblocks lz4 zstd; do
	if want "apply-$codec"; then
		case_repack_codec "$codec" apply
	fi
	if want "repack-$codec"; then
		case_repack_codec "$codec"
	fi
done
if want rss; then
	case_rss
fi
if want apply-image; then
	case_apply_image
fi
for mode in list audit; do
	if want "$mode-image"; then
		case_image_read "$mode"
	fi
done
if want list-initrd || want repack-initrd; then
	case_initrd
fi
for codec in gzip zstd; do
	if want "apply-initrd-$codec"; then
		case_initrd_apply "$codec"
	fi
done
for codec in gzip xz xzblocks; do
	if want "audit-dpkg-$codec"; then
		case_dpkg "$codec"
	fi
done
if want apply-dpkg-gzip; then
	case_dpkg gzip apply
fi

{
	machine
	printf '\n## Inputs\n\n'
	inputs
	printf '\n## Time (seconds, fastest run) and size\n\n'
	printf 'ratio = rootfs-trim time / peer time: below 1 rootfs-trim is faster.\n\n'
	table "$(join_tab "case" "rootfs-trim s" "peer" "peer s" "ratio" "out bytes (ours/peer)" "peak RSS MiB (ours)")" "${ROWS[@]}"
	if ((${#BASE_ROWS[@]} > 0)); then
		printf '\n## Against the base binary\n\n'
		printf 'current / base = rootfs-trim time / base time, fastest of the runs, taken in turn (base, current, ...):\n'
		printf 'above 1 the current binary is slower. CPU s: least user + system time of the runs (children\n'
		printf 'included), steadier than wall time on a busy machine; median CPU s: the median of the runs, and\n'
		printf 'current / base of the medians. output: whether both wrote the same bytes.\n\n'
		table "$(join_tab "case" "base s" "rootfs-trim s" "current / base" "runs" "CPU s (base / current)" "median CPU s (base / current, ratio)" "peak RSS MiB (base / current)" "output")" "${BASE_ROWS[@]}"
	fi
	if ((${#RSS_ROWS[@]} > 0)); then
		printf '\n## Peak RSS of rootfs-trim repack by input size\n\n'
		table "$(join_tab "operation" "MiB at ${SMALL_MB} MiB rootfs" "MiB at ${SIZE_MB} MiB rootfs")" "${RSS_ROWS[@]}"
	fi
	if ((${#NOTES[@]} > 0)); then
		printf '\n## Notes\n\n'
		printf -- '- %s\n' "${NOTES[@]}"
	fi
} >"$BENCH_DIR/results.md"

printf '\n'
cat "$BENCH_DIR/results.md"
printf '\n(written to %s)\n' "$BENCH_DIR/results.md"
