#!/bin/sh
# Benchmark: `perf script -i F | galatop collapse` against `galatop collapse F` on the same
# perf.data files, recorded here: the burn workload with -g, a system-wide frame-pointer
# capture (-a -g) while it runs, and a --call-graph dwarf capture of burn_nofp. Prints both side
# by side (wall and CPU seconds), the ratio and whether it meets the target (>= 10x end to end),
# and whether both give the same folded output. Needs root and perf.
# Figures, not pass/fail. $BENCH_SECONDS sets the length of the captures (10).
. "$(dirname "$0")/env.sh"
secs=${BENCH_SECONDS:-10}
if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "perfdata: needs root and perf (make deps installs linux-perf): skipped"; exit 0
fi
dir=$(mktemp -d "$BENCH_TMP/perfdata.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# run LABEL FILE: `perf script | galatop collapse` against `galatop collapse` on FILE, in
# alternating rounds (the pipe once, the direct read 10 times in a row: per run), both through
# `sh -c` alike; prints each round, then the medians of the rounds' ratios, wall and CPU. CPU
# time is the figure to trust on a shared machine (wall also counts waiting for a CPU).
run() {
	samples=$(perf script -i "$2" -F event 2>/dev/null | wc -l)
	echo "perfdata: $1: $(($(wc -c <"$2") / 1048576)) MiB, $samples samples"
	"$GALATOP_OPT" collapse "$2" >"$dir/direct.folded" 2>/dev/null
	perf script -i "$2" 2>/dev/null | "$GALATOP_OPT" collapse >"$dir/pipe.folded" 2>/dev/null
	cmp -s "$dir/direct.folded" "$dir/pipe.folded" && same="same folded output" ||
		same="folded outputs DIFFER"
	: >"$dir/ratios"
	for r in $(seq "${PERFDATA_ROUNDS:-3}"); do
		timed 1 sh -c "perf script -i '$2' | '$GALATOP_OPT' collapse"
		pw=$wall; pc=$cpu
		timed 10 sh -c "'$GALATOP_OPT' collapse '$2'"
		echo "perfdata: $1, round $r (load $(cut -d' ' -f1 /proc/loadavg)):" \
			"perf script | galatop collapse: ${pw} s wall, ${pc} s CPU;" \
			"galatop collapse perf.data: ${wall} s wall, ${cpu} s CPU"
		awk -v pw="$pw" -v pc="$pc" -v w="$wall" -v c="$cpu" 'BEGIN {
			printf "%.1f %.1f\n", pw / (w > 0 ? w : 0.0005), pc / (c > 0 ? c : 0.0005) }' >>"$dir/ratios"
	done
	rw=$(cut -d' ' -f1 "$dir/ratios" | median)
	rc=$(cut -d' ' -f2 "$dir/ratios" | median)
	echo "perfdata: $1: galatop is ${rc}x faster in CPU, ${rw}x wall (medians); target 10x:" \
		"$(verdict "$rc" 10) (CPU), $(verdict "$rw" 10) (wall); $same"
}

perf record -q -F 997 -g -o "$dir/burn.data" -- "$TOOLS/burn" "$secs" >/dev/null 2>&1 &&
	run "burn -g, ${secs} s" "$dir/burn.data"
perf record -q -F 997 -a -g -o "$dir/sys.data" -- "$TOOLS/burn" "$secs" >/dev/null 2>&1 &&
	run "system-wide -g, ${secs} s" "$dir/sys.data"
perf record -q -F 997 --call-graph dwarf -o "$dir/dwarf.data" "$TOOLS/burn_nofp" "$((secs / 2))" \
	>/dev/null 2>&1 && run "burn_nofp --call-graph dwarf, $((secs / 2)) s" "$dir/dwarf.data"
exit 0
