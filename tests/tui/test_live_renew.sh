#!/bin/sh
# The live view renews its frame table under a churn of new processes (so names of processes
# long gone do not pile up) and the views carry their zoom, selection and search over by name.
# GALATOP_RENEW_FRAMES lowers the renewal threshold (16384 frames) so that renewals come within
# seconds. Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_renew || exit 0
command -v tmux >/dev/null 2>&1 || { fail live_renew "tmux is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/burn" ] || { fail live_renew "test workloads not built (make tools)"; exit 0; }

trap 'tm kill-server 2>/dev/null; kill $W1 $W2 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
wait_for() { pane_wait rn "$@"; } # TEXT [TENTHS]

"$TOOLS/burn" 60 >/dev/null & W1=$!
"$TOOLS/forkstorm" 40 60 "$TOOLS/shortlived" 2 & W2=$!
tm new-session -d -s rn -x 200 -y 50 \
	"GALATOP_RENEW_FRAMES=300 '$GALATOP' -F 199 2>'$TMP/err'; echo \$? > '$TMP/rc'; sleep 30"
# Narrow to the workload, jump from the top view's hottest function (spin) to the flame view,
# zoom into it, and search for it.
wait_for "samples" 50 && tm send-keys -t rn p "$W1" Enter
wait_for leaf_alpha 50 || fail live_renew_start "$(head -12 "$TMP/screen")"
tm send-keys -t rn Tab
wait_for "Function" 30 && sed -n 4p "$TMP/screen" | grep -q " spin$" ||
	fail live_renew_top "$(head -6 "$TMP/screen")"
tm send-keys -t rn Enter Enter
wait_for "zoom depth" 30 || fail live_renew_zoom "$(head -3 "$TMP/screen")"
depth=$(sed -n 's/.*zoom depth \([0-9]*\).*/\1/p' "$TMP/screen" | head -1)
tm send-keys -t rn / spin Enter
wait_for "Matched" 30 || fail live_renew_search "$(tail -3 "$TMP/screen")"
# The churn adds frames all the time: within ~10 s the table is renewed a few times.
sleep 12
if wait_for "zoom depth $depth" 30 && grep -q "Matched" "$TMP/screen" &&
	grep -q "spin" "$TMP/screen"; then
	pass live_renew_keeps_zoom_and_search
else
	fail live_renew_keeps_zoom_and_search "depth $depth: $(head -3 "$TMP/screen"; tail -3 "$TMP/screen")"
fi
tm send-keys -t rn q
wait_file "$TMP/rc" 50
n=$(sed -n 's/.*frame table renewed \([0-9]*\) times.*/\1/p' "$TMP/err")
if [ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && [ "${n:-0}" -ge 2 ]; then
	pass live_renew_happened
else
	fail live_renew_happened "rc $(cat "$TMP/rc" 2>/dev/null), renewals ${n:-none}: $(cat "$TMP/err")"
fi
