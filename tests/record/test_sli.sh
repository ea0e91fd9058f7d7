#!/bin/sh
# galatop record --type sli against the kernel's own accounting: run-queue waits vs
# /proc/PID/schedstat, sleeps vs the clock, block I/O vs the stat file of a loop device made
# here, reclaim in a memory-limited v1 cgroup, swap-in from a swap device made here. Root and
# BPF (runs in CI); the v1 cases are N/A on a cgroup-v2-only machine.
. tests/lib.sh
W="$TOOLS/sli_work"

# Options that do not go together are refused with one line, without root.
# (With stacks, SLIs record in the same run: tests/record/test_families.sh; standard output is
# left to one type.)
"$GALATOP" record --type sli,oncpu -d 1 2>"$TMP/e1.txt"
if [ $? = 2 ] && grep -q 'one .gtop holds every type' "$TMP/e1.txt"; then pass sli_stdout_alone; else fail sli_stdout_alone "$(cat "$TMP/e1.txt")"; fi
"$GALATOP" record --type sli -o "$TMP/x.svg" -d 1 2>"$TMP/e2.txt"
if [ $? = 2 ] && grep -q '.json, .prom or .gtop' "$TMP/e2.txt"; then pass sli_formats; else fail sli_formats "$(cat "$TMP/e2.txt")"; fi
"$GALATOP" record -o "$TMP/x.prom" -d 1 2>"$TMP/e3.txt"
if [ $? = 2 ] && grep -q 'needs --type sli' "$TMP/e3.txt"; then pass sli_format_needs_type; else fail sli_format_needs_type "$(cat "$TMP/e3.txt")"; fi

need_root_bpf sli || exit 0
[ -x "$W" ] || { fail sli "test workloads not built (make tools)"; exit 0; }
command -v jq >/dev/null || { fail sli "jq is missing (make deps)"; exit 0; }
command -v losetup >/dev/null || { fail sli "losetup is missing (make deps: mount)"; exit 0; }

