#!/bin/sh
# galatop record's own cost at 99 Hz on all CPUs with every CPU busy, next to perf record -g,
# and the throughput a CPU-bound workload loses while galatop records. Needs root.
. "$(dirname "$0")/env.sh"
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

# Throughput loss: rounds of fixed CPU-bound work on every CPU, alone and while galatop records
# at 99 Hz (started 2 s before, so its start-up is not counted), alternating 4 times 5 s each so
# that drift cancels out; the spread of the runs alone tells how much is noise on this machine.
rounds() { for i in $(seq "$ncpu"); do BURN_SCALE=20 "$TOOLS/burn" 5 -c & done | awk '{ t += $1 } END { print t }'; }
alone=""; with=""
for k in 1 2 3 4; do
	alone="$alone $(rounds)"
	"$GALATOP_OPT" record -F 99 -o "$T/loss.folded" 2>/dev/null &
	g=$!
	sleep 2
	with="$with $(rounds)"
	kill -INT $g; wait $g
done
echo "$alone" "|" "$with" | awk '{
	for (i = 1; $i != "|"; i++) { a += $i; if (!lo || $i < lo) lo = $i; if ($i > hi) hi = $i }
	for (i++; i <= NF; i++) w += $i
	printf "CPU-bound rounds, 4 x 5 s on %d CPUs: %d alone, %d while recording: loss %.2f%% (target <= 0.5%%; runs alone vary by %.1f%% here)\n", '"$ncpu"', a, w, 100 * (a - w) / a, 100 * (hi - lo) / lo }'
