#!/bin/sh
# DWARF unwinding cost: unwound user stacks per second of unwinder time (from record's own
# "unwound N user stacks (X us each)" line), and galatop record's own CPU at 99 Hz on all CPUs
# in dwarf mode with every CPU busy in no-frame-pointer code, next to perf record
# --call-graph dwarf -F 99 -a (CPU and bytes written) over the same time. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "unwind: skipped (needs root)"; exit 0; }
SECS=${BENCH_SECS:-20}
T=$BENCH_TMP
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
pct() { echo "$1 $2" | awk '{ printf "%.2f", 100 * $1 / $2 }'; }
busy() { # one no-frame-pointer workload per CPU, libz and the 60/30/10 burn alternately
	for i in $(seq "$ncpu"); do
		if [ $((i % 2)) = 1 ]; then "$TOOLS/zlib_nofp" $((SECS + 5)) >/dev/null & else "$TOOLS/burn_nofp" $((SECS + 5)) >/dev/null & fi
		echo $!
	done
}

# 1. Unwinder throughput: many samples of a few processes at a high rate.
pids=$(busy)
sleep 1
"$GALATOP_OPT" record -F 2999 -d 8 -o "$T/uw-rate.folded" 2>"$T/uw-rate.err"
kill $pids 2>/dev/null; wait 2>/dev/null
us=$(sed -n 's/.*unwound [0-9]* user stacks (\([0-9.]*\) us each.*/\1/p' "$T/uw-rate.err")
n=$(sed -n 's/.*unwound \([0-9]*\) user stacks.*/\1/p' "$T/uw-rate.err")
echo "unwinder: $n stacks at 2999 Hz x $ncpu CPUs in 8 s, ${us} us each = $(echo "$us" | awk '{ if ($1 > 0) printf "%.0f", 1e6 / $1; else print "n/a" }') stacks/s per core (target >= 20000)"
grep -o '[0-9]* \[truncated\].*' "$T/uw-rate.err" | sed 's/^/  /'

# 2. record's own CPU at 99 Hz, dwarf mode, all CPUs busy.
pids=$(busy)
sleep 1
"$GALATOP_OPT" record --unwind dwarf -F 99 -d "$SECS" -o "$T/uw.folded" 2>"$T/uw.err" &
g=$!
sleep $((SECS - 1))
gcpu=$(cpu_of $g)
wait $g
kill $pids 2>/dev/null; wait 2>/dev/null
echo "galatop record --unwind dwarf -F 99 -a, ${SECS}s, $ncpu busy CPUs: own CPU ${gcpu}s = $(pct "$gcpu" "$SECS")% of one core (target <= 5%), $(stat -c %s "$T/uw.folded") bytes of folded output"

if command -v perf >/dev/null 2>&1; then
	pids=$(busy)
	sleep 1
	perf record -F 99 -a --call-graph dwarf -o "$T/perf-dwarf.data" -- sleep "$SECS" >/dev/null 2>&1 &
	sleep 0.5
	p=$(pgrep -n -x perf)
	sleep $((SECS - 2))
	pcpu=$(cpu_of "$p")
	wait 2>/dev/null
	kill $pids 2>/dev/null; wait 2>/dev/null
	bytes=$(stat -c %s "$T/perf-dwarf.data" 2>/dev/null || echo 0)
	echo "perf record --call-graph dwarf -F 99 -a, same load: own CPU ${pcpu}s = $(pct "$pcpu" "$SECS")% of one core while recording, $bytes bytes written"
	s0=$(date +%s.%N)
	perf script -i "$T/perf-dwarf.data" 2>/dev/null | "$GALATOP_OPT" collapse > "$T/perf-dwarf.folded"
	s1=$(date +%s.%N)
	echo "  + perf script (its offline unwinding) afterwards: $(echo "$s0 $s1" | awk '{ printf "%.1f", $2 - $1 }') s"
	echo "ratio galatop/perf CPU while recording: $(echo "$gcpu $pcpu" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }')"
else
	echo "perf: absent, no comparison"
fi
