#!/bin/sh
# The thread timeline on workloads of known behaviour (tests/tools/tl_work.c): a lock-order
# deadlock and a holder/waiter pair get hints naming the threads; write+fsync shows the file's
# path (the writes only with --all-syscalls); a 256 MiB write to tmpfs (no blocking) is
# sampled, its time within a sampling period of the program's own, short writes are not; a loopback TCP writer shows its connection's
# port; nanosleep counts and durations, pipe reads and mutex waits match the program's own
# timing; the Chrome trace has no overlapping slices per track; nothing is left
# loaded; exits fold the ended processes. Ports 20150-20159.
. "$(dirname "$0")/../lib.sh"
need_root_bpf "threads" || exit 0
W=$TOOLS/tl_work
CHECK_TRACE="perl $(dirname "$0")/../threads/trace_check.pl"
PORT=20151

# rec NAME ARGS...: galatop record --type threads, stderr kept in $TMP/NAME.err
rec() {
	n=$1; shift
	"$GALATOP" record --type threads "$@" 2>"$TMP/$n.err"
}

# 0. Kernel threads make no system calls: none shows as blocked in one (their /proc syscall
# file reads "0 0x0 ...", which the seeding of calls in progress must not take for a read).
rec kthreads -d 1 -o "$TMP/kt.json"
kt=$(ps -e -o pid=,ppid= | awk '$1 == 2 || $2 == 2 { printf "%s%s", s, $1; s = "," }')
n=$(jq "[.traceEvents[] | select(.ph == \"X\" and (.cat == \"file\" or .cat == \"net\" or
	.cat == \"lock\" or .cat == \"sched\") and (.pid as \$p | [$kt] | index(\$p)))] | length" \
	"$TMP/kt.json")
if [ -n "$kt" ] && [ "$n" = 0 ]; then pass "kernel threads have no system calls"
else fail "kernel threads have no system calls" "$n calls of kernel threads ($(head -c 200 "$TMP/kthreads.err"))"; fi

# 1. A deadlock that happened before galatop started: found from /proc and the lock words.
"$W" deadlock >"$TMP/dl.out" &
DL=$!
for i in $(seq 50); do grep -q ready "$TMP/dl.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5 # both threads take their first lock and sleep 200 ms before the second
rec deadlock -p "$DL" -d 1.5 -o "$TMP/dl.json" -o "$TMP/dl.gtop"
kill "$DL" 2>/dev/null; wait "$DL" 2>/dev/null
hint=$(grep '^hint: deadlock:' "$TMP/deadlock.err")
if echo "$hint" | grep -q 'DeadThd1 (tid [0-9]*) and DeadThd2' && echo "$hint" | grep -q 'lock_second'; then
	pass "deadlock hint names both threads and the waits' stacks"
else
	fail "deadlock hint" "$(cat "$TMP/deadlock.err")"
fi
check "deadlock: no contention hint for the deadlocked pair" \
	sh -c "! grep -q '^hint: contention: DeadThd' '$TMP/deadlock.err'"

# 2. The same deadlock happening while galatop runs (entries seen by the probes).
"$GALATOP" record --type threads -d 2 -o "$TMP/dl2.json" -- "$W" deadlock >/dev/null 2>"$TMP/dl2.err" &
R=$!
# record waits for its command after -d: the deadlocked one never ends, so end it once the
# hints are out.
for i in $(seq 100); do grep -q '^galatop: threads:' "$TMP/dl2.err" 2>/dev/null && break; sleep 0.1; done
sleep 0.2
kill $(pgrep -P $R) 2>/dev/null
wait $R
if grep -q '^hint: deadlock: threads DeadThd1 .* and DeadThd2' "$TMP/dl2.err"; then
	pass "deadlock while recording"
else
	fail "deadlock while recording" "$(tail -5 "$TMP/dl2.err")"
fi

# 3. Contention: CompeteThd2 waits on the mutex CompeteThd1 holds 20 ms at a time.
rec contend -d 10 -o "$TMP/ct.json" -o "$TMP/ct.jsonl" -- "$W" contend 2 >/dev/null
line=$(grep '^hint: contention: CompeteThd2' "$TMP/contend.err")
if echo "$line" | grep -q 'held by CompeteThd1 (tid'; then
	pass "contention hint names the holder"
