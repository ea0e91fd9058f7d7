#!/bin/sh
# The live view (`sudo galatop`) in a real terminal (tmux), with workloads of known behaviour:
# the workload's function shows within 3 s, keys act on live data, q gives the shell back with
# exit 0 and no BPF program left, hostile process names render harmlessly. Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes"
need_root_bpf live || exit 0
command -v tmux >/dev/null 2>&1 || { fail live "tmux is not installed (make deps)"; exit 0; }
[ -x "$TOOLS/burn" ] || { fail live "test workloads not built (make tools)"; exit 0; }

trap 'tm kill-server 2>/dev/null; kill $W1 $W2 $W3 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
wait_for() { pane_wait lv "$@"; } # TEXT [TENTHS]

# A workload, and a process whose name carries terminal escapes (an OSC title change and a
# clear screen) and invalid UTF-8.
"$TOOLS/burn" 60 >/dev/null & W1=$!
evil=$(printf '\033]2;pwned\007\033[2J\377x')
cp "$TOOLS/burn" "$TMP/$evil"
"$TMP/$evil" 60 >/dev/null & W2=$!

# The view targets the two workloads (-p): on a busy machine every other process would narrow
# their columns until leaf_alpha and [PID]burn no longer fit. The SIGTERM case below runs
# system-wide.
tm new-session -d -s lv -x 200 -y 50 "'$GALATOP' -F 199 -p $W1 -p $W2; echo \$? > '$TMP/rc'; sleep 30"
t0=$(date +%s.%N)
if wait_for leaf_alpha 30; then pass live_shows_workload_within_3s
else fail live_shows_workload_within_3s "$(head -12 "$TMP/screen")"; fi
wait_for "199 Hz" 20 && pass live_status_shows_hz || fail live_status_shows_hz "$(head -3 "$TMP/screen")"
# The default roots merge processes by name (--group command); H cycles to per thread, then
# per process ([PID]comm) for the keys below.
wait_for "roots: command" 20 && pass live_default_roots_command ||
	fail live_default_roots_command "$(head -3 "$TMP/screen")"
tm send-keys -t lv H
wait_for "roots: none (every" 20 && tm send-keys -t lv H && wait_for "roots: per thread" 20 &&
	tm send-keys -t lv H && wait_for "roots: per process" 20 && pass live_H_cycles_groups ||
	fail live_H_cycles_groups "$(sed -n 2p "$TMP/screen"; tail -2 "$TMP/screen")"
wait_for "[$W1]burn" 20 && pass live_process_root || fail live_process_root

# Saves hold what the view showed: frozen, unfiltered and accumulating (whole samples; decay
# makes fractions that fold rounds per stack), the SVG's root and the snapshot read back
# (galatop fold) have the total of the header.
tm send-keys -t lv z
wait_for FROZEN 30
shown=$(shown_total "$TMP/screen")
tm send-keys -t lv s C-u "$TMP/shown.gtop" Enter
wait_file "$TMP/shown.gtop" 50
tm send-keys -t lv s C-u "$TMP/shown.svg" Enter
wait_file "$TMP/shown.svg" 50
tm send-keys -t lv z
svgt=$(svg_total "$TMP/shown.svg") gtopt=$(gtop_total "$TMP/shown.gtop")
if [ -n "$shown" ] && [ "$shown" -gt 0 ] && [ "$svgt" = "$shown" ] && [ "$gtopt" = "$shown" ]; then
	pass live_saves_hold_shown_total
else
	fail live_saves_hold_shown_total "shown '$shown', SVG root '$svgt', snapshot '$gtopt'"
fi

# Hostile name: no raw control bytes on the screen and the pane title was not changed.
tm capture-pane -p -t lv >"$TMP/raw"
if ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/raw" &&
	[ "$(tm display -p -t lv '#{pane_title}')" != pwned ]; then
	pass live_hostile_comm_harmless
else
	fail live_hostile_comm_harmless "title=$(tm display -p -t lv '#{pane_title}')"
fi

# Keys on live data: search, freeze with a pending count, update mode, top view.
tm send-keys -t lv / leaf_beta Enter
wait_for "Matched" 30 && pass live_search || fail live_search "$(tail -3 "$TMP/screen")"
tm send-keys -t lv Escape z
wait_for "FROZEN" 30 && wait_for "pending" 30 && pass live_freeze_counts_pending || fail live_freeze_counts_pending "$(head -2 "$TMP/screen")"
tm send-keys -t lv z m
wait_for "mode: window" 30 && pass live_update_mode_window || fail live_update_mode_window "$(head -2 "$TMP/screen")"
tm send-keys -t lv m
wait_for "mode: decay" 30 && pass live_update_mode_decay || fail live_update_mode_decay "$(head -2 "$TMP/screen")"
# The pid prompt narrows to the workload (whatever else runs), then the top view lists its
# hottest function first.
tm send-keys -t lv p "$W1" Enter Tab
if wait_for "pid=$W1" 30; then
	wait_for "Function" 10 && sed -n 4p "$TMP/screen" | grep -q " spin$" && pass live_top_view ||
		fail live_top_view "$(head -6 "$TMP/screen")"
