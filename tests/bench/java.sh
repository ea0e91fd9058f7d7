#!/bin/sh
# Java: (1) time from `galatop record -p JVM` starting to the JVM's perf map naming the
# program's method (the attach, the agent's GenerateEvents; galatop names frames from that map
# from then on, re-reading it at most every 200 ms), and that the recording names it; (2) the
# JVM's throughput with and without galatop's agent loaded (the agent stays in the JVM after
# galatop exits and writes lines per compiled method), measured after galatop exited. Target
# loss <= 2%. Rounds alternate; medians, with the spread (min..max) as the noise of this
# shared machine. No reference tool attaches to a JVM here.
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
[ -x "$JDK/javac" ] || { echo "java: openjdk-17 not installed"; exit 0; }
T=$BENCH_TMP/java; mkdir -p "$T"
"$JDK/javac" -d "$T" tests/record/java/GtFormat.java || exit 1
ROUNDS=${JAVA_BENCH_ROUNDS:-5}
now() { date +%s.%N; }
# lines N: waits until the workload printed N lines (one each 200 ms).
lines() { while [ "$(wc -l <"$T/out")" -lt "$1" ]; do sleep 0.02; done; }
# run AGENT: prints "iterations/s [seconds to the named map]" for one 12 s run of GtFormat,
# throughput between its 5th and 11th second; with AGENT=1 galatop records it from its 2nd
# second for 1 s.
run() {
	: >"$T/out"
	"$JDK/java" -XX:+PreserveFramePointer -cp "$T" GtFormat 12 >"$T/out" & j=$!
	lines 10
	first=
	if [ "$1" = 1 ]; then
		rm -f /tmp/perf-$j.map
		t0=$(now)
		"$GALATOP_OPT" record -p $j -d 1 -F 499 -o "$T/first.folded" 2>/dev/null & g=$!
		until grep -q 'GtFormat.main' /tmp/perf-$j.map 2>/dev/null; do
			kill -0 $g 2>/dev/null || break
			sleep 0.01
		done
		t1=$(now)
		wait $g
		grep -q 'GtFormat.main' "$T/first.folded" && first=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
		[ -n "$first" ] || first=-1
	fi
	wait $j
	rm -f /tmp/perf-$j.map
	awk -v f="$first" 'NR == 25 { a = $3 } NR == 55 { b = $3 } END { printf "%.0f %s\n", (b - a) / 6, f }' "$T/out"
}
: >"$T/rounds"
for round in $(seq "$ROUNDS"); do
	a=$(run 0); b=$(run 1)
	echo "$a $b" >>"$T/rounds"
	echo "$a $b" | awk -v r=$round '{ printf "  round %d: %d iterations/s without the agent, %d with it (%.1f%% loss); named map after %.2f s\n", r, $1, $2, 100 * (1 - $2 / $1), $3 }'
done
# median and spread of a column
stat() { awk -v c="$1" '{ print $c }' "$T/rounds" | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s", m, v[1], v[NR] }'; }
set -- $(stat 1); wo=$1; wo_lo=$2; wo_hi=$3
set -- $(stat 2); wi=$1; wi_lo=$2; wi_hi=$3
set -- $(stat 3); fm=$1; f_lo=$2; f_hi=$3
awk -v a="$wo" -v al="$wo_lo" -v ah="$wo_hi" -v b="$wi" -v bl="$wi_lo" -v bh="$wi_hi" -v n="$ROUNDS" 'BEGIN {
	printf "  throughput, median of %d: %d iterations/s without the agent (%d..%d), %d with it (%d..%d): loss %.1f%% (target <= 2%%; noise %.1f%%)\n",
		n, a, al, ah, b, bl, bh, 100 * (1 - b / a), 100 * (ah - al) / a }'
echo "  start of galatop record to the named Java map: median $fm s ($f_lo..$f_hi)"