else
	fail "contention hint" "$(cat "$TMP/contend.err")"
fi
pct=$(echo "$line" | sed -n 's/.*waited \([0-9]*\)%.*/\1/p')
check "contention share above a third ($pct%)" test "${pct:-0}" -gt 33
check "no contention hint for the holder" sh -c "! grep -q '^hint: contention: CompeteThd1' '$TMP/contend.err'"
out=$($CHECK_TRACE overlap "$TMP/ct.json")
check "Perfetto-safe trace (contend): $out" test "${out%% *}" = ok

# 4. write + fsync on a known path of an ext4 or other disk file system. By default a call is
# seen when it blocks: fsync waits for the disk and shows file.path, read in the kernel while
# the file is open (it is closed right after). The writes fill the page cache without
# blocking: only --all-syscalls (every call from entry to exit) shows them, and their path.
F=$TMP/known-file.dat
rec file --min-dur 1 -o "$TMP/f.json" -o "$TMP/f.jsonl" -- "$W" file "$F" 20 >/dev/null
paths=$($CHECK_TRACE args "$TMP/f.json" fsync file.path)
check "fsync shows file.path $F" test "$paths" = "$F"
check "jsonl line with file.path" grep -q "\"file.path\":\"$F\"" "$TMP/f.jsonl"
check "jsonl resource fields" grep -q '"thread.comm":"FileThd","proc.name":"tl_work"' "$TMP/f.jsonl"
check "no system call tracepoint by default" sh -c "! grep -q 'gt_tl_sys_e' '$TMP/file.err'"
rec fileall --all-syscalls --min-dur 1 -o "$TMP/fa.json" -- "$W" file "$F" 20 >/dev/null
paths=$($CHECK_TRACE args "$TMP/fa.json" fsync file.path)
check "--all-syscalls: fsync shows file.path $F" test "$paths" = "$F"
paths=$($CHECK_TRACE args "$TMP/fa.json" write file.path | grep -c "^$F\$")
check "--all-syscalls: write shows file.path" test "$paths" = 1
set -- $($CHECK_TRACE stats "$TMP/fa.json" write FileThd)
check "--all-syscalls: one write interval per write ($1 = 20)" test "$1" = 20
check "--all-syscalls: the system call programs ran" grep -q 'gt_tl_sys_enter' "$TMP/fileall.err"

# 4b. A long call that does not block: BigThd writes 256 MiB to a tmpfs file in one write(2)
# (page cache only), timed by itself, then 20000 writes of 64 bytes. The sampler sees the big
# write run (without any system call tracepoint): one sampled write interval on the file as long
# as the program's own within one sampling period (1/199 s) + 10%; none of the short writes is
# sampled into one (each is told from the next). On a loaded machine a short write can be
# preempted and then seen running by the sampler as it finishes: a sampled interval of its own,
# whose time off the run queue is within a sampling period (+1 ms); more than that would be
# several writes taken for one.
BIG=/dev/shm/gt_tl_big.$$
own=$(rec big -o "$TMP/big.json" -- "$W" bigwrite "$BIG" 256 20000)
rm -f "$BIG"
sampled=$(jq -c '[.traceEvents[] | select(.ph == "X" and .name == "write" and .args.sampled)] |
	sort_by(-.dur)' "$TMP/big.json")
long=$(jq '[.traceEvents[] | select(.ph == "X" and .name == "write" and .args.sampled and
	.dur > 20000)] | length' "$TMP/big.json")
