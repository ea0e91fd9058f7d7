#!/bin/sh
# galatop's own cost in the live view: the status line says its CPU and its probes' kernel time
# (from the BPF statistics' last sampled window, and says so), `$` opens the popup with the
# stack family and its on-CPU program (calls per second near the sampling frequency), any key
# closes it, F1 lists the key. Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_cost || exit 0
command -v tmux >/dev/null 2>&1 || { fail live_cost "tmux is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/burn" ] || { fail live_cost "test workloads not built (make tools)"; exit 0; }
trap 'tm kill-server 2>/dev/null; kill $W 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
wait_for() { pane_wait lc "$@"; } # TEXT [TENTHS]

"$TOOLS/burn" 60 >/dev/null & W=$!
tm new-session -d -s lc -x 200 -y 50 "'$GALATOP' -F 99 -p $W; echo \$? > '$TMP/rc'; sleep 30"
if wait_for "% sampled (\$)" 50; then pass live_cost_status_line
else fail live_cost_status_line "$(sed -n 2p "$TMP/screen")"; fi
sleep 1.5 # an interval with samples in it
tm send-keys -t lc '$'
if wait_for "probes last sampled window" 30 && wait_for "gt_oncpu" 30; then pass live_cost_popup
else fail live_cost_popup "$(head -12 "$TMP/screen")"; fi
# The on-CPU program runs at most at the sampling frequency on each CPU (99 Hz x CPUs, with the
# jitter of a short window), and at least at that frequency on the CPU burn keeps busy (it
# gets 40% of one at the least on a loaded machine).
calls=$(awk '{ for (i = 1; i < NF; i++) if ($i == "gt_oncpu") print $(i + 2) }' "$TMP/screen" | head -1)
want=$((99 * $(nproc)))
if [ -n "$calls" ] && awk -v c="$calls" -v w="$want" 'BEGIN { exit !(c >= 0.4 * 99 && c <= 1.2 * w) }'; then
	pass live_cost_oncpu_calls_per_s
else
	fail live_cost_oncpu_calls_per_s "${calls:-none} calls/s, expected about $want"
fi
tm send-keys -t lc x
closed() { ! pane_has lc "galatop's own cost"; }
wait_until 30 closed && pass live_cost_any_key_closes || fail live_cost_any_key_closes
tm send-keys -t lc F1
wait_for "galatop's own cost: its CPU" 30 && pass live_cost_in_help || fail live_cost_in_help
tm send-keys -t lc x q
wait_file "$TMP/rc" 50
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_cost_q_exits_0 || fail live_cost_q_exits_0
check live_cost_no_bpf_left no_gt_progs
