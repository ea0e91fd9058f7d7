#!/bin/sh
# The live view marks --trigger moments on the status line and the heatmap: burst (4 s asleep, then 3 s in
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
# The heatmap (6) marks the moment under its second, and a range picked from 6 s back to the
# newest second shows the burst in the flame view; `a` shows all time again.
tm send-keys -t lt 6
# The row under the grid holds only the marks (UTF-8 or, without a UTF-8 locale, ASCII glyphs);
# the burst's cells are the darkest shades, or on 256 colors the two reddest of the ramp
# (heat7 #f04a14 and heat8 #cc1010: xterm colors 202 and 160 in tmux's escapes).
if wait_for "trigger fired" 30 && grep -Eq '^ +(▲|\^)' "$TMP/screen" &&
	tm capture-pane -p -e -t lt >"$TMP/screen.sgr" &&
	grep -Eq '[0-9]+ms.*(▓|█|\*|#|48;5;(202|160)m)' "$TMP/screen.sgr"; then
	pass live_heatmap_marks_trigger
else
	fail live_heatmap_marks_trigger "$(cat "$TMP/screen")"
fi
tm send-keys -t lt h h h h h h Enter End Enter
if wait_for "the views show this range" 30 && grep -q "range [0-9.]*-[0-9.]* s (" "$TMP/screen" &&
	wait_for burst_hot 30; then
	pass live_heatmap_range_shows_burst
else
	fail live_heatmap_range_shows_burst "$(head -8 "$TMP/screen")"
fi
tm send-keys -t lt a
wait_for "all time shown" 30 && pass live_all_time || fail live_all_time "$(sed -n 2p "$TMP/screen")"
# What is shown now as the baseline of what comes next, side by side in the flame view.
tm send-keys -t lt b Enter 1 '|'
if wait_for "vs baseline the live data at the time" 30 && wait_for "before (baseline)" 30; then
	pass live_baseline_side_by_side
else
	fail live_baseline_side_by_side "$(head -4 "$TMP/screen")"
fi
tm send-keys -t lt q
wait_file "$TMP/rc" 50
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_trigger_q_exits_0 || fail live_trigger_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
check live_trigger_no_bpf_left no_gt_progs
