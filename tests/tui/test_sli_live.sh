#!/bin/sh
# The Containers pane live (`sudo galatop --type sli`, and `5` in the live view) in a real
# terminal (tmux): a cgroup made here and starved of CPU shows within two seconds with about half
# of its time waiting, Enter opens it, f drills into its busiest process's stacks, s saves a
# snapshot that reopens on the pane, q leaves no BPF program and restores delay accounting.
# Needs root + BPF.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export GALATOP_THEMES="$HERE/../../themes" LC_ALL=C.UTF-8
need_root_bpf sli_live || exit 0
command -v tmux >/dev/null 2>&1 || { skip sli_live "tmux is not installed"; exit 0; }
[ -x "$TOOLS/sli_work" ] || { fail sli_live "test workloads not built (make tools)"; exit 0; }
V2=/sys/fs/cgroup/unified
[ -f "$V2/cgroup.procs" ] || V2=/sys/fs/cgroup
CG="$V2/gt-sli-live-$$"
SOCK=galatop-sli-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
delayacct_before=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null)
cleanup() {
	tm kill-server 2>/dev/null
	kill $S1 $S2 2>/dev/null
	wait 2>/dev/null
	rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
wait_for() { # TEXT [TENTHS]
	i=0
	while [ $i -lt "${2:-100}" ]; do
		tm capture-pane -p -t sl >"$TMP/screen" 2>/dev/null
		grep -qF -- "$1" "$TMP/screen" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Two busy processes sharing one CPU in a cgroup of their own.
mkdir "$CG" || { fail sli_live "cannot make $CG"; exit 0; }
cpu=$(($(nproc) - 1))
sh -c "echo \$\$ > $CG/cgroup.procs; exec taskset -c $cpu $TOOLS/sli_work spin 60" >/dev/null & S1=$!
sh -c "echo \$\$ > $CG/cgroup.procs; exec taskset -c $cpu $TOOLS/sli_work spin 60" >/dev/null & S2=$!
sleep 0.3

tm new-session -d -s sl -x 160 -y 40 "'$GALATOP' --type sli; echo \$? > '$TMP/rc'; sleep 30"
row="/gt-sli-live-$$"
if wait_for "$row " 25 && wait_for "Containers" 1; then pass sli_live_group_within_2s
else fail sli_live_group_within_2s "$(head -8 "$TMP/screen")"; fi
# Its Wait% (the column after the name) shows the starvation once a full second is in.
sleep 1.2
tm capture-pane -p -t sl >"$TMP/screen"
w=$(grep "^$row " "$TMP/screen" | awk '{ print $2 }')
if awk -v w="${w:-0}" 'BEGIN { exit !(w >= 60 && w <= 200) }'; then pass sli_live_wait_share
else fail sli_live_wait_share "Wait%=$w: $(grep -F "$row" "$TMP/screen")"; fi

# Enter opens the selected group (the table is sorted by Wait%, so the group is near the top).
n=$(grep -n "^Group\|^.Group" "$TMP/screen" | head -1 | cut -d: -f1)
pos=$(grep -n "^$row " "$TMP/screen" | head -1 | cut -d: -f1)
i=$((pos - n - 1))
while [ "$i" -gt 0 ]; do tm send-keys -t sl Down; i=$((i - 1)); done
tm send-keys -t sl Enter
if wait_for "cpu_wait histogram" 20 && grep -q "^$row  (cgroup)  PSI: $CG" "$TMP/screen" && grep -q "sli_work" "$TMP/screen"
then pass sli_live_open_group; else fail sli_live_open_group "$(head -20 "$TMP/screen")"; fi

# f: the on-CPU flame graph of the group's busiest process (a pid filter: a plain cgroup has no
# [Con] frames to filter on).
tm send-keys -t sl f
if wait_for "oncpu of pid" 20 && grep -Eq "filters: .*pid=($S1|$S2)" "$TMP/screen"; then pass sli_live_flame_drill
else fail sli_live_flame_drill "$(head -4 "$TMP/screen")"; fi

# t: the thread timeline (Threads pane) of the same process.
tm send-keys -t sl 5 t
if wait_for "TID Thread" 30 && wait_for "sli_work" 30 && grep -Eq "filters: .*pid=($S1|$S2)" "$TMP/screen"
then pass sli_live_threads_drill
else fail sli_live_threads_drill "$(head -6 "$TMP/screen")"; fi

# s: the snapshot carries the series next to the stacks; `5` shows them again.
tm send-keys -t sl 5 s C-u "$TMP/live.gtop" Enter
wait_file "$TMP/live.gtop" 300 # the ASan build on a loaded machine has taken over 5 s
"$GALATOP" view --dump --size 160x20 --keys "5" "$TMP/live.gtop" >"$TMP/reopen.txt" 2>&1
if grep -q "^$row " "$TMP/reopen.txt"; then pass sli_live_snapshot_reopens
else fail sli_live_snapshot_reopens "$(head -6 "$TMP/reopen.txt")"; fi

tm send-keys -t sl q
wait_file "$TMP/rc" 300
[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass sli_live_q_exits_0 || fail sli_live_q_exits_0 "rc=$(cat "$TMP/rc" 2>/dev/null)"
check sli_live_no_bpf_left no_gt_progs
check sli_live_delayacct_restored test "$(cat /proc/sys/kernel/task_delayacct 2>/dev/null)" = "$delayacct_before"

# 5 in the default live view attaches the SLI probes when the pane first opens.
rm -f "$TMP/rc"
tm kill-session -t sl 2>/dev/null
tm new-session -d -s sl -x 160 -y 30 "'$GALATOP'; echo \$? > '$TMP/rc'; sleep 30"
wait_for "samples" 40
tm send-keys -t sl 5
if wait_for "$row " 30; then pass sli_live_key5_attaches; else fail sli_live_key5_attaches "$(head -6 "$TMP/screen")"; fi
tm send-keys -t sl q
wait_file "$TMP/rc" 300
check sli_live_no_bpf_left_after_key5 no_gt_progs