check "bigwrite: one sampled write interval of more than 20 ms ($long)" test "$long" = 1
# the other sampled ones: the longest time one of them spent off BigThd's run queue
tail=$(jq '[.traceEvents[] | select(.ph == "X")] as $ev |
	[$ev[] | select(.name == "write" and .args.sampled)] | sort_by(-.dur) | .[1:] |
	map(. as $w | $w.dur - ([$ev[] | select(.name == "runq" and .tid == $w.tid + 1073741824 and
		.ts < $w.ts + $w.dur and .ts + .dur > $w.ts) |
		([.ts + .dur, $w.ts + $w.dur] | min) - ([.ts, $w.ts] | max)] | add // 0)) |
	max // 0 | floor' "$TMP/big.json")
check "bigwrite: $(($(echo "$sampled" | jq length) - 1)) other sampled writes, each within a sampling period off the run queue ($tail us)" \
	test "$tail" -le 6025
dur=$(echo "$sampled" | jq '.[0].dur // 0 | floor')
check "bigwrite: sampled write $dur us within 1/199 s + 10% of the program's ${own:-?} us" \
	near "$dur" "${own:-0}" "$((5025 + ${own:-0} / 10))"
paths=$(echo "$sampled" | jq -r '.[0].args["file.path"]')
check "bigwrite: sampled write names $BIG ($paths)" test "$paths" = "$BIG"
check "bigwrite: no system call tracepoint" sh -c "! grep -q 'gt_tl_sys_e' '$TMP/big.err'"
check "bigwrite: the sampler ran" grep -q 'gt_tl_sample' "$TMP/big.err"

# 5. A loopback TCP writer blocked on a slow reader: sock.conn with the server's port.
rec tcp -o "$TMP/n.json" -- "$W" tcp $PORT 40 >/dev/null
conns=$($CHECK_TRACE args "$TMP/n.json" write sock.conn)
if echo "$conns" | grep -q "^TCP 127.0.0.1:[0-9]* -> 127.0.0.1:$PORT\$"; then
	pass "sock.conn names the connection to port $PORT"
else
	fail "sock.conn" "got: $conns"
fi
cat=$(grep -o '"name":"write","cat":"[a-z]*"' "$TMP/n.json" | sort -u)
check "socket writes are net ($cat)" test "$cat" = '"name":"write","cat":"net"'

# 6. nanosleep: the count equals the program's own, durations match 20 ms within 5%.
N=40
own=$(rec sleep -o "$TMP/s.json" -- "$W" sleep $N 20)
set -- $($CHECK_TRACE stats "$TMP/s.json" clock_nanosleep SleepThd)
check "nanosleep count $1 = program's $own" test "$1" = "$own"
check "nanosleep mean $2 us within 5% of 20000" near "$2" 20000 1000
check "shortest nanosleep $3 us not below 20 ms" near "$3" 20500 500
out=$($CHECK_TRACE overlap "$TMP/s.json")
check "Perfetto-safe trace (sleep): $out" test "${out%% *}" = ok
stk=$($CHECK_TRACE args "$TMP/s.json" clock_nanosleep func.stack)
if echo "$stk" | grep -q 'start_thread;sleep_thd;one_sleep;nap_ms;'; then
	pass "func.stack unwound through libc to the caller (DWARF)"
else
	fail "func.stack" "$stk"
fi

# 6b. A pipe read that waits a known time: PipeThd reads 30 bytes one at a time, a writer
# sends one every 20 ms; the program times each read itself. One blocking read per byte, their
# total within 2% of the program's, the pipe named as /proc names it.
# as_timed NAME FILE CALL THREAD COUNT US: the CALL intervals of THREAD in FILE are COUNT, and
# their total time is within 2% of US (the program's own timing of those calls).
as_timed() {
	set -- "$@" $($CHECK_TRACE stats "$2" "$3" "$4")
	check "$1: $3 count $7 = program's $5" test "$7" = "$5"
	tot=$(awk -v c="$7" -v m="$8" 'BEGIN { printf "%.0f", c * m }')
	check "$1: $3 total $tot us within 2% of the program's $6" near "$tot" "$6" "$(($6 / 50))"
}
as_timed pipe "$TMP/p.json" read PipeThd $(rec pipe -o "$TMP/p.json" -- "$W" pipe 30 20)
paths=$($CHECK_TRACE args "$TMP/p.json" read file.path)
check "pipe: file.path $paths" sh -c "echo '$paths' | grep -qx 'pipe:\[[0-9]*\]'"

# 6c. A futex contention with a known hold time: HoldThd holds a mutex 20 ms while WaitThd
# waits for it, 25 times; WaitThd times its pthread_mutex_lock. One lock wait per round, their
# total within 2% of the program's, the owner read from the mutex is HoldThd.
as_timed hold "$TMP/h.json" futex WaitThd $(rec hold -o "$TMP/h.json" -- "$W" hold 25 20)
owner=$($CHECK_TRACE args "$TMP/h.json" futex futex.owner)
htid=$(jq -r '.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .args.name == "HoldThd") | .tid' "$TMP/h.json")
check "hold: futex.owner $owner is HoldThd ($htid)" test "$owner" = "$htid"
check "hold: contention hint names the holder" grep -q '^hint: contention: WaitThd (tid [0-9]*) .* held by HoldThd' "$TMP/hold.err"

# 7. The snapshot opens in the Threads pane without root, naming the deadlock.
if [ -s "$TMP/dl.gtop" ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$GALATOP" view --dump --size 160x20 \
		--keys "" - <"$TMP/dl.gtop" >"$TMP/view.txt" 2>&1
	check "view of the snapshot (no root) shows the deadlock" grep -q '! deadlock: threads DeadThd1' "$TMP/view.txt"
	check "view of the snapshot names the system call mode" grep -q 'calls: blocking + sampled' "$TMP/view.txt"
else
	fail "snapshot written"
fi

# 8. The live view: key 3 attaches the probes and shows the contended pair and its hint.
if command -v tmux >/dev/null 2>&1; then
	SOCK=galatop-threads-$$
	tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
	wait_for() { # TEXT TENTHS
		i=0
		while [ $i -lt "$2" ]; do
			tm capture-pane -p -t tv >"$TMP/screen" 2>/dev/null
			grep -qF -- "$1" "$TMP/screen" && return 0
			sleep 0.1; i=$((i + 1))
		done
		return 1
	}
	"$W" contend 20 >/dev/null & CW=$!
	export GALATOP_THEMES="$(dirname "$0")/../../themes"
	tm new-session -d -s tv -x 180 -y 30 "'$GALATOP' -p $CW; echo \$? > '$TMP/rc'; sleep 30"
	wait_for "1 Flame" 100
	tm send-keys -t tv 3
	wait_for "thread probes attached" 50 && pass "live: key 3 attaches the thread probes" ||
		fail "live: key 3 attaches" "$(head -5 "$TMP/screen")"
	wait_for "CompeteThd2" 100 && pass "live: threads of the target shown" ||
		fail "live: threads shown" "$(head -12 "$TMP/screen")"
	wait_for "! contention: CompeteThd2" 150 && pass "live: contention hint on screen" ||
		fail "live: contention hint" "$(head -8 "$TMP/screen")"
	tm send-keys -t tv q
	i=0; while [ $i -lt 50 ] && [ ! -s "$TMP/rc" ]; do sleep 0.1; i=$((i + 1)); done
	check "live: q exits 0" test "$(cat "$TMP/rc" 2>/dev/null)" = 0
	tm kill-server 2>/dev/null
	kill $CW 2>/dev/null; wait $CW 2>/dev/null
else
	skip "live threads pane" "tmux is not installed"
fi

# 9. Exits: three short-lived processes of one command end while recording, another lives on;
# the snapshot keeps the exits and the Threads pane folds the three into one row.
cp /bin/sleep "$TMP/gtexitprobe" && cp /bin/sleep "$TMP/gtaliveprobe"
"$TMP/gtaliveprobe" 8 & ALIVE=$!
# They start once the probes are on (attaching takes longer than a fixed delay under load).
rm -f "$TMP/exits.err"
(wait_until 100 grep -qs recording "$TMP/exits.err"; for i in 1 2 3; do "$TMP/gtexitprobe" 0.1; done) &
SPAWN=$!
rec exits -d 2 -o "$TMP/ex.gtop"
wait $SPAWN
"$GALATOP" view --dump --size 160x20 --keys "/gt.*probe\\n" "$TMP/ex.gtop" >"$TMP/exits.txt" 2>&1
kill $ALIVE 2>/dev/null; wait $ALIVE 2>/dev/null
check "exits: the three ended processes fold into one row" grep -q '^. ended gtexitprobe x3' "$TMP/exits.txt"
check "exits: the living process is not folded" sh -c "grep -q '^ *$ALIVE gtaliveprobe' '$TMP/exits.txt' && ! grep -q 'ended gtaliveprobe' '$TMP/exits.txt'"

check "no galatop BPF programs left" no_gt_progs
