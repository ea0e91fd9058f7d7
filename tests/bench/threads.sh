#!/bin/sh
# The thread timeline's cost (tests/bench/cost.lib's table) on a syscall-heavy workload: two
# threads each writing one byte to /dev/null between short spins (about 200k system calls per
# second in all), alone, under `galatop record --type threads` (default --min-dur 10 us: the
# calls are counted, not sent) and under the floor. Target: loss <= 10%. Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "threads: skipped (needs root)"; exit 0; }
[ -x "$TOOLS/tl_work" ] || { echo "threads: skipped (tests/tools/tl_work is not built: make tools)"; exit 0; }
. tests/bench/cost.lib
trap 'cost_cleanup' EXIT INT TERM
SPIN=${BENCH_SPIN:-2000}
calls_per_s() { "$TOOLS/tl_work" syscalls "$SECS" "$SPIN" | awk -v s="$SECS" '{ print $1 / s }'; }
cost_header
cost_row threads "tl_work syscalls (2 threads)" "--type threads --comm tl_work -o $CT/tl.jsonl" \
	calls_per_s
[ -n "${COST_TABLE_HEADER_DONE:-}" ] || cost_footer
