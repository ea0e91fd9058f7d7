# Sourced first by every benchmark script: the environment `make bench` (tests/bench/run.sh)
# gives them, so that each one also runs by itself (`sh tests/bench/threads.sh`, from any
# directory): the repository root as working directory, the -O2 binary ($GALATOP_OPT) and the
# test workloads ($TOOLS) built and up to date, the shared fixtures and a scratch directory
# ($BENCH_TMP).
cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}; case $O in /*) ;; *) O="$PWD/$O";; esac
BIN=${BIN:-galatop}; case $BIN in /*) ;; *) BIN="$PWD/$BIN";; esac
: "${GALATOP_OPT:=$BIN}" "${FIXTURES:=$PWD/../shared/fixtures}" "${TOOLS:=$O/tools}"
: "${BENCH_TMP:=$O/bench}"
export O BIN GALATOP_OPT FIXTURES TOOLS BENCH_TMP
mkdir -p "$BENCH_TMP" || exit 1
# Under `make bench` both are built already; by itself, a stale binary would mislead.
if [ -z "${MAKELEVEL:-}" ] && [ -z "${BENCH_BUILT:-}" ]; then
	make --no-print-directory -j2 O="$O" BIN="$BIN" "$BIN" tools >"$BENCH_TMP/build.log" 2>&1 ||
		{ cat "$BENCH_TMP/build.log" >&2; echo "bench: build failed" >&2; exit 1; }
	BENCH_BUILT=1; export BENCH_BUILT
fi

# timed N CMD...: runs CMD N times in a row (output discarded) under one /usr/bin/time, so that
# runs of a few milliseconds still measure to the millisecond; sets $wall and $cpu to the
# seconds of one run (wall clock; user + system), averaged over the N.
timed() {
	_tn=$1; shift
	/usr/bin/time -f '%e %U %S' -o "$BENCH_TMP/timed.$$" sh -c \
		'n=$1; shift; i=0; while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done' \
		sh "$_tn" "$@"
	read -r _tw _tu _ts <"$BENCH_TMP/timed.$$"
	rm -f "$BENCH_TMP/timed.$$"
	wall=$(awk -v w="$_tw" -v n="$_tn" 'BEGIN { printf "%.4f", w / n }')
	cpu=$(awk -v u="$_tu" -v s="$_ts" -v n="$_tn" 'BEGIN { printf "%.4f", (u + s) / n }')
}

# median: the median of the numbers on standard input, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# verdict RATIO TARGET: "met" when RATIO >= TARGET, else "NOT met".
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t) ? "met" : "NOT met" }'
}

# vs_anchor ROUNDS A N TARGET PREFIX ANCHOR_NAME ANCHOR_CMD GALATOP_NAME GALATOP_CMD: the anchor
# (a shell command) against galatop's command in alternating rounds, so that both see the same
# load: each round times the anchor A times and galatop N times in a row (per run); prints each
# round, then the medians of the rounds' ratios (anchor / galatop), CPU and wall, against
# TARGET. CPU time is the figure to trust on a shared machine (wall also counts the waits for
# a CPU).
vs_anchor() {
	_rounds=$1 _aruns=$2 _runs=$3 _target=$4 _prefix=$5 _aname=$6 _acmd=$7 _gname=$8 _gcmd=$9
	: >"$BENCH_TMP/ratios.$$"
	for _r in $(seq "$_rounds"); do
		timed "$_aruns" sh -c "$_acmd"
		_aw=$wall _ac=$cpu
		timed "$_runs" sh -c "$_gcmd"
		echo "$_prefix, round $_r (load $(cut -d' ' -f1 /proc/loadavg)): $_aname: ${_aw} s wall," \
			"${_ac} s CPU; $_gname: ${wall} s wall, ${cpu} s CPU"
		awk -v aw="$_aw" -v ac="$_ac" -v w="$wall" -v c="$cpu" 'BEGIN {
			printf "%.1f %.1f\n", aw / (w > 0 ? w : 0.0005), ac / (c > 0 ? c : 0.0005) }' \
			>>"$BENCH_TMP/ratios.$$"
	done
	_rw=$(cut -d' ' -f1 "$BENCH_TMP/ratios.$$" | median)
	_rc=$(cut -d' ' -f2 "$BENCH_TMP/ratios.$$" | median)
	rm -f "$BENCH_TMP/ratios.$$"
	echo "$_prefix: galatop is ${_rc}x faster in CPU, ${_rw}x wall (medians of $_rounds rounds);" \
		"target ${_target}x: $(verdict "$_rc" "$_target") (CPU), $(verdict "$_rw" "$_target") (wall)"
}
