#!/bin/sh
# The live view's CPU filter (`u`): burn pinned to CPU 1 and sli_work (another hot function) to
# CPU 0. Started with --cpu 1, the view holds only burn and says so; `u` goes to every CPU,
# then CPU 0, where only sli_work is shown. What is shown is checked in files saved with `s`.
# Needs root, BPF and 2 CPUs.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live_cpu || exit 0
command -v tmux >/dev/null 2>&1 || { fail live_cpu "tmux is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/burn" ] || { fail live_cpu "test workloads not built (make tools)"; exit 0; }
[ "$(nproc)" -ge 2 ] || { skip live_cpu "needs 2 CPUs"; exit 0; }
trap 'tm kill-server 2>/dev/null; kill $W1 $W0 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
wait_for() { pane_wait lc "$@"; } # TEXT [TENTHS]

taskset -c 1 "$TOOLS/burn" 60 >/dev/null & W1=$!
taskset -c 0 "$TOOLS/sli_work" spin 60 >/dev/null & W0=$!
wait_until 30 grep -q sli_work "/proc/$W0/comm"
B="[$W1]burn" S="[$W0]sli_work"
# count FILE ROOT: samples under the root frame ROOT.
count() { awk -v r="$2" '{ split($1, f, ";"); if (f[1] == r) n += $NF } END { print n + 0 }' "$1"; }
# save NAME: `s` writes what is shown to $TMP/NAME.folded.
save() {
	tm send-keys -t lc s C-u "$TMP/$1.folded" Enter
	wait_file "$TMP/$1.folded" 50
}
# enough FILE ROOT: waits until a save of what is shown has 20 samples of ROOT.
enough() { rm -f "$TMP/$1.folded"; save "$1"; [ "$(count "$TMP/$1.folded" "$2")" -ge 20 ]; }

tm new-session -d -s lc -x 200 -y 50 "'$GALATOP' --cpu 1 --group process -F 199; echo \$? > '$TMP/rc'; sleep 30"
if wait_for "CPU 1 since" 50; then pass live_cpu_status_shows_cpu
else fail live_cpu_status_shows_cpu "$(head -3 "$TMP/screen")"; fi
wait_until 100 enough c1 "$B"
b=$(count "$TMP/c1.folded" "$B"); s=$(count "$TMP/c1.folded" "$S")
if [ "$b" -ge 20 ] && [ "$s" = 0 ]; then pass live_cpu_1_only_burn
else fail live_cpu_1_only_burn "burn $b sli_work $s"; fi

tm send-keys -t lc u
wait_for "all CPUs since" 30 && pass live_cpu_u_all || fail live_cpu_u_all "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"
tm send-keys -t lc u
if wait_for "CPU 0 since" 30; then pass live_cpu_u_cpu0
else fail live_cpu_u_cpu0 "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"; fi
wait_until 100 enough c0 "$S"
b=$(count "$TMP/c0.folded" "$B"); s=$(count "$TMP/c0.folded" "$S")
if [ "$s" -ge 20 ] && [ "$b" = 0 ]; then pass live_cpu_0_only_sli_work
else fail live_cpu_0_only_sli_work "burn $b sli_work $s"; fi
# A snapshot says which CPUs it holds.
tm send-keys -t lc s C-u "$TMP/c0.gtop" Enter
wait_file "$TMP/c0.gtop" 50
zcat "$TMP/c0.gtop" 2>/dev/null | grep -q '"cpus":"CPU 0"' && pass live_cpu_snapshot_says_cpu ||
	fail live_cpu_snapshot_says_cpu "$(zcat "$TMP/c0.gtop" 2>/dev/null | head -c 300)"

tm send-keys -t lc q
wait_file "$TMP/rc" 50
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_cpu_q_exits_0 || fail live_cpu_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
check live_cpu_no_bpf_left no_gt_progs

# A file has no CPU filter to change: the key says so.
out=$("$GALATOP" view --dump --size 120x30 --keys u "$HERE/basic.folded" 2>&1)
echo "$out" | grep -q "CPU filter applies to live data" && pass view_cpu_key_file ||
	fail view_cpu_key_file "$(echo "$out" | tail -3)"
