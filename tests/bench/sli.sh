#!/bin/sh
# What the SLI probes cost the scheduler: `perf bench sched pipe` (two tasks ping-ponging through
# a pipe on one CPU: two context switches, two wakeups and four system calls per message) with
# the probes off, on, and on without the system call hooks (--longsys off), alternating so that
# drift cancels out; galatop's own CPU meanwhile; the off-CPU stack probe as a reference.
# Two figures per run: messages per second of wall time (what perf prints; it drops whenever
# another process shares the CPU) and CPU time per message (the bench's user + system time,
# which sharing the CPU changes much less); medians of the runs. Needs root and perf.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "sli: skipped (needs root)"; exit 0; }
command -v perf >/dev/null 2>&1 || { echo "sli: skipped (perf is missing)"; exit 0; }
[ -x "$TOOLS/cputime" ] || { echo "sli: skipped (tests/tools/cputime is not built: make tools)"; exit 0; }
T=$BENCH_TMP
LOOPS=${BENCH_SLI_LOOPS:-100000}
RUNS=${BENCH_SLI_RUNS:-5}
cpu=$(($(nproc) - 1))
# cpu_of PID: the CPU seconds of the threads of PID so far, to the ns (/proc/PID/stat counts ticks).
cpu_of() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.9f\n", s / 1e9 }'; }
# pipe: "OPS_PER_S CPU_NS_PER_MESSAGE" of one run (the CPU time of perf and its workers, to the
# nanosecond, from tests/tools/cputime).
pipe() {
	taskset -c "$cpu" "$TOOLS/cputime" perf bench sched pipe -l "$LOOPS" 2>&1 |
		awk -v l="$LOOPS" '/ops\/sec/ { ops = $1 } /^cpu_ns=/ { sub(/cpu_ns=/, ""); ns = $0 / l }
			END { printf "%s %.0f\n", ops, ns }'
}
# under ARGS...: pipe while `galatop record ARGS` runs (after its start-up, which it announces
# with "Ctrl-C to stop": a SIGINT before that is not a stop request); its CPU % to fd 3.
under() {
	"$GALATOP_OPT" record "$@" 2>"$T/sli-err.txt" &
	g=$!
	i=0; while [ $i -lt 300 ] && ! grep -q 'Ctrl-C' "$T/sli-err.txt"; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
	c0=$(cpu_of $g); t0=$(date +%s.%N)
	pipe
	c1=$(cpu_of $g); t1=$(date +%s.%N)
	echo "$c0 $c1 $t0 $t1" | awk '{ printf "%.2f\n", 100 * ($2 - $1) / ($4 - $3) }' >&3
	# A SIGINT has been seen lost on this loaded machine: repeat it every 2 s until galatop ends.
	i=0; while kill -INT $g 2>/dev/null && [ $i -lt 30 ]; do sleep 2; i=$((i + 1)); done
	wait $g
}
# progs LABEL ARGS...: each SLI program's runs per message and ns per run over one pipe run
# under `galatop record ARGS`, from the kernel's own BPF statistics (kernel.bpf_stats_enabled,
# turned on for this run only: it adds two clock reads to every program run, so these runs
# are not among the timed ones above).
progs() {
	label=$1; shift
	ids >"$T/sli-ids0.txt"
	"$GALATOP_OPT" record "$@" 2>"$T/sli-err.txt" &
	g=$!
	i=0; while [ $i -lt 300 ] && ! grep -q 'Ctrl-C' "$T/sli-err.txt"; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
	stats >"$T/sli-p0.txt"
	pipe >/dev/null
	stats >"$T/sli-p1.txt"
	i=0; while kill -INT $g 2>/dev/null && [ $i -lt 30 ]; do sleep 2; i=$((i + 1)); done
	wait $g
	awk -v l="$LOOPS" -v label="$label" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
		{ n = $2 - c[$1]; if (n <= 0) next; tot += ($3 - t[$1]) / l
		  printf "  %-14s %-18s %8.2f %7.0f %8.0f\n", label, $1, n / l, ($3 - t[$1]) / n, ($3 - t[$1]) / l }
		END { printf "  %-14s %-18s %8s %7s %8.0f\n", label, "all", "", "", tot }' "$T/sli-p0.txt" "$T/sli-p1.txt"
}
ids() { bpftool -j prog show 2>/dev/null | jq -r '.[] | select(.name // "" | startswith("gt_sli_")) | .id'; }
# stats: "NAME RUNS NS" of each SLI program loaded since ids wrote sli-ids0.txt (this galatop's).
stats() {
	bpftool -j prog show 2>/dev/null | jq -r --slurpfile old "$T/sli-ids0.txt" '.[] |
		select((.name // "" | startswith("gt_sli_")) and (.id as $i | $old | index([$i]) | not)) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
}
# others: how many tracing programs run that are not this bench's (another galatop, bpftrace...):
# each taxes the context switches or system calls of both sides, so the costs read lower.
others() {
	command -v bpftool >/dev/null 2>&1 && command -v jq >/dev/null 2>&1 || { echo "?"; return; }
	bpftool -j prog show 2>/dev/null | jq '[.[] | select(.type | test("tracing|tracepoint|perf_event|kprobe"))] | length'
}
others0=$(others)
exec 3>"$T/sli-own.txt"
: >"$T/sli-runs.txt"
for k in $(seq "$RUNS"); do
	echo "off $(pipe)" >>"$T/sli-runs.txt"
	echo "on $(under --type sli -o "$T/sli.json")" >>"$T/sli-runs.txt"
	echo "nosys $(under --type sli --longsys off -o "$T/sli.json" 3>/dev/null)" >>"$T/sli-runs.txt"
done
echo "offcpu $(under --type offcpu -o "$T/off.folded" 3>/dev/null)" >>"$T/sli-runs.txt"
exec 3>&-
own=$(sort -n "$T/sli-own.txt" | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
# median KIND FIELD: the median of FIELD (2: ops/s, 3: CPU ns per message) over the runs of KIND.
median() {
	awk -v k="$1" -v f="$2" '$1 == k && $f != "" { print $f }' "$T/sli-runs.txt" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() { # KIND FIELD: (max - min) / min of the runs, in %
	awk -v k="$1" -v f="$2" '$1 == k && $f != "" { if (!n++ || $f < lo) lo = $f; if ($f > hi) hi = $f }
		END { if (lo) printf "%.0f", 100 * (hi - lo) / lo }' "$T/sli-runs.txt"
}
a=$(median off 2); w=$(median on 2); ns=$(median nosys 2); oc=$(median offcpu 2)
ca=$(median off 3); cw=$(median on 3); cn=$(median nosys 3); co=$(median offcpu 3)
awk -v a="$a" -v w="$w" -v ns="$ns" -v oc="$oc" -v ca="$ca" -v cw="$cw" -v cn="$cn" -v co="$co" \
	-v so="$(spread off 2)" -v sc="$(spread off 3)" -v own="$own" -v loops="$LOOPS" -v runs="$RUNS" 'BEGIN {
	printf "perf bench sched pipe -l %d on one CPU, %d runs each, alternating, medians:\n", loops, runs
	printf "  %-34s %9s %6s   %12s %6s\n", "", "msgs/s", "loss", "CPU ns/msg", "cost"
	printf "  %-34s %9.0f %6s   %12.0f %6s\n", "SLI probes off", a, "", ca, ""
	printf "  %-34s %9.0f %5.1f%%   %12.0f %5.1f%%\n", "SLI probes on", w, 100 * (a - w) / a, cw, 100 * (cw - ca) / ca
	printf "  %-34s %9.0f %5.1f%%   %12.0f %5.1f%%\n", "SLI probes on, --longsys off", ns, 100 * (a - ns) / a, cn, 100 * (cn - ca) / ca
	printf "  %-34s %9.0f %5.1f%%   %12.0f %5.1f%%\n", "off-CPU stack probe (reference)", oc, 100 * (a - oc) / a, co, 100 * (co - ca) / ca
	printf "target: loss <= 5%%; runs with the probes off spread by %s%% (msgs/s) and %s%% (CPU ns/msg) here\n", so, sc
	printf "galatop record --type sli own CPU during the runs: %s%% of one core\n", own
}'
echo "other tracing programs attached: $others0 before the runs, $(others) after (0 for clean figures); load: $(cut -d' ' -f1-3 /proc/loadavg)"
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null)
if command -v bpftool >/dev/null 2>&1 && command -v jq >/dev/null 2>&1 && [ -n "$stats_was" ] &&
	echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; then
	echo "per program, one more run each with kernel.bpf_stats_enabled (which adds its own cost):"
	printf "  %-14s %-18s %8s %7s %8s\n" "" "program" "runs/msg" "ns/run" "ns/msg"
	progs "on" --type sli -o "$T/sli.json"
	progs "longsys off" --type sli --longsys off -o "$T/sli.json"
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled
else
	echo "per program: skipped (needs bpftool, jq and kernel.bpf_stats_enabled)"
fi