else
	fail live_top_view "pid filter not shown: $(head -3 "$TMP/screen")"
fi

# s: a snapshot of the live data with its metadata, which `galatop view` reopens without root.
tm send-keys -t lv p C-u Enter 1 s C-u "$TMP/snap.gtop" Enter
wait_file "$TMP/snap.gtop" 50
if zcat "$TMP/snap.gtop" 2>/dev/null | grep -q "\"host\":\"$(hostname)\"" &&
	zcat "$TMP/snap.gtop" | grep -q "\"kernel\":\"$(uname -r)\"" &&
	zcat "$TMP/snap.gtop" | grep -q '"hz":199' &&
	zcat "$TMP/snap.gtop" | grep -q '"start":1[0-9]*'; then
	pass live_snapshot_metadata
else
	fail live_snapshot_metadata "$(zcat "$TMP/snap.gtop" 2>/dev/null | head -c 400)"
fi
# Reopened and narrowed to the workload (whatever else the machine ran), its stacks are there.
if "$GALATOP" view --dump --size 200x50 --keys "p$W1<Enter>" "$TMP/snap.gtop" 2>&1 | grep -q "leaf_alpha"; then
	pass live_snapshot_reopens
else
	fail live_snapshot_reopens "$("$GALATOP" view --dump --size 200x50 --keys "p$W1<Enter>" "$TMP/snap.gtop" 2>&1 | head -20)"
fi

# q: exit 0, the shell gets its terminal back, no BPF program is left.
tm send-keys -t lv q
wait_file "$TMP/rc" 50
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_q_exits_0 || fail live_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
check live_no_bpf_left no_gt_progs

# SIGTERM while live: terminal restored by the handler, probes gone with the process.
rm -f "$TMP/rc"
tm kill-session -t lv 2>/dev/null
tm new-session -d -s lv2 -x 120 -y 40 "'$GALATOP'; stty -a > '$TMP/stty'; echo done > '$TMP/rc'; sleep 30"
pane_wait lv2 "samples" 40
pkill -TERM -f "^$GALATOP\$"
wait_file "$TMP/rc" 50
if tty_sane; then pass live_sigterm_restores_terminal
else fail live_sigterm_restores_terminal; fi
check live_no_bpf_left_after_sigterm no_gt_progs

