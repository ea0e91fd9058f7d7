#!/bin/sh
# Benchmark: `perf script -i F | galatop collapse` against `galatop collapse F` on the same
# perf.data files, recorded here: the burn workload with -g, a system-wide frame-pointer
# capture (-a -g) while it runs, and a --call-graph dwarf capture of burn_nofp. Prints both side by side (best
# of 3, wall and CPU seconds) and the ratio; target: >= 10x end to end. Needs root and perf.
# Figures, not pass/fail. $BENCH_SECONDS sets the length of the captures (10).
. "$(dirname "$0")/env.sh"
secs=${BENCH_SECONDS:-10}
if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "perfdata: needs root and perf (make deps installs linux-perf): skipped"; exit 0
fi
dir=$(mktemp -d "$BENCH_TMP/perfdata.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# best NAME CMD: the fastest of 3 runs of the shell command CMD; sets $wall and $cpu (s).
best() {
	wall=; cpu=
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %U %S' -o "$dir/t" sh -c "$2" >/dev/null 2>&1
		read -r w u s <"$dir/t"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
			wall=$w; cpu=$c
		fi
	done
}

run() { # LABEL FILE
	samples=$(perf script -i "$2" -F event 2>/dev/null | wc -l)
	echo "perfdata: $1: $(($(wc -c <"$2") / 1048576)) MiB, $samples samples (load $(cut -d' ' -f1-3 /proc/loadavg))"
	best pipe "perf script -i '$2' | '$GALATOP_OPT' collapse"
	pw=$wall; pc=$cpu
	best direct "'$GALATOP_OPT' collapse '$2'"
	echo "perfdata: $1: perf script | galatop collapse: ${pw} s wall, ${pc} s CPU;" \
		"galatop collapse perf.data: ${wall} s wall, ${cpu} s CPU"
	awk -v pw="$pw" -v pc="$pc" -v w="$wall" -v c="$cpu" 'BEGIN {
		printf "perfdata: %s: galatop is %.1fx faster (wall), %.1fx (CPU); target 10x\n",
			"'"$1"'", pw / (w > 0 ? w : 0.01), pc / (c > 0 ? c : 0.01) }'
}

perf record -q -F 997 -g -o "$dir/burn.data" -- "$TOOLS/burn" "$secs" >/dev/null 2>&1 &&
	run "burn -g, ${secs} s" "$dir/burn.data"
perf record -q -F 997 -a -g -o "$dir/sys.data" -- "$TOOLS/burn" "$secs" >/dev/null 2>&1 &&
	run "system-wide -g, ${secs} s" "$dir/sys.data"
perf record -q -F 997 --call-graph dwarf -o "$dir/dwarf.data" "$TOOLS/burn_nofp" "$((secs / 2))" \
	>/dev/null 2>&1 && run "burn_nofp --call-graph dwarf, $((secs / 2)) s" "$dir/dwarf.data"
exit 0
