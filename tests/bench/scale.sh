#!/bin/sh
# The engine at scale, next to perf on the same workloads: (1) short-lived processes named as
# completely as perf names them; (2) a fork+exec storm's cost to galatop (CPU, RSS, drops);
# (3) a page-fault storm: CPU, losses and the split against the truth, with the kernel's event
# sampling (--event-rate) and without. Memory over a long run: make soak. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "scale: skipped (needs root)"; exit 0; }
T=$BENCH_TMP
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_of() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_pct() { echo "$1 $2 $3" | awk '{ printf "%.1f", 100 * ($2 - $1) / $3 }'; } # C0 C1 SECS
share() { # FILE PATTERN WITHIN
	awk -v p="$2" -v w="$3" 'index($0, w) { t += $NF; if (index($0, p)) m += $NF }
		END { if (t) printf "%.1f", 100 * m / t; else print "n/a" }' "$1"
}
has_perf() { command -v perf >/dev/null 2>&1; }
# own FILE PREFIX: share of the samples in the program's own code (short_burst or under main)
# with the whole main;burst_caller;short_burst chain
own() {
	awk -v p="$2" 'index($0, p) && (index($0, ";short_burst") || index($0, ";main;")) {
			t += $NF; if (index($0, ";main;burst_caller;short_burst")) m += $NF }
		END { if (t) printf "%.1f", 100 * m / t; else print "n/a" }' "$1"
}

# 1. 60 runs of a 30 ms CPU-bound program at 997 Hz; perf records the same processes (it runs
# galatop, which runs them).
for build in nofp fp; do
	tool=shortlived; [ $build = nofp ] && tool=shortlived_nofp
	opt=; cg=fp; [ $build = fp ] && opt="--unwind fp"; [ $build = nofp ] && cg=dwarf
	loop="i=0; while [ \$i -lt 60 ]; do '$TOOLS/$tool' 30; i=\$((i+1)); done"
	p=n/a po=n/a
	rm -f "$T/sl.folded"
	if has_perf; then
		# shellcheck disable=SC2086
		perf record -q -F 997 --call-graph $cg -o "$T/sl.data" -- \
			"$GALATOP_OPT" record --group process -F 997 $opt -o "$T/sl.folded" -- sh -c "$loop" >/dev/null 2>&1
		perf script -i "$T/sl.data" --comm "$tool" 2>/dev/null | "$GALATOP_OPT" collapse --pid > "$T/psl.folded"
		p=$(share "$T/psl.folded" ";main;burst_caller;short_burst" "$tool-")
		po=$(own "$T/psl.folded" "$tool-")
		rm -f "$T/sl.data"
	fi
	# shellcheck disable=SC2086
	[ -s "$T/sl.folded" ] || "$GALATOP_OPT" record --group process -F 997 $opt -o "$T/sl.folded" -- sh -c "$loop" 2>/dev/null
	g=$(share "$T/sl.folded" ";main;burst_caller;short_burst" "]$tool;")
	go=$(own "$T/sl.folded" "]$tool;")
	echo "short-lived ($build build, 60 x 30 ms, 997 Hz): galatop${opt:+ $opt} $g% of samples reach the hot function and main ($go% of those in its code); perf --call-graph $cg $p% ($po%) on the same processes (target >= 95%)"
done

