#!/bin/sh
# The L7 capture's cost (tests/bench/cost.lib's table): redis-benchmark GET -c 16 and wrk against
# nginx keep-alive, each alone, with `galatop record --type l7` tracing the server (and with
# `--type l7,sli` tracing every process: not under BENCH_BASE unless BENCH_BASE_ALL), and
# under the system call tracepoint floor. Targets: loss <= 5%, galatop's CPU <= 3% of a core at
# 10k requests/s (us/op <= 3). Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "l7: skipped (needs root)"; exit 0; }
. tests/bench/cost.lib
. tests/bench/servers.lib
cost_header
# BENCH_BASE=PATH: a "base:" row (named by BENCH_BASE_LABEL) per workload under another galatop
# binary (e.g. one built from an earlier commit), its runs in the same rounds (cost.lib).
cost_row l7 "redis-benchmark GET -c 16" "--type l7 -p $RS -o $CT/l7.json" redis_rps
cost_row l7 "wrk nginx keep-alive -c 8" "--type l7 -p $NG,$NGW -o $CT/l7.json" wrk_rps
# As `sudo galatop --type l7,sli` runs on a box: every process traced (the clients too, on
# loopback here), the SLI probes on as well. Under another binary too when BENCH_BASE_ALL is set
# (l7_floor.sh: the kernel-only counter in its every-process mode).
if [ -z "${BENCH_BASE:-}" ] || [ -n "${BENCH_BASE_ALL:-}" ]; then
	cost_row l7,sli "redis-benchmark GET -c 16" "--type l7,sli -o $CT/l7sli.gtop" redis_rps
	cost_row l7,sli "wrk nginx keep-alive -c 8" "--type l7,sli -o $CT/l7sli.gtop" wrk_rps
fi
[ -n "${COST_TABLE_HEADER_DONE:-}" ] || cost_footer
