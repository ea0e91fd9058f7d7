#!/bin/sh
# Aliasing: a periodic loop split 50/35/15 over three functions (tests/tools/split, its period 10
# sampling periods of 997 Hz, pinned to one CPU) recorded RUNS times for SECS s at 997 Hz, with
# galatop's randomized sampling and with a fixed period (--fixed-period, as perf samples). Prints
# each run's split against the truth the workload measured (its thread CPU clock per function),
# the largest error, the samples and the load; the target is every run within 2.5 pp. Then the
# cost of randomizing: galatop's own CPU at 997 Hz on every CPU, both ways. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "aliasing: skipped (needs root)"; exit 0; }
RUNS=${ALIAS_RUNS:-10}
SECS=${ALIAS_SECS:-5}
T=$BENCH_TMP
cpu=$(($(nproc) - 1))
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }

# split_run OPTIONS: one recording; prints the truth, the split measured, the largest error, the
# samples (and their rate over the workload's CPU time) and the load average.
split_run() {
	"$GALATOP_OPT" record -F 997 $1 -o "$T/alias.folded" -- "$TOOLS/split" "$SECS" -c "$cpu" \
		>"$T/alias.truth" 2>/dev/null
	load=$(cut -d' ' -f1 /proc/loadavg)
	awk -v ld="$load" -v truth="$(cat "$T/alias.truth")" '
	{ n = $NF; if ($0 ~ /;leaf_a/) a += n; else if ($0 ~ /;leaf_b/) b += n; else if ($0 ~ /;leaf_c/) c += n }
	END {
		split(truth, t, " "); s = a + b + c
		if (!s) { print "no samples"; exit }
		ma = 100 * a / s; mb = 100 * b / s; mc = 100 * c / s
		e = ma - t[2]; if (e < 0) e = -e; m = e
		e = mb - t[3]; if (e < 0) e = -e; if (e > m) m = e
		e = mc - t[4]; if (e < 0) e = -e; if (e > m) m = e
		printf "truth %5.2f %5.2f %5.2f  measured %5.2f %5.2f %5.2f  max error %4.2f pp  %5d samples (%.0f per CPU second)  load %s\n",
		       t[2], t[3], t[4], ma, mb, mc, m, s, s / t[6], ld
	}' "$T/alias.folded"
}

for mode in ${ALIAS_MODES:-randomized fixed}; do
	opt=""; [ $mode = fixed ] && opt=--fixed-period
	echo "$mode period, $RUNS runs of $SECS s at 997 Hz, workload on CPU $cpu:"
	i=0; worst=0; over=0
	while [ $i -lt "$RUNS" ]; do
		line=$(split_run "$opt")
		echo "  $line"
		e=$(echo "$line" | sed -n 's/.*max error \([0-9.]*\) pp.*/\1/p')
		[ -n "$e" ] && worst=$(echo "$worst $e" | awk '{ print ($2 > $1) ? $2 : $1 }')
		[ -n "$e" ] && over=$(echo "$over $e" | awk '{ print $1 + ($2 > 2.5) }')
		i=$((i + 1))
	done
	echo "$mode: worst error $worst pp, $over of $RUNS runs past 2.5 pp (target: none)"
done

# The cost: galatop's own CPU while recording every CPU at 997 Hz for 20 s, both ways, and the
# CPU time of the thread that re-arms the periods (gt-period) alone.
for mode in ${ALIAS_MODES:-randomized fixed}; do
	opt=""; [ $mode = fixed ] && opt=--fixed-period
	"$GALATOP_OPT" record -F 997 $opt -d 20 -o "$T/alias-cost.folded" 2>/dev/null &
	g=$!
	sleep 3
	c0=$(cpu_of $g)
	sleep 15
	c1=$(cpu_of $g)
	th=0
	for t in /proc/$g/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = gt-period ] && th=$(cpu_of "${t#/proc/}")
	done
	wait $g
	echo "$mode period, 997 Hz on $(nproc) CPUs: galatop's own CPU $(echo "$c0 $c1" | awk '{ printf "%.2f", 100 * ($2 - $1) / 15 }')% of one core over 15 s; re-arming thread ${th}s in 18 s (load $(cut -d' ' -f1 /proc/loadavg))"
done
