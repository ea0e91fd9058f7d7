#!/bin/sh
# The SLI probes' cost with their defaults (tests/bench/cost.lib's table): wrk against nginx
# keep-alive and redis-benchmark GET -c 16 (target: loss <= 3%), and `perf bench sched pipe` on
# one CPU (two context switches, two wakeups and four system calls per message: reported beside
# the floor, not a target), each alone, under `galatop record --type sli` and under the floor.
# Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "sli: skipped (needs root)"; exit 0; }
# More rounds than the other families: the loss to measure is small (BENCH_ROUNDS overrides).
: "${BENCH_ROUNDS:=7}"
. tests/bench/cost.lib
. tests/bench/servers.lib
LOOPS=${BENCH_SLI_LOOPS:-100000}
PIPE_CPU=$(($(nproc) - 1))
pipe_ops() { taskset -c "$PIPE_CPU" setsid perf bench sched pipe -l "$LOOPS" 2>&1 | awk '/ops\/sec/ { print $1 }'; }
cost_header
cost_row sli "wrk nginx keep-alive -c 8" "--type sli -o $CT/sli.json" wrk_rps
cost_row sli "redis-benchmark GET -c 16" "--type sli -o $CT/sli.json" redis_rps
if command -v perf >/dev/null 2>&1; then
	cost_row sli "perf bench sched pipe (1 CPU)" "--type sli -o $CT/sli.json" pipe_ops
fi
[ -n "${COST_TABLE_HEADER_DONE:-}" ] || cost_footer
