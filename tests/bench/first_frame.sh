#!/bin/sh
# Time from starting the live view to its first frame with samples (target <= 1 s), next to
# perf top's first frame (its "Samples:" header) on the same machine. Both run in a tmux pane
# polled every 10 ms; best and median of RUNS starts. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "first_frame: skipped (needs root)"; exit 0; }
command -v tmux >/dev/null 2>&1 || { echo "first_frame: skipped (no tmux)"; exit 0; }
RUNS=${BENCH_RUNS:-5}
SOCK=galatop-ff-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
now_ms() { date +%s%3N; }
# first CMD PATTERN: milliseconds from starting CMD until the pane shows PATTERN (ERE).
first() {
	t0=$(now_ms)
	tm new-session -d -s b -x 160 -y 40 "$1"
	while :; do
		t=$(now_ms)
		tm capture-pane -p -t b 2>/dev/null | grep -Eq "$2" && break
		[ $((t - t0)) -gt 15000 ] && { t=-1; break; }
		sleep 0.01
	done
	tm kill-server 2>/dev/null
	[ "$t" = -1 ] && echo 99999 || echo $((t - t0))
	sleep 0.5
}
# series CMD PATTERN: "best median" of RUNS tries
series() {
	for i in $(seq "$RUNS"); do first "$1" "$2"; done | sort -n |
		awk '{ v[NR] = $1 } END { printf "%d %d", v[1], v[int((NR + 1) / 2)] }'
}
g=$(series "$GALATOP_OPT" 'total [1-9][0-9]* \(')
set -- $g
echo "galatop live view, first frame with samples: best ${1} ms, median ${2} ms of $RUNS (target <= 1000 ms)"
if command -v perf >/dev/null 2>&1; then
	p=$(series "perf top -F 99 -g" 'Samples: *[1-9]')
	set -- $p
	echo "perf top -F 99 -g, first frame with samples: best ${1} ms, median ${2} ms"
else
	echo "perf: absent, no comparison"
fi
