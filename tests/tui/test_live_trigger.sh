#!/bin/sh
# The live view marks --trigger moments on the status line: burst (4 s asleep, then 3 s in
# burst_hot on two threads) run as the view's command, its own CPU % as the condition. Waiting
# while it sleeps, one mark at the burst, and its function on the screen. Needs root and BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_trigger || exit 0
command -v tmux >/dev/null 2>&1 || { fail live_trigger "tmux is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/burst" ] || { fail live_trigger "test workloads not built (make tools)"; exit 0; }
wait_for() { pane_wait lt "$@"; } # TEXT [TENTHS]

tm new-session -d -s lt -x 220 -y 50 "'$GALATOP' --trigger 'cpu>10' -- '$TOOLS/burst' 4 3; echo \$? > '$TMP/rc'; sleep 30"
if wait_for "trigger cpu>10: waiting" 40; then pass live_trigger_waiting
else fail live_trigger_waiting "$(sed -n 2p "$TMP/screen")"; fi
if wait_for "trigger cpu>10: 1x, last " 150 && grep -q "cpu=[0-9.]* > 10" "$TMP/screen"; then
	pass live_trigger_marks_burst
else
	fail live_trigger_marks_burst "$(sed -n 2p "$TMP/screen")"
fi
wait_for burst_hot 50 && pass live_trigger_shows_burst_function || fail live_trigger_shows_burst_function "$(head -8 "$TMP/screen")"
tm send-keys -t lt q
wait_file "$TMP/rc" 50
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_trigger_q_exits_0 || fail live_trigger_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
check live_trigger_no_bpf_left no_gt_progs
