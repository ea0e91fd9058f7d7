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
# warm MS: waits until the workload has run MS milliseconds (its lines' 4th column).
warm() { until awk -v t="$1" '$4 >= t { ok = 1 } END { exit !ok }' "$T/out"; do sleep 0.05; done; }
# run AGENT: prints "iterations/s iterations/CPU-s seconds-to-the-named-map" (-1: not named;
# empty without the agent) for one 20 s run of GtFormat, warm by its 6th second; throughput
# between its 12th and 19th second; with AGENT=1 galatop records it from its 6th second
# for 3 s (what attaching costs during the warm-up does not count).
run() {
	: >"$T/out"
	"$JDK/java" -XX:+PreserveFramePointer -cp "$T" GtFormat 20 >"$T/out" & j=$!
	warm 6000
	first=
	if [ "$1" = 1 ]; then
		rm -f /tmp/perf-$j.map
		t0=$(now)
		"$GALATOP_OPT" record -p $j -d 3 -F 499 -o "$T/first.folded" 2>/dev/null & g=$!
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
	# per wall-clock second, and per CPU second of the program's thread (its own count of
	# CPU time: what the agent could cost it, without the other sessions' load)
	awk -v f="$first" '$4 >= 12000 && a == "" { a = $3; ta = $4; ca = $1 + $2 }
		$4 <= 19000 { b = $3; tb = $4; cb = $1 + $2 }
		END { printf "%.0f %.0f %s\n", (tb > ta ? (b - a) * 1000 / (tb - ta) : 0),
			(cb > ca ? (b - a) * 1e9 / (cb - ca) : 0), f }' "$T/out"
}
: >"$T/rounds"
for round in $(seq "$ROUNDS"); do
	a=$(run 0); b=$(run 1)
	echo "$a $b" >>"$T/rounds"
	echo "$a $b" | awk -v r=$round '{ printf "  round %d: without the agent %d iterations/s, %d per CPU s; with it %d, %d (loss %.1f%%, %.1f%% per CPU s); named map after %.2f s\n", r, $1, $2, $3, $4, 100 * (1 - $3 / $1), 100 * (1 - $4 / $2), $5 }'
done
# median and spread of a column
stat() { awk -v c="$1" '{ print $c }' "$T/rounds" | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s", m, v[1], v[NR] }'; }
# summary WHAT COL_WITHOUT COL_WITH
summary() {
	set -- "$1" $(stat "$2") $(stat "$3")
	awk -v w="$1" -v a="$2" -v al="$3" -v ah="$4" -v b="$5" -v bl="$6" -v bh="$7" -v n="$ROUNDS" 'BEGIN {
		printf "  %s, median of %d: %d without the agent (%d..%d), %d with it (%d..%d): loss %.1f%% (target <= 2%%; noise, spread/median without: %.1f%%)\n",
			w, n, a, al, ah, b, bl, bh, 100 * (1 - b / a), 100 * (ah - al) / a }'
}
summary "iterations per wall-clock second" 1 3
summary "iterations per CPU second of the program's thread" 2 4
set -- $(stat 5)
echo "  start of galatop record to the named Java map: median $1 s ($2..$3)"
