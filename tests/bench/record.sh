#!/bin/sh
# galatop record's own cost at 99 Hz on all CPUs with every CPU busy, next to perf record -g,
# and the throughput a CPU-bound workload loses while galatop records. Needs root.
[ "$(id -u)" = 0 ] || { echo "record: skipped (needs root)"; exit 0; }
SECS=${BENCH_SECS:-30}
T=$BENCH_TMP
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
# cpu_of PID: utime+stime in seconds from /proc/PID/stat (field 14, 15; comm may hold spaces).
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
busy() { # starts one busy loop per CPU; prints their pids
	for i in $(seq "$ncpu"); do "$TOOLS/burn" $((SECS + 5)) >/dev/null & echo $!; done
}
pids=$(busy)
sleep 1
"$GALATOP_OPT" record -F 99 -d "$SECS" -o "$T/rec.folded" 2>/dev/null &
g=$!
sleep 2
gstart=$(cpu_of $g)
sleep $((SECS - 3))
gcpu=$(cpu_of $g)
wait $g
steady=$(echo "$gcpu $gstart $SECS" | awk '{ printf "%.2f", 100 * ($1 - $2) / ($3 - 3) }')
kill $pids 2>/dev/null; wait 2>/dev/null
echo "galatop record -F 99 -a, ${SECS}s, $ncpu busy CPUs: own CPU ${gcpu}s = $(echo "$gcpu $SECS" | awk '{ printf "%.2f", 100 * $1 / $2 }')% of one core including start-up (${gstart}s in the first 2 s: BPF load, kallsyms); steady state $steady% (target <= 1%)"

if command -v perf >/dev/null 2>&1; then
	pids=$(busy)
	sleep 1
	perf record -F 99 -a -g -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
	sleep 0.5
	p=$(pgrep -n -x perf)
	sleep $((SECS - 2))
	pcpu=$(cpu_of "$p")
	wait 2>/dev/null
	kill $pids 2>/dev/null; wait 2>/dev/null
	bytes=$(stat -c %s "$T/perf.data" 2>/dev/null || echo 0)
	echo "perf record -F 99 -a -g, same load: own CPU ${pcpu}s = $(echo "$pcpu $SECS" | awk '{ printf "%.2f", 100 * $1 / $2 }')% of one core, $bytes bytes written"
	echo "ratio galatop/perf CPU: $(echo "$gcpu $pcpu" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }')"
else
	echo "perf: absent, no comparison"
fi

# Throughput loss: rounds of fixed CPU-bound work on every CPU in 15 s, alone and while
# galatop records at 99 Hz.
rounds() { for i in $(seq "$ncpu"); do BURN_SCALE=20 "$TOOLS/burn" 15 -c & done | awk '{ t += $1 } END { print t }'; }
base=$(rounds)
"$GALATOP_OPT" record -F 99 -o "$T/loss.folded" 2>/dev/null &
g=$!
sleep 0.5
with=$(rounds)
kill -INT $g; wait $g
echo "CPU-bound rounds in 15 s on $ncpu CPUs: $base alone, $with while recording: loss $(echo "$base $with" | awk '{ printf "%.2f", 100 * ($1 - $2) / $1 }')% (target <= 0.5%; run-to-run noise is about as large)"
