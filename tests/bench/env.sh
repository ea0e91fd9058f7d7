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
	_n=$1; shift
	/usr/bin/time -f '%e %U %S' -o "$BENCH_TMP/timed.$$" sh -c \
		'n=$1; shift; i=0; while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done' \
		sh "$_n" "$@"
	read -r _w _u _s <"$BENCH_TMP/timed.$$"
	rm -f "$BENCH_TMP/timed.$$"
	wall=$(awk -v w="$_w" -v n="$_n" 'BEGIN { printf "%.4f", w / n }')
	cpu=$(awk -v u="$_u" -v s="$_s" -v n="$_n" 'BEGIN { printf "%.4f", (u + s) / n }')
}

# median: the median of the numbers on standard input, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# verdict RATIO TARGET: "met" when RATIO >= TARGET, else "NOT met".
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t) ? "met" : "NOT met" }'
}
