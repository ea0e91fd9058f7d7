#!/bin/sh
# Throughput of `galatop collapse` (the -O2 binary, $GALATOP_OPT) on >= 40 MB of perf script made
# by concatenating the fixtures (MB here are MiB), against the 1 GB/s target; stackcollapse-perf.pl
# is timed on a 4 MB slice when found.
. "$(dirname "$0")/env.sh"
TMP=$(mktemp -d "$BENCH_TMP/collapse.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
MIN=$((40 * 1024 * 1024))

# make_input OUT FILES...: concatenates FILES until OUT holds at least MIN bytes.
make_input() {
	out=$1; shift
	: >"$out"
	while [ "$(wc -c <"$out")" -lt "$MIN" ]; do cat "$@" >>"$out"; done
}

now_ns() { date +%s%N; }

# best_ns CMD...: the fastest of three runs, in nanoseconds (stdout discarded).
best_ns() {
	best=
	for _ in 1 2 3; do
		t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns)
		t=$((t1 - t0))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}

mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1048576 / (ns / 1e9) }'; }

# The perf 6.1 recordings share one event, so every sample is collapsed; the FlameGraph
# fixtures mix events, and most of their samples are parsed then dropped by the event filter.
make_input "$TMP/p61.txt" "$FIXTURES"/perf-script-6.1/*.txt
make_input "$TMP/all.txt" "$FIXTURES"/perf-script-6.1/*.txt "$FIXTURES"/flamegraph-tests/*.txt
cat "$TMP/p61.txt" >/dev/null # warm the page cache
# Per set: 3 rounds of 10 runs in a row (time's CPU figures come in 10 ms steps: 3 runs of
# 40 ms each were read to within 8%); MB/s (MiB) by wall clock and by CPU time (user + system:
# the figure to trust on a shared machine), the median of the rounds; target 1 GB/s, taken as
# 1000 MiB/s.
for set in p61 all; do
	bytes=$(wc -c <"$TMP/$set.txt")
	: >"$TMP/rates"
	for _ in 1 2 3; do
		timed 10 "$GALATOP_OPT" collapse "$TMP/$set.txt"
		awk -v b="$bytes" -v w="$wall" -v c="$cpu" 'BEGIN {
			printf "%.0f %.0f\n", b / 1048576 / (w > 0 ? w : 0.0005), b / 1048576 / (c > 0 ? c : 0.0005) }' >>"$TMP/rates"
	done
	rw=$(cut -d' ' -f1 "$TMP/rates" | median)
	rc=$(cut -d' ' -f2 "$TMP/rates" | median)
	label=$([ $set = p61 ] && echo "perf 6.1 fixtures" || echo "all fixtures")
	echo "collapse: ${rc} MB/s by CPU time, ${rw} MB/s wall ($label, $((bytes / 1048576)) MB," \
		"medians of 3 rounds, load $(cut -d' ' -f1 /proc/loadavg)); target 1000 MB/s:" \
		"$(verdict "$rc" 1000) (CPU), $(verdict "$rw" 1000) (wall)"
done

sc=$(command -v stackcollapse-perf.pl 2>/dev/null)
if [ -z "$sc" ] && [ -n "$FLAMEGRAPH_DIR" ] && [ -f "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
	sc="$FLAMEGRAPH_DIR/stackcollapse-perf.pl"
elif [ -z "$sc" ] && [ -f "$FIXTURES/../anchors/FlameGraph/stackcollapse-perf.pl" ]; then
	sc="$FIXTURES/../anchors/FlameGraph/stackcollapse-perf.pl"
fi
if [ -n "$sc" ] && command -v perl >/dev/null; then
	head -c $((4 * 1024 * 1024)) "$TMP/p61.txt" >"$TMP/slice.txt"
	bytes=$(wc -c <"$TMP/slice.txt")
	t0=$(now_ns); perl "$sc" "$TMP/slice.txt" >/dev/null 2>&1; t1=$(now_ns)
	pl=$((t1 - t0))
	ga=$(best_ns "$GALATOP_OPT" collapse "$TMP/slice.txt")
	echo "stackcollapse-perf.pl: $(mbps "$bytes" "$pl") MB/s on a 4 MB slice;" \
		"galatop is $(awk -v a="$pl" -v b="$ga" 'BEGIN { printf "%.0f", a / b }')x faster"
else
	echo "stackcollapse-perf.pl: absent (not in PATH or \$FLAMEGRAPH_DIR), no comparison"
fi
