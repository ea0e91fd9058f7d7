#!/bin/sh
# Java: (1) time from `galatop record -p JVM` starting to the JVM's perf map naming the
# program's method (the attach, the agent's GenerateEvents; galatop names frames from that map
# from then on, re-reading it at most every 200 ms), and that the recording names it; (2) what
# galatop's agent costs the JVM's throughput (target: a loss <= 2%), while galatop records and
# after it exited (the agent stays in the JVM).
#
# This machine has no hardware counters (a VM: no instructions:u, no cycles) and its load, from
# other sessions, changes from second to second, slows a JVM's warm-up by tens of seconds and
# gives each of two busy JVMs anything from a third to all of a CPU; two JVMs of the same
# program also differ by several % (their JIT decisions). So each round runs two JVMs of
# GtFormat at the same time (they see the same load), alike but for the agent, waits until
# both are warm (8 s in, nothing compiled for 2 s, compilers and GC under 5% of the JVM's CPU
# and the program's speed steady for 3 s), measures both for 8 s, lets galatop record one of them for 5 s (which one
# alternates), waits 1 s and measures both again for 8 s. A round's loss compares each JVM
# with itself and the pair with each other: loss = 1 - (after/before of the attached JVM) /
# (after/before of the other). Throughput is the workload's iterations per wall-clock second,
# per CPU second of its thread (what the agent's presence could cost the program's code) and
# per CPU second of the whole JVM (compilers, GC and the agent's own work included), from its
# own lines, each the median over a window's seconds. Per wall-clock second mostly shows how
# the scheduler shared the CPUs. The figures are medians over ROUNDS rounds with their range:
# the median lies within the range with confidence 1 - 2 / 2^ROUNDS (98% for 7 rounds; order
# statistics, no assumption on the noise).
. "$(dirname "$0")/env.sh"
JDK=/usr/lib/jvm/java-17-openjdk-amd64/bin
[ -x "$JDK/javac" ] || { echo "java: openjdk-17 not installed"; exit 0; }
T=$BENCH_TMP/java; mkdir -p "$T"
"$JDK/javac" -d "$T" tests/record/java/GtFormat.java || exit 1
ROUNDS=${JAVA_BENCH_ROUNDS:-7}
now() { date +%s.%N; }
# ms FILE: the milliseconds since the workload started, at its last complete line.
ms() { awk 'NF == 5 { t = $4 } END { print t + 0 }' "$1"; }
# warm FILE: whether the JVM is warm: 8 s in, its threads other than the program's (compilers,
# GC) took less than 5% of its CPU time over the last 3 s, and the program's iterations per CPU
# second of its thread changed by less than 5% between the two halves of those 3 s.
warm() {
	awk 'NF == 5 { t[NR] = $4; c[NR] = $1 + $2; i[NR] = $3; j[NR] = $5; n = NR }
		function rate(a, b) { return (i[b] - i[a]) / (c[b] - c[a]) }
		END { for (a = n; a > 0 && t[n] - t[a] < 3000; a--) ;
			for (m = n; m > a && t[n] - t[m] < 1500; m--) ;
			exit !(t[n] >= 8000 && a > 0 && m > a && j[n] > j[a] &&
			       (c[n] - c[a]) / (j[n] - j[a]) > 0.95 &&
			       rate(a, m) > 0.95 * rate(m, n) && rate(m, n) > 0.95 * rate(a, m)) }' "$1"
}
# quiet W: whether JVM W has compiled nothing for 2 s (its compilation log did not grow; a JVM
# starved of CPU compiles late, and its speed still climbs when its compilers' share is low).
quiet() {
	eval "s=\$size$1; since=\$since$1"
	n=$(stat -c %s "$T/jit$1" 2>/dev/null)
	if [ "$n" != "$s" ]; then
		eval "size$1=$n; since$1=$(now)"
		return 1
	fi
	echo "$since $(now)" | awk '{ exit !($2 - $1 >= 2) }'
}
# rates FILE FROM TO: the workload's iterations per wall-clock s, per CPU s of its thread and
# per CPU s of the JVM between its milliseconds FROM and TO: each the median over the window's
# 1 s pieces (a second in which another session took the CPU's caches or the host stole the
# CPU does not count more than any other), "0 0 0" for a window without one.
rates() {
	awk -v from="$2" -v to="$3" '
		function median(v, n,   a, b, x) {
			for (a = 2; a <= n; a++)
				for (b = a; b > 1 && v[b - 1] > v[b]; b--) { x = v[b]; v[b] = v[b - 1]; v[b - 1] = x }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		NF == 5 && $4 >= from && $4 <= to {
			if (n++ && $4 - t >= 1000 && $1 + $2 > c && $5 > j) {
				k++
				w[k] = ($3 - i) * 1000 / ($4 - t)
				p[k] = ($3 - i) * 1e9 / ($1 + $2 - c)
				q[k] = ($3 - i) * 1e9 / ($5 - j)
			} else if (n > 1)
				next
			t = $4; i = $3; c = $1 + $2; j = $5
		}
		END { if (k) printf "%.0f %.0f %.0f\n", median(w, k), median(p, k), median(q, k); else print "0 0 0" }' "$1"
}
# round N: one round; prints "WALL REC_WALL CPU REC_CPU JVM REC_JVM NAMED WARM" (the losses
# per wall-clock s, per CPU s of the thread, per CPU s of the JVM, each after galatop exited
# and while it recorded, in %, "nan" if not measured; NAMED: seconds to the named map, -1 if
# not named; WARM: seconds both JVMs took to warm up, -1 if they did not within 60 s).
round() {
	for w in 0 1; do
		: >"$T/out$w"
		rm -f "$T/jit$w"*
		"$JDK/java" -XX:+PreserveFramePointer -Xlog:jit+compilation=debug:file="$T/jit$w" \
			-cp "$T" GtFormat 120 >"$T/out$w" &
		eval "pid$w=\$!"
	done
	w=$(($1 % 2)); o=$((1 - w))
	eval "j=\$pid$w"
	t0=$(now)
	size0=; size1=
	while :; do
		quiet 0; q0=$?; quiet 1; q1=$?
		[ $q0 = 0 ] && [ $q1 = 0 ] && warm "$T/out0" && warm "$T/out1" && break
		[ "$(echo "$t0 $(now)" | awk '{ print ($2 - $1 > 60) }')" = 1 ] && break
		sleep 0.2
	done
	settled=$(echo "$t0 $(now)" | awk '{ printf "%.0f", ($2 - $1 > 60) ? -1 : $2 - $1 }')
	# the windows' bounds, in each workload's milliseconds: A for the attached JVM, C the other
	A="$(ms "$T/out$w")"; C="$(ms "$T/out$o")"
	sleep 8
	A="$A $(ms "$T/out$w")"; C="$C $(ms "$T/out$o")"
	# another session's galatop profiling the whole machine attaches its agent to every JVM:
	# a round where either JVM has an agent before this attach, or the other one after, is
	# not counted
	eval "c=\$pid$o"
	grep -q galatop-jvmti /proc/$j/maps /proc/$c/maps && foreign=1 || foreign=0
	rm -f /tmp/perf-$j.map
	t0=$(now)
	"$GALATOP_OPT" record -p $j -d 5 -F 499 -o "$T/first.folded" 2>/dev/null & g=$!
	until grep -q 'GtFormat.main' /tmp/perf-$j.map 2>/dev/null; do
		kill -0 $g 2>/dev/null || break
		sleep 0.01
	done
	t1=$(now)
	A="$A $(ms "$T/out$w")"; C="$C $(ms "$T/out$o")"
	wait $g
	A="$A $(ms "$T/out$w")"; C="$C $(ms "$T/out$o")"
	named=-1
	grep -q 'GtFormat.main' "$T/first.folded" && named=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
	sleep 1
	A="$A $(ms "$T/out$w")"; C="$C $(ms "$T/out$o")"
	sleep 8
	A="$A $(ms "$T/out$w")"; C="$C $(ms "$T/out$o")"
	grep -q galatop-jvmti /proc/$c/maps && foreign=1
	kill $pid0 $pid1; wait $pid0 $pid1 2>/dev/null
	rm -f /tmp/perf-$j.map
	# kept for a look: the workload's lines and the windows
	cp "$T/out$w" "$T/round$1.attached"; cp "$T/out$o" "$T/round$1.other"
	echo "attached: $A; other: $C" >"$T/round$1.windows"
	set -- $A $C
	echo "$(rates "$T/out$w" $1 $2) $(rates "$T/out$o" $7 $8) $(rates "$T/out$w" $5 $6)" \
	     "$(rates "$T/out$o" ${11} ${12}) $(rates "$T/out$w" $3 $4) $(rates "$T/out$o" $9 ${10})" |
	awk -v n=$named -v s=$settled -v f=$foreign '{
		if (f)
			for (k = 1; k <= 18; k++)
				$k = 0
		for (k = 1; k <= 3; k++)
			printf "%s %s ", loss($k, $(6 + k), $(3 + k), $(9 + k)), loss($k, $(12 + k), $(3 + k), $(15 + k))
		print n, s }
	# the attached JVM went from a0 to a1, the other from c0 to c1 ("nan": a window was empty
	# or another galatop attached)
	function loss(a0, a1, c0, c1) { return a0 > 0 && c0 > 0 && c1 > 0 ? sprintf("%.2f", 100 * (1 - (a1 / a0) / (c1 / c0))) : "nan" }'
}
: >"$T/rounds"
load0=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
	round "$r" | tee -a "$T/rounds" | awk -v r=$r '$3 == "nan" && $4 == "nan" {
		printf "  round %d: not counted (another galatop attached to a JVM, or a window was empty); named map after %.2f s\n", r, $7; next }
		{ printf "  round %d (warm after %d s): loss after galatop exited %s%% per wall s, %s%% per CPU s of the thread, %s%% per CPU s of the JVM; while it recorded %s%%, %s%%, %s%%; named map after %.2f s\n", r, $8, $1, $3, $5, $2, $4, $6, $7 }'
done
# median, range and count of a column's numbers
stat() { awk -v c="$1" '$c != "nan" { print $c }' "$T/rounds" | sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s %d", m, v[1], v[NR], NR }'; }
# summary WHAT COL
summary() {
	set -- "$1" $(stat "$2")
	awk -v w="$1" -v m="$2" -v l="$3" -v h="$4" -v n="$5" 'BEGIN {
		printf "  %s: median %.1f%%, range %.1f..%.1f%% (%.0f%% confidence for the median, %d rounds)\n",
			w, m, l, h, 100 * (1 - 2 / 2 ^ n), n }'
}
echo "  the agent's throughput loss after galatop exited (target <= 2%), median of the rounds counted" \
     "(load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end):"
summary "per wall-clock second" 1
summary "per CPU second of the program's thread" 3
summary "per CPU second of the JVM" 5
echo "  while galatop recorded (the attach, GenerateEvents, 499 Hz sampling):"
summary "per wall-clock second" 2
summary "per CPU second of the program's thread" 4
summary "per CPU second of the JVM" 6
set -- $(stat 7)
echo "  start of galatop record to the named Java map: median $1 s ($2..$3)"
