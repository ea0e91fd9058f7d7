#!/bin/sh
# What counting requests in the kernel costs on this machine, next to galatop's L7 capture:
# l7.sh's workloads, each round also run under tests/bench/l7_floor.bpf.c (row "kcount"), a
# lower bound of a capture that keeps its tables in the kernel: on the same tracepoints, each of
# the server's requests hashed to its endpoint, each response's status and latency added to that
# endpoint's counters and histogram in a map; no record per message, no protocol guess, no
# framing, no addresses, no reading in user space. The loss it shows is what any per-request
# L7 counting pays here before it does the rest of galatop's work. Also l7.sh's `--type l7,sli`
# rows, every process traced: kcount then counts every process's exchanges, each side of a
# connection on its own (FL_NOREAD=1: without reading a byte). Needs root.
. "$(dirname "$0")/env.sh"
[ "$(id -u)" = 0 ] || { echo "l7_floor: skipped (needs root)"; exit 0; }
make --no-print-directory -s O="$O" "$O/bench/l7_floor" >"$BENCH_TMP/l7_floor.log" 2>&1 ||
	{ cat "$BENCH_TMP/l7_floor.log" >&2; echo "l7_floor: build failed" >&2; exit 1; }
BENCH_BASE=$O/bench/l7_floor BENCH_BASE_LABEL=kcount BENCH_BASE_ALL=1 exec sh tests/bench/l7.sh