V2=/sys/fs/cgroup/unified
[ -f "$V2/cgroup.procs" ] || V2=/sys/fs/cgroup
CG="$V2/gt-sli-$$"
MEM=/sys/fs/cgroup/memory
M1="$MEM/gt-sli-reclaim-$$"
M2="$MEM/gt-sli-swap-$$"
delayacct_before=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null)
# loopdev NAME MB: a loop device over a new file $TMP/NAME.img of MB MiB, with direct I/O to
# the file where its filesystem allows; its path in $TMP/NAME.dev. A device of the test's own
# serves nobody else, and whatever the root is (overlay, btrfs, tmpfs: no block device of its
# own), it has a stat file and takes swap.
loopdev() {
	truncate -s "${2}M" "$TMP/$1.img" &&
		{ losetup --find --show --direct-io=on "$TMP/$1.img" || losetup --find --show "$TMP/$1.img"; } \
			>"$TMP/$1.dev" 2>"$TMP/$1.losetup" || return 1
	# udev probes a new device (blkid): done before the measured writes start.
	command -v udevadm >/dev/null && udevadm settle -t 10 2>/dev/null
	return 0
}
cleanup() {
	for f in "$TMP"/*.dev; do
		[ -s "$f" ] || continue
		swapoff "$(cat "$f")" 2>/dev/null
		losetup -d "$(cat "$f")" 2>/dev/null
	done
	for d in "$CG" "$M1" "$M2"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
# The memory-limit cases need a v1 memory controller: on a cgroup-v2-only machine they are N/A.
v1mem() { [ "$(stat -fc %T "$MEM" 2>/dev/null)" = cgroupfs ]; }
V1NA="not applicable on cgroup v2 (the case limits a v1 memory cgroup, memory.limit_in_bytes; $MEM is no v1 controller)"

# thread FILE GROUP_ID TID FIELD: a thread's figure in a recorded JSON (empty if absent).
thread() {
	jq -r --arg g "$2" --argjson t "$3" --arg f "$4" \
		'.groups[] | select(.id == $g) | .threads[] | select(.tid == $t) | .[$f]' "$1"
}
group() { # FILE GROUP_ID FIELD
	jq -r --arg g "$2" --arg f "$3" '.groups[] | select(.id == $g) | .[$f]' "$1"
}
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; } # FILE KEY: from a sli_work report
# within A B PCT: |A - B| <= PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }

# 1. Two busy processes pinned to one CPU in a v2 test cgroup: each waits for the CPU about
#    half of the time, and galatop's cpu_wait agrees with the kernel's run_delay of each over
#    its whole life (forked after the probes attached, from its first wait on: on a loaded
#    machine its start, before the spin, waits too).
mkdir "$CG"
cpu=$(($(nproc) - 1))
"$GALATOP" record --type sli --cgroup "$CG" -o "$TMP/wait.json" -o "$TMP/wait.prom" -o "$TMP/wait.gtop" -- sh -c \
	"echo \$\$ > $CG/cgroup.procs; taskset -c $cpu $W spin 3 > $TMP/a.txt & taskset -c $cpu $W spin 3 > $TMP/b.txt & wait" \
	2>"$TMP/wait.err"
gid="cgroup:/gt-sli-$$"
ok=1; why=""
for f in a b; do
	tid=$(kv "$TMP/$f.txt" tid); rd=$(kv "$TMP/$f.txt" run_delay_total_ns); wall=$(kv "$TMP/$f.txt" wall_ns)
	w=$(thread "$TMP/wait.json" "$gid" "$tid" cpu_wait_ns); r=$(thread "$TMP/wait.json" "$gid" "$tid" cpu_rundelay_ns)
	why="$why [$f: tid=$tid schedstat=$rd cpu_wait=$w cpu_rundelay=$r wall=$wall]"
	within "${w:-0}" "${rd:-0}" 5 || ok=0
	within "${r:-0}" "${rd:-0}" 5 || ok=0
	# Sharing one CPU, each waits about half the time (more when the machine is busy).
	awk -v w="${w:-0}" -v t="${wall:-1}" 'BEGIN { s = 100 * w / t; exit !(s >= 40 && s <= 100) }' || ok=0
done
if [ $ok = 1 ]; then pass cpu_wait_matches_schedstat; else fail cpu_wait_matches_schedstat "$why"; cat "$TMP/wait.err"; fi
gw=$(group "$TMP/wait.json" "$gid" cpu_wait_ns)
tw=$(jq -r --arg g "$gid" '[.groups[] | select(.id == $g) | .threads[].cpu_wait_ns] | add' "$TMP/wait.json")
if within "${gw:-0}" "${tw:-0}" 1 && [ "$(group "$TMP/wait.json" "$gid" kind)" = cgroup ]; then pass cpu_wait_group_row
else fail cpu_wait_group_row "group=$gw threads=$tw"; fi
# PSI of the test cgroup comes from its own cpu.pressure and shows the contention.
psi=$(jq -r --arg g "$gid" '.groups[] | select(.id == $g) | .psi_pct.cpu_some' "$TMP/wait.json")
src=$(group "$TMP/wait.json" "$gid" psi_source)
if [ "$src" = "$CG" ] && awk -v p="$psi" 'BEGIN { exit !(p > 20) }'; then pass psi_from_group_files
else fail psi_from_group_files "psi_source=$src cpu_some=$psi"; fi
# A source that is missing is null, never 0: the v2 test cgroup has no CPU quota files.
if [ "$(group "$TMP/wait.json" "$gid" throttled_pct)" = null ] && [ "$(group "$TMP/wait.json" host throttled_pct)" = null ]
then pass missing_is_null; else fail missing_is_null; fi
# Histograms: bucket bounds in ns, counts adding up to the count.
hc=$(jq -r --arg g "$gid" '.groups[] | select(.id == $g) | [.cpu_wait_hist[][1]] | add' "$TMP/wait.json")
if [ "$hc" = "$(group "$TMP/wait.json" "$gid" cpu_wait_count)" ] && [ "${hc:-0}" -gt 0 ]; then pass hist_counts_add_up
else fail hist_counts_add_up "hist=$hc count=$(group "$TMP/wait.json" "$gid" cpu_wait_count)"; fi
if grep -q "^galatop_sli_cpu_wait_seconds_count{group=\"/gt-sli-$$\",kind=\"cgroup\"} $hc\$" "$TMP/wait.prom" &&
	grep -q '^# TYPE galatop_sli_cpu_wait_seconds histogram' "$TMP/wait.prom"; then pass prom_output
else fail prom_output "$(grep "gt-sli-$$" "$TMP/wait.prom" | head -3)"; fi
# The snapshot reopens in the Containers pane with the test cgroup's row.
LC_ALL=C.UTF-8 "$GALATOP" view --dump --size 160x20 "$TMP/wait.gtop" >"$TMP/wait.screen" 2>&1
if grep -q "5 Containers" "$TMP/wait.screen" && grep -q "^/gt-sli-$$ " "$TMP/wait.screen"; then pass gtop_reopens_pane
else fail gtop_reopens_pane "$(head -5 "$TMP/wait.screen")"; fi

# 2. Sleeps of known length (100 x 20 ms): cpu_sleep is their sum; with the waits for the CPU
#    after each wakeup it is the time measured around them. (On a busy machine a sleep can end
#    before the task got off the CPU: then it was a wait, not a sleep, hence 95 and not 100.)
"$GALATOP" record --type sli --longsys 10 -o "$TMP/sleep.json" -- "$W" sleep 100 20 >"$TMP/s.txt" 2>"$TMP/sleep.err"
tid=$(kv "$TMP/s.txt" tid); slept=$(kv "$TMP/s.txt" slept_ns)
sl=$(thread "$TMP/sleep.json" host "$tid" cpu_sleep_ns)
wt=$(thread "$TMP/sleep.json" host "$tid" cpu_wait_ns)
n=$(group "$TMP/sleep.json" host cpu_sleep_count)
if within "${sl:-0}" 2000000000 5 && within $((${sl:-0} + ${wt:-0})) "${slept:-0}" 5 && [ "${n:-0}" -ge 95 ]; then
	pass cpu_sleep_matches_clock
else
	fail cpu_sleep_matches_clock "cpu_sleep=$sl (asked 2000000000) + cpu_wait=$wt vs measured=$slept, count=$n"
	cat "$TMP/sleep.err"
fi
# Each of those sleeps is a system call of at least 20 ms: cpu_longsys (10 ms by default) is
# their time, measured around them (from the entry to the exit, so a little less).
ls=$(thread "$TMP/sleep.json" host "$tid" cpu_longsys_ns)
if within "${ls:-0}" "${slept:-0}" 5 && [ "${ls:-0}" -le "${slept:-0}" ]; then pass cpu_longsys_matches_clock
else fail cpu_longsys_matches_clock "cpu_longsys=$ls vs measured=$slept"; fi

# 3. O_DIRECT writes to a loop device of the test's own (no filesystem, no journal, no flush):
#    the group's requests are the ones the device's stat counted over the same interval
#    (/sys/dev/block/M:m/stat, read by the workload around its writes): its 2000 writes (95%: a
#    saturated machine has been seen to lose a few), no more requests than the device saw, and
#    no more time (the device's clock starts at the request's allocation, ours at its insert);
#    when the device served little else, a mean latency a little under the device's. Its
#    thread waited in iowait. (The loop device's own writes to its file are its worker's, in
#    the root cgroup, not the group's.)
if loopdev dio 16; then
	DIO=$(cat "$TMP/dio.dev")
else
	DIO=/dev/null; fail bio_loop_device "losetup: $(cat "$TMP/dio.losetup")"
fi
# The group's io pressure (PSI, "some": the time a task of it was in iowait) before and after:
# the writer alone in the group, pinned to one CPU (PSI weighs each CPU's stall by its busy
# time; one CPU makes the group's total that task's own).
psi_io() { awk '$1 == "some" { sub("total=", "", $5); print $5 }' "$CG/io.pressure" 2>/dev/null; }
psi0=$(psi_io)
"$GALATOP" record --type sli --cgroup "$CG" -o "$TMP/dio.json" -- sh -c \
	"echo \$\$ > $CG/cgroup.procs; exec taskset -c $cpu $W dio $DIO 2000 > $TMP/d.txt" 2>"$TMP/dio.err"
psi1=$(psi_io)
tid=$(kv "$TMP/d.txt" tid); ios=$(kv "$TMP/d.txt" ios); fl=$(kv "$TMP/d.txt" flushes)
ticks=$(kv "$TMP/d.txt" ticks_ms); fticks=$(kv "$TMP/d.txt" flush_ticks_ms)
bc=$(group "$TMP/dio.json" "$gid" bio_latency_count); bns=$(group "$TMP/dio.json" "$gid" bio_latency_ns)
why="requests=$bc in ${bns}ns; device $DIO: ios=$ios flushes=$fl in $ticks+$fticks ms $(cat "$TMP/dio.err")"
echo "block I/O: $why"
# The two counts are read a moment apart: a few requests may fall on either side.
if [ "${bc:-0}" -ge 1900 ] && [ "${bc:-0}" -le $(( (${ios:-0} + ${fl:-0}) * 101 / 100 + 5 )) ] &&
	awk -v n="${bns:-0}" -v t=$((${ticks:-0} + ${fticks:-0})) \
		'BEGIN { exit !(n > 0 && n <= (t + 2) * 1e6 * 1.05) }'; then
	pass bio_within_device_stat
else
	fail bio_within_device_stat "$why"
fi
if [ $((${ios:-0} + ${fl:-0})) -le $((${bc:-0} * 11 / 10)) ]; then
	ours=$(awk -v n="$bns" -v c="$bc" 'BEGIN { print n / c / 1e6 }')
	dev=$(awk -v t=$((ticks + fticks)) -v i=$((ios + fl)) 'BEGIN { print t / i }')
	# The device's clock runs from the request's allocation to its accounting after completion,
	# ours from its insert (or issue) to its completion: shorter, by more on a busy machine.
	if awk -v o="$ours" -v d="$dev" 'BEGIN { exit !(o <= d * 1.05 && o >= d * 0.5) }'; then
		pass bio_mean_latency_matches_device
	else
		fail bio_mean_latency_matches_device "mean ms: ours=$ours device=$dev; $why"
	fi
else
	skip bio_mean_latency_matches_device "the device served others meanwhile ($why)"
fi
# A write whose request is still in flight waits for it in io_schedule (how many do depends
# on the machine's load): those sleeps are the thread's voluntary context switches in the
# writes (getrusage), and galatop sees them as iowait; it invents no sleep the kernel did not
# count. Their time is the kernel's own: PSI counts a task in iowait from its switch-out to
# its enqueue at the wakeup, as the probe does, within 1% and 3 us per wait (the probe's clock
# is the run queue's, read as the switch begins; PSI reads its own a little later in the same
# switch, after picking the next task). (Not the requests' time: a task woken on an idle CPU
# is enqueued when that CPU takes the wakeup's interrupt, which on a quiet VM adds tens of
# microseconds to each wait after the request completed.)
iw=$(thread "$TMP/dio.json" "$gid" "$tid" cpu_iowait_ns); ic=$(group "$TMP/dio.json" "$gid" cpu_iowait_count)
offc=$(jq -r --arg g "$gid" '.groups[] | select(.id == $g) | .cpu_iowait_count + .cpu_block_count + .cpu_sleep_count' "$TMP/dio.json")
vc=$(kv "$TMP/d.txt" vcsw); vt=$(kv "$TMP/d.txt" vcsw_total)
psi=$( [ -n "$psi0" ] && [ -n "$psi1" ] && echo $(( (psi1 - psi0) * 1000 )) )
if [ "${vc:-0}" = 0 ]; then
	skip iowait_of_direct_io "no write slept waiting for its request ($(cat "$TMP/d.txt"))"
elif [ -z "$psi" ]; then
	skip iowait_of_direct_io "no io pressure file for the group ($CG/io.pressure: a kernel without PSI)"
elif [ "${ic:-0}" -ge $((vc - (vc / 20 > 2 ? vc / 20 : 2))) ] && [ "${offc:-0}" -le $((${vt:-0} + 2)) ] &&
	awk -v i="${iw:-0}" -v p="$psi" -v n="${ic:-0}" \
		'BEGIN { d = i - p; if (d < 0) d = -d; exit !(p > 0 && d <= p / 100 + 3000 * n) }'
then pass iowait_of_direct_io
else fail iowait_of_direct_io "cpu_iowait=$iw ($ic waits; $offc off-CPU in all), PSI io some of the group $psi ns, bio=$bns; thread: $vc voluntary switches in the writes, $vt in all"; fi

# 4. A memory-limited v1 group squeezed by its page cache reclaims; --cgroup with the v1 path
#    targets the processes already in it and makes its row. The workload outlives the
#    recording (on a loaded machine galatop's start-up alone can take seconds; a v1 member that
#    is gone before galatop looked it up is in the host row only).
if ! v1mem; then
	na mem_reclaim_under_limit "$V1NA"
	na v1_cgroup_target_row "$V1NA"
elif mkdir "$M1" && echo $((24 << 20)) >"$M1/memory.limit_in_bytes"; then
	sh -c "echo \$\$ > $M1/cgroup.procs; exec $W pagecache $TMP/pc.bin 64 60 > $TMP/r.txt" &
	rp=$!
	i=0; while [ $i -lt 50 ] && ! grep -q "^$rp\$" "$M1/cgroup.procs"; do sleep 0.1; i=$((i + 1)); done
	"$GALATOP" record --type sli --cgroup "$M1" -d 2 -o "$TMP/rec.json" 2>"$TMP/rec.err"
	kill $rp; wait $rp
	rid="cgroup:memory:/gt-sli-reclaim-$$"
	rc=$(group "$TMP/rec.json" "$rid" mem_reclaim_ns)
	tid=$(kv "$TMP/r.txt" tid)
	trc=$(thread "$TMP/rec.json" "$rid" "$tid" mem_reclaim_ns)
	if [ "${rc:-0}" -gt 0 ] && [ "${trc:-0}" -gt 0 ]; then pass mem_reclaim_under_limit
	else fail mem_reclaim_under_limit "group mem_reclaim=$rc thread=$trc"; cat "$TMP/rec.err"; fi
	if [ "$(jq -r '.groups | length' "$TMP/rec.json")" -le 2 ] && [ "$(group "$TMP/rec.json" "$rid" kind)" = cgroup ]
	then pass v1_cgroup_target_row; else fail v1_cgroup_target_row "$(jq -c '[.groups[].id]' "$TMP/rec.json")"; fi
else
	fail mem_reclaim_under_limit "cannot make a memory-limited group $M1"
	fail v1_cgroup_target_row "cannot make a memory-limited group $M1"
fi

# 4b. Rows by cgroup kind: a docker-like scope is a [Con] container, a *.service a service.
DK="$V2/system.slice/docker-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 64).scope"
SV="$V2/system.slice/gt-sli-$$.service"
if mkdir -p "$DK" "$SV" 2>/dev/null; then
	"$GALATOP" record --type sli -d 1.5 -o "$TMP/kinds.json" -- sh -c \
		"sh -c 'echo \$\$ > $DK/cgroup.procs; exec $W sleep 30 30' & sh -c 'echo \$\$ > $SV/cgroup.procs; exec $W sleep 30 30' & wait" \
		>/dev/null 2>"$TMP/kinds.err"
	short=$(basename "$DK" | sed 's/^docker-//' | head -c 12)
	con=$(jq -r '.groups[] | select(.kind == "container") | .name' "$TMP/kinds.json")
	svc=$(jq -r '.groups[] | select(.kind == "service") | .name' "$TMP/kinds.json")
	if [ "$con" = "[Con]$short" ] && [ "$svc" = "/system.slice/gt-sli-$$.service" ]; then pass group_kinds
	else fail group_kinds "container=$con service=$svc"; fi
	rmdir "$DK" "$SV" 2>/dev/null
else
	skip group_kinds "cannot make cgroups under $V2/system.slice"
fi

# 5. Swap-in: a process in a limited group touches more than the limit with swap on (a loop
#    device of the test's own: a swap file needs a filesystem that maps its blocks),
#    once with mem_swapin from delay accounting, once from the fallback (major faults on
#    swap-backed memory, forced with GALATOP_SLI_SWAPIN=faults): its swap-ins are the major
#    faults the kernel counted for the thread (getrusage), and they took time.
swapin() { # NAME: records the anon workload into $TMP/NAME.{json,gtop}, its report in $TMP/NAME.txt
	"$GALATOP" record --type sli -o "$TMP/$1.json" -o "$TMP/$1.gtop" -- sh -c \
		"echo \$\$ > $M2/cgroup.procs; exec $W anon 48 3 > $TMP/$1.txt" 2>"$TMP/$1.err"
}
SWAP_CASES="mem_swapin mem_swapin_faults pane_names_swapin_source"
if ! v1mem; then
	for c in $SWAP_CASES; do na "$c" "$V1NA"; done
elif [ ! -e /proc/swaps ]; then
	for c in $SWAP_CASES; do na "$c" "not applicable: a kernel without swap (no /proc/swaps)"; done
elif ! mkdir "$M2"; then
	for c in $SWAP_CASES; do fail "$c" "cannot make a memory-limited group $M2"; done
elif ! { loopdev swap 128 && SWAP=$(cat "$TMP/swap.dev") && mkswap "$SWAP" >"$TMP/mkswap.out" 2>&1 &&
	swapon "$SWAP" 2>"$TMP/swapon.err"; }; then
	for c in $SWAP_CASES; do
		skip "$c" "swap cannot be enabled on a loop device: $(cat "$TMP/swap.losetup" "$TMP/mkswap.out" "$TMP/swapon.err" 2>/dev/null)"
	done
else
	echo $((24 << 20)) >"$M2/memory.limit_in_bytes"
	echo 100 >"$M2/memory.swappiness" 2>/dev/null
	swapin swap
	GALATOP_SLI_SWAPIN=faults swapin swapf
	swapoff "$SWAP"
	tid=$(kv "$TMP/swap.txt" tid)
	sw=$(thread "$TMP/swap.json" host "$tid" mem_swapin_ns)
	if [ "${sw:-0}" -gt 0 ] && grep -q 'mem_swapin: delayacct' "$TMP/swap.json"; then pass mem_swapin
	else fail mem_swapin "mem_swapin=$sw $(jq -r .notes "$TMP/swap.json") $(cat "$TMP/swap.txt")"; cat "$TMP/swap.err"; fi
	tid=$(kv "$TMP/swapf.txt" tid); mf=$(kv "$TMP/swapf.txt" majflt)
	sw=$(thread "$TMP/swapf.json" host "$tid" mem_swapin_ns)
	n=$(group "$TMP/swapf.json" host mem_swapin_count)
	# A few faults may be missed (the VMA lookup can find the mm busy), none invented.
	if [ "${sw:-0}" -gt 0 ] && [ "${mf:-0}" -gt 100 ] && [ "${n:-0}" -le "$mf" ] &&
		[ "${n:-0}" -ge $((mf * 9 / 10)) ] && grep -q 'mem_swapin: major faults on swap' "$TMP/swapf.json"
	then pass mem_swapin_faults
	else fail mem_swapin_faults "mem_swapin=$sw in $n faults, thread majflt=$mf; $(jq -r .notes "$TMP/swapf.json")"; cat "$TMP/swapf.err"; fi
	# The pane says where mem_swapin comes from: the hook in the group's SLI table, the
	# source in the status line.
	LC_ALL=C.UTF-8 "$GALATOP" view --dump --size 200x30 --keys '\n' "$TMP/swapf.gtop" >"$TMP/swapf.screen" 2>&1
	if grep -q "mem_swapin .*page_fault_user/kernel until the end of a major fault" "$TMP/swapf.screen" &&
		grep -q "mem_swapin: major faults on swap" "$TMP/swapf.screen"; then pass pane_names_swapin_source
	else fail pane_names_swapin_source "$(grep -E 'mem_swapin|swap' "$TMP/swapf.screen")"; fi
fi

# galatop put kernel.task_delayacct back and left no program behind.
check delayacct_restored test "$(cat /proc/sys/kernel/task_delayacct 2>/dev/null)" = "$delayacct_before"
check sli_no_leftovers no_gt_progs
