#!/bin/sh
# What the SLI probes cost the scheduler: `perf bench sched pipe` (two tasks ping-ponging through
# a pipe on one CPU: two context switches, two wakeups and four system calls per message) with
# the probes off, on, and on without the system call hooks (--longsys off), alternating so that
# drift cancels out; galatop's own CPU meanwhile; the off-CPU stack probe as a reference.
# Needs root and perf.
[ "$(id -u)" = 0 ] || { echo "sli: skipped (needs root)"; exit 0; }
command -v perf >/dev/null 2>&1 || { echo "sli: skipped (perf is missing)"; exit 0; }
T=$BENCH_TMP
LOOPS=${BENCH_SLI_LOOPS:-100000}
cpu=$(($(nproc) - 1))
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
pipe() { taskset -c "$cpu" perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/ops\/sec/ { print $1 }'; }
# under ARGS...: ops/sec while `galatop record ARGS` runs (after its start-up); its CPU % to fd 3.
under() {
	"$GALATOP_OPT" record "$@" 2>/dev/null &
	g=$!
	sleep 1.5
	c0=$(cpu_of $g); t0=$(date +%s.%N)
	pipe
	c1=$(cpu_of $g); t1=$(date +%s.%N)
	echo "$c0 $c1 $t0 $t1" | awk '{ printf "%.2f\n", 100 * ($2 - $1) / ($4 - $3) }' >&3
	kill -INT $g; wait $g
}
off=""; on=""; nosys=""
exec 3>"$T/sli-own.txt"
for k in 1 2 3 4; do
	off="$off $(pipe)"
	on="$on $(under --type sli -o "$T/sli.json")"
	nosys="$nosys $(under --type sli --longsys off -o "$T/sli.json" 3>/dev/null)"
done
offcpu=$(under --type offcpu -o "$T/off.folded" 3>/dev/null)
exec 3>&-
own=$(awk '{ s += $1; n++ } END { printf "%.2f", s / n }' "$T/sli-own.txt")
echo "$off | $on | $nosys | $offcpu" | awk -v own="$own" -v loops="$LOOPS" '
	function mean(from, to,   i, s) { s = 0; for (i = from; i < to; i++) s += $i; return s / (to - from) }
	{
		for (i = 1; $i != "|"; i++) { if (!lo || $i < lo) lo = $i; if ($i > hi) hi = $i }
		a = mean(1, i); j = i + 1
		for (i = j; $i != "|"; i++); w = mean(j, i); j = i + 1
		for (i = j; $i != "|"; i++); ns = mean(j, i); oc = $(i + 1)
		printf "perf bench sched pipe -l %d on one CPU, 4 runs each, alternating: %.0f ops/s with the SLI probes off, %.0f with them on (loss %.1f%%, target <= 5%%), %.0f on without the system call hooks (--longsys off: loss %.1f%%); runs off vary by %.1f%% here\n", loops, a, w, 100 * (a - w) / a, ns, 100 * (a - ns) / a, 100 * (hi - lo) / lo
		printf "for reference, the off-CPU stack probe (--type offcpu): %.0f ops/s (loss %.1f%%)\n", oc, 100 * (a - oc) / a
		printf "galatop record --type sli own CPU during the runs: %s%% of one core\n", own
	}'
