#!/bin/sh
# The live view's own CPU at 99 Hz on all CPUs (target <= 2% of one core), side by side: on-CPU
# only (what `sudo galatop` attaches at start) and on-CPU + off-CPU + page faults (what it runs
# once `o` has attached the other two, or with --type oncpu,offcpu,mem), on an idle box and on a
# busy one (every CPU burning, a thread napping 1 ms at a time, a page-faulting process); then
# perf top -F 99 -g on the busy box. Each runs in a tmux pane for BENCH_SECS. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "live: skipped (needs root)"; exit 0; }
command -v tmux >/dev/null 2>&1 || { echo "live: skipped (no tmux)"; exit 0; }
SECS=${BENCH_SECS:-30}
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
SOCK=galatop-bench-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
pct() { echo "$1 $SECS" | awk '{ printf "%.2f", 100 * $1 / $2 }'; }
# measure CMD PATTERN: runs CMD in a pane for SECS seconds, prints its CPU seconds.
measure() {
	tm new-session -d -s b -x 200 -y 50 "$1"
	sleep 2
	pid=$(pgrep -n -f "^$2")
	c0=$(cpu_of "$pid")
	sleep "$SECS"
	c1=$(cpu_of "$pid")
	tm kill-server 2>/dev/null
	echo "$c0 $c1" | awk '{ print $2 - $1 }'
}
all="--type oncpu,offcpu,mem"
i1=$(measure "$GALATOP_OPT -F 99" "$GALATOP_OPT")
i3=$(measure "$GALATOP_OPT -F 99 $all" "$GALATOP_OPT")

pids=""
for i in $(seq "$ncpu"); do "$TOOLS/burn" $((4 * SECS + 30)) >/dev/null & pids="$pids $!"; done
"$TOOLS/tl_work" sleep $((4000 * SECS + 30000)) 1 >/dev/null & pids="$pids $!"
"$TOOLS/faulter" $((4 * SECS + 30)) 5 >/dev/null & pids="$pids $!"
b1=$(measure "$GALATOP_OPT -F 99" "$GALATOP_OPT")
b3=$(measure "$GALATOP_OPT -F 99 $all" "$GALATOP_OPT")

echo "galatop live view -F 99, ${SECS}s each, % of one core (target <= 2%):"
printf '  %-28s %8s %8s\n' "" idle busy
printf '  %-28s %7s%% %7s%%\n' "oncpu (the default)" "$(pct "$i1")" "$(pct "$b1")"
printf '  %-28s %7s%% %7s%%\n' "oncpu + offcpu + mem" "$(pct "$i3")" "$(pct "$b3")"
if command -v perf >/dev/null 2>&1; then
	p=$(measure "perf top -F 99 -g" "perf top")
	echo "perf top -F 99 -g, busy: $(pct "$p")% of one core"
	echo "ratio galatop oncpu/perf top, busy: $(echo "$b1 $p" | awk '{ if ($2 > 0) printf "%.3f", $1 / $2; else print "n/a" }')"
else
	echo "perf: absent, no comparison"
fi
kill $pids 2>/dev/null
wait 2>/dev/null