# o: the off-CPU and page-fault probes, loaded at start, attach at the first `o` that reaches
# them, which the status line says; a thread sleeping 300 ms in sleep_long and 100 ms in
# sleep_short shows both, sleep_long the wider, within a few seconds; o goes on to mem, growth
# and back. `p` narrows the view, not the kernel: on a busy machine (a test suite on 2 CPUs)
# the off-CPU probe would sample the machine's context switches past --event-rate (1 in 43
# was seen), leaving a handful of the sleeper's naps, whose split is then chance:
# --event-rate 0 takes every one.
if [ -x "$TOOLS/sleeper" ]; then
	"$TOOLS/sleeper" 60 >/dev/null & W3=$!
	rm -f "$TMP/rc"
	tm kill-session -t lv2 2>/dev/null
	tm new-session -d -s lv3 -x 200 -y 50 "'$GALATOP' --event-rate 0; echo \$? > '$TMP/rc'; sleep 30"
	# The first frame with samples: the view takes keys again after its first update.
	has_samples() { pane_has lv3 samples && grep -Eq 'live  [1-9][0-9]* samples' "$TMP/screen"; }
	wait_until 100 has_samples
	grep -q "^oncpu  " "$TMP/screen" && pass live_starts_oncpu_only ||
		fail live_starts_oncpu_only "$(sed -n 2p "$TMP/screen")"
	tm send-keys -t lv3 o
	if pane_wait lv3 "profile: offcpu (probe attached now" 60 && grep -q "^oncpu offcpu " "$TMP/screen"; then
		pass live_o_attaches_offcpu
	else
		fail live_o_attaches_offcpu "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"
	fi
	tm send-keys -t lv3 p "$W3" Enter
	if pane_wait lv3 sleep_short 60 && pane_wait lv3 sleep_long 20; then
		pass live_offcpu_shows_sleeper
		tm send-keys -t lv3 2
		pane_wait lv3 " sleep_long" 30
		sleep 1 # another update or two
		tm capture-pane -p -t lv3 >"$TMP/top"
		pct() { awk -v f=" $1\$" '$0 ~ f { sub(/%/, "", $2); print $2; exit }' "$TMP/top"; }
		long=$(pct sleep_long) short=$(pct sleep_short)
		if [ -n "$long" ] && [ -n "$short" ] && awk -v l="$long" -v s="$short" 'BEGIN { exit !(l > s) }'; then
			pass live_offcpu_sleep_long_wider
		else
			fail live_offcpu_sleep_long_wider "sleep_long $long% sleep_short $short%: $(head -12 "$TMP/top")"
		fi
		tm send-keys -t lv3 1
	else
		fail live_offcpu_shows_sleeper "$(head -12 "$TMP/screen")"
	fi
	tm send-keys -t lv3 o
	pane_wait lv3 "profile: mem (probe attached now" 60 && pass live_o_attaches_mem ||
		fail live_o_attaches_mem "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"
	tm send-keys -t lv3 o
	pane_wait lv3 "profile: growth (probe attached now" 60 && pass live_o_attaches_growth ||
		fail live_o_attaches_growth "$(sed -n 2p "$TMP/screen"; tail -1 "$TMP/screen")"
	tm send-keys -t lv3 o
	pane_wait lv3 "profile: oncpu" 60 && pass live_o_cycles_back ||
		fail live_o_cycles_back "$(sed -n 2p "$TMP/screen")"
	tm send-keys -t lv3 q
	wait_file "$TMP/rc" 50
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_o_q_exits_0 || fail live_o_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
	check live_o_no_bpf_left no_gt_progs
	kill $W3 2>/dev/null
else
	for c in live_starts_oncpu_only live_o_attaches_offcpu live_offcpu_shows_sleeper \
		live_offcpu_sleep_long_wider live_o_attaches_mem live_o_attaches_growth \
		live_o_cycles_back live_o_q_exits_0 \
		live_o_no_bpf_left; do
		fail "$c" "tests/tools/sleeper not built (make tools)"
	done
fi

# Not root: one line naming the privilege, before the terminal is touched.
if command -v setpriv >/dev/null 2>&1; then
	cp "$GALATOP" "$TMP/g"; chmod 755 "$TMP" "$TMP/g"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/g" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qi 'root\|CAP_' "$TMP/err" && [ ! -s "$TMP/out" ]; then
		pass live_not_root_error
	else
		fail live_not_root_error "rc=$rc $(cat "$TMP/err")"
	fi
else
	skip live_not_root_error "setpriv is not installed (util-linux)"
fi

# The L7 pane live: key 4 starts the capture; requests of a redis-server (a target by -p)
# show with their count; Enter drills down; q leaves no program behind.
if command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1; then
	tm kill-session -t lv 2>/dev/null
	redis-server --port 18102 --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" >/dev/null 2>&1 &
	RS=$!
	i=0; until redis-cli -p 18102 ping >/dev/null 2>&1 || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f "$TMP/rc"
	tm new-session -d -s lv -x 160 -y 40 "'$GALATOP' -p $RS; echo \$? > '$TMP/rc'; sleep 30"
	wait_for "samples" 40
	tm send-keys -t lv 4
	if wait_for "L7 by endpoint" 50; then
		sleep 0.5
		redis-benchmark -p 18102 -n 3000 -c 2 -t set -P 1 -q >/dev/null 2>&1
		if wait_for " 3000 " 30; then pass live_l7_counts_requests
		else fail live_l7_counts_requests "$(head -8 "$TMP/screen")"; fi
		tm send-keys -t lv Enter
		wait_for "Connections of" 30 && pass live_l7_drill_down || fail live_l7_drill_down "$(head -4 "$TMP/screen")"
	else
		fail live_l7_counts_requests "no L7 pane: $(head -4 "$TMP/screen"; tail -2 "$TMP/screen")"
		fail live_l7_drill_down "no L7 pane"
	fi
	tm send-keys -t lv q
	i=0; while [ $i -lt 50 ] && [ ! -s "$TMP/rc" ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass live_l7_q_exits_0 || fail live_l7_q_exits_0
	check live_l7_no_bpf_left no_gt_progs
	kill $RS 2>/dev/null
else
	for c in live_l7_counts_requests live_l7_drill_down live_l7_q_exits_0 live_l7_no_bpf_left; do
		skip "$c" "redis-server or redis-benchmark is not installed (make deps)"
	done
fi
