#!/bin/sh
# The live view's own CPU at 99 Hz on all CPUs with every CPU busy (target <= 2% of one core),
# next to perf top -F 99 -g over the same time. Both run in a tmux pane. Needs root.
[ "$(id -u)" = 0 ] || { echo "live: skipped (needs root)"; exit 0; }
command -v tmux >/dev/null 2>&1 || { echo "live: skipped (no tmux)"; exit 0; }
SECS=${BENCH_SECS:-30}
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
SOCK=galatop-bench-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
# measure NAME CMD: runs CMD in a pane for SECS seconds, prints its CPU seconds.
measure() {
	tm new-session -d -s b -x 200 -y 50 "$2"
	sleep 2
	pid=$(pgrep -n -f "^$3")
	c0=$(cpu_of "$pid")
	sleep "$SECS"
	c1=$(cpu_of "$pid")
	tm kill-server 2>/dev/null
	echo "$c0 $c1" | awk '{ print $2 - $1 }'
}
pids=""
for i in $(seq "$ncpu"); do "$TOOLS/burn" $((3 * SECS + 20)) >/dev/null & pids="$pids $!"; done

g=$(measure galatop "$GALATOP_OPT -F 99" "$GALATOP_OPT")
echo "galatop live view -F 99, ${SECS}s, $ncpu busy CPUs: $(echo "$g $SECS" | awk '{ printf "%.2f", 100 * $1 / $2 }')% of one core (target <= 2%)"
if command -v perf >/dev/null 2>&1; then
	p=$(measure perf "perf top -F 99 -g" "perf top")
	echo "perf top -F 99 -g, same load: $(echo "$p $SECS" | awk '{ printf "%.2f", 100 * $1 / $2 }')% of one core"
	echo "ratio galatop/perf top: $(echo "$g $p" | awk '{ if ($2 > 0) printf "%.3f", $1 / $2; else print "n/a" }')"
else
	echo "perf: absent, no comparison"
fi
kill $pids 2>/dev/null
wait 2>/dev/null
