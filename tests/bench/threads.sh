#!/bin/sh
# The thread timeline's cost on a syscall-heavy workload: two threads each writing one byte to
# /dev/null between short spins (about 200k system calls per second in all), run alone, under
# `galatop record --type threads` (default --min-dur 10 us: the calls are counted, not sent),
# under `perf trace -s` and under `strace -f -c`, alternating so that drift cancels out. Prints
# each one's throughput loss and own CPU. A baseline shows what the kernel's system call
# tracepoints cost by themselves when enabled (perf stat counting raw_syscalls: no program runs),
# which every system call tracer pays; galatop's own programs' time per call comes from the
# kernel's BPF statistics when they are on. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "threads: skipped (needs root)"; exit 0; }
SECS=${BENCH_SECS:-5}
SPIN=${BENCH_SPIN:-2000}
T=$BENCH_TMP
hz=$(getconf CLK_TCK)
W="$TOOLS/tl_work"
cpu_of() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0; }
run() { "$W" syscalls "$SECS" "$SPIN"; }

# under TOOL: runs the workload while TOOL (galatop, perf, strace) watches it; prints
# "calls tool_cpu_seconds".
under() {
	case $1 in
	galatop)
		"$GALATOP_OPT" record --type threads --comm tl_work -o "$T/tl.jsonl" 2>"$T/tl.err" &
		g=$!
		sleep 1.5 # probes attached, start-up not counted
		c0=$(cpu_of $g)
		n=$(run)
		c1=$(cpu_of $g)
		kill -INT $g; wait $g
		echo "$n $(echo "$c1 $c0" | awk '{ print $1 - $2 }')" ;;
	perf)
		"$W" syscalls "$SECS" "$SPIN" >"$T/perf.n" &
		w=$!
		perf trace -s -p $w -o "$T/perf.trace" 2>/dev/null &
		p=$!
		wait $w
		c=$(cpu_of $p)
		kill -INT $p 2>/dev/null; wait $p 2>/dev/null
		echo "$(cat "$T/perf.n") $c" ;;
	tp)
		perf stat -e raw_syscalls:sys_enter,raw_syscalls:sys_exit -a -o "$T/tp.stat" -- \
			sleep $((SECS + 2)) &
		p=$!
		sleep 0.5
		n=$(run)
		wait $p
		echo "$n 0" ;;
	strace)
		strace -f -c -o "$T/strace.c" "$W" syscalls "$SECS" "$SPIN" >"$T/strace.n" 2>/dev/null &
		s=$!
		sleep 0.3
		c=0
		while kill -0 $s 2>/dev/null; do c=$(cpu_of $s); sleep 0.2; done
		wait $s
		echo "$(cat "$T/strace.n") $c" ;;
	esac
}

alone=0; tl=0; tlcpu=0
for k in 1 2; do
	alone=$((alone + $(run)))
	set -- $(under galatop)
	tl=$((tl + $1)); tlcpu=$(echo "$tlcpu $2" | awk '{ print $1 + $2 }')
done
rate=$(echo "$alone $SECS" | awk '{ printf "%.0f", $1 / (2 * $2) }')
echo "workload: $rate system calls/s on 2 threads alone (write to /dev/null, spin $SPIN)"
echo "$alone $tl $tlcpu $SECS" | awk '{ printf "galatop record --type threads: throughput loss %.1f%% (target <= 10%%), own CPU %.1f%% of a core\n", 100 * ($1 - $2) / $1, 100 * $3 / (2 * $4) }'
if command -v perf >/dev/null 2>&1; then
	set -- $(under tp)
	echo "$alone $1 $SECS" | awk '{ printf "baseline, the kernel'"'"'s system call tracepoints enabled (perf stat, no program): throughput loss %.1f%%\n", 100 * ($1 / 2 - $2) / ($1 / 2) }'
	set -- $(under perf)
	echo "$alone $1 $2 $SECS" | awk '{ printf "perf trace -s -p PID: throughput loss %.1f%%, own CPU %.1f%% of a core\n", 100 * ($1 / 2 - $2) / ($1 / 2), 100 * $3 / $4 }'
else
	echo "perf: absent, no comparison"
fi
if command -v strace >/dev/null 2>&1; then
	set -- $(under strace)
	echo "$alone $1 $2 $SECS" | awk '{ printf "strace -f -c: throughput loss %.1f%%, tracer CPU %.1f%% of a core\n", 100 * ($1 / 2 - $2) / ($1 / 2), 100 * $3 / $4 }'
else
	echo "strace: absent, no comparison"
fi
