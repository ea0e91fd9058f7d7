#!/bin/sh
# The thread timeline's cost (tests/bench/cost.lib's table) on a syscall-heavy workload: two
# threads each writing one byte to /dev/null between short spins (about 200k system calls per
# second in all), alone, under `galatop record --type threads` (the calls do not block: by
# default only the 199 Hz sampler, gt_tl_sample, sees the few it interrupts) and under the floor; then the same with --all-syscalls (every call
# from sys_enter to sys_exit, shorter than --min-dur: counted, not sent). Target: loss <= 10%
# (the default). Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "threads: skipped (needs root)"; exit 0; }
[ -x "$TOOLS/tl_work" ] || { echo "threads: skipped (tests/tools/tl_work is not built: make tools)"; exit 0; }
. tests/bench/cost.lib
trap 'cost_cleanup' EXIT INT TERM
SPIN=${BENCH_SPIN:-2000}
calls_per_s() { "$TOOLS/tl_work" syscalls "$SECS" "$SPIN" | awk -v s="$SECS" '{ print $1 / s }'; }
cost_header
# BENCH_BASE=PATH: a "base:" row per workload under another galatop binary (e.g. one built from
# an earlier commit), its runs in the same rounds (cost.lib).
cost_row threads "tl_work syscalls (2 threads)" "--type threads --comm tl_work -o $CT/tl.jsonl" \
	calls_per_s
cost_row threads "tl_work --all-syscalls" \
	"--type threads --all-syscalls --comm tl_work -o $CT/tl.jsonl" calls_per_s
[ -n "${COST_TABLE_HEADER_DONE:-}" ] || cost_footer
