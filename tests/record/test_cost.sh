#!/bin/sh
# galatop's own cost as `record` prints it at the end, against ground truth: the run count of
# the thread timeline's system-call program (BPF statistics; --all-syscalls attaches it) lies between the system calls the
# workload made while it was attached and the sys_enter events perf counted on every CPU over a
# window enclosing galatop's run; galatop's CPU time from the session's opening to the summary
# is at least what /proc/PID/stat says it used while the workload ran, and at most what its
# parent shell's `times` says the child used in all (the statistics held on: --probe-stats on).
# Sampled (the default, here 1 s in 2): galatop holds the statistics only in its windows, the
# summary says over how long, and the program's runs over them lie between 1 and what perf
# counted over the whole run. Needs root, BPF and perf.
. "$(dirname "$0")/../lib.sh"
need_root_bpf cost || exit 0
command -v perf >/dev/null 2>&1 || { skip cost "perf is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/tl_work" ] || { fail cost "test workloads not built (make tools)"; exit 0; }

cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
perf stat -x, -e raw_syscalls:sys_enter -a -o "$TMP/perf.csv" -- sleep 60 2>/dev/null &
P=$!
sleep 1
(
	"$GALATOP" record --type threads --all-syscalls --comm tl_work -o "$TMP/tl.jsonl" \
		--probe-stats on 2>"$TMP/err" &
	g=$!
	wait_until 200 grep -qs 'recording' "$TMP/err"
	cpu_ticks $g >"$TMP/c0"
	"$TOOLS/tl_work" syscalls 2 0 >"$TMP/n"
	cpu_ticks $g >"$TMP/c1"
	kill -INT $g
	wait $g
	echo "rc=$?" >"$TMP/rc"
	times >"$TMP/times"
)
sleep 0.5
kill -INT $P; kill $(pgrep -P $P) 2>/dev/null # perf ends with its command
wait $P
grep -q 'rc=0' "$TMP/rc" && pass cost_record_exits_0 || fail cost_record_exits_0 "$(tail -3 "$TMP/err")"

n=$(cat "$TMP/n")
tp=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$TMP/perf.csv")
runs=$(awk '$2 == "gt_tl_sys_enter" { print $NF }' "$TMP/err")
if [ -n "$runs" ] && [ -n "$tp" ] && [ "$runs" -ge "$n" ] && [ "$runs" -le "$tp" ]; then
	pass cost_run_count_between_workload_and_perf
else
	fail cost_run_count_between_workload_and_perf "workload $n <= runs ${runs:-none} <= perf ${tp:-none}?"
fi
# ns per call: the run time over the run count, as the kernel keeps them (a program this small
# runs in well under 10 us a call, and in more than 0).
ns=$(awk '$2 == "gt_tl_sys_enter" { print $3 }' "$TMP/err")
if [ -n "$ns" ] && awk -v v="$ns" 'BEGIN { exit !(v > 0 && v < 10000) }'; then
	pass cost_ns_per_call
else
	fail cost_ns_per_call "${ns:-none}"
fi

# galatop CPU: "galatop CPU P% of one core (C s in T s)" from the session's opening to the
# summary; /proc's ticks while the workload ran (less one tick at each end) are part of it, and
# the shell's children time (user + system) includes it and start-up and exit.
c=$(sed -n 's/.*galatop CPU [0-9.]*% of one core (\([0-9.]*\) s in.*/\1/p' "$TMP/err")
kids=$(sed -n 2p "$TMP/times" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m");
	sub(/s/, "", a[2]); t += a[1] * 60 + a[2] } print t }')
during=$(echo "$(cat "$TMP/c1") $(cat "$TMP/c0") $(getconf CLK_TCK)" | awk '{ print ($1 - $2 - 2) / $3 }')
if [ -n "$c" ] && awk -v c="$c" -v k="$kids" -v d="$during" 'BEGIN { exit !(c > 0 && c <= k + 0.01 && c >= d) }'; then
	pass cost_own_cpu_within_process_time
else
	fail cost_own_cpu_within_process_time "summary ${c:-none} s, while the workload ran >= $during s, process $kids s"
fi
grep -q 'its probes in the kernel' "$TMP/err" && pass cost_probes_line ||
	fail cost_probes_line "$(grep 'galatop CPU' "$TMP/err")"

# Sampled windows: a workload that spans the recording (its system calls are every CPU's, all
# the time), galatop recording 4 s (a full 1 s window lies in any 3 s), its fds looked at every
# 0.1 s: the statistics' fd must come and go.
"$TOOLS/tl_work" syscalls 9 0 >/dev/null &
W=$!
perf stat -x, -e raw_syscalls:sys_enter -a -o "$TMP/perf2.csv" -- sleep 60 2>/dev/null &
P=$!
sleep 0.5
"$GALATOP" record --type threads --all-syscalls --comm tl_work -o "$TMP/tl2.jsonl" \
	--probe-stats 2 2>"$TMP/err2" &
g=$!
wait_until 200 grep -qs 'recording' "$TMP/err2"
on=0 off=0 i=0
while [ $i -lt 40 ]; do
	if ls -l /proc/$g/fd 2>/dev/null | grep -q 'bpf-stats'; then on=$((on + 1)); else off=$((off + 1)); fi
	sleep 0.1; i=$((i + 1))
done
kill -INT $g
wait $g
sleep 0.3
kill -INT $P; kill $(pgrep -P $P) 2>/dev/null # perf ends with its command
wait $P
kill $W 2>/dev/null; wait $W 2>/dev/null
[ $on -gt 0 ] && [ $off -gt 0 ] && pass cost_sampled_stats_come_and_go ||
	fail cost_sampled_stats_come_and_go "statistics fd held in $on of 40 looks, not in $off"
tp=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$TMP/perf2.csv")
runs=$(awk '$2 == "gt_tl_sys_enter" { print $NF }' "$TMP/err2")
if [ -n "$runs" ] && [ -n "$tp" ] && [ "$runs" -ge 1 ] && [ "$runs" -le "$tp" ]; then
	pass cost_sampled_runs_within_perf
else
	fail cost_sampled_runs_within_perf "1 <= runs ${runs:-none} <= perf ${tp:-none}?"
fi
# "sampled (BPF statistics on X s of Y s": at least one window, within the run.
w=$(sed -n 's/.*sampled (BPF statistics on \([0-9.]*\) s of \([0-9.]*\) s.*/\1 \2/p' "$TMP/err2")
if [ -n "$w" ] && echo "$w" | awk '{ exit !($1 >= 1 && $1 <= $2 + 0.05 && $2 >= 4) }'; then
	pass cost_sampled_summary
else
	fail cost_sampled_summary "$(grep 'galatop CPU' "$TMP/err2")"
fi
check cost_no_bpf_left no_gt_progs
