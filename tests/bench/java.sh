#!/bin/sh
# Java: time from `galatop record -p JVM` starting to a recording with named Java frames (the
# attach, the agent's GenerateEvents and one 1 s recording), and the JVM's throughput with and
# without galatop's agent loaded (the agent stays in the JVM after galatop exits; it costs a
# line per compiled method). Target loss <= 2%. No reference tool attaches to a JVM here.
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
[ -x "$JDK/javac" ] || { echo "java: openjdk-17 not installed"; exit 0; }
T=$BENCH_TMP/java; mkdir -p "$T"
"$JDK/javac" -d "$T" tests/record/java/GtFormat.java || exit 1
now() { date +%s.%N; }
# run AGENT: iterations per second of GtFormat between its 3rd and 9th second; with AGENT=1
# galatop attaches at the 2nd second.
run() {
	: >"$T/out"
	"$JDK/java" -XX:+PreserveFramePointer -cp "$T" GtFormat 10 >"$T/out" & j=$!
	while [ "$(wc -l <"$T/out")" -lt 10 ]; do sleep 0.05; done
	if [ "$1" = 1 ]; then
		t0=$(now)
		"$GALATOP_OPT" record -p $j -d 1 -F 499 -o "$T/first.folded" 2>/dev/null
		t1=$(now)
		named=$(grep -c 'GtFormat.main' "$T/first.folded")
		echo "  start to named Java frames: $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 - 1 }') s beyond the 1 s recording ($named stacks with GtFormat.main)"
	fi
	wait $j
	rm -f /tmp/perf-$j.map
	awk 'NR == 15 { a = $3 } NR == 45 { b = $3 } END { printf "%.0f\n", (b - a) / 6 }' "$T/out"
}
for round in 1 2; do
	a=$(run 0); b=$(run 1)
	echo "$b" | head -1
	b=$(echo "$b" | tail -1)
	echo "  round $round: $a iterations/s without the agent, $b with it: loss $(echo "$a $b" | awk '{ printf "%.1f", 100 * (1 - $2 / $1) }')%"
done