# 2. Fork+exec storm, 1000 a second, oncpu,offcpu,mem at 99 Hz, 20 s.
SECS=${BENCH_SECS:-20}
"$TOOLS/forkstorm" 1000 $((SECS + 4)) & fs=$!
sleep 1
n0=$(awk '/^processes/ { print $2 }' /proc/stat)
"$GALATOP_OPT" record --type oncpu,offcpu,mem -F 99 -d "$SECS" -o "$T/storm.folded" 2>"$T/storm.err" & g=$!
sleep 2; c0=$(cpu_of $g); r0=$(rss_of $g)
sleep $((SECS - 3)); c1=$(cpu_of $g); r1=$(rss_of $g)
n1=$(awk '/^processes/ { print $2 }' /proc/stat)
wait $g
kill $fs 2>/dev/null; wait $fs 2>/dev/null
rate=$(( (n1 - n0) / (SECS - 2) ))
drops=$(sed -n 's/.*; \([0-9]*\) dropped.*/\1/p' "$T/storm.err")
echo "fork storm ($rate forks/s), galatop record --type oncpu,offcpu,mem -F 99: own CPU $(cpu_pct "$c0" "$c1" $((SECS - 3)))% of a core (target <= 5%), RSS $((r0 / 1024)) -> $((r1 / 1024)) MB over $((SECS - 3)) s, $drops dropped"
grep -o 'sampled in the kernel.*' "$T/storm.err" | sed 's/^/  /'
if has_perf; then
	"$TOOLS/forkstorm" 1000 $((SECS + 4)) & fs=$!
	sleep 1
	perf record -q -a -g -F 99 -e cpu-clock -e page-faults -e sched:sched_switch -o "$T/storm.data" -- sleep "$SECS" >/dev/null 2>&1 &
	sleep 2; p=$(pgrep -n -x perf); c0=$(cpu_of "$p"); r0=$(rss_of "$p")
	sleep $((SECS - 3)); c1=$(cpu_of "$p"); r1=$(rss_of "$p")
	wait 2>/dev/null
	kill $fs 2>/dev/null; wait $fs 2>/dev/null
	echo "  perf record -a -g -F 99 -e cpu-clock,page-faults,sched:sched_switch (frame pointers, no unwinding, writes $(( $(stat -c %s "$T/storm.data") / 1048576 )) MB): own CPU $(cpu_pct "$c0" "$c1" $((SECS - 3)))% of a core, RSS $((r0 / 1024)) -> $((r1 / 1024)) MB"
	rm -f "$T/storm.data"
fi

# 3. Page-fault storm: one thread, 3 faults in fault_big for 1 in fault_small, oncpu,offcpu,mem
# in DWARF mode, 10 s; with the kernel's sampling (default) and without (--event-rate 0).
for er in 500 0; do
	"$TOOLS/faulter" 14 1 & fp=$!
	sleep 1
	f0=$(awk '{ print $10 }' "/proc/$fp/stat")
	"$GALATOP_OPT" record --type oncpu,offcpu,mem -F 99 --event-rate $er -p $fp -d 10 -o "$T/pf.folded" 2>"$T/pf.err" & g=$!
	sleep 1; c0=$(cpu_of $g); sleep 8; c1=$(cpu_of $g); f1=$(awk '{ print $10 }' "/proc/$fp/stat")
	wait $g; kill $fp 2>/dev/null; wait $fp 2>/dev/null
	b=$(share "$T/pf-mem.folded" ";fault_big;" ";main;fault_")
	drops=$(sed -n 's/.*; \([0-9]*\) dropped.*/\1/p' "$T/pf.err")
	echo "fault storm ($(( (f1 - f0) / 8 )) faults/s), --event-rate $er: own CPU $(cpu_pct "$c0" "$c1" 8)% of a core (target <= 2%), $drops dropped, fault_big $b% (truth 75%)"
done
if has_perf; then
	"$TOOLS/faulter" 14 1 & fp=$!
	sleep 1
	perf record -q -e page-faults -F 999 --call-graph dwarf -p $fp -o "$T/pf.data" -- sleep 10 >/dev/null 2>&1 &
	sleep 1; p=$(pgrep -n -x perf); c0=$(cpu_of "$p"); sleep 8; c1=$(cpu_of "$p")
	wait 2>/dev/null; kill $fp 2>/dev/null; wait $fp 2>/dev/null
	perf script -i "$T/pf.data" 2>/dev/null | "$GALATOP_OPT" collapse > "$T/ppf.folded"
	echo "  perf record -e page-faults -F 999 --call-graph dwarf, same load: own CPU $(cpu_pct "$c0" "$c1" 8)% of a core while recording, fault_big $(share "$T/ppf.folded" ";fault_big;" ";main;fault_")%"
	rm -f "$T/pf.data"
fi
echo "memory over a long run: make soak (SOAK_MIN=60 for the full hour)"
